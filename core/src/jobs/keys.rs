//! The job keys: their names (the check that every key of a job's options is a job key or a
//! scoring option), and the readers of the plain ones: flags, bounded integers, `prices`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::options::OPTION_NAMES;

/// The job keys (everything else is a scoring option).
pub const JOB_KEYS: &[&str] = &[
    "id_column",
    "prompt_column",
    "answer_column",
    "samples_column",
    "reference_column",
    "units_column",
    "claim_union_column",
    "labels_column",
    "sources_column",
    "sample_when_open",
    "generate",
    "grade",
    "objectivity",
    "uad",
    "chunk_size",
    "concurrency",
    "prices",
];

/// Every key of `options` must be a job key or a scoring option: an unknown one is named,
/// with the closest known key of either kind ([`crate::suggest`]) and both lists.
pub fn check_option_names(options: &Map<String, Value>) -> Result<(), String> {
    let known = || JOB_KEYS.iter().chain(OPTION_NAMES).copied();
    match options.keys().find(|k| !known().any(|n| n == k.as_str())) {
        None => Ok(()),
        Some(key) => Err(format!(
            "unknown option {key:?} in options_json: {}job options are {}; scoring options are {}",
            crate::suggest::did_you_mean(key, known()),
            JOB_KEYS.join(", "),
            OPTION_NAMES.join(", ")
        )),
    }
}

/// Largest `generate`, `chunk_size` and `concurrency` accepted.
pub const MAX_GENERATE: u64 = 100;
pub const MAX_CHUNK: u64 = 10_000;
pub const MAX_CONCURRENCY: u64 = 64;

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub prompt: f64,
    pub completion: f64,
}

impl Prices {
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.prompt + completion_tokens as f64 * self.completion) / 1e6
    }
}

/// A true/false job key (absent: false).
pub(super) fn flag(options: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("option {key} must be true or false, got {other}")),
    }
}

/// An integer job key in `min..=max` (absent: `None`).
pub(super) fn integer(
    options: &Map<String, Value>,
    key: &str,
    min: u64,
    max: u64,
) -> Result<Option<usize>, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n as usize)),
            _ => Err(format!(
                "option {key} must be an integer from {min} to {max}, got {v}"
            )),
        },
    }
}

/// Option `prices` (absent: `None`).
pub(super) fn prices(options: &Map<String, Value>) -> Result<Option<Prices>, String> {
    let v = match options.get("prices") {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let p: Prices = serde_json::from_value(v.clone()).map_err(|_| {
        format!(
            "option prices must be {{\"prompt\": usd_per_million_tokens, \"completion\": usd_per_million_tokens}}, got {v}"
        )
    })?;
    if !(p.prompt >= 0.0 && p.completion >= 0.0 && p.prompt.is_finite() && p.completion.is_finite())
    {
        return Err("option prices: prices must be finite and ≥ 0".into());
    }
    Ok(Some(p))
}
