//! The backends an LLM config builds: the OpenAI-compatible client, or the local model loaded
//! on first need (`local.rs`), as one [`LlmBackend`] for the completion cache to wrap.

use async_trait::async_trait;
use uq_core::options::LlmConfig;
use uq_llm::{
    BackendIdentity, ChatRequest, Completion, LlmBackend, LlmError, LlmSettings, OpenAiClient,
    Params,
};

use super::local::LazyLocal;

/// The backends the daemon builds (a handful per process: their size does not matter).
#[allow(clippy::large_enum_variant)]
pub(super) enum Inner {
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

/// The OpenAI-compatible client's settings of `cfg` (the defaults of `LlmSettings` where it
/// says nothing).
pub(super) fn openai_settings(cfg: &LlmConfig) -> LlmSettings {
    let d = LlmSettings::default();
    LlmSettings {
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
    }
}
