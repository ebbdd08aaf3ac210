//! The checks an [`LlmSettings`] passes before a client is built: URLs, bounds, limits.

use crate::client::LlmSettings;
use crate::error::LlmError;

/// Most retries a setting may ask for (bounded so that a call always ends).
pub const MAX_RETRIES_LIMIT: u32 = 20;

/// The first setting out of range, as a configuration error naming it and its bounds.
pub(super) fn validate(s: &LlmSettings) -> Result<(), LlmError> {
    let bad = |m: String| Err(LlmError::Config(m));
    for base_url in std::iter::once(&s.base_url).chain(&s.replicas) {
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return bad(format!(
                "base_url {base_url:?} must start with http:// or https:// (e.g. https://api.openai.com/v1)"
            ));
        }
        if base_url
            .trim_end_matches('/')
            .ends_with("/chat/completions")
        {
            return bad(format!(
                "base_url {base_url:?} must not include /chat/completions: give the /v1 root"
            ));
        }
    }
    if s.replica_retry_ms == 0 || s.replica_retry_ms > 3_600_000 {
        return bad(format!(
            "replica_retry_ms {} must be between 1 and 3600000 (one hour)",
            s.replica_retry_ms
        ));
    }
    if s.model.trim().is_empty() {
        return bad("model is empty: name the model to use".into());
    }
    if let Err(m) = crate::client::check_sampling(s.temperature, s.top_p, s.max_tokens) {
        return bad(m);
    }
    if s.timeout_ms == 0 || s.timeout_ms > 3_600_000 {
        return bad(format!(
            "timeout_ms {} must be between 1 and 3600000 (one hour)",
            s.timeout_ms
        ));
    }
    if s.concurrency == 0 || s.concurrency > 10_000 {
        return bad(format!(
            "concurrency {} must be between 1 and 10000 requests in flight",
            s.concurrency
        ));
    }
    if s.max_retries > MAX_RETRIES_LIMIT {
        return bad(format!(
            "max_retries {} is more than {MAX_RETRIES_LIMIT}",
            s.max_retries
        ));
    }
    if s.requests_per_minute == Some(0) || s.tokens_per_minute == Some(0) {
        return bad("requests_per_minute / tokens_per_minute of 0 would block forever: use null for no limit".into());
    }
    Ok(())
}
