//! The HTTP side of `uqd models pull` (see `models/pull.rs`): the hub's `resolve` URLs, redirects
//! followed by hand, `Range` resumption and retries; the hub's error headers turned into errors
//! that name the fix are in `headers.rs`, the body's writing and SHA-256 check in `body.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_RANGE, LOCATION, RANGE};
use reqwest::StatusCode;

use super::args::{Kind, PullArgs};
use super::body::{check_sha, error_chain, receive, sha256_file};
use super::headers::{header, linked_sha, refused, Missing};

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
            Err(why) => return Ok(Step::Cut(why)),
        };
        let sha = match check_sha(url, path, part, offset, answer.expected_sha)? {
            Ok(s) => s,
            Err(why) => return Ok(Step::Cut(why)),
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
            s => refused(self.args, url, path, s, resp.headers()).map(|m| Err(Step::Missing(m))),
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
