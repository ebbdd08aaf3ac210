//! Backend-independent types: the request, the completion, the settings of the HTTP client and
//! the [`LlmBackend`] trait that the OpenAI-compatible client, the local model and the cache
//! wrapper all implement.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::LlmError;
use crate::logprobs::TokenLogprob;

/// One prompt: an optional system message and a user message, or raw text (local model only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatRequest {
    /// System message; `None` sends only the user message (the local model then uses its
    /// template's default system prompt, as the GGUF's chat template does).
    pub system: Option<String>,
    /// User message, or the whole raw prompt when `raw`.
    pub user: String,
    /// Raw completion: `user` is fed to the model as is, with no chat template. Only the local
    /// backend supports it (few-shot raw prompts split claims better with a tiny model).
    pub raw: bool,
    /// Overrides the backend's temperature for this request.
    pub temperature: Option<f64>,
    /// Overrides the backend's `max_tokens` for this request.
    pub max_tokens: Option<u32>,
    /// Stop sequences: generation ends before the first of them (sent as `stop` to servers).
    pub stop: Vec<String>,
}

impl ChatRequest {
    /// A user-only chat request.
    pub fn new(user: impl Into<String>) -> Self {
        ChatRequest {
            system: None,
            user: user.into(),
            raw: false,
            temperature: None,
            max_tokens: None,
            stop: Vec::new(),
        }
    }

    /// A raw completion request (no chat template; local backend only).
    pub fn raw(prompt: impl Into<String>) -> Self {
        ChatRequest {
            raw: true,
            ..ChatRequest::new(prompt)
        }
    }

    /// Sets the system message.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Overrides the temperature for this request.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Overrides `max_tokens` for this request.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Adds a stop sequence.
    pub fn with_stop(mut self, stop: impl Into<String>) -> Self {
        self.stop.push(stop.into());
        self
    }
}

/// Token counts of what a call cost. Cached samples cost nothing and count in `cache_hits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// HTTP requests (or local generations) that returned a usable answer.
    pub requests: u64,
    /// Samples served from the completion cache.
    pub cache_hits: u64,
}

impl Usage {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.requests = self.requests.saturating_add(other.requests);
        self.cache_hits = self.cache_hits.saturating_add(other.cache_hits);
    }
}

/// The answer to one request: `texts[i]` is sample `i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub texts: Vec<String>,
    pub usage: Usage,
    /// Per sample, each generated token with its log-probability and alternatives (when
    /// logprobs were requested).
    pub logprobs: Option<Vec<Vec<TokenLogprob>>>,
    /// The model that answered (as the server names it).
    pub model: String,
}

/// Settings of the OpenAI-compatible client. The API key is never stored: `api_key_env` names the
/// environment variable that holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmSettings {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1` (no `/chat/completions`).
    /// The completion cache knows the LLM by this URL, whatever replica answers.
    pub base_url: String,
    /// More replicas of the same model (e.g. vLLM servers): each attempt goes to the least
    /// loaded healthy one of `base_url` and these (see `crate::replicas`).
    pub replicas: Vec<String>,
    /// How long a replica that failed stays out before it is tried again (ms).
    pub replica_retry_ms: u64,
    pub model: String,
    /// Name of the environment variable holding the API key; `None` sends no Authorization.
    pub api_key_env: Option<String>,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    /// Seed sent to the server; sample `i` of separate requests gets `seed + i`.
    pub seed: Option<u64>,
    /// The server honours `n` (several choices in one request).
    pub n_supported: bool,
    /// Limit for one HTTP attempt, body included.
    pub timeout_ms: u64,
    /// Retries after the first attempt (so at most `max_retries + 1` attempts).
    pub max_retries: u32,
    /// Requests in flight at once.
    pub concurrency: usize,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    /// Ask for token log-probabilities.
    pub logprobs: bool,
    /// With `logprobs`: how many most likely alternatives to ask for at each position
    /// (`top_logprobs`; 0: the chosen tokens only; OpenAI allows up to 20).
    pub top_logprobs: u32,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            base_url: "https://api.openai.com/v1".into(),
            replicas: Vec::new(),
            replica_retry_ms: 30_000,
            model: "gpt-4o-mini".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            temperature: 1.0,
            top_p: 1.0,
            max_tokens: 1024,
            seed: None,
            n_supported: true,
            timeout_ms: 60_000,
            max_retries: 5,
            concurrency: 8,
            requests_per_minute: None,
            tokens_per_minute: None,
            logprobs: false,
            top_logprobs: DEFAULT_TOP_LOGPROBS,
        }
    }
}

