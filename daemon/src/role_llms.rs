//! The daemon's LLM layer: [`LlmService`] turns the LLM config objects of a request's options
//! (docs/reference.md, "LLM config") into backends of the `uq-llm` crate and runs their calls.
//!
//! * One tokio multi-thread runtime (2 workers) per daemon; connection threads drive LLM work
//!   with [`LlmService::block_on`]. Local generation runs on the runtime's blocking pool.
//! * Backends are memoised by config. Every backend sits behind [`CachedBackend`] over ONE
//!   persistent completion cache file (`--cache-db`), opened on first use: a finished completion
//!   is stored as soon as it returns, so a failed call loses no finished work and a repeated
//!   request makes no new call.
//! * The local model (SmolLM2 GGUF, ~1.5 s and ~0.7 GB to load) is loaded once per `.gguf` path
//!   and only when a completion is not in the cache: the cache key needs only the file's name
//!   and size, so a daemon that answers from the cache never loads it.
//! * LLM errors become messages naming the role and the LLM, e.g.
//!   `decomposition_llm (openai gpt-4o-mini at https://api.openai.com/v1): …`.
//!
//! Here: the service and the building of its backends; in `role_llms/`: `role` (an LLM in a
//! role, its calls), `backend` (the backends of an LLM config), `local` (the local model, loaded
//! on first need) and `meter` (LLM usage metered per piece of work).

mod backend;
mod local;
mod meter;
mod role;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use uq_core::options::{LlmBackendKind, LlmConfig, LlmRole, ScoreOptions};
use uq_llm::local::model_id_for;
use uq_llm::{CachedBackend, CompletionCache, OpenAiClient};

use backend::{openai_settings, Inner};
use local::{missing_local_model, LazyLocal, LocalSlot};
pub use meter::{metered, UsageMeter};
pub use role::{Llm, RoleLlm};

/// Worker threads of the LLM runtime (HTTP I/O and task scheduling; local generation runs on
/// the blocking pool).
pub const LLM_WORKER_THREADS: usize = 2;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The daemon's LLM layer (see the module docs).
pub struct LlmService {
    runtime: tokio::runtime::Runtime,
    cache_path: PathBuf,
    local_llm: PathBuf,
    cache: Mutex<Option<Arc<CompletionCache>>>,
    locals: Mutex<HashMap<PathBuf, Arc<LocalSlot>>>,
    backends: Mutex<HashMap<String, Arc<Llm>>>,
}

impl std::fmt::Debug for LlmService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmService")
            .field("cache_path", &self.cache_path)
            .field("local_llm", &self.local_llm)
            .finish()
    }
}

