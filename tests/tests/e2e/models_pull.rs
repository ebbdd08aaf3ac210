//! `uqd models pull` against a hub on loopback: a small HTTP server (below) that serves
//! directories with the Hugging Face hub's URL layout (`/{repo}/resolve/{revision}/{path}`, the
//! hub's `X-Error-Code` headers, LFS-style redirects with `X-Linked-Etag`, `Range`), with the
//! shared NLI model (../shared/models/nli-minilm-l6-v2) as the repository. The pulled directory
//! is then used by the real daemon through the extension. Errors are pinned in
//! tests/golden/errors/models_pull.txt (`UQ_BLESS=1` rewrites it).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use uq_integration::golden::Golden;
use uq_integration::*;

const TOKEN: &str = "hf_test_token_123";

/// A repository served by the hub: its files (path in the repository → file on disk).
#[derive(Clone, Default)]
struct Repo {
    files: HashMap<String, PathBuf>,
    /// Revisions that exist (others answer 404 RevisionNotFound).
    revisions: Vec<String>,
    /// Needs `Authorization: Bearer TOKEN`.
    private: bool,
    /// Large files go through a redirect carrying `X-Linked-Etag` (the SHA-256), as LFS files do.
    lfs: bool,
    /// A wrong SHA-256 in `X-Linked-Etag`.
    bad_sha: bool,
}

/// What the hub saw: (path, Range header) per request.
type Log = Arc<Mutex<Vec<(String, Option<String>)>>>;

struct Hub {
    url: String,
    log: Log,
    /// Requests for model.onnx still to cut half-way (shared with the server threads).
    cuts: Arc<Mutex<usize>>,
}

impl Hub {
    fn start(repos: HashMap<String, Repo>) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log: Log = Arc::default();
        let cuts = Arc::new(Mutex::new(0));
        let repos = Arc::new(repos);
        let (l, c) = (log.clone(), cuts.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (repos, l, c) = (repos.clone(), l.clone(), c.clone());
                std::thread::spawn(move || serve(stream, &repos, &l, &c));
            }
        });
        Hub { url, log, cuts }
    }

    fn requests(&self) -> Vec<(String, Option<String>)> {
        self.log.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, repos: &HashMap<String, Repo>, log: &Log, cuts: &Mutex<usize>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        log.lock()
            .unwrap()
            .push((target.clone(), headers.get("range").cloned()));
        let mut out = stream.try_clone().expect("clone");
        if !answer(&mut out, &target, &headers, repos, cuts) {
            return; // connection cut
        }
    }
}

