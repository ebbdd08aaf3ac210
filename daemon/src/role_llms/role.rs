//! A built LLM, and the LLM of a role: its calls go through the completion cache, add their
//! usage to the meter of the work that awaits them, and their errors name the role and the LLM.

use std::sync::Arc;

use uq_core::options::{LlmBackendKind, LlmRole};
use uq_llm::cache::request_key;
use uq_llm::{CachedBackend, CachedSample, ChatRequest, Completion, LlmBackend};

use super::backend::Inner;
use super::meter::record_usage;

/// One built LLM (memoised per config).
pub struct Llm {
    /// e.g. `openai gpt-4o-mini at https://api.openai.com/v1` or `local model /path/x.gguf`.
    pub(super) label: String,
    pub(super) kind: LlmBackendKind,
    /// The config's `temperature`, if it set one.
    pub(super) temperature: Option<f64>,
    /// The config's `max_tokens` in force (its own or the backend's default).
    pub(super) max_tokens: u32,
    pub(super) backend: CachedBackend<Inner>,
}

/// An LLM in a role: its calls' errors name the role and the LLM.
#[derive(Clone)]
pub struct RoleLlm {
    pub role: LlmRole,
    pub(super) llm: Arc<Llm>,
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
