//! Daemon configuration: model directories, ONNX Runtime library, device, threads, batching knobs,
//! and the LLM layer's completion cache file and local model.
//!
//! Precedence (design.md): command-line flags > environment > JSON config file (`--config FILE`
//! or `UQ_CONFIG`) > defaults relative to the `uqd` executable's directory. Each setting's
//! flag, variable and key are declared once, in [`settings`].

mod backend;
mod device;
pub mod settings;

use std::path::{Path, PathBuf};

pub use backend::{
    parse_backend_urls, NliBackend, DEFAULT_BACKEND_HEALTH_MS, DEFAULT_BACKEND_MODEL,
    DEFAULT_BACKEND_RETRIES, DEFAULT_BACKEND_TIMEOUT_MS,
};
pub use device::{Device, Precision};
use settings::{absolutize, GivenSettings};
pub use settings::{CliOverrides, FileBackend, FileConfig, UrlList};

/// File name of the ONNX Runtime shared library that `make setup` puts in `dist/lib/`.
pub const ORT_LIB_NAME: &str = "libonnxruntime.so.1.31.1";
/// Default maximum batch size (encoded windows per forward pass).
pub const DEFAULT_MAX_BATCH: usize = 16;
/// Default time the batcher waits for more work after the first item (ms).
pub const DEFAULT_MAX_WAIT_MS: u64 = 2;
/// Default token limit of the embedding model (sentence-transformers' `max_seq_length` of
/// all-MiniLM-L6-v2).
pub const DEFAULT_EMBED_MAX_TOKENS: usize = 256;
/// File name of the completion cache under the cache directory (`…/uqlite/completions.sqlite`).
pub const CACHE_DB_NAME: &str = "completions.sqlite";

/// The resolved configuration of the daemon.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Unix socket path.
    pub socket: PathBuf,
    /// NLI model directory (`model.onnx`, `tokenizer.json`, `config.json`).
    pub nli_model: PathBuf,
    /// Embedding model directory (`model.onnx`, `tokenizer.json`); `None`: embedding scorers error.
    pub embed_model: Option<PathBuf>,
    /// Path of `libonnxruntime.so.1.31.1`.
    pub ort_lib: PathBuf,
    pub device: Device,
    /// Which NLI model file runs (`--precision`).
    pub precision: Precision,
    /// Where `uqd models optimize` writes the variants of a model whose directory is not given as
    /// `--out` (one subdirectory per model; default `<exe dir>/models/variants`).
    pub variants_dir: PathBuf,
    /// ONNX Runtime threads of the NLI model on the CPU, shared out among its sessions.
    pub threads: usize,
    /// NLI sessions on the CPU, each with `threads / nli_sessions` intra-op threads, each
    /// running batches of its own from the one queue; `None`: 2 for the int8 model when
    /// `threads` ≥ 2, else 1 (`engine::local_nli`).
    pub nli_sessions: Option<usize>,
    /// Maximum number of encoded windows per forward pass.
    pub max_batch: usize,
    /// Maximum wait for more work after the first queued item (ms).
    pub max_wait_ms: u64,
    /// NLI window in tokens; `None`: min(512, max_position_embeddings of the model).
    pub nli_max_tokens: Option<usize>,
    /// Token limit of the embedding model (texts are truncated to it).
    pub embed_max_tokens: usize,
    /// The LLM layer's persistent completion cache (SQLite file; opened on first LLM use).
    pub cache_db: PathBuf,
    /// The local LLM's GGUF file (default LLM; loaded on first use).
    pub local_llm: PathBuf,
    /// NLI on an inference server (`--nli-backend`): the model's forward passes go to these
    /// KServe v2 endpoints instead of a local ONNX Runtime session.
    pub nli_backend: Option<NliBackend>,
}

impl Config {
    /// Resolves the configuration from flags, the process environment, the config file and the
    /// defaults next to the current executable.
    pub fn resolve(cli: CliOverrides) -> Result<Config, String> {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.canonicalize().ok().or(Some(p)))
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        resolve_with(cli, &|k| std::env::var(k).ok(), &exe_dir, &cwd)
    }
}

