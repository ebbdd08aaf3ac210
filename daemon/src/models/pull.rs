//! `uqd models pull REPO_ID`: downloads an NLI (or embedding) model in ONNX form from a Hugging
//! Face-compatible hub into the user's cache directory, so that `UQ_NLI_MODEL` can point at it.
//!
//! URLs are the hub's `{HF_ENDPOINT}/{repo}/resolve/{revision}/{path}` (default endpoint
//! `https://huggingface.co`; `HF_TOKEN`, when set, goes as a bearer token). Files are written to
//! `<path>.fetched.part` in a staging directory, resumed with `Range` after a cut connection, checked
//! (size; SHA-256 when the hub gives one in `X-Linked-Etag`; `config.json`'s `id2label` and the
//! tokenizer through the daemon's own loaders), and only then renamed: first each file, then the
//! staging directory to `<models dir>/<repo>/<revision>` in one rename. A half-written model is
//! therefore never in the directory the command prints. See docs/reference.md, "uqd models pull".

mod args;
mod body;
mod download;
mod headers;

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

pub use args::{Kind, PullArgs};
use download::Hub;

/// Default hub (`HF_ENDPOINT`).
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// Name of the record written beside the files (repo, revision, commit, hashes).
pub const RECORD: &str = "uqlite-pull.json";

/// Where models go without `--models-dir` or `UQ_MODELS_DIR`: `$XDG_CACHE_HOME/uqlite/models`,
/// else `~/.cache/uqlite/models`.
pub fn default_models_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let abs = |k: &str| {
        env(k)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(x) = abs("XDG_CACHE_HOME") {
        return x.join("uqlite").join("models");
    }
    if let Some(h) = abs("HOME") {
        return h.join(".cache").join("uqlite").join("models");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/tmp/uqlite-{uid}")).join("models")
}

/// Checks a repository id: `name` or `owner/name`, each of ASCII letters, digits, `-`, `_`, `.`.
pub fn check_repo_id(repo: &str) -> Result<(), String> {
    let parts: Vec<&str> = repo.split('/').collect();
    let ok_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if parts.len() > 2 || !parts.iter().all(|p| ok_part(p)) {
        return Err(format!(
            "REPO_ID {repo:?} is not a repository id: give it as on the hub's page, e.g. \
             cross-encoder/nli-deberta-v3-xsmall"
        ));
    }
    Ok(())
}

/// A revision's directory name: `/` (as in `refs/pr/1`) becomes `--`.
fn revision_dir(revision: &str) -> Result<String, String> {
    if revision.trim().is_empty()
        || revision
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
        || revision.chars().any(|c| c.is_control())
    {
        return Err(format!(
            "--revision {revision:?} is not a revision: give a branch, a tag or a commit hash (default main)"
        ));
    }
    Ok(revision.replace('/', "--"))
}

/// Downloads and verifies the model; returns its directory (also when it was already there).
pub fn pull(args: &PullArgs) -> Result<PathBuf, String> {
    check_repo_id(&args.repo)?;
    if let Some(f) = &args.onnx_file {
        if !f.ends_with(".onnx")
            || f.starts_with('/')
            || f.split('/').any(|p| p.is_empty() || p == "..")
        {
            return Err(format!(
                "--onnx-file {f:?} is not an ONNX file of the repository: give its path there, e.g. onnx/model_quantized.onnx"
            ));
        }
    }
    let rev_dir = revision_dir(&args.revision)?;
    let repo_dir = args.models_dir.join(&args.repo);
    let final_dir = repo_dir.join(&rev_dir);
    if final_dir.is_dir() {
        verify_dir(&final_dir, args.kind)?;
        eprintln!(
            "uqd models pull: {} @ {} is already in {} (delete that directory to download it again)",
            args.repo,
            args.revision,
            final_dir.display()
        );
        return Ok(final_dir);
    }
    let staging = repo_dir.join(format!(".{rev_dir}.download"));
    fs::create_dir_all(&staging).map_err(|e| {
        format!(
            "cannot create {}: {e} (check --models-dir / UQ_MODELS_DIR)",
            staging.display()
        )
    })?;

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the download runtime: {e}"))?;
    // One pull of a repository and revision at a time (the lock is released when `_lock` drops).
    let lock_path = repo_dir.join(format!(".{rev_dir}.lock"));
    let _lock = lock(&lock_path, &args.repo)?;
    let hub = Hub::new(args)?;
    let fetched = rt
        .block_on(hub.fetch_all(&staging))
        .and_then(|record| verify_dir(&staging, args.kind).map(|_| record));
    let record = match fetched {
        Ok(r) => r,
        Err(e) => {
            // Keep the staging directory only when it holds a partial download to resume.
            if !has_partial(&staging) {
                let _ = fs::remove_dir_all(&staging);
            }
            return Err(e);
        }
    };
    fs::write(
        staging.join(RECORD),
        serde_json::to_string_pretty(&record).unwrap_or_default() + "\n",
    )
    .map_err(|e| format!("cannot write {}: {e}", staging.join(RECORD).display()))?;
    fs::rename(&staging, &final_dir).map_err(|e| {
        format!(
            "cannot move {} to {}: {e}",
            staging.display(),
            final_dir.display()
        )
    })?;
    eprintln!(
        "uqd models pull: {} @ {} is ready; use it with  export {}={}",
        args.repo,
        args.revision,
        args.kind.variable(),
        final_dir.display()
    );
    Ok(final_dir)
}

/// Whether `dir` holds a `.part` file.
fn has_partial(dir: &Path) -> bool {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".part"))
        })
        .unwrap_or(false)
}

