//! Model preparation: downloads from a hub (`uqd models pull`, docs/reference.md "uqd models
//! pull") and the optimized variants of an NLI model (`uqd models optimize`); which variant file
//! runs (`--precision`, "Model variants") is the engine's `engine::variants`.

pub mod optimize;
pub mod pull;
