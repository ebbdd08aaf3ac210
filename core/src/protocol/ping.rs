//! The reply of a `ping` request: the daemon's version, models, device and caches.

use serde::{Deserialize, Serialize};

/// Result of a `ping` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingInfo {
    pub version: String,
    /// The daemon's [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION); absent from a daemon older
    /// than the check.
    #[serde(default)]
    pub protocol: Option<u32>,
    pub pid: u32,
    pub socket: String,
    pub nli_model: String,
    pub embed_model: Option<String>,
    pub device: String,
    /// Why CUDA is not used although the device setting asked for it.
    #[serde(default)]
    pub device_note: Option<String>,
    /// Precision of the NLI file that runs ("int8", "fp32", "fp16", "original").
    #[serde(default)]
    pub precision: Option<String>,
    /// Why `--precision auto` does not run the variant it prefers, naming the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_note: Option<String>,
    /// NLI windows per forward pass at most.
    #[serde(default)]
    pub nli_batch: Option<usize>,
    /// The NLI model file that runs.
    #[serde(default)]
    pub nli_file: Option<String>,
    pub threads: usize,
    /// NLI sessions running batches side by side (local), or batches in flight (remote).
    #[serde(default)]
    pub nli_sessions: Option<usize>,
    pub labels: Vec<String>,
    pub nli_cache_entries: usize,
    pub embed_cache_entries: usize,
    /// Path of the persistent completion cache (SQLite) of the LLM layer.
    #[serde(default)]
    pub llm_cache: Option<String>,
    /// Path of the local model's GGUF file (the default LLM).
    #[serde(default)]
    pub local_llm: Option<String>,
    /// Whether a local model has been loaded (it is loaded on the first request that needs it).
    #[serde(default)]
    pub local_llm_loaded: bool,
    /// The inference servers the NLI model runs on (`--nli-backend`); absent when it runs locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nli_endpoints: Option<Vec<NliEndpoint>>,
}

/// One inference-server endpoint of the NLI backend and its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NliEndpoint {
    /// Base URL, e.g. `http://127.0.0.1:8000`.
    pub url: String,
    /// Whether requests go to it (its last request or health check succeeded).
    pub healthy: bool,
    /// Inference requests it answered.
    pub served: u64,
    /// Requests and health checks it failed.
    pub failures: u64,
    pub last_error: Option<String>,
}
