//! The socket protocol between the extension and `uqd`: newline-delimited JSON,
//! one request per line, one response per line (see docs/design.md).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest request or response line either side accepts.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Three-way NLI probabilities for one (premise, hypothesis) pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NliProbs {
    pub entailment: f64,
    pub neutral: f64,
    pub contradiction: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Ping,
    Nli {
        pairs: Vec<(String, String)>,
    },
    Score {
        response: String,
        samples: Vec<String>,
        #[serde(default)]
        options: Value,
    },
    Shutdown,
}

/// One row of `uq_unit_scores`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitScore {
    pub unit_idx: usize,
    pub scorer: String,
    pub score: f64,
}

/// Result of a `score` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreResult {
    pub units: Vec<String>,
    pub scores: Vec<UnitScore>,
    /// Aggregated score per scorer; `None` when there are no units.
    pub response_scores: std::collections::BTreeMap<String, Option<f64>>,
}

/// Result of a `ping` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingInfo {
    pub version: String,
    pub pid: u32,
    pub socket: String,
    pub nli_model: String,
    pub embed_model: Option<String>,
    pub device: String,
    pub threads: usize,
    pub labels: Vec<String>,
    pub nli_cache_entries: usize,
    pub embed_cache_entries: usize,
}

/// Every reply: `{"ok":true,"result":...}` or `{"ok":false,"error":"..."}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Reply {
    pub fn ok(result: Value) -> Self {
        Reply {
            ok: true,
            result: Some(result),
            error: None,
        }
    }
    pub fn err(message: impl Into<String>) -> Self {
        Reply {
            ok: false,
            result: None,
            error: Some(message.into()),
        }
    }
}