/// The resolution with the environment, the executable's directory and the working directory
/// injected (for tests).
pub fn resolve_with(
    cli: CliOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: &Path,
    cwd: &Path,
) -> Result<Config, String> {
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    // The config file: --config, else UQ_CONFIG.
    let file_path = cli
        .config
        .clone()
        .map(|p| absolutize(p, cwd))
        .or_else(|| env("UQ_CONFIG").map(|p| absolutize(PathBuf::from(p), cwd)));
    let (file, file_dir) = match &file_path {
        Some(p) => (
            read_file(p)?,
            p.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| cwd.to_path_buf()),
        ),
        None => (FileConfig::default(), cwd.to_path_buf()),
    };
    let mut given = GivenSettings::pick(cli, &env, file);
    let nli_backend = backend::resolve_backend(&mut given)?;
    let dirs = Dirs {
        exe: exe_dir,
        cwd,
        file: &file_dir,
    };
    let config = resolve_given(given, &dirs, &env, nli_backend)?;
    check_ranges(&config)?;
    Ok(config)
}

/// The config file at `path`, its keys checked.
fn read_file(path: &Path) -> Result<FileConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read config file {}: {e} (check --config or UQ_CONFIG)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "config file {} is not valid: {e} (valid keys: {})",
            path.display(),
            settings::valid_keys()
        )
    })
}

/// The directories relative paths and defaults are taken from.
struct Dirs<'a> {
    /// The `uqd` executable's (defaults).
    exe: &'a Path,
    /// The working directory (flags and variables).
    cwd: &'a Path,
    /// The config file's (its paths).
    file: &'a Path,
}

/// Each setting's value, or its default.
fn resolve_given(
    given: GivenSettings,
    dirs: &Dirs,
    env: &dyn Fn(&str) -> Option<String>,
    nli_backend: Option<NliBackend>,
) -> Result<Config, String> {
    let exe_dir = dirs.exe;
    let path = |g: Option<settings::Given<PathBuf>>| g.map(|g| g.path(dirs.cwd, dirs.file));
    let models = exe_dir.join("models");
    let device = match given.device {
        Some(d) => d.parse(Device::parse)?,
        None => Device::Auto,
    };
    Ok(Config {
        socket: path(given.socket).unwrap_or_else(uq_core::paths::default_socket_path),
        nli_model: path(given.nli_model).unwrap_or_else(|| models.join("nli")),
        embed_model: path(given.embed_model).or_else(|| {
            let d = models.join("embed");
            d.is_dir().then_some(d)
        }),
        variants_dir: path(given.variants_dir).unwrap_or_else(|| models.join("variants")),
        cache_db: path(given.cache_db).unwrap_or_else(|| default_cache_db(env)),
        local_llm: path(given.local_llm)
            .unwrap_or_else(|| models.join("smollm2").join(uq_llm::local::SMOLLM2_FILE)),
        // The CUDA build that `make setup` fetches on a GPU machine, unless the device is cpu.
        ort_lib: path(given.ort_lib).unwrap_or_else(|| {
            let gpu = exe_dir.join("lib").join("gpu").join(ORT_LIB_NAME);
            if device != Device::Cpu && gpu.is_file() {
                gpu
            } else {
                exe_dir.join("lib").join(ORT_LIB_NAME)
            }
        }),
        device,
        precision: match given.precision {
            Some(p) => p.parse(Precision::parse)?,
            None => Precision::Auto,
        },
        threads: value(given.threads)?.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
        nli_sessions: value(given.nli_sessions)?,
        max_batch: value(given.max_batch)?.unwrap_or(DEFAULT_MAX_BATCH),
        max_wait_ms: value(given.max_wait_ms)?.unwrap_or(DEFAULT_MAX_WAIT_MS),
        nli_max_tokens: value(given.nli_max_tokens)?,
        embed_max_tokens: value(given.embed_max_tokens)?.unwrap_or(DEFAULT_EMBED_MAX_TOKENS),
        nli_backend,
    })
}

