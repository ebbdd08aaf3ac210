//! OpenAI-compatible chat-completions client (`POST {base_url}/chat/completions`).
//!
//! A semaphore caps requests in flight, token buckets enforce RPM/TPM, each attempt has its own
//! timeout, and 429/408/409/425/5xx, timeouts, connection errors, broken JSON and empty `choices`
//! are retried with exponential backoff and full jitter (or the server's `Retry-After`, capped at
//! [`crate::backoff::MAX_RETRY_AFTER`]) up to `max_retries` times. Other 4xx fail at once.

mod transport;
mod validate;

use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::join_all;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::backoff::jittered;
use crate::client::{
    check_request, BackendIdentity, ChatRequest, Completion, LlmBackend, LlmSettings, Params, Usage,
};
use crate::error::LlmError;
use crate::limiter::{estimate_tokens, RateLimiter};
use crate::logprobs::TokenLogprob;
use crate::replicas::Replicas;
use crate::reply::ParsedReply;
use transport::{Attempt, Transport};
use validate::validate;

pub use transport::install_crypto_provider;
pub use validate::MAX_RETRIES_LIMIT;

/// The HTTP backend.
pub struct OpenAiClient {
    settings: LlmSettings,
    url: String,
    replicas: Replicas,
    transport: Transport,
    permits: Semaphore,
    limiter: RateLimiter,
    total: std::sync::Mutex<Usage>,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The API key is deliberately left out.
        f.debug_struct("OpenAiClient")
            .field("url", &self.url)
            .field("settings", &self.settings)
            .finish()
    }
}

