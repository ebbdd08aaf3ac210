//! What `ping` (and `uqd status`, `uq_debug()`) reports about the engine.

use serde::Serialize;

use super::remote;

/// What `ping` reports about the engine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineInfo {
    pub nli_model: String,
    pub embed_model: Option<String>,
    /// Device actually used by the NLI model ("cpu" or "cuda").
    pub device: String,
    /// Why CUDA is not used when the device setting asked for it (`auto` or `cuda`).
    pub device_note: Option<String>,
    /// Precision of the NLI file that runs: "int8", "fp32" (optimized), "fp16" or "original".
    pub precision: String,
    /// Why `--precision auto` does not run the variant it prefers (int8 on the CPU, fp16 on
    /// CUDA), naming the fix.
    pub precision_note: Option<String>,
    /// NLI windows per forward pass at most (1: one window per pass, dynamic int8).
    pub nli_batch: usize,
    /// The NLI model file that runs (the model's `model.onnx` or a variant).
    pub nli_file: String,
    /// Whether that file's attention is fused, as its `variants.json` says (`None`: not a
    /// variant, e.g. `model.onnx`, or an inference server).
    pub attention_fused: Option<bool>,
    pub threads: usize,
    /// NLI sessions (batches run side by side).
    pub nli_sessions: usize,
    /// NLI batches in flight per session (`--nli-overlap`).
    pub nli_overlap: usize,
    /// The stand-in's time per batch when it replaces the NLI model (`--nli-stand-in-ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stand_in_ms: Option<f64>,
    /// NLI label names in model order.
    pub labels: Vec<String>,
    pub nli_cache_entries: usize,
    pub embed_cache_entries: usize,
    /// The inference servers' endpoints when the NLI model runs there (`--nli-backend`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nli_endpoints: Option<Vec<remote::EndpointInfo>>,
}
