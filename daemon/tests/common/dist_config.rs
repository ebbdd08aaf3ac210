//! The engine configuration of the daemon's tests: the real models from the repository's `dist/`
//! (built by `make setup`), or UQ_ORT_LIB / UQ_NLI_MODEL / UQ_EMBED_MODEL. Missing files fail the
//! tests. Shared through `#[path]` by the engine's unit tests (`src/engine/tests.rs`) and the
//! integration tests (`tests/common/mod.rs`); the including module brings `Config` and `Device`.

use std::path::PathBuf;

use super::{Config, Device, Precision};

fn dist_path(var: &str, default: &str) -> PathBuf {
    let dist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist");
    let p = std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| dist.join(default));
    assert!(
        p.exists(),
        "test model file {} is missing: run `make setup` or set {var}",
        p.display()
    );
    p
}

/// CPU, 2 threads, batches of 8; no LLM (its paths point nowhere).
pub fn test_config() -> Config {
    Config {
        socket: std::env::temp_dir().join("uqd-test-unused.sock"),
        nli_model: dist_path("UQ_NLI_MODEL", "models/nli"),
        embed_model: Some(dist_path("UQ_EMBED_MODEL", "models/embed")),
        ort_lib: dist_path("UQ_ORT_LIB", "lib/libonnxruntime.so.1.31.1"),
        device: Device::Cpu,
        precision: Precision::Auto,
        variants_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist/models/variants"),
        threads: 2,
        nli_sessions: None,
        max_batch: Some(8),
        max_wait_ms: 2,
        nli_max_tokens: None,
        embed_max_tokens: 256,
        cache_db: PathBuf::from("/nonexistent/unused.sqlite"),
        local_llm: PathBuf::from("/nonexistent/unused.gguf"),
        busy_timeout_ms: 30_000,
        nli_backend: None,
    }
}
