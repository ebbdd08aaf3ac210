//! Shared pieces of the daemon's LLM tests: the real NLI/embedding engine (from `dist/`, as the
//! engine's own tests), a [`uqd::server::Server`] with its own temporary completion cache, and
//! the shared fake OpenAI-compatible server (`tests/fake-openai`) whose answers are a function
//! of the request body (so concurrent calls get deterministic answers whatever their order).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use once_cell::sync::Lazy;
use serde_json::{json, Value};
use uqd::config::{resolve_with, CliOverrides, Config, Device, Precision};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;
use uqd::server::Server;

#[allow(unused_imports)] // each test file uses some of them
pub use uq_fake_openai::{message, user_message, FakeOpenAi, Responder};

#[path = "dist_config.rs"]
pub mod dist_config;
#[allow(unused_imports)] // trust.rs uses test_config, the other test files do not
pub use dist_config::{repo_root, test_config};

pub static ENGINE: Lazy<Arc<Engine>> = Lazy::new(|| {
    Arc::new(
        Engine::load(&dist_config::test_config()).unwrap_or_else(|e| panic!("Engine::load: {e}")),
    )
});

/// Runs job `job` of `db` to its end on the shared engine, uncancelled, without progress.
pub fn run_to_end(llm: &LlmService, db: &Path, job: i64) -> Result<String, String> {
    uqd::jobs::run::run_job(
        &ENGINE,
        llm,
        db,
        job,
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
}

/// A fresh, empty directory for one test.
pub fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uqd-llm-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A daemon (engine + LLM layer) whose completion cache is `dir/completions.sqlite`. The
/// directory is removed when the daemon is dropped, unless the test failed (kept to inspect).
pub struct Daemon {
    pub server: Server,
    pub llm: Arc<LlmService>,
    pub cache_db: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            if let Some(dir) = self.cache_db.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

impl Daemon {
    pub fn new(dir: &Path, local_llm: PathBuf) -> Daemon {
        let cache_db = dir.join("completions.sqlite");
        let llm = Arc::new(LlmService::new(cache_db.clone(), local_llm).unwrap());
        Daemon {
            server: Server::new(
                Arc::clone(&ENGINE),
                Arc::clone(&llm),
                dir.join("unused.sock"),
            ),
            llm,
            cache_db,
        }
    }

    /// Sends one request line (as the extension would) and returns the raw reply object.
    pub fn reply(&self, request: &Value) -> Value {
        let (reply, _) = self.server.handle_line(&request.to_string());
        let text = serde_json::to_string(&reply).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The result of a request that must succeed.
    pub fn ok(&self, request: &Value) -> Value {
        let r = self.reply(request);
        assert_eq!(r["ok"], json!(true), "request {request} failed: {r}");
        r["result"].clone()
    }

    /// The error message of a request that must fail.
    pub fn err(&self, request: &Value) -> String {
        let r = self.reply(request);
        assert_eq!(r["ok"], json!(false), "request {request} succeeded: {r}");
        r["error"].as_str().unwrap().to_string()
    }
}

/// The SmolLM2 GGUF: `dist/models/smollm2/` first, then `UQ_LOCAL_LLM`, then
/// `/tmp/rt/models/smollm2/`. `None` (the test then says so and passes) unless
/// `UQ_REQUIRE_LOCAL_MODEL=1`.
pub fn local_model() -> Option<PathBuf> {
    let file = uq_llm::local::SMOLLM2_FILE;
    let mut candidates = vec![repo_root().join("dist/models/smollm2").join(file)];
    if let Ok(p) = std::env::var("UQ_LOCAL_LLM") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from("/tmp/rt/models/smollm2").join(file));
    let found = candidates.iter().find(|p| p.is_file()).cloned();
    if found.is_none() {
        let msg = format!("SmolLM2 GGUF not found (looked at {candidates:?}); set UQ_LOCAL_LLM");
        if std::env::var("UQ_REQUIRE_LOCAL_MODEL").as_deref() == Ok("1") {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
    }
    found
}