/// Alternatives asked for at each position when logprobs are on and the config does not say.
pub const DEFAULT_TOP_LOGPROBS: u32 = 5;

/// The generation parameters in force for one request (settings with the request's overrides).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    pub seed: Option<u64>,
    pub logprobs: bool,
    /// Alternatives per position (0 when `logprobs` is off).
    pub top_logprobs: u32,
}

impl Params {
    /// These parameters (a backend's settings) with `req`'s overrides of the temperature and
    /// `max_tokens`; `top_logprobs` counts only with `logprobs` on (0 otherwise).
    pub(crate) fn for_request(self, req: &ChatRequest) -> Params {
        Params {
            temperature: req.temperature.unwrap_or(self.temperature),
            max_tokens: req.max_tokens.unwrap_or(self.max_tokens),
            top_logprobs: if self.logprobs { self.top_logprobs } else { 0 },
            ..self
        }
    }
}

/// What identifies a backend for the completion cache: everything besides the request that can
/// change the answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendIdentity {
    /// `"openai"` or `"local"`.
    pub backend: String,
    pub base_url: String,
    pub model: String,
}

/// A source of completions.
#[async_trait]
pub trait LlmBackend: Send + Sync {
    /// Backend name, URL and model, for the cache key.
    fn identity(&self) -> BackendIdentity;

    /// Parameters in force for `req` (temperature, top_p, max_tokens, seed, logprobs).
    fn params(&self, req: &ChatRequest) -> Params;

    /// Whether `complete(req, n)` with `n > 1` costs one call rather than `n`.
    fn batches_samples(&self) -> bool {
        false
    }

    /// `n` samples for `req` (`n == 0` returns no text and costs nothing).
    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError>;

    /// Sample number `index` alone (its seed, when a seed is set, is `seed + index`, so that
    /// sample `i` is the same whether it was asked alone or as part of `complete(req, n)` on
    /// backends that do not batch).
    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError>;
}

/// Checks the sampling settings every backend shares: temperature in 0..=2, top_p in (0, 1],
/// max_tokens ≥ 1. Returns the message of the first one out of range.
pub(crate) fn check_sampling(temperature: f64, top_p: f64, max_tokens: u32) -> Result<(), String> {
    if !(0.0..=2.0).contains(&temperature) {
        return Err(format!("temperature {temperature} is outside 0..=2"));
    }
    if !(top_p > 0.0 && top_p <= 1.0) {
        return Err(format!("top_p {top_p} is outside (0, 1]"));
    }
    if max_tokens == 0 {
        return Err("max_tokens is 0: allow at least 1 token".into());
    }
    Ok(())
}

/// Checks a request and `n` before any work: a clear error for empty prompts and absurd `n`.
pub(crate) fn check_request(req: &ChatRequest, n: usize) -> Result<(), LlmError> {
    if req.user.trim().is_empty() {
        return Err(LlmError::Config(
            "the user prompt is empty: pass the text to send".into(),
        ));
    }
    if n > 1024 {
        return Err(LlmError::Config(format!(
            "n = {n} samples is more than the 1024 allowed in one call: ask in smaller batches"
        )));
    }
    if req.stop.iter().any(String::is_empty) {
        return Err(LlmError::Config(
            "an empty stop sequence would stop at once: remove it".into(),
        ));
    }
    if let Some(t) = req.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(LlmError::Config(format!(
                "temperature {t} is outside 0..=2"
            )));
        }
    }
    Ok(())
}
