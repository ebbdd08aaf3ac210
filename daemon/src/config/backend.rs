//! The NLI backend setting: KServe v2 / Triton Inference Server endpoints that run the NLI
//! model's forward passes instead of a local ONNX Runtime session (see `engine::remote`).

use super::settings::GivenSettings;

/// Default name of the NLI model on an inference server.
pub const DEFAULT_BACKEND_MODEL: &str = "nli";
/// Default time limit of one inference request (ms).
pub const DEFAULT_BACKEND_TIMEOUT_MS: u64 = 30_000;
/// Default number of retries of a failed inference request (each on the next endpoint).
pub const DEFAULT_BACKEND_RETRIES: usize = 2;
/// Default interval of the endpoints' health checks (ms).
pub const DEFAULT_BACKEND_HEALTH_MS: u64 = 2_000;

/// An NLI backend on KServe v2 / Triton Inference Server endpoints (see `engine::remote`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NliBackend {
    /// Base URLs (`http://host:port`), used in turn.
    pub urls: Vec<String>,
    /// The model's name on the servers.
    pub model: String,
    pub timeout_ms: u64,
    pub retries: usize,
    pub health_ms: u64,
}

/// The base URLs of a comma-separated list: each `http://` or `https://`, without a trailing
/// `/` or `/v2`. `what`: the setting, for the message.
pub fn parse_backend_urls(list: &str, what: &str) -> Result<Vec<String>, String> {
    let mut urls = Vec::new();
    for u in list.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let base = parse_url(u, what)?;
        if !urls.iter().any(|x: &String| *x == base) {
            urls.push(base);
        }
    }
    if urls.is_empty() {
        return Err(format!(
            "{what} is empty: give at least one inference server URL, e.g. http://127.0.0.1:8000"
        ));
    }
    Ok(urls)
}

/// One base URL, without a trailing `/` or `/v2`.
fn parse_url(u: &str, what: &str) -> Result<String, String> {
    let rest = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .filter(|r| !r.is_empty() && !r.starts_with('/'));
    if rest.is_none() || u.chars().any(char::is_whitespace) {
        return Err(format!(
            "{what}: {u:?} is not an http:// or https:// URL: give the inference server's base URL, \
             e.g. http://127.0.0.1:8000 (several separated by commas)"
        ));
    }
    let base = u.trim_end_matches('/');
    Ok(base
        .strip_suffix("/v2")
        .unwrap_or(base)
        .trim_end_matches('/')
        .to_string())
}

/// The NLI backend of the given settings (taken out of `given`); `None` when no URL is set
/// anywhere (the other backend settings are then not looked at).
pub(super) fn resolve_backend(given: &mut GivenSettings) -> Result<Option<NliBackend>, String> {
    let Some(urls) = given.nli_backend.take() else {
        return Ok(None);
    };
    let what = urls.origin();
    let urls = parse_backend_urls(&urls.value()?, &what)?;
    let model = match given.nli_backend_model.take() {
        Some(m) => m.value()?.trim().to_string(),
        None => DEFAULT_BACKEND_MODEL.to_string(),
    };
    if model.is_empty() || model.contains(['/', '?', '#', ' ']) {
        return Err(format!(
            "NLI backend model name {model:?} (--nli-backend-model / UQ_NLI_BACKEND_MODEL) is not a model name: \
             give the name the server lists, e.g. nli (curl URL/v2/models/nli)"
        ));
    }
    let backend = NliBackend {
        urls,
        model,
        timeout_ms: or_default(
            given.nli_backend_timeout_ms.take(),
            DEFAULT_BACKEND_TIMEOUT_MS,
        )?,
        retries: or_default(given.nli_backend_retries.take(), DEFAULT_BACKEND_RETRIES)?,
        health_ms: or_default(
            given.nli_backend_health_ms.take(),
            DEFAULT_BACKEND_HEALTH_MS,
        )?,
    };
    check_backend(&backend)?;
    Ok(Some(backend))
}

fn or_default<T: super::settings::EnvValue>(
    given: Option<super::settings::Given<T>>,
    default: T,
) -> Result<T, String> {
    given
        .map(|g| g.value())
        .transpose()
        .map(|v| v.unwrap_or(default))
}

/// The ranges of the backend's numbers.
fn check_backend(b: &NliBackend) -> Result<(), String> {
    let (timeout_ms, retries, health_ms) = (b.timeout_ms, b.retries, b.health_ms);
    if !(100..=3_600_000).contains(&timeout_ms) {
        return Err(format!(
            "NLI backend timeout {timeout_ms} ms (--nli-backend-timeout-ms / UQ_NLI_BACKEND_TIMEOUT_MS) is out of \
             range: use 100 to 3600000"
        ));
    }
    if retries > 100 {
        return Err(format!(
            "NLI backend retries {retries} (--nli-backend-retries / UQ_NLI_BACKEND_RETRIES) is too many: use at most 100"
        ));
    }
    if !(50..=3_600_000).contains(&health_ms) {
        return Err(format!(
            "NLI backend health interval {health_ms} ms (--nli-backend-health-ms / UQ_NLI_BACKEND_HEALTH_MS) is out of \
             range: use 50 to 3600000"
        ));
    }
    Ok(())
}
