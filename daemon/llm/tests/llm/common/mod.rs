//! The client and cache tests talk to the shared fake OpenAI-compatible server
//! (`tests/fake-openai`): each request takes the next scripted reply; when the script is used
//! up, every request gets a success whose text names the request's number, so distinct calls
//! give distinct texts.

#![allow(dead_code)]

pub use uq_fake_openai::{FakeOpenAi, Reply};

/// Settings pointing at `server`, no API key, quick timeouts.
pub fn settings(server: &FakeOpenAi) -> uq_llm::LlmSettings {
    uq_llm::LlmSettings {
        base_url: server.base_url.clone(),
        model: "fake-model".into(),
        api_key_env: None,
        temperature: 1.0,
        max_tokens: 32,
        timeout_ms: 5_000,
        max_retries: 3,
        concurrency: 4,
        ..uq_llm::LlmSettings::default()
    }
}
