//! The replies of the requests that call an LLM for text: `generate` (the answer and its
//! samples), `claims` (a decomposition), `grade` and `objectivity` (a judge's label).

use serde::{Deserialize, Serialize};

/// Result of a `grade` or `objectivity` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeResult {
    /// `Some(true)`: supported / objective; `Some(false)`: not supported / subjective; `None`:
    /// the judge's reply could not be read.
    pub label: Option<bool>,
    /// The judge's reply as given.
    pub raw: String,
    /// `factscore:<LLM>` or `objectivity:<LLM>` (`uq_label.grader`).
    pub grader: String,
}

/// One row of a `generate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedResponse {
    /// 0 = the original answer; 1..n = the sampled answers.
    pub index: usize,
    pub text: String,
    pub temperature: f64,
    /// The model that answered (as the server names it; `file stem:size` for a local GGUF).
    pub model: String,
    /// Tokens of the call that produced this text (when one call produced several samples, its
    /// whole usage is on the first of them and the others show 0).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Served from the completion cache (no new call).
    pub cached: bool,
    /// exp(mean token log-probability) of the text, when the generation LLM returned
    /// log-probabilities (`"logprobs": true` in its config); else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized_probability: Option<f64>,
    /// The text's tokens, each with its character offset (when they tile the text), its
    /// log-probability and the top-k alternatives, when the generation LLM returned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<crate::logprobs::TokenLogprob>>,
}

/// Result of a `generate` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerateResult {
    pub responses: Vec<GeneratedResponse>,
}

/// Result of a `claims` request (no claims → empty array).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimsResult {
    pub claims: Vec<String>,
}
