//! The cache key of a request: the SHA-256 of its canonical JSON.

use serde_json::json;
use sha2::{Digest, Sha256};

use super::store::SCHEMA_VERSION;
use crate::client::{BackendIdentity, ChatRequest, Params};

/// The cache key of a request: `(hash, canonical_json)`. The sample index is the second half of
/// the key, kept in its own column.
pub fn request_key(
    identity: &BackendIdentity,
    params: &Params,
    req: &ChatRequest,
) -> (String, String) {
    let mut messages = Vec::with_capacity(2);
    if let Some(s) = &req.system {
        messages.push(json!({"role": "system", "content": s}));
    }
    messages.push(json!({"role": "user", "content": req.user}));
    // serde_json's default map is ordered by key, so this serialisation is canonical.
    let canonical = json!({
        "v": SCHEMA_VERSION,
        "backend": identity.backend,
        "base_url": identity.base_url,
        "model": identity.model,
        "messages": messages,
        "raw": req.raw,
        "stop": req.stop,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "max_tokens": params.max_tokens,
        "seed": params.seed,
        "logprobs": params.logprobs,
    });
    // Only when asked: the keys of requests without alternatives stay what they were.
    let mut canonical = canonical;
    if params.top_logprobs > 0 {
        canonical["top_logprobs"] = json!(params.top_logprobs);
    }
    let canonical = canonical.to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    let hash = digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    (hash, canonical)
}