impl OpenAiClient {
    /// Checks the settings, reads the API key from the variable named by `api_key_env`, and
    /// builds the HTTP client.
    pub fn new(settings: LlmSettings) -> Result<Self, LlmError> {
        validate(&settings)?;
        let transport = Transport::new(&settings)?;
        let url = format!(
            "{}/chat/completions",
            settings.base_url.trim_end_matches('/')
        );
        let mut bases = vec![settings.base_url.clone()];
        bases.extend(settings.replicas.iter().cloned());
        let replicas = Replicas::new(&bases, Duration::from_millis(settings.replica_retry_ms));
        Ok(OpenAiClient {
            replicas,
            permits: Semaphore::new(settings.concurrency),
            limiter: RateLimiter::new(settings.requests_per_minute, settings.tokens_per_minute),
            total: std::sync::Mutex::new(Usage::default()),
            settings,
            url,
            transport,
        })
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// Tokens and successful requests of every call made by this client so far.
    pub fn total_usage(&self) -> Usage {
        match self.total.lock() {
            Ok(g) => *g,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// The full endpoint URL (of the first replica).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The replicas taken out after failing, until their `replica_retry_ms` is over.
    pub fn replicas_down(&self) -> Vec<String> {
        self.replicas
            .down()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn body(&self, req: &ChatRequest, n: usize, seed: Option<u64>) -> Value {
        let p = self.params(req);
        let mut messages = Vec::with_capacity(2);
        if let Some(s) = &req.system {
            messages.push(json!({"role": "system", "content": s}));
        }
        messages.push(json!({"role": "user", "content": req.user}));
        let mut body = json!({
            "model": self.settings.model,
            "messages": messages,
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_tokens,
        });
        if n > 1 {
            body["n"] = json!(n);
        }
        if let Some(s) = seed {
            body["seed"] = json!(s);
        }
        if p.logprobs {
            body["logprobs"] = json!(true);
            // Always sent: servers such as llama-cpp-python return no log-probabilities unless
            // top_logprobs is given (0, the chosen tokens only, is valid in the OpenAI API).
            body["top_logprobs"] = json!(p.top_logprobs);
        }
        if !req.stop.is_empty() {
            body["stop"] = json!(req.stop);
        }
        body
    }

    /// One logical request (with `n` choices), retried as the settings allow.
    async fn request(
        &self,
        req: &ChatRequest,
        n: usize,
        seed: Option<u64>,
    ) -> Result<ParsedReply, LlmError> {
        let body = self.body(req, n, seed);
        let p = self.params(req);
        let prompt_chars = req.user.len() + req.system.as_ref().map_or(0, String::len);
        let estimate = estimate_tokens(prompt_chars) + u64::from(p.max_tokens) * n as u64;
        let attempts = self.settings.max_retries + 1;
        // Moving to another healthy replica after a failure does not use up a retry, at most
        // once per other replica.
        let mut free_failovers = self.replicas.len() - 1;
        let mut last = String::new();
        let mut attempt = 0;
        while attempt < attempts {
            self.limiter.acquire(estimate).await;
            let (replica, outcome) = {
                let _permit = self
                    .permits
                    .acquire()
                    .await
                    .map_err(|_| LlmError::Config("the client was shut down".into()))?;
                let (i, _in_flight) = self.replicas.pick();
                let url = self.replicas.url(i);
                (
                    i,
                    self.transport
                        .attempt(&self.settings, &body, p.logprobs, url)
                        .await,
                )
            };
            match outcome {
                Attempt::Done(reply) => return Ok(self.succeeded(replica, reply, estimate)),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry {
                    reason,
                    retry_after,
                } => {
                    last = if self.replicas.len() > 1 {
                        format!("{}: {reason}", self.replicas.url(replica))
                    } else {
                        reason
                    };
                    if self.replicas.failed(replica) && free_failovers > 0 {
                        free_failovers -= 1;
                        continue;
                    }
                    if attempt + 1 < attempts {
                        tokio::time::sleep(retry_after.unwrap_or_else(|| jittered(attempt))).await;
                    }
                    attempt += 1;
                }
            }
        }
        Err(self.exhausted(attempts, &last))
    }

    /// Books a reply that came back: the replica is healthy again, the request counts in the
    /// client's total, and the rate limiter learns the tokens it really cost.
    fn succeeded(&self, replica: usize, mut reply: ParsedReply, estimate: u64) -> ParsedReply {
        self.replicas.succeeded(replica);
        reply.usage.requests = 1;
        match self.total.lock() {
            Ok(mut t) => t.add(&reply.usage),
            Err(poisoned) => poisoned.into_inner().add(&reply.usage),
        }
        let used = reply.usage.prompt_tokens + reply.usage.completion_tokens;
        if used > 0 {
            self.limiter.settle(estimate, used);
        }
        reply
    }

    /// The error of a request whose `attempts` all failed; `last` is the last failure's reason.
    fn exhausted(&self, attempts: u32, last: &str) -> LlmError {
        let target = if self.replicas.len() > 1 {
            format!(
                "{} replicas of {}",
                self.replicas.len(),
                self.settings.model
            )
        } else {
            format!("POST {}", self.url)
        };
        LlmError::RetriesExhausted(format!(
            "{target} failed after {attempts} attempts; last error: {last}. Fix: check that the server is up and \
             healthy, lower concurrency or requests_per_minute/tokens_per_minute if rate limited, or raise \
             max_retries / timeout_ms"
        ))
    }

    fn finish(&self, replies: Vec<ParsedReply>) -> Completion {
        let mut usage = Usage::default();
        let mut texts = Vec::new();
        let mut logprobs: Option<Vec<Vec<TokenLogprob>>> = self.settings.logprobs.then(Vec::new);
        let mut model = None;
        for r in replies {
            usage.add(&r.usage);
            texts.extend(r.texts);
            if let (Some(all), Some(lp)) = (logprobs.as_mut(), r.logprobs) {
                all.extend(lp);
            }
            model = model.or(r.model);
        }
        Completion {
            texts,
            usage,
            logprobs,
            model: model.unwrap_or_else(|| self.settings.model.clone()),
        }
    }
}

#[async_trait]
impl LlmBackend for OpenAiClient {
    fn identity(&self) -> BackendIdentity {
        BackendIdentity {
            backend: "openai".into(),
            base_url: self.settings.base_url.trim_end_matches('/').to_string(),
            model: self.settings.model.clone(),
        }
    }

    fn params(&self, req: &ChatRequest) -> Params {
        let s = &self.settings;
        Params {
            temperature: s.temperature,
            top_p: s.top_p,
            max_tokens: s.max_tokens,
            seed: s.seed,
            logprobs: s.logprobs,
            top_logprobs: s.top_logprobs,
        }
        .for_request(req)
    }

    fn batches_samples(&self) -> bool {
        self.settings.n_supported
    }

    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError> {
        check_request(req, n)?;
        if req.raw {
            return Err(raw_unsupported());
        }
        if n == 0 {
            return Ok(self.finish(Vec::new()));
        }
        if n == 1 || !self.settings.n_supported {
            let replies = join_all((0..n).map(|i| self.request(req, 1, self.sample_seed(i)))).await;
            let replies = replies.into_iter().collect::<Result<Vec<_>, _>>()?;
            return Ok(self.finish(replies.into_iter().map(first_choice).collect()));
        }
        let mut first = self.request(req, n, self.settings.seed).await?;
        first.texts.truncate(n);
        if let Some(lp) = first.logprobs.as_mut() {
            lp.truncate(n);
        }
        let got = first.texts.len();
        // Servers that ignore `n` send fewer choices: ask for the rest one by one.
        let rest = join_all((got..n).map(|i| self.request(req, 1, self.sample_seed(i)))).await;
        let mut replies = vec![first];
        for r in rest {
            replies.push(first_choice(r?));
        }
        Ok(self.finish(replies))
    }

    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError> {
        check_request(req, 1)?;
        if req.raw {
            return Err(raw_unsupported());
        }
        let reply = self.request(req, 1, self.sample_seed(index)).await?;
        Ok(self.finish(vec![first_choice(reply)]))
    }
}

impl OpenAiClient {
    fn sample_seed(&self, index: usize) -> Option<u64> {
        self.settings.seed.map(|s| s.wrapping_add(index as u64))
    }
}

/// Keeps only the first choice of a reply (a server may send more than asked).
fn first_choice(mut r: ParsedReply) -> ParsedReply {
    r.texts.truncate(1);
    if let Some(lp) = r.logprobs.as_mut() {
        lp.truncate(1);
    }
    r
}

fn raw_unsupported() -> LlmError {
    LlmError::Config(
        "raw completion prompts (ChatRequest::raw) need the local backend; send a chat request to an \
         OpenAI-compatible server"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LlmSettings {
        LlmSettings {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: None,
            ..LlmSettings::default()
        }
    }

    #[test]
    fn settings_are_checked() {
        for (s, needle) in [
            (
                LlmSettings {
                    base_url: "localhost:8000".into(),
                    ..settings()
                },
                "http://",
            ),
            (
                LlmSettings {
                    base_url: "http://x/v1/chat/completions".into(),
                    ..settings()
                },
                "must not include",
            ),
            (
                LlmSettings {
                    concurrency: 0,
                    ..settings()
                },
                "concurrency",
            ),
            (
                LlmSettings {
                    top_p: 0.0,
                    ..settings()
                },
                "top_p",
            ),
            (
                LlmSettings {
                    max_retries: 1000,
                    ..settings()
                },
                "max_retries",
            ),
            (
                LlmSettings {
                    requests_per_minute: Some(0),
                    ..settings()
                },
                "null",
            ),
            (
                LlmSettings {
                    api_key_env: Some("UQ_LLM_TEST_SURELY_UNSET_VAR".into()),
                    ..settings()
                },
                "UQ_LLM_TEST_SURELY_UNSET_VAR",
            ),
        ] {
            let e = OpenAiClient::new(s).unwrap_err();
            assert!(matches!(e, LlmError::Config(_)));
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    #[test]
    fn body_carries_parameters() {
        let c = OpenAiClient::new(LlmSettings {
            seed: Some(7),
            logprobs: true,
            ..settings()
        })
        .unwrap();
        assert_eq!(c.url(), "http://127.0.0.1:9/v1/chat/completions");
        let req = ChatRequest::new("hi")
            .with_system("sys")
            .with_temperature(0.0)
            .with_max_tokens(5);
        let b = c.body(&req, 3, c.sample_seed(2));
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(b["messages"][1]["content"], "hi");
        assert_eq!(b["temperature"], 0.0);
        assert_eq!(b["max_tokens"], 5);
        assert_eq!(b["n"], 3);
        assert_eq!(b["seed"], 9);
        assert_eq!(b["logprobs"], true);
        assert_eq!(b["top_logprobs"], 5, "the default number of alternatives");
        let b1 = c.body(&ChatRequest::new("x"), 1, None);
        assert!(b1.get("n").is_none() && b1.get("seed").is_none());
        assert!(!format!("{c:?}").contains("api_key\""));
    }
}
