//! Token log-probabilities: the type lives in uq_core (`uq_core::logprobs`), shared with the
//! scorers that read it.

pub use uq_core::logprobs::{values, Alternative, TokenLogprob};
