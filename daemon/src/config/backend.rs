//! The NLI backend setting: KServe v2 / Triton Inference Server endpoints that run the NLI
//! model's forward passes instead of a local ONNX Runtime session (see `engine::remote`).

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

/// The base URLs of a comma-separated list (the setting's parser: its error is prefixed with
/// the source).
pub(super) fn parse_urls(list: &str) -> Result<Vec<String>, String> {
    let mut urls = Vec::new();
    for u in list.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let base = parse_url(u)?;
        if !urls.contains(&base) {
            urls.push(base);
        }
    }
    if urls.is_empty() {
        return Err(
            "no URL: give at least one inference server URL, e.g. http://127.0.0.1:8000".into(),
        );
    }
    Ok(urls)
}

/// One base URL, without a trailing `/` or `/v2`.
fn parse_url(u: &str) -> Result<String, String> {
    let rest = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .filter(|r| !r.is_empty() && !r.starts_with('/'));
    if rest.is_none() || u.chars().any(char::is_whitespace) {
        return Err(format!(
            "{u:?} is not an http:// or https:// URL: give the inference server's base URL, \
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

/// The model's name on the servers (the setting's parser).
pub(super) fn parse_model_name(name: &str) -> Result<String, String> {
    let model = name.trim();
    if model.is_empty() || model.contains(['/', '?', '#', ' ']) {
        return Err(format!(
            "{model:?} is not a model name: give the name the server lists, e.g. nli \
             (curl URL/v2/models/nli)"
        ));
    }
    Ok(model.to_string())
}
