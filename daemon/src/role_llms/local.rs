//! The local model (a `.gguf` file) as a backend: loaded once per file, on the first completion
//! that is not in the cache, and shared by every LLM config of the same file with its own
//! sampling settings.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use uq_core::options::LlmConfig;
use uq_llm::local::SMOLLM2_FILE;
use uq_llm::{LlmError, LocalModel, LocalSettings};

/// The error for a local model file that is not there.
pub(super) fn missing_local_model(path: &Path, e: impl std::fmt::Display) -> String {
    format!(
        "the local LLM model file {} cannot be read ({e}): run `make setup` (it unpacks {SMOLLM2_FILE} \
         into dist/models/smollm2/), or point UQ_LOCAL_LLM / --local-llm / the config file's local_llm \
         (or the LLM config's \"model\") at a .gguf file, or use an LLM config with \"backend\":\"openai\"",
        path.display()
    )
}

/// One `.gguf` file, loaded at most once, on first need.
pub(super) struct LocalSlot {
    path: PathBuf,
    model: Mutex<Option<Arc<LocalModel>>>,
    pub(super) loaded: AtomicBool,
}

impl LocalSlot {
    /// The slot of the file at `path`, not loaded.
    pub(super) fn new(path: PathBuf) -> LocalSlot {
        LocalSlot {
            path,
            model: Mutex::new(None),
            loaded: AtomicBool::new(false),
        }
    }

    /// The loaded model (loading it now if needed; blocking).
    fn load_blocking(&self) -> Result<Arc<LocalModel>, LlmError> {
        let mut guard = self.model.lock().unwrap_or_else(PoisonError::into_inner);
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
pub(super) struct LazyLocal {
    pub(super) settings: LocalSettings,
    pub(super) model_id: String,
    slot: Arc<LocalSlot>,
    model: tokio::sync::OnceCell<LocalModel>,
}

impl LazyLocal {
    /// The backend of `settings` on the model of `slot`, not loaded yet.
    pub(super) fn new(
        settings: LocalSettings,
        model_id: String,
        slot: Arc<LocalSlot>,
    ) -> LazyLocal {
        LazyLocal {
            settings,
            model_id,
            slot,
            model: tokio::sync::OnceCell::new(),
        }
    }

    /// The model with this backend's settings (loading the file now if needed).
    pub(super) async fn model(&self) -> Result<&LocalModel, LlmError> {
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

/// The sampling settings of `cfg` for the model at `path` (the defaults of `LocalSettings`
/// where it says nothing).
pub(super) fn settings(cfg: &LlmConfig, path: &Path) -> LocalSettings {
    let mut settings = LocalSettings::new(path);
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
    settings
}
