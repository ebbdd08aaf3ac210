//! uqlite's LLM layer: the paper's prompts, parsers for what models answer, an OpenAI-compatible
//! chat-completions client, a persistent completion cache, and an embedded SmolLM2 model for
//! offline use. Every backend implements [`LlmBackend`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), uq_llm::LlmError> {
//! use std::sync::Arc;
//! use uq_llm::{prompts, parse, CachedBackend, ChatRequest, CompletionCache, LlmBackend, LlmSettings, OpenAiClient};
//! let client = OpenAiClient::new(LlmSettings { model: "gpt-4o-mini".into(), ..LlmSettings::default() })?;
//! let llm = CachedBackend::new(client, Arc::new(CompletionCache::open("llm-cache.sqlite")?));
//! let req = ChatRequest::new(prompts::claim_decomposition("Paris is the capital of France.")).with_temperature(0.0);
//! let claims = parse::claims(&llm.complete(&req, 1).await?.texts[0]);
//! # let _ = claims; Ok(()) }
//! ```

pub mod backoff;
pub mod cache;
pub mod client;
pub mod error;
pub mod gguf_tokenizer;
pub mod limiter;
pub mod local;
pub mod logprobs;
pub mod openai;
pub mod parse;
pub mod prompts;
pub mod replicas;
pub mod reply;
pub mod sampling;

pub use cache::{CachedBackend, CachedSample, CompletionCache};
pub use client::{
    BackendIdentity, ChatRequest, Completion, LlmBackend, LlmSettings, Params, Usage,
};
pub use error::LlmError;
pub use local::{Generation, LocalModel, LocalSettings};
pub use logprobs::{Alternative, TokenLogprob};
pub use openai::{install_crypto_provider, OpenAiClient};
