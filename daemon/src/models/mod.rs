//! Model preparation: the optimized variants of an NLI model (`uqd models optimize`) and the
//! choice of which file runs (`--precision`). See docs/reference.md, "Model variants".

pub mod optimize;
pub mod variants;
