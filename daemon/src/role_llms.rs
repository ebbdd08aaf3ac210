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

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use uq_core::options::{LlmBackendKind, LlmConfig, LlmRole, ScoreOptions};
use uq_llm::cache::request_key;
use uq_llm::local::{model_id_for, SMOLLM2_FILE};
use uq_llm::{
    BackendIdentity, CachedBackend, CachedSample, ChatRequest, Completion, CompletionCache,
    LlmBackend, LlmError, LlmSettings, LocalModel, LocalSettings, OpenAiClient, Params, Usage,
};

/// LLM usage of some metered work (a job's row): calls, tokens, cache hits. Work run inside
/// [`metered`] on a thread adds the usage of every completion it awaits through
/// [`LlmService::block_on`] (futures polled in the same task, e.g. `join_all`, included).
#[derive(Debug, Default)]
pub struct UsageMeter(Mutex<Usage>);

impl UsageMeter {
    pub fn add(&self, u: &Usage) {
        lock(&self.0).add(u);
    }
    pub fn get(&self) -> Usage {
        *lock(&self.0)
    }
}

thread_local! {
    static THREAD_METER: std::cell::RefCell<Option<Arc<UsageMeter>>> = const { std::cell::RefCell::new(None) };
}

tokio::task_local! {
    static TASK_METER: Arc<UsageMeter>;
}

/// Runs `f` on this thread with LLM usage added to `meter`.
pub fn metered<T>(meter: &Arc<UsageMeter>, f: impl FnOnce() -> T) -> T {
    let previous = THREAD_METER.with(|m| m.replace(Some(Arc::clone(meter))));
    struct Restore(Option<Arc<UsageMeter>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            THREAD_METER.with(|m| *m.borrow_mut() = previous);
        }
    }
    let _restore = Restore(previous);
    f()
}

fn record_usage(c: &Completion) {
    let _ = TASK_METER.try_with(|m| m.add(&c.usage));
}

/// Worker threads of the LLM runtime (HTTP I/O and task scheduling; local generation runs on
/// the blocking pool).
pub const LLM_WORKER_THREADS: usize = 2;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The error for a local model file that is not there.
fn missing_local_model(path: &Path, e: impl std::fmt::Display) -> String {
    format!(
        "the local LLM model file {} cannot be read ({e}): run `make setup` (it unpacks {SMOLLM2_FILE} \
         into dist/models/smollm2/), or point UQ_LOCAL_LLM / --local-llm / the config file's local_llm \
         (or the LLM config's \"model\") at a .gguf file, or use an LLM config with \"backend\":\"openai\"",
        path.display()
    )
}

/// One `.gguf` file, loaded at most once, on first need.
struct LocalSlot {
    path: PathBuf,
    model: Mutex<Option<Arc<LocalModel>>>,
    loaded: AtomicBool,
}

impl LocalSlot {
    /// The loaded model (loading it now if needed; blocking).
    fn load_blocking(&self) -> Result<Arc<LocalModel>, LlmError> {
        let mut guard = lock(&self.model);
        if let Some(m) = guard.as_ref() {
            return Ok(Arc::clone(m));
        }
        if let Err(e) = std::fs::metadata(&self.path) {
            return Err(LlmError::Local(missing_local_model(&self.path, e)));
        }
        let t = std::time::Instant::now();
        let m = Arc::new(LocalModel::load(LocalSettings::new(&self.path))?);
        eprintln!(
            "uqd: loaded the local LLM {} in {:.1}s",
            self.path.display(),
            t.elapsed().as_secs_f64()
        );
        *guard = Some(Arc::clone(&m));
        self.loaded.store(true, Ordering::SeqCst);
        Ok(m)
    }
}

/// A local backend whose weights are loaded on its first completion that is not cached.
struct LazyLocal {
    settings: LocalSettings,
    model_id: String,
    slot: Arc<LocalSlot>,
    model: tokio::sync::OnceCell<LocalModel>,
}

impl LazyLocal {
    async fn model(&self) -> Result<&LocalModel, LlmError> {
        self.model
            .get_or_try_init(|| async {
                let slot = Arc::clone(&self.slot);
                let base = tokio::task::spawn_blocking(move || slot.load_blocking())
                    .await
                    .map_err(|e| {
                        LlmError::Local(format!("loading the local model failed: {e}"))
                    })??;
                base.with_settings(self.settings.clone())
            })
            .await
    }
}

/// The backends the daemon builds (a handful per process: their size does not matter).
#[allow(clippy::large_enum_variant)]
enum Inner {
    Local(LazyLocal),
    OpenAi(OpenAiClient),
}

#[async_trait]
impl LlmBackend for Inner {
    fn identity(&self) -> BackendIdentity {
        match self {
            Inner::Local(l) => BackendIdentity {
                backend: "local".into(),
                base_url: String::new(),
                model: l.model_id.clone(),
            },
            Inner::OpenAi(c) => c.identity(),
        }
    }

    fn params(&self, req: &ChatRequest) -> Params {
        match self {
            Inner::Local(l) => l.settings.params(req),
            Inner::OpenAi(c) => c.params(req),
        }
    }

    fn batches_samples(&self) -> bool {
        match self {
            Inner::Local(_) => false,
            Inner::OpenAi(c) => c.batches_samples(),
        }
    }

    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError> {
        match self {
            Inner::Local(l) => l.model().await?.complete(req, n).await,
            Inner::OpenAi(c) => c.complete(req, n).await,
        }
    }

    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError> {
        match self {
            Inner::Local(l) => l.model().await?.complete_sample(req, index).await,
            Inner::OpenAi(c) => c.complete_sample(req, index).await,
        }
    }
}

