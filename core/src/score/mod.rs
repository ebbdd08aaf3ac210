//! Stage 2 of the pipeline: unit-level confidence scoring c_g (paper §3.1, §3.3).
//!
//! [`consistency`] holds the η functions of §3.2; [`unit_response`] and [`matched_unit`]
//! the two scorer families of §3.3.1 and §3.3.2; [`graph`] §3.3.4; [`black_box`] the whole-answer
//! comparisons of the unit-QA scorers (§3.3.3) and the short-form baselines; [`ngram`] the
//! model-free unigram scorers of SelfCheckGPT (Manakul et al. 2023, §5.3); [`premise`] the
//! premise selection of option `premise` (beyond the paper); [`nli`] the NLI probabilities they
//! all read.

pub mod black_box;
pub mod consistency;
pub mod graph;
pub mod grounded;
pub mod matched_unit;
pub mod ngram;
pub mod nli;
pub mod premise;
pub mod semantic_entropy;
pub mod unit_response;
pub mod white_box;

pub use matched_unit::{matched_unit_scores, nli_consistency};
pub use unit_response::unit_response_scores;
