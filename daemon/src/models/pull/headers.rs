//! What the hub's headers say (see `download.rs`): its error code and message on a refusal,
//! turned into an error that names the fix or into a missing file to try the next candidate, and
//! the SHA-256 it gives for an LFS file.

use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use super::args::PullArgs;

/// How one request for a file ended, before any byte is written.
pub(super) enum Missing {
    /// 404 for this path only (the revision exists).
    Entry(String),
}

/// A 4xx answer: a missing file (to try the next candidate), or an error naming the fix.
pub(super) fn refused(
    args: &PullArgs,
    url: &str,
    path: &str,
    status: StatusCode,
    h: &HeaderMap,
) -> Result<Missing, String> {
    let code = header(h, "x-error-code").unwrap_or_default();
    let message = header(h, "x-error-message")
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    let (repo, rev) = (&args.repo, &args.revision);
    match (status.as_u16(), code.as_str()) {
        (401, _) if args.token.is_none() => Err(format!(
            "{url}: 401 Unauthorized{message}: {repo} is private or gated (or does not exist): \
             set HF_TOKEN to an access token with read access to it (https://huggingface.co/settings/tokens) \
             and check the repository id"
        )),
        (401, _) => Err(format!(
            "{url}: 401 Unauthorized{message}: the hub refused HF_TOKEN for {repo}: check that the token is \
             valid and can read the repository, and the repository id"
        )),
        (403, _) => Err(format!(
            "{url}: 403 Forbidden{message}: no access to {repo} with this HF_TOKEN: for a gated model \
             accept its conditions on the hub's page first"
        )),
        (404, "RevisionNotFound") => Err(format!(
            "{url}: 404{message}: {repo} has no revision {rev:?}: pass --revision with an existing branch, \
             tag or commit hash (default main)"
        )),
        (404, "RepoNotFound") => Err(format!(
            "{url}: 404{message}: no repository {repo} on {}: check REPO_ID (and HF_ENDPOINT)",
            args.endpoint
        )),
        (404, "EntryNotFound") => Ok(Missing::Entry(format!("404 at {url}"))),
        (404, _) if path == "config.json" => Err(format!(
            "{url}: 404{message}: neither {repo} @ {rev} nor its config.json was found: check REPO_ID, \
             --revision (default main) and HF_ENDPOINT"
        )),
        (404, _) => Ok(Missing::Entry(format!("404 at {url}"))),
        (s, _) => Err(format!(
            "{url}: the hub answered {status}{message} for {path} (HTTP {s}): check REPO_ID, --revision and HF_ENDPOINT"
        )),
    }
}

/// The value of header `name`, trimmed (`None`: absent or not text).
pub(super) fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)?.to_str().ok().map(|s| s.trim().to_string())
}

/// The SHA-256 the hub gives for an LFS file (`X-Linked-Etag: "<64 hex>"`).
pub(super) fn linked_sha(h: &HeaderMap) -> Option<String> {
    let v = header(h, "x-linked-etag")?;
    let v = v
        .trim_start_matches("W/")
        .trim_matches('"')
        .to_ascii_lowercase();
    (v.len() == 64 && v.chars().all(|c| c.is_ascii_hexdigit())).then_some(v)
}
