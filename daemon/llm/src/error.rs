//! The one error type of the crate: every variant carries a full message saying what failed and
//! how to fix it.

use std::fmt;

/// An LLM-layer failure. `Display` gives the whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmError {
    /// Bad settings or environment (missing API key variable, bad URL, zero concurrency...).
    Config(String),
    /// The server rejected the request with a status that retrying cannot fix (400/401/403/404...).
    Rejected { status: u16, message: String },
    /// Retryable failures (429, 5xx, timeouts, connection errors, broken replies) that went on
    /// past `max_retries`.
    RetriesExhausted(String),
    /// The server answered, but the reply cannot be used (no text, missing logprobs...).
    Reply(String),
    /// The model refused to answer (`refusal` field or content filter). Not retried.
    Refusal(String),
    /// The completion cache failed (open, read or write).
    Cache(String),
    /// The embedded local model failed (loading the GGUF, tokenizer, generation).
    Local(String),
}

impl LlmError {
    /// The message without the variant name.
    pub fn message(&self) -> &str {
        match self {
            LlmError::Config(m)
            | LlmError::RetriesExhausted(m)
            | LlmError::Reply(m)
            | LlmError::Refusal(m)
            | LlmError::Cache(m)
            | LlmError::Local(m) => m,
            LlmError::Rejected { message, .. } => message,
        }
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for LlmError {}

/// At most `max` characters of `s` (on a char boundary), with `…` when cut. For body snippets.
pub(crate) fn snippet(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_cuts_on_char_boundary() {
        assert_eq!(snippet("  héllo wörld ", 5), "héllo…");
        assert_eq!(snippet("abc", 5), "abc");
        assert_eq!(snippet("", 5), "");
    }
}
