//! The loaded model — weights, tokenizer and device, used under one lock — its forward pass,
//! and the error texts of the local backend.

use std::path::Path;

use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::ModelWeights;

use crate::error::LlmError;
use crate::gguf_tokenizer::GgufTokenizer;

pub(super) struct Engine {
    pub(super) weights: ModelWeights,
    pub(super) tokenizer: GgufTokenizer,
    pub(super) device: Device,
}

impl Engine {
    /// The logits after feeding `tokens` at position `pos` (the KV cache holds what came before).
    pub(super) fn forward(
        &mut self,
        path: &Path,
        tokens: &[u32],
        pos: usize,
    ) -> Result<Tensor, LlmError> {
        let input = Tensor::new(tokens, &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(|x| candle_err(path, "cannot build the input", x))?;
        self.weights
            .forward(&input, pos)
            .map_err(|x| candle_err(path, "forward pass failed", x))
    }
}

pub(super) fn local_err(path: &Path, what: impl std::fmt::Display) -> LlmError {
    LlmError::Local(format!("local model {}: {what}", path.display()))
}

pub(super) fn candle_err(path: &Path, what: &str, err: candle_core::Error) -> LlmError {
    local_err(path, format!("{what}: {err}"))
}
