//! Stage 1 of the pipeline: the decomposition function δ_g: 𝒴 → 𝒫(𝒮_g) (paper §3.1).
//!
//! For g = sent, δ is rule-based sentence segmentation ([`split_sentences`]). For g = claim
//! the paper uses LLM-based claim extraction; uqlite takes the claims from the caller
//! (`units` / `sample_units` options) instead. Each unit's place in the answer: [`spans`].

pub mod sentences;
pub mod spans;

pub use sentences::{split_sentence_spans, split_sentences};