impl LlmService {
    /// A service with the completion cache at `cache_path` and the default local model at
    /// `local_llm`. Opens and loads nothing yet.
    pub fn new(cache_path: PathBuf, local_llm: PathBuf) -> Result<LlmService, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(LLM_WORKER_THREADS)
            .thread_name("uqd-llm")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the LLM runtime: {e}"))?;
        Ok(LlmService {
            runtime,
            cache_path,
            local_llm,
            cache: Mutex::new(None),
            locals: Mutex::new(HashMap::new()),
            backends: Mutex::new(HashMap::new()),
        })
    }

    /// Runs `f` to completion on the LLM runtime, from a thread outside it (a connection thread).
    /// Usage is metered when the calling thread runs inside [`metered`].
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        meter::block_on(&self.runtime, f)
    }

    pub fn cache_path(&self) -> &Path {
        &self.cache_path
    }

    pub fn local_llm(&self) -> &Path {
        &self.local_llm
    }

    /// Whether any local model has been loaded.
    pub fn local_loaded(&self) -> bool {
        lock(&self.locals)
            .values()
            .any(|s| s.loaded.load(Ordering::SeqCst))
    }

    /// The completion cache, opened on first use.
    pub fn cache(&self) -> Result<Arc<CompletionCache>, String> {
        let mut guard = lock(&self.cache);
        if let Some(c) = guard.as_ref() {
            return Ok(Arc::clone(c));
        }
        let c = Arc::new(CompletionCache::open(&self.cache_path).map_err(|e| {
            format!("{e} (the completion cache is set by --cache-db, UQ_CACHE_DB or the config file's cache_db)")
        })?);
        *guard = Some(Arc::clone(&c));
        Ok(c)
    }

    /// The LLM of `role` in `opts` (its own option, else `llm`, else the local model).
    pub fn for_role(&self, opts: &ScoreOptions, role: LlmRole) -> Result<RoleLlm, String> {
        let cfg = opts.llm.for_role(role);
        let llm = self.build(&cfg, role)?;
        Ok(RoleLlm { role, llm })
    }

    /// The LLM of `cfg` in `role` (a config the caller adjusted, e.g. the NLI judge's).
    pub fn role_llm(&self, cfg: &LlmConfig, role: LlmRole) -> Result<RoleLlm, String> {
        let llm = self.build(cfg, role)?;
        Ok(RoleLlm { role, llm })
    }

    /// The memoised LLM of `cfg`; errors name `role` (and the LLM, when it is one of its own).
    fn build(&self, cfg: &LlmConfig, role: LlmRole) -> Result<Arc<Llm>, String> {
        let key = cfg.memo_key();
        if let Some(l) = lock(&self.backends).get(&key) {
            return Ok(Arc::clone(l));
        }
        let role = role.option_name();
        let cache = self.cache().map_err(|e| format!("{role}: {e}"))?;
        let (label, inner, max_tokens) = match cfg.backend {
            LlmBackendKind::OpenAi => self.openai_backend(cfg, role)?,
            LlmBackendKind::Local => self.local_backend(cfg, role)?,
        };
        let llm = Arc::new(Llm {
            label,
            kind: cfg.backend,
            temperature: cfg.temperature,
            max_tokens,
            backend: CachedBackend::new(inner, cache),
        });
        let mut map = lock(&self.backends);
        Ok(Arc::clone(map.entry(key).or_insert(llm)))
    }

    /// The OpenAI-compatible client of `cfg` (the defaults of `LlmSettings` where it says
    /// nothing): its label, backend and `max_tokens`.
    fn openai_backend(&self, cfg: &LlmConfig, role: &str) -> Result<(String, Inner, u32), String> {
        let settings = openai_settings(cfg);
        let label = format!(
            "openai {} at {}{}",
            settings.model,
            settings.base_url.trim_end_matches('/'),
            match settings.replicas.len() {
                0 => String::new(),
                n => format!(" (+{n} replicas)"),
            }
        );
        let max_tokens = settings.max_tokens;
        // reqwest's client is built inside the runtime it will run on.
        let _guard = self.runtime.enter();
        let client = OpenAiClient::new(settings).map_err(|e| format!("{role} ({label}): {e}"))?;
        Ok((label, Inner::OpenAi(client), max_tokens))
    }

    /// The local model of `cfg` (default: the embedded one), loaded on first use and shared by
    /// every config of the same file: its label, backend and `max_tokens`.
    fn local_backend(&self, cfg: &LlmConfig, role: &str) -> Result<(String, Inner, u32), String> {
        let path = cfg
            .model
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.local_llm.clone());
        let label = format!("local model {}", path.display());
        let settings = local::settings(cfg, &path);
        let model_id = model_id_for(&path)
            .map_err(|e| format!("{role} ({label}): {}", missing_local_model(&path, e)))?;
        let slot = Arc::clone(
            lock(&self.locals)
                .entry(path.clone())
                .or_insert_with(|| Arc::new(LocalSlot::new(path.clone()))),
        );
        let max_tokens = settings.max_tokens;
        Ok((
            label,
            Inner::Local(LazyLocal::new(settings, model_id, slot)),
            max_tokens,
        ))
    }
}