/// Writes the answer; false when the connection was cut on purpose.
fn answer(
    out: &mut TcpStream,
    target: &str,
    headers: &HashMap<String, String>,
    repos: &HashMap<String, Repo>,
    cuts: &Mutex<usize>,
) -> bool {
    let reply = |out: &mut TcpStream, status: &str, extra: &[(&str, String)], body: &[u8]| {
        let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let _ = out.write_all(head.as_bytes());
        let _ = out.write_all(body);
        true
    };
    let error = |out: &mut TcpStream, status: &str, code: &str, msg: &str| {
        reply(
            out,
            status,
            &[
                ("X-Error-Code", code.into()),
                ("X-Error-Message", msg.into()),
            ],
            msg.as_bytes(),
        )
    };
    // /cdn/{repo}/{revision}/{path}: the redirect target of LFS files (no auth needed).
    let (cdn, rest) = match target.strip_prefix("/cdn/") {
        Some(r) => (true, r.to_string()),
        None => (false, target.trim_start_matches('/').to_string()),
    };
    let parts: Vec<&str> = rest.splitn(if cdn { 4 } else { 5 }, '/').collect();
    let (repo_id, revision, path) = match (cdn, parts.as_slice()) {
        (true, [o, n, rev, p]) => (format!("{o}/{n}"), rev.to_string(), p.to_string()),
        (false, [o, n, "resolve", rev, p]) => (format!("{o}/{n}"), rev.to_string(), p.to_string()),
        _ => return error(out, "404 Not Found", "RepoNotFound", "Repository not found"),
    };
    let Some(repo) = repos.get(&repo_id) else {
        return error(
            out,
            "401 Unauthorized",
            "RepoNotFound",
            "Repository not found",
        );
    };
    let authorized = headers.get("authorization") == Some(&format!("Bearer {TOKEN}"));
    if repo.private && !cdn && !authorized {
        return error(
            out,
            "401 Unauthorized",
            "GatedRepo",
            "Access to this model is restricted",
        );
    }
    if !repo.revisions.contains(&revision) {
        return error(
            out,
            "404 Not Found",
            "RevisionNotFound",
            &format!("Invalid rev id: {revision}"),
        );
    }
    let Some(file) = repo.files.get(&path) else {
        return error(out, "404 Not Found", "EntryNotFound", "Entry not found");
    };
    let body = std::fs::read(file).expect("read served file");
    let commit = (
        "X-Repo-Commit",
        "0123456789abcdef0123456789abcdef01234567".to_string(),
    );
    if repo.lfs && !cdn && body.len() > 1_000_000 {
        let sha = if repo.bad_sha {
            "0".repeat(64)
        } else {
            sha256(file)
        };
        return reply(
            out,
            "302 Found",
            &[
                ("Location", format!("/cdn/{repo_id}/{revision}/{path}")),
                ("X-Linked-Etag", format!("\"{sha}\"")),
                ("X-Linked-Size", body.len().to_string()),
                commit,
            ],
            b"",
        );
    }
    let from = headers.get("range").and_then(|r| {
        r.strip_prefix("bytes=")?
            .strip_suffix('-')?
            .parse::<usize>()
            .ok()
    });
    let (status, start, mut extra) = match from {
        Some(f) if f < body.len() => (
            "206 Partial Content",
            f,
            vec![(
                "Content-Range",
                format!("bytes {f}-{}/{}", body.len() - 1, body.len()),
            )],
        ),
        Some(_) => return reply(out, "416 Range Not Satisfiable", &[], b""),
        None => ("200 OK", 0, vec![]),
    };
    extra.push(commit);
    let part = &body[start..];
    if path.ends_with("model.onnx") {
        let mut left = cuts.lock().unwrap();
        if *left > 0 {
            *left -= 1;
            // Announce the whole file, send a third of it, and hang up.
            let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", part.len());
            for (k, v) in &extra {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&part[..part.len() / 3]);
            let _ = out.flush();
            let _ = out.shutdown(std::net::Shutdown::Both);
            return false;
        }
    }
    reply(out, status, &extra, part)
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The shared NLI model, the repository's content (referenced in place, never copied).
fn shared_model() -> PathBuf {
    let d = root()
        .join("..")
        .join("shared")
        .join("models")
        .join("nli-minilm-l6-v2");
    assert!(
        d.join("model.onnx").is_file(),
        "{} is missing: the hub tests serve the shared NLI model (../shared beside the clone)",
        d.display()
    );
    d
}

/// A repository of the shared model; `onnx_dir`: its model at onnx/model.onnx (as the ONNX
/// exports on the hub, e.g. cross-encoder/nli-deberta-v3-*), else at model.onnx.
fn nli_repo(onnx_dir: bool) -> Repo {
    let m = shared_model();
    let mut files = HashMap::new();
    files.insert(
        if onnx_dir {
            "onnx/model.onnx"
        } else {
            "model.onnx"
        }
        .to_string(),
        m.join("model.onnx"),
    );
    for f in ["tokenizer.json", "config.json", "vocab.txt"] {
        files.insert(f.to_string(), m.join(f));
    }
    // Another ONNX file beside it, as the hub's exports carry quantized variants (here the
    // shared v1 model, same architecture and tokenizer).
    files.insert(
        "onnx/model_quantized.onnx".to_string(),
        m.with_file_name("nli-minilm-l6").join("model.onnx"),
    );
    Repo {
        files,
        revisions: vec!["main".into(), "v2".into()],
        lfs: true,
        ..Repo::default()
    }
}

fn hub() -> Hub {
    let mut repos = HashMap::new();
    repos.insert("uqlite-test/nli-minilm".to_string(), nli_repo(true));
    repos.insert("uqlite-test/nli-flat".to_string(), nli_repo(false));
    let mut no_tok = nli_repo(true);
    no_tok.files.remove("tokenizer.json");
    repos.insert("uqlite-test/no-tokenizer".to_string(), no_tok);
    let mut no_onnx = nli_repo(true);
    no_onnx.files.remove("onnx/model.onnx");
    repos.insert("uqlite-test/no-onnx".to_string(), no_onnx);
    let mut private = nli_repo(false);
    private.private = true;
    repos.insert("uqlite-test/private".to_string(), private);
    let mut bad = nli_repo(true);
    bad.bad_sha = true;
    repos.insert("uqlite-test/bad-sha".to_string(), bad);
    // An embedding model: its config.json has no NLI labels.
    let e = dist().join("models").join("embed");
    let mut files = HashMap::new();
    for f in ["model.onnx", "tokenizer.json", "config.json"] {
        files.insert(f.to_string(), e.join(f));
    }
    repos.insert(
        "uqlite-test/minilm-embed".to_string(),
        Repo {
            files,
            revisions: vec!["main".into()],
            ..Repo::default()
        },
    );
    Hub::start(repos)
}

/// `uqd models pull ARGS` with the hub at `hub`, the models under `models`, and `env`.
fn pull(hub: &Hub, models: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(dist().join("uqd"));
    c.args(["models", "pull"])
        .args(args)
        .env("HF_ENDPOINT", &hub.url)
        .env("UQ_MODELS_DIR", models)
        .env_remove("HF_TOKEN")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run uqd models pull")
}

fn same_file(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    let (mut x, mut y) = (Vec::new(), Vec::new());
    fa.read_to_end(&mut x).unwrap();
    fb.read_to_end(&mut y).unwrap();
    x == y
}

/// Files left anywhere under `dir` whose name ends with `.part`, and staging directories.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".part") || name.ends_with(".download") || name.ends_with(".fetched")
            {
                found.push(p.display().to_string());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    found
}

#[test]
fn pull_verifies_and_the_daemon_scores_with_the_pulled_model() {
    let hub = hub();
    let sb = Sandbox::new("pull-ok");
    let models = sb.dir.join("models");
    let out = pull(&hub, &models, &["uqlite-test/nli-minilm"], &[]);
    let dir = PathBuf::from(stdout_ok(&out, "uqd models pull uqlite-test/nli-minilm"));
    assert_eq!(dir, models.join("uqlite-test/nli-minilm/main"));
    let m = shared_model();
    for f in ["model.onnx", "tokenizer.json", "config.json"] {
        assert!(
            same_file(&dir.join(f), &m.join(f)),
            "{f} differs from the repository's"
        );
    }
    assert!(leftovers(&models).is_empty(), "{:?}", leftovers(&models));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("export UQ_NLI_MODEL={}", dir.display())),
        "{stderr}"
    );
    // The record: where each file came from, its SHA-256 (checked against the hub's).
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("uqlite-pull.json")).unwrap())
            .unwrap();
    assert_eq!(record["files"]["model.onnx"]["from"], "onnx/model.onnx");
    assert_eq!(
        record["files"]["model.onnx"]["sha256"],
        sha256(&m.join("model.onnx"))
    );
    assert_eq!(record["commit"], "0123456789abcdef0123456789abcdef01234567");
    // The model went through the LFS redirect.
    assert!(hub
        .requests()
        .iter()
        .any(|(p, _)| p == "/cdn/uqlite-test/nli-minilm/main/onnx/model.onnx"));

    // A second pull finds it in place: no request.
    let before = hub.requests().len();
    let again = pull(&hub, &models, &["uqlite-test/nli-minilm"], &[]);
    assert_eq!(stdout_ok(&again, "second pull"), dir.display().to_string());
    assert_eq!(
        hub.requests().len(),
        before,
        "the second pull downloaded again"
    );

    // The daemon scores with it, exactly as with the same model from ../shared (both on
    // model.onnx itself: setup's int8 variant is keyed by the shared model's path only).
    let sql =
        "SELECT printf('%.6f', json_extract(uq_nli('Marie Curie was born in Warsaw in 1867.', \
               'Marie Curie was born in Poland.'), '$.entailment'));";
    let pulled = sb
        .with_env("UQ_NLI_MODEL", &dir.display().to_string())
        .with_env("UQ_PRECISION", "original");
    let with_pulled = pulled.sqlite_ok(sql);
    let status = pulled.uqd(&["status"]);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains(&dir.display().to_string()),
        "the daemon does not use the pulled model: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    let reference = Sandbox::new("pull-ref")
        .with_env("UQ_NLI_MODEL", &m.display().to_string())
        .with_env("UQ_PRECISION", "original");
    assert_eq!(with_pulled, reference.sqlite_ok(sql));
    let p: f64 = with_pulled.parse().unwrap();
    assert!(p > 0.5, "entailment probability {p}");

    // A revision other than main, and a repository with the model at the top level.
    let out = pull(
        &hub,
        &models,
        &["uqlite-test/nli-flat", "--revision", "v2"],
        &[],
    );
    let flat = PathBuf::from(stdout_ok(&out, "pull --revision v2"));
    assert_eq!(flat, models.join("uqlite-test/nli-flat/v2"));
    assert!(same_file(&flat.join("model.onnx"), &m.join("model.onnx")));

    // Another ONNX file of the repository, with --onnx-file.
    let out = pull(
        &hub,
        &models,
        &[
            "uqlite-test/nli-minilm",
            "--revision",
            "v2",
            "--onnx-file",
            "onnx/model_quantized.onnx",
        ],
        &[],
    );
    let q = PathBuf::from(stdout_ok(&out, "pull --onnx-file"));
    assert!(same_file(
        &q.join("model.onnx"),
        &m.with_file_name("nli-minilm-l6").join("model.onnx")
    ));
    assert!(leftovers(&models).is_empty(), "{:?}", leftovers(&models));

    // An embedding model, with --kind embedding.
    let out = pull(
        &hub,
        &models,
        &["uqlite-test/minilm-embed", "--kind", "embedding"],
        &[],
    );
    let e = PathBuf::from(stdout_ok(&out, "pull --kind embedding"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("export UQ_EMBED_MODEL="));
    assert!(same_file(
        &e.join("model.onnx"),
        &dist().join("models/embed/model.onnx")
    ));
}