/// One built LLM (memoised per config).
pub struct Llm {
    /// e.g. `openai gpt-4o-mini at https://api.openai.com/v1` or `local model /path/x.gguf`.
    label: String,
    kind: LlmBackendKind,
    /// The config's `temperature`, if it set one.
    temperature: Option<f64>,
    /// The config's `max_tokens` in force (its own or the backend's default).
    max_tokens: u32,
    backend: CachedBackend<Inner>,
}

/// An LLM in a role: its calls' errors name the role and the LLM.
#[derive(Clone)]
pub struct RoleLlm {
    pub role: LlmRole,
    llm: Arc<Llm>,
}

impl RoleLlm {
    /// `role_option (label): message`.
    pub fn error(&self, e: impl std::fmt::Display) -> String {
        format!("{} ({}): {e}", self.role.option_name(), self.llm.label)
    }

    pub fn label(&self) -> &str {
        &self.llm.label
    }

    pub fn kind(&self) -> LlmBackendKind {
        self.llm.kind
    }

    /// Temperature for roles that do not fix their own (judge, reconstruction): the config's
    /// `temperature`, else 0 (greedy, reproducible).
    pub fn role_temperature(&self) -> f64 {
        self.llm.temperature.unwrap_or(0.0)
    }

    /// `max_tokens` in force for this LLM.
    pub fn max_tokens(&self) -> u32 {
        self.llm.max_tokens
    }

    /// True when a repeated call with `req` gives the same text: the local model decoding
    /// greedily (temperature 0).
    pub fn deterministic(&self, req: &ChatRequest) -> bool {
        self.llm.kind == LlmBackendKind::Local && self.llm.backend.params(req).temperature == 0.0
    }

    /// `n` samples (through the completion cache).
    pub async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, String> {
        let c = self
            .llm
            .backend
            .complete(req, n)
            .await
            .map_err(|e| self.error(e))?;
        record_usage(&c);
        Ok(c)
    }

    /// Sample `index` alone (through the completion cache).
    pub async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, String> {
        let c = self
            .llm
            .backend
            .complete_sample(req, index)
            .await
            .map_err(|e| self.error(e))?;
        record_usage(&c);
        Ok(c)
    }

    /// The first text of a one-sample completion.
    pub async fn text(&self, req: &ChatRequest) -> Result<String, String> {
        let c = self.complete(req, 1).await?;
        c.texts
            .into_iter()
            .next()
            .ok_or_else(|| self.error("the backend returned no text"))
    }

    /// Sample `index` of `req` as stored in the completion cache, if it is there.
    pub fn cached(&self, req: &ChatRequest, index: usize) -> Result<Option<CachedSample>, String> {
        let b = &self.llm.backend;
        let (hash, _) = request_key(&b.identity(), &b.params(req), req);
        b.cache().get(&hash, index).map_err(|e| self.error(e))
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
        match THREAD_METER.with(|m| m.borrow().clone()) {
            Some(meter) => self.runtime.block_on(TASK_METER.scope(meter, f)),
            None => self.runtime.block_on(f),
        }
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
        let d = LlmSettings::default();
        let settings = LlmSettings {
            base_url: cfg.base_url.clone().unwrap_or(d.base_url),
            replicas: cfg.replicas.clone(),
            replica_retry_ms: cfg.replica_retry_ms.unwrap_or(d.replica_retry_ms),
            model: cfg.model.clone().unwrap_or(d.model),
            api_key_env: cfg.api_key_env.clone().unwrap_or(d.api_key_env),
            temperature: cfg.temperature.unwrap_or(d.temperature),
            top_p: cfg.top_p.unwrap_or(d.top_p),
            max_tokens: cfg.max_tokens.unwrap_or(d.max_tokens),
            seed: cfg.seed.or(d.seed),
            n_supported: cfg.n_supported.unwrap_or(d.n_supported),
            timeout_ms: cfg.timeout_ms.unwrap_or(d.timeout_ms),
            max_retries: cfg.max_retries.unwrap_or(d.max_retries),
            concurrency: cfg.concurrency.unwrap_or(d.concurrency),
            requests_per_minute: cfg.requests_per_minute.or(d.requests_per_minute),
            tokens_per_minute: cfg.tokens_per_minute.or(d.tokens_per_minute),
            logprobs: cfg.logprobs.unwrap_or(d.logprobs),
            top_logprobs: cfg.top_logprobs.unwrap_or(d.top_logprobs),
        };
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
        let mut settings = LocalSettings::new(&path);
        if let Some(t) = cfg.temperature {
            settings.temperature = t;
        }
        if let Some(p) = cfg.top_p {
            settings.top_p = p;
        }
        if let Some(m) = cfg.max_tokens {
            settings.max_tokens = m;
        }
        if let Some(s) = cfg.seed {
            settings.seed = Some(s);
        }
        if let Some(l) = cfg.logprobs {
            settings.logprobs = l;
        }
        if let Some(k) = cfg.top_logprobs {
            settings.top_logprobs = k;
        }
        let model_id = model_id_for(&path)
            .map_err(|e| format!("{role} ({label}): {}", missing_local_model(&path, e)))?;
        let slot = Arc::clone(lock(&self.locals).entry(path.clone()).or_insert_with(|| {
            Arc::new(LocalSlot {
                path: path.clone(),
                model: Mutex::new(None),
                loaded: AtomicBool::new(false),
            })
        }));
        let max_tokens = settings.max_tokens;
        Ok((
            label,
            Inner::Local(LazyLocal {
                settings,
                model_id,
                slot,
                model: tokio::sync::OnceCell::new(),
            }),
            max_tokens,
        ))
    }
}