fn value<T: settings::EnvValue>(given: Option<settings::Given<T>>) -> Result<Option<T>, String> {
    given.map(settings::Given::value).transpose()
}

/// The ranges of the numeric settings.
fn check_ranges(c: &Config) -> Result<(), String> {
    if c.threads == 0 {
        return Err("threads must be at least 1 (--threads / UQ_THREADS)".into());
    }
    if c.max_batch == 0 {
        return Err("max batch must be at least 1 (--max-batch / UQ_MAX_BATCH)".into());
    }
    if let Some(n) = c.nli_sessions.filter(|&n| n == 0 || n > 64) {
        return Err(format!(
            "NLI sessions {n} (--nli-sessions / UQ_NLI_SESSIONS) is out of range: use 1 to 64"
        ));
    }
    if c.max_wait_ms > 60_000 {
        return Err(format!(
            "max wait {} ms is too long: use at most 60000 (--max-wait-ms / UQ_MAX_WAIT_MS)",
            c.max_wait_ms
        ));
    }
    if let Some(w) = c.nli_max_tokens.filter(|&w| w < 16) {
        return Err(format!(
            "NLI window of {w} tokens is too small: use at least 16 (--nli-max-tokens / UQ_NLI_MAX_TOKENS)"
        ));
    }
    if c.embed_max_tokens < 8 {
        return Err(format!(
            "embedding token limit {} is too small: use at least 8 (--embed-max-tokens / UQ_EMBED_MAX_TOKENS)",
            c.embed_max_tokens
        ));
    }
    Ok(())
}

/// `$XDG_CACHE_HOME/uqlite/completions.sqlite`, else `$HOME/.cache/uqlite/completions.sqlite`,
/// else (no home) `/tmp/uqlite-<uid>/completions.sqlite`. Relative XDG/HOME values are ignored,
/// as the XDG spec asks.
fn default_cache_db(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let abs = |k: &str| env(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(x) = abs("XDG_CACHE_HOME") {
        return x.join("uqlite").join(CACHE_DB_NAME);
    }
    if let Some(h) = abs("HOME") {
        return h.join(".cache").join("uqlite").join(CACHE_DB_NAME);
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/tmp/uqlite-{uid}")).join(CACHE_DB_NAME)
}

/// Checks that a model directory holds `model.onnx`, `tokenizer.json` and, when `need_config`
/// (NLI models), `config.json`. The error names the directory, the missing file and the fix.
pub fn check_model_dir(dir: &Path, need_config: bool) -> Result<(), String> {
    let (what, var, fix) = if need_config {
        (
            "NLI model",
            "UQ_NLI_MODEL",
            "export an NLI model to ONNX, e.g. `optimum-cli export onnx --model microsoft/deberta-large-mnli DIR` \
             (which writes model.onnx, tokenizer.json and config.json), and set UQ_NLI_MODEL=DIR or pass --nli-model DIR; \
             or run `make setup` for the default model",
        )
    } else {
        (
            "embedding model",
            "UQ_EMBED_MODEL",
            "export a sentence-transformers model to ONNX, e.g. `optimum-cli export onnx --model \
             sentence-transformers/all-MiniLM-L6-v2 DIR`, and set UQ_EMBED_MODEL=DIR or pass --embed-model DIR; \
             or run `make setup` for the default model",
        )
    };
    if !dir.is_dir() {
        return Err(format!(
            "{what} directory {} does not exist (set by {var} / the config, or the default next to uqd): {fix}",
            dir.display()
        ));
    }
    let mut needed = vec!["model.onnx", "tokenizer.json"];
    if need_config {
        needed.push("config.json");
    }
    for f in needed {
        if !dir.join(f).is_file() {
            return Err(format!(
                "{what} directory {} has no {f}: {fix}",
                dir.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
