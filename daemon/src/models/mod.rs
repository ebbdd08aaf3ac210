//! Model preparation: downloads from a hub (`uqd models pull`, docs/reference.md "uqd models
//! pull"), the optimized variants of an NLI model (`uqd models optimize`) and the choice of which
//! file runs (`--precision`, "Model variants").

pub mod optimize;
pub mod pull;
pub mod variants;
