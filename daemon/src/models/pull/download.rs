//! The HTTP side of `uqd models pull` (see `models/pull.rs`): the hub's `resolve` URLs, redirects
//! followed by hand, `Range` resumption, the hub's error headers turned into errors that name the
//! fix, SHA-256 checks.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{HeaderMap, AUTHORIZATION, CONTENT_RANGE, LOCATION, RANGE};
use reqwest::StatusCode;
use sha2::{Digest, Sha256};

use super::args::{Kind, PullArgs};

/// Attempts per file when the connection is cut (each resumes where the last one stopped).
const ATTEMPTS: usize = 3;

/// Percent-encodes what a URL path segment cannot hold as is (the hub's revisions may hold `/`).
pub(super) fn encode_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One file's source paths in the repository (the first that exists) and its name in the
/// model directory.
struct Wanted {
    candidates: Vec<String>,
    name: &'static str,
}

impl Wanted {
    fn new(candidates: &[&str], name: &'static str) -> Wanted {
        Wanted {
            candidates: candidates.iter().map(|c| c.to_string()).collect(),
            name,
        }
    }
}

pub(super) struct Hub<'a> {
    args: &'a PullArgs,
    http: reqwest::Client,
    host: Option<String>,
}

/// How one request for a file ended, before any byte is written.
enum Missing {
    /// 404 for this path only (the revision exists).
    Entry(String),
}