/// An exclusive lock on `path` (created), held until the returned file is dropped.
fn lock(path: &Path, repo: &str) -> Result<File, String> {
    use std::os::fd::AsRawFd;
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(format!(
            "another `uqd models pull` is downloading {repo} into the same directory (it holds {}): \
             wait for it to finish",
            path.display()
        ));
    }
    Ok(f)
}

/// The checks the daemon makes when it loads the model, without ONNX Runtime: model.onnx is a
/// non-empty file, the tokenizer loads, and (NLI) config.json's id2label names entailment,
/// neutral and contradiction.
pub fn verify_dir(dir: &Path, kind: Kind) -> Result<(), String> {
    let model = dir.join("model.onnx");
    match fs::metadata(&model) {
        Ok(m) if m.is_file() && m.len() > 0 => {}
        _ => {
            return Err(format!(
                "{} is missing or empty: delete {} and pull again",
                model.display(),
                dir.display()
            ))
        }
    }
    let checked = match kind {
        Kind::Nli => crate::engine::nli::NliText::load(dir, None).map(|_| ()),
        Kind::Embedding => tokenizers::Tokenizer::from_file(dir.join("tokenizer.json"))
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "embedding model {}: cannot load tokenizer.json: {e}",
                    dir.display()
                )
            }),
    };
    checked.map_err(|e| {
        format!("{e} (the repository's files do not make a model uqd can load; see docs/reference.md, \"uqd models pull\")")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_and_revisions_are_checked() {
        assert!(check_repo_id("cross-encoder/nli-deberta-v3-xsmall").is_ok());
        assert!(check_repo_id("gpt2").is_ok());
        for bad in ["", "a/b/c", "../x", "a/..", "a b/c", "/x"] {
            assert!(check_repo_id(bad).is_err(), "{bad:?}");
        }
        assert_eq!(revision_dir("refs/pr/1").unwrap(), "refs--pr--1");
        assert!(revision_dir("../x").is_err());
        assert!(revision_dir(" ").is_err());
        assert_eq!(download::encode_segment("refs/pr/1"), "refs%2Fpr%2F1");
    }

    #[test]
    fn models_dir_follows_the_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        // UQ_MODELS_DIR is read with the flags (config::settings::ModelsVars), not here.
        assert_eq!(
            default_models_dir(&env(&[("UQ_MODELS_DIR", "/m"), ("XDG_CACHE_HOME", "/x")])),
            PathBuf::from("/x/uqlite/models")
        );
        assert_eq!(
            default_models_dir(&env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            PathBuf::from("/x/uqlite/models")
        );
        assert_eq!(
            default_models_dir(&env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
            PathBuf::from("/h/.cache/uqlite/models")
        );
    }
}
