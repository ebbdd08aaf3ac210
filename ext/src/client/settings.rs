//! The client's timeouts and pauses, and the environment variables that set them.

use std::time::Duration;

/// Default reply timeout for requests (`UQ_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;
/// Default reply timeout of requests that may call an LLM (`generate`, `claims`, `uad`, and
/// `score` with claims or an LLM judge) when `UQ_TIMEOUT_MS` is unset: generation on a CPU is
/// slow (the embedded SmolLM2 writes ~20 tokens/s on 2 cores).
pub const DEFAULT_LLM_TIMEOUT_MS: u64 = 3_600_000;
/// Default time allowed for an auto-started daemon to answer (`UQ_START_TIMEOUT_MS`).
pub const DEFAULT_START_TIMEOUT_MS: u64 = 60_000;
/// Timeout of the pings used to probe the daemon (`uq_debug`, auto-start polling).
pub const PING_TIMEOUT: Duration = Duration::from_millis(2_000);
/// Pause between tries (reconnecting, polling a starting daemon).
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A duration in milliseconds from the environment, `default_ms` when unset or invalid.
pub fn env_ms(name: &str, default_ms: u64) -> Duration {
    let ms = std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(default_ms);
    Duration::from_millis(ms.max(1))
}

/// Reply timeout: `UQ_TIMEOUT_MS`, else the default for requests with (`llm`) or without LLM work.
pub fn reply_timeout(llm: bool) -> Duration {
    env_ms(
        "UQ_TIMEOUT_MS",
        if llm {
            DEFAULT_LLM_TIMEOUT_MS
        } else {
            DEFAULT_TIMEOUT_MS
        },
    )
}
