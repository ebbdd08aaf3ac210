//! The engine configuration of the daemon's tests: the real models from the repository's `dist/`
//! (built by `make setup`), or UQ_ORT_LIB / UQ_NLI_MODEL / UQ_EMBED_MODEL. Missing files fail the
//! tests. Shared through `#[path]` by the engine's unit tests (`src/engine/tests.rs`) and the
//! integration tests (`tests/engine/common/mod.rs`); the including module brings `Config`, `Device`,
//! `Precision`, `CliOverrides` and `resolve_with`.

use std::path::PathBuf;

use super::{resolve_with, CliOverrides, Config, Device, Precision};

/// The checkout's root: the nearest folder above the compiling package's that holds `core/`
/// (the daemon's library is `daemon/`, its binary and these tests' package `daemon/cli/`).
pub fn repo_root() -> PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|p| p.join("core/Cargo.toml").exists())
        .unwrap_or(manifest)
        .to_path_buf()
}

fn dist_path(var: &str, default: &str) -> PathBuf {
    let dist = repo_root().join("dist");
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

/// CPU, 2 threads, batches of 8; no LLM (its paths point nowhere); every other setting its
/// default (resolved as `uqd serve` resolves its flags, with no environment or config file).
pub fn test_config() -> Config {
    let cli = CliOverrides {
        socket: Some(std::env::temp_dir().join("uqd-test-unused.sock")),
        nli_model: Some(dist_path("UQ_NLI_MODEL", "models/nli")),
        embed_model: Some(dist_path("UQ_EMBED_MODEL", "models/embed")),
        ort_lib: Some(dist_path("UQ_ORT_LIB", "lib/libonnxruntime.so.1.31.1")),
        device: Some("cpu".into()),
        variants_dir: Some(repo_root().join("dist/models/variants")),
        threads: Some(2),
        max_batch: Some(8),
        cache_db: Some(PathBuf::from("/nonexistent/unused.sqlite")),
        local_llm: Some(PathBuf::from("/nonexistent/unused.gguf")),
        ..Default::default()
    };
    let root = std::path::Path::new("/");
    let config = resolve_with(cli, &|_| None, root, root).expect("the test settings resolve");
    assert_eq!(
        (config.device, config.precision),
        (Device::Cpu, Precision::Auto)
    );
    config
}