impl<'a> Hub<'a> {
    pub(super) fn new(args: &'a PullArgs) -> Result<Hub<'a>, String> {
        uq_llm::install_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(60))
            .user_agent(concat!("uqlite/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let host = reqwest::Url::parse(&args.endpoint)
            .map_err(|e| {
                format!(
                    "HF_ENDPOINT={:?} is not a URL ({e}): set it to the hub's root, e.g. https://huggingface.co",
                    args.endpoint
                )
            })?
            .host_str()
            .map(str::to_string);
        Ok(Hub { args, http, host })
    }

    fn url(&self, path: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.args.endpoint.trim_end_matches('/'),
            self.args.repo,
            encode_segment(&self.args.revision),
            path
        )
    }

    pub(super) async fn fetch_all(&self, staging: &Path) -> Result<serde_json::Value, String> {
        let mut files = serde_json::Map::new();
        let mut commit = None;
        // config.json first: small, and it tells a wrong revision or a missing token early;
        // its labels are checked before the large download.
        let model = match &self.args.onnx_file {
            Some(f) => Wanted::new(&[f.as_str()], "model.onnx"),
            None => Wanted::new(&["model.onnx", "onnx/model.onnx"], "model.onnx"),
        };
        let wanted_files = [
            Wanted::new(&["config.json"], "config.json"),
            Wanted::new(&["tokenizer.json"], "tokenizer.json"),
            model,
        ];
        let mut renames = Vec::new();
        for wanted in &wanted_files {
            let (from, fetched) = self.fetch_one(wanted, staging).await?;
            let fetched_as = staging.join(format!("{}.fetched", from.replace('/', "--")));
            renames.push((fetched_as.clone(), staging.join(wanted.name)));
            if wanted.name == "config.json" && self.args.kind == Kind::Nli {
                let text = fs::read_to_string(&fetched_as).unwrap_or_default();
                let cfg: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                    format!(
                        "{}: config.json is not JSON ({e}): is this a model repository?",
                        self.args.repo
                    )
                })?;
                crate::engine::nli::Labels::from_config(&cfg, &self.args.repo).map_err(|e| {
                    format!(
                        "{e}; {} is not a 3-way NLI classifier, or its config.json lacks the labels \
                         (pull an NLI cross-encoder, e.g. cross-encoder/nli-deberta-v3-xsmall)",
                        self.args.repo
                    )
                })?;
            }
            commit = commit.or(fetched.commit.clone());
            files.insert(
                wanted.name.to_string(),
                serde_json::json!({"from": from, "bytes": fetched.bytes, "sha256": fetched.sha256}),
            );
        }
        for (from, to) in renames {
            fs::rename(&from, &to).map_err(|e| {
                format!("cannot rename {} to {}: {e}", from.display(), to.display())
            })?;
        }
        Ok(serde_json::json!({
            "repo": self.args.repo,
            "revision": self.args.revision,
            "commit": commit,
            "endpoint": self.args.endpoint,
            "files": files,
        }))
    }

    /// Fetches the first candidate path that exists into `staging/<path>.fetched` (`/` as `--`).
    /// Each source path has its own partial and finished file, so a run with another
    /// `--onnx-file` never resumes the bytes of a different file; `fetch_all` gives the files
    /// their names once all are there.
    async fn fetch_one(
        &self,
        wanted: &Wanted,
        staging: &Path,
    ) -> Result<(String, Fetched), String> {
        let mut missing = Vec::new();
        for path in &wanted.candidates {
            let fetched_as = staging.join(format!("{}.fetched", path.replace('/', "--")));
            match self.fetch_file(path, &fetched_as).await? {
                Ok(f) => return Ok((path.to_string(), f)),
                Err(Missing::Entry(detail)) => missing.push(format!("{path} ({detail})")),
            }
        }
        let missing = match missing.as_slice() {
            [one] => format!("no {one}"),
            many => format!("neither {}", many.join(" nor ")),
        };
        let export_hint = if wanted.name == "model.onnx" && self.args.onnx_file.is_some() {
            "check --onnx-file against the repository's files (listed on its page on the hub), or leave it out \
             to take model.onnx or onnx/model.onnx"
                .to_string()
        } else {
            format!(
            "uqd needs model.onnx (or onnx/model.onnx), tokenizer.json and config.json; for a model without \
             ONNX files export one with  optimum-cli export onnx --model {} DIR  and set {}=DIR",
            self.args.repo,
            self.args.kind.variable()
            )
        };
        Err(format!(
            "{} @ {} has {missing}; {export_hint}",
            self.args.repo, self.args.revision,
        ))
    }

    /// Downloads `path` to `dest` (via `dest.part`), resuming after a cut connection.
    /// `Ok(Err(Missing))`: the hub has no such file at this revision.
    async fn fetch_file(
        &self,
        path: &str,
        dest: &Path,
    ) -> Result<Result<Fetched, Missing>, String> {
        if dest.is_file() {
            // Finished in an earlier, interrupted run.
            let bytes = fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
            return Ok(Ok(Fetched {
                bytes,
                sha256: sha256_file(dest)?,
                commit: None,
            }));
        }
        let part = PathBuf::from(format!("{}.part", dest.display()));
        let url = self.url(path);
        let mut last_cut = String::new();
        for attempt in 1..=ATTEMPTS {
            match self.attempt(&url, path, &part).await? {
                Step::Done(f) => {
                    fs::rename(&part, dest).map_err(|e| {
                        format!(
                            "cannot rename {} to {}: {e}",
                            part.display(),
                            dest.display()
                        )
                    })?;
                    return Ok(Ok(f));
                }
                Step::Missing(m) => return Ok(Err(m)),
                Step::Cut(why) => {
                    eprintln!("uqd models pull: {path}: {why} (attempt {attempt} of {ATTEMPTS})");
                    last_cut = why;
                    tokio::time::sleep(Duration::from_millis(200 * attempt as u64)).await;
                }
            }
        }
        Err(format!(
            "download of {path} from {url} failed {ATTEMPTS} times ({last_cut}); the partial file {} is kept \
             and nothing was installed: run the same command again to resume",
            part.display()
        ))
    }

    /// One try at `path`: resumes `part` where it stopped, then checks its size and SHA-256.
    async fn attempt(&self, url: &str, path: &str, part: &Path) -> Result<Step, String> {
        let have = fs::metadata(part).map(|m| m.len()).unwrap_or(0);
        let mut answer = match self.request(url, have).await? {
            Ok(a) => a,
            Err(cut) => return Ok(cut),
        };
        let offset = match self.resume_offset(url, path, part, have, &answer.resp)? {
            Ok(o) => o,
            Err(step) => return Ok(step),
        };
        let got = match receive(&mut answer.resp, path, part, offset).await? {
            Ok(g) => g,
            Err(cut) => return Ok(cut),
        };
        let sha = match check_sha(url, path, part, offset, answer.expected_sha)? {
            Ok(s) => s,
            Err(cut) => return Ok(cut),
        };
        eprintln!("uqd models pull: {path}: {got} bytes");
        Ok(Step::Done(Fetched {
            bytes: got,
            sha256: sha,
            commit: answer.commit,
        }))
    }

    /// GETs `url` from byte `have` on, following up to 5 redirects (a renamed repository, then
    /// the CDN) by hand: the token goes only to the hub's own host. `Ok(Err(Step::Cut))`: a
    /// request failed.
    async fn request(&self, url: &str, have: u64) -> Result<Result<Answer, Step>, String> {
        let cut = |e: reqwest::Error| Step::Cut(format!("request failed: {}", error_chain(&e)));
        let mut resp = match self.get(url, have, true).await {
            Ok(r) => r,
            Err(e) => return Ok(Err(cut(e))),
        };
        // The hub redirects large (LFS) files to a CDN; the SHA-256 and size come with the redirect.
        let mut expected_sha = linked_sha(resp.headers());
        let commit = header(resp.headers(), "x-repo-commit");
        let mut at = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        for _ in 0..5 {
            if !resp.status().is_redirection() {
                break;
            }
            let loc = header(resp.headers(), LOCATION.as_str()).ok_or_else(|| {
                format!(
                    "{url}: the hub answered {} without a Location",
                    resp.status()
                )
            })?;
            at = at
                .join(&loc)
                .map_err(|e| format!("{url}: bad redirect {loc:?}: {e}"))?;
            let same_host = at.host_str().map(str::to_string) == self.host;
            resp = match self.get(at.as_str(), have, same_host).await {
                Ok(r) => r,
                Err(e) => return Ok(Err(cut(e))),
            };
            expected_sha = expected_sha.or_else(|| linked_sha(resp.headers()));
        }
        Ok(Ok(Answer {
            resp,
            expected_sha,
            commit,
        }))
    }

    /// Where the body of `resp` starts in the file: 0 for a whole file, `have` for the range
    /// asked for. `Ok(Err(step))`: no body to take (a cut to retry, or a missing file).
    fn resume_offset(
        &self,
        url: &str,
        path: &str,
        part: &Path,
        have: u64,
        resp: &reqwest::Response,
    ) -> Result<Result<u64, Step>, String> {
        match resp.status() {
            StatusCode::OK => Ok(Ok(0)),
            StatusCode::PARTIAL_CONTENT => {
                let start = header(resp.headers(), CONTENT_RANGE.as_str()).and_then(|r| {
                    r.strip_prefix("bytes ")?
                        .split('-')
                        .next()?
                        .parse::<u64>()
                        .ok()
                });
                if start != Some(have) {
                    // Not the range asked for: start over.
                    let _ = fs::remove_file(part);
                    return Ok(Err(Step::Cut(format!(
                        "the server sent an unexpected range ({start:?})"
                    ))));
                }
                Ok(Ok(have))
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                let _ = fs::remove_file(part);
                Ok(Err(Step::Cut(
                    "the partial file did not match the server's; starting over".into(),
                )))
            }
            s if s.is_server_error() => Ok(Err(Step::Cut(format!("{url}: the hub answered {s}")))),
            s => self
                .refused(url, path, s, resp.headers())
                .map(|m| Err(Step::Missing(m))),
        }
    }

    async fn get(&self, url: &str, from: u64, auth: bool) -> reqwest::Result<reqwest::Response> {
        let mut req = self.http.get(url);
        if let (true, Some(t)) = (auth, &self.args.token) {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        req.send().await
    }

    /// A 4xx answer: a missing file (to try the next candidate), or an error naming the fix.
    fn refused(
        &self,
        url: &str,
        path: &str,
        status: StatusCode,
        h: &HeaderMap,
    ) -> Result<Missing, String> {
        let code = header(h, "x-error-code").unwrap_or_default();
        let message = header(h, "x-error-message")
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let (repo, rev) = (&self.args.repo, &self.args.revision);
        match (status.as_u16(), code.as_str()) {
            (401, _) if self.args.token.is_none() => Err(format!(
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
                self.args.endpoint
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
}

enum Step {
    Done(Fetched),
    Missing(Missing),
    Cut(String),
}

struct Fetched {
    bytes: u64,
    sha256: String,
    commit: Option<String>,
}

/// The hub's answer to one GET, redirects followed.
struct Answer {
    resp: reqwest::Response,
    /// The SHA-256 of the file, when the hub (or a redirect) gave it.
    expected_sha: Option<String>,
    /// The commit the revision resolved to (`X-Repo-Commit`).
    commit: Option<String>,
}

/// Writes the body of `resp` into `part` from byte `offset` on (appending when resuming);
/// returns the file's size. `Ok(Err(Step::Cut))`: the connection was cut first.
async fn receive(
    resp: &mut reqwest::Response,
    path: &str,
    part: &Path,
    offset: u64,
) -> Result<Result<u64, Step>, String> {
    let total = resp.content_length().map(|n| n + offset);
    let mut file = if offset > 0 {
        eprintln!("uqd models pull: {path}: resuming at byte {offset}");
        OpenOptions::new().append(true).open(part)
    } else {
        File::create(part)
    }
    .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    let mut got = offset;
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => {
                file.write_all(&bytes)
                    .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
                got += bytes.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                let _ = file.flush();
                return Ok(Err(Step::Cut(format!(
                    "connection cut after {got} of {} bytes ({})",
                    total.map_or("?".into(), |t| t.to_string()),
                    error_chain(&e)
                ))));
            }
        }
    }
    file.sync_all()
        .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    drop(file);
    if let Some(t) = total {
        if got != t {
            return Ok(Err(Step::Cut(format!(
                "connection cut after {got} of {t} bytes"
            ))));
        }
    }
    Ok(Ok(got))
}

/// The SHA-256 of `part`, checked against the hub's when it gave one. A mismatch deletes the
/// file: a resumed one is fetched again whole (`Ok(Err(Step::Cut))`), a whole one is an error.
fn check_sha(
    url: &str,
    path: &str,
    part: &Path,
    offset: u64,
    expected: Option<String>,
) -> Result<Result<String, Step>, String> {
    let sha = sha256_file(part)?;
    if let Some(want) = expected {
        if want != sha {
            let _ = fs::remove_file(part);
            if offset > 0 {
                // The kept bytes may be from another version of the file: once more, whole.
                return Ok(Err(Step::Cut(
                    "the resumed file's SHA-256 is not the hub's; downloading it whole".into(),
                )));
            }
            return Err(format!(
                "{url}: the downloaded {path} has SHA-256 {sha}, not the hub's {want} (X-Linked-Etag): \
                 it was deleted and nothing was installed; run the command again, and if it fails the \
                 same way, the hub or a proxy between serves a different file"
            ));
        }
    }
    Ok(Ok(sha))
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)?.to_str().ok().map(|s| s.trim().to_string())
}

/// The SHA-256 the hub gives for an LFS file (`X-Linked-Etag: "<64 hex>"`).
fn linked_sha(h: &HeaderMap) -> Option<String> {
    let v = header(h, "x-linked-etag")?;
    let v = v
        .trim_start_matches("W/")
        .trim_matches('"')
        .to_ascii_lowercase();
    (v.len() == 64 && v.chars().all(|c| c.is_ascii_hexdigit())).then_some(v)
}

fn sha256_file(path: &Path) -> Result<String, String> {
    let mut f = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}
