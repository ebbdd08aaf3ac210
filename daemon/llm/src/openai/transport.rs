//! One HTTP attempt at a chat completion: the HTTP client and the API key, the exchange under
//! its timeout, and what the reply means — done, retried (429/408/409/425/5xx, timeouts,
//! connection errors, retryable reply errors) or failed, with a fix for each rejection.

use std::sync::Once;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::backoff::parse_retry_after;
use crate::client::LlmSettings;
use crate::error::{snippet, LlmError};
use crate::reply::{parse_reply, ParsedReply};

/// Installs ring as rustls' process-wide crypto provider (reqwest is built with
/// `rustls-no-provider`). Idempotent; a provider installed earlier by someone else is kept.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Outcome of one HTTP attempt.
pub(super) enum Attempt {
    Done(ParsedReply),
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    Fail(LlmError),
}

/// What one exchange brought back: the status, the server's `Retry-After` and the body.
struct Response {
    status: reqwest::StatusCode,
    retry_after: Option<Duration>,
    text: String,
}

/// The HTTP client and the API key it sends.
pub(super) struct Transport {
    api_key: Option<String>,
    http: reqwest::Client,
}

impl Transport {
    /// Reads the API key from the variable named by `api_key_env` and builds the HTTP client.
    pub(super) fn new(settings: &LlmSettings) -> Result<Self, LlmError> {
        let api_key = match &settings.api_key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.trim().is_empty() => Some(k.trim().to_string()),
                _ => {
                    return Err(LlmError::Config(format!(
                        "the API key variable {var} (named by api_key_env) is not set or empty: export {var}=<your key>, \
                         or set api_key_env to null for a server that needs no key"
                    )))
                }
            },
        };
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .user_agent(concat!("uqlite-uq-llm/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Transport { api_key, http })
    }

    /// `text` with the API key replaced by `[API key]`: a server's error body may echo the key,
    /// and error texts end up in tables (`uq_job_error`) and logs.
    fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(k) if !k.is_empty() => text.replace(k.as_str(), "[API key]"),
            _ => text.to_string(),
        }
    }

    /// POSTs `body` to `url` once and says what its reply means.
    pub(super) async fn attempt(
        &self,
        settings: &LlmSettings,
        body: &Value,
        want_logprobs: bool,
        url: &str,
    ) -> Attempt {
        match self.exchange(settings, body, url).await {
            Ok(response) => self.judge(settings, response, want_logprobs, url),
            Err(outcome) => outcome,
        }
    }

    /// Sends the request and reads the whole reply within `timeout_ms`; a transport failure
    /// comes back as the attempt's outcome.
    async fn exchange(
        &self,
        settings: &LlmSettings,
        body: &Value,
        url: &str,
    ) -> Result<Response, Attempt> {
        let timeout = Duration::from_millis(settings.timeout_ms);
        let mut rb = self.http.post(url).timeout(timeout).json(body);
        if let Some(key) = &self.api_key {
            rb = rb.bearer_auth(key);
        }
        let exchange = async {
            let resp = rb.send().await?;
            let status = resp.status();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let bytes = resp.bytes().await?;
            Ok::<_, reqwest::Error>((status, retry_after, bytes))
        };
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => Err(timed_out(settings)),
            Ok(Err(e)) if e.is_timeout() => Err(timed_out(settings)),
            Ok(Err(e)) if e.is_builder() => Err(Attempt::Fail(LlmError::Config(format!(
                "cannot build a request to {}: {e}",
                url
            )))),
            Ok(Err(e)) => {
                let what = if e.is_connect() {
                    "connection failed"
                } else {
                    "transport error"
                };
                Err(Attempt::Retry {
                    reason: format!("{what}: {}", error_chain(&e)),
                    retry_after: None,
                })
            }
            Ok(Ok((status, retry_after, bytes))) => Ok(Response {
                status,
                retry_after,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            }),
        }
    }

    /// A reply's outcome: a success is parsed (its errors retried when they may pass), a
    /// retryable status is retried, any other status fails with how to fix it.
    fn judge(
        &self,
        settings: &LlmSettings,
        response: Response,
        want_logprobs: bool,
        url: &str,
    ) -> Attempt {
        let Response {
            status,
            retry_after,
            text,
        } = response;
        let code = status.as_u16();
        if status.is_success() {
            return match parse_reply(&text, want_logprobs) {
                Ok(r) => Attempt::Done(r),
                Err(p) if p.retryable => Attempt::Retry {
                    reason: format!("HTTP {code}: {}", self.redact(&p.message)),
                    retry_after: None,
                },
                Err(p) if p.refusal => Attempt::Fail(LlmError::Refusal(format!(
                    "POST {}: {}",
                    url,
                    self.redact(&p.message)
                ))),
                Err(p) => Attempt::Fail(LlmError::Reply(format!(
                    "POST {}: {}",
                    url,
                    self.redact(&p.message)
                ))),
            };
        }
        let body_snip = snippet(&self.redact(&text), 300);
        if matches!(code, 408 | 409 | 425 | 429) || status.is_server_error() {
            return Attempt::Retry {
                reason: format!("HTTP {status}: {body_snip}"),
                retry_after,
            };
        }
        let hint = rejection_hint(settings, code);
        Attempt::Fail(LlmError::Rejected {
            status: code,
            message: format!("POST {} → HTTP {status}: {body_snip}. Fix: {hint}", url),
        })
    }
}

/// How to fix a request the server rejected with HTTP `code` (a status not retried).
fn rejection_hint(settings: &LlmSettings, code: u16) -> String {
    match code {
        401 => match &settings.api_key_env {
            Some(var) => format!(
                "the API key was not accepted: set the API key in the env var named by api_key_env ({var})"
            ),
            None => "the server needs an API key: set api_key_env to the name of an env var holding it".into(),
        },
        403 => "the API key has no access to this model or endpoint: check the key's permissions and `model`".into(),
        404 => format!(
            "check base_url (it must end before /chat/completions, e.g. https://api.openai.com/v1) and that model \
             `{}` exists on this server",
            settings.model
        ),
        400 | 422 => "the server rejected the request: check `model`, `max_tokens` and options the server may not \
                      support (n: set n_supported=false; seed; logprobs: set logprobs=false)"
            .into(),
        _ => "the server rejected the request; retrying will not help".into(),
    }
}

fn timed_out(settings: &LlmSettings) -> Attempt {
    Attempt::Retry {
        reason: format!(
            "no complete reply within timeout_ms = {}",
            settings.timeout_ms
        ),
        retry_after: None,
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    let mut depth = 0;
    while let Some(s) = src {
        if depth >= 4 {
            break;
        }
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
        depth += 1;
    }
    out
}