#[test]
fn a_private_repository_needs_hf_token() {
    let hub = hub();
    let sb = Sandbox::new("pull-token");
    let models = sb.dir.join("models");
    let out = pull(&hub, &models, &["uqlite-test/private"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("set HF_TOKEN"));
    assert!(!models.join("uqlite-test/private/main").exists());
    let out = pull(
        &hub,
        &models,
        &["uqlite-test/private"],
        &[("HF_TOKEN", TOKEN)],
    );
    let dir = PathBuf::from(stdout_ok(&out, "pull with HF_TOKEN"));
    assert!(same_file(
        &dir.join("model.onnx"),
        &shared_model().join("model.onnx")
    ));
}

#[test]
fn an_interrupted_download_resumes_and_never_installs_half_a_model() {
    let hub = hub();
    let sb = Sandbox::new("pull-cut");
    let models = sb.dir.join("models");
    let model = shared_model().join("model.onnx");
    let size = std::fs::metadata(&model).unwrap().len();

    // Cut once: the same run resumes where the connection broke (a Range request), and the
    // result is the whole file.
    *hub.cuts.lock().unwrap() = 1;
    let out = pull(&hub, &models, &["uqlite-test/nli-flat"], &[]);
    let dir = PathBuf::from(stdout_ok(&out, "pull, cut once"));
    assert!(same_file(&dir.join("model.onnx"), &model));
    let ranges: Vec<u64> = hub
        .requests()
        .iter()
        .filter(|(p, _)| p.starts_with("/cdn/") && p.ends_with("model.onnx"))
        .filter_map(|(_, r)| {
            r.as_deref()?
                .strip_prefix("bytes=")?
                .strip_suffix('-')?
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(
        ranges,
        vec![size / 3],
        "one resumed request, from where the cut was"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("resuming at byte"));

    // Cut every time: the command fails, says how to resume, and installs nothing.
    *hub.cuts.lock().unwrap() = 3;
    let out = pull(&hub, &models, &["uqlite-test/nli-minilm"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run the same command again to resume"),
        "{err}"
    );
    assert!(!models.join("uqlite-test/nli-minilm/main").exists());
    let part = models.join("uqlite-test/nli-minilm/.main.download/onnx--model.onnx.fetched.part");
    let kept = std::fs::metadata(&part)
        .expect("the partial file is kept")
        .len();
    assert!(kept > 0 && kept < size, "{kept} of {size}");
    // Run again with the hub healthy: it resumes from the kept bytes.
    let n = hub.requests().len();
    let out = pull(&hub, &models, &["uqlite-test/nli-minilm"], &[]);
    let dir = PathBuf::from(stdout_ok(&out, "pull again"));
    assert!(same_file(&dir.join("model.onnx"), &model));
    assert!(leftovers(&models).is_empty(), "{:?}", leftovers(&models));
    let resumed: Vec<(String, Option<String>)> = hub.requests()[n..]
        .iter()
        .filter(|(p, _)| p.ends_with("model.onnx"))
        .cloned()
        .collect();
    assert!(
        resumed
            .iter()
            .any(|(_, r)| r.as_deref() == Some(&format!("bytes={kept}-"))),
        "{resumed:?}"
    );
    // config.json and tokenizer.json were complete: not fetched again.
    assert!(hub.requests()[n..]
        .iter()
        .all(|(p, _)| p.ends_with("model.onnx")));
}

/// A golden case: title, arguments, environment.
type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);

#[test]
fn pull_errors_name_what_and_the_fix() {
    let hub = hub();
    let sb = Sandbox::new("pull-errors");
    let models = sb.dir.join("models");
    let mut g = Golden::new(
        "errors/models_pull.txt",
        "# `uqd models pull` errors, against a hub on loopback ($HUB) with the hub's URL layout and error headers.\n\
         # Pinned by tests/tests/e2e/models_pull.rs. After an intended change: UQ_BLESS=1 cargo test --release\n\
         # -p uq-integration --test e2e models_pull::, then review the diff.",
    );
    g.replace(&hub.url, "$HUB");
    g.replace(sb.dir.display(), "$SANDBOX");
    let cases: &[Case] = &[
        (
            "a missing file: no tokenizer.json",
            &["uqlite-test/no-tokenizer"],
            &[],
        ),
        (
            "a missing file: no ONNX model",
            &["uqlite-test/no-onnx"],
            &[],
        ),
        (
            "a revision that does not exist",
            &["uqlite-test/nli-minilm", "--revision", "v9"],
            &[],
        ),
        (
            "a private repository without HF_TOKEN",
            &["uqlite-test/private"],
            &[],
        ),
        (
            "a private repository with a wrong HF_TOKEN",
            &["uqlite-test/private"],
            &[("HF_TOKEN", "hf_wrong")],
        ),
        ("not an NLI model", &["uqlite-test/minilm-embed"], &[]),
        (
            "a SHA-256 that does not match the hub's",
            &["uqlite-test/bad-sha"],
            &[],
        ),
        ("a bad repository id", &["../etc"], &[]),
        (
            "a bad kind",
            &["uqlite-test/nli-minilm", "--kind", "llm"],
            &[],
        ),
        (
            "--onnx-file names no file of the repository",
            &[
                "uqlite-test/nli-minilm",
                "--onnx-file",
                "onnx/model_int8.onnx",
            ],
            &[],
        ),
        (
            "--onnx-file not a path in the repository",
            &["uqlite-test/nli-minilm", "--onnx-file", "../model.onnx"],
            &[],
        ),
    ];
    for (title, args, env) in cases {
        let out = pull(&hub, &models, args, env);
        let shown = format!(
            "$ {}uqd models pull {}",
            env.iter()
                .map(|(k, v)| format!("{k}={v} "))
                .collect::<String>(),
            args.join(" ")
        );
        let err = stderr_err(&out, &shown);
        assert_eq!(out.status.code(), Some(1), "{title}: {err}");
        assert!(out.stdout.is_empty(), "{title}: a directory was printed");
        // Only the error itself is pinned (not the progress lines before it).
        let last = err
            .lines()
            .rfind(|l| l.starts_with("uqd: "))
            .unwrap_or(&err)
            .to_string();
        g.add(title, &shown, "error (exit status 1)", &last);
    }
    // No failed pull left a model directory behind, nor a staging directory with nothing to resume.
    for repo in [
        "no-tokenizer",
        "no-onnx",
        "private",
        "minilm-embed",
        "bad-sha",
    ] {
        for d in ["main", ".main.download"] {
            let d = models.join("uqlite-test").join(repo).join(d);
            assert!(!d.exists(), "{} exists after a failed pull", d.display());
        }
    }
    // Another pull of the same repository and revision holds the lock.
    let repo_dir = models.join("uqlite-test/nli-flat");
    std::fs::create_dir_all(&repo_dir).unwrap();
    let held = std::fs::File::create(repo_dir.join(".main.lock")).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    let r = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) };
    assert_eq!(r, 0);
    let out = pull(&hub, &models, &["uqlite-test/nli-flat"], &[]);
    let err = stderr_err(&out, "pull while another holds the lock");
    g.add(
        "another pull of the same repository runs",
        "$ uqd models pull uqlite-test/nli-flat",
        "error (exit status 1)",
        &err,
    );
    drop(held);
    g.check();
}
