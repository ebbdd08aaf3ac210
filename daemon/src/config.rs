//! Daemon configuration: model directories, ONNX Runtime library, device, threads, batching knobs,
//! and the LLM layer's completion cache file and local model.
//!
//! Precedence (design.md): command-line flags > environment > JSON config file (`--config FILE`
//! or `UQ_CONFIG`) > defaults relative to the `uqd` executable's directory.

use std::path::{Path, PathBuf};

use serde::Deserialize;

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

/// Where the models run. `Auto` (the default) uses CUDA when it loads, else the CPU, and the
/// engine says why CUDA was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Auto,
    Cpu,
    Cuda,
}

impl Device {
    pub fn parse(s: &str) -> Result<Device, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda),
            other => Err(format!(
                "unknown device {other:?}: valid devices are \"auto\", \"cpu\" and \"cuda\""
            )),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }
}

/// Which file of the NLI model runs (see `crate::models::variants`). `Auto`: int8 on the CPU
/// when `uqd models optimize` wrote it, fp16 on CUDA when written, else fp32. `Original`: the
/// model directory's own `model.onnx`, never a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    Auto,
    Original,
    Fp32,
    Int8,
    Fp16,
}

impl Precision {
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "original" => Ok(Precision::Original),
            "fp32" => Ok(Precision::Fp32),
            "int8" => Ok(Precision::Int8),
            "fp16" => Ok(Precision::Fp16),
            other => Err(format!(
                "unknown precision {other:?}: valid precisions are \"auto\", \"fp32\", \"int8\", \"fp16\" and \"original\""
            )),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Original => "original",
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
            Precision::Fp16 => "fp16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// The `nli_backend` object of the config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileBackend {
    /// One URL or several.
    pub urls: Option<UrlList>,
    pub model: Option<String>,
    pub timeout_ms: Option<u64>,
    pub retries: Option<usize>,
    pub health_ms: Option<u64>,
}

/// A URL or a list of URLs.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum UrlList {
    One(String),
    Many(Vec<String>),
}

/// The base URLs of a comma-separated list (or a file's list): each `http://` or `https://`,
/// without a trailing `/` or `/v2`. `what`: the setting, for the message.
pub fn parse_backend_urls(list: &[String], what: &str) -> Result<Vec<String>, String> {
    let mut urls = Vec::new();
    for u in list.iter().flat_map(|u| u.split(',')).map(str::trim) {
        if u.is_empty() {
            continue;
        }
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
        let base = base
            .strip_suffix("/v2")
            .unwrap_or(base)
            .trim_end_matches('/');
        if !urls.iter().any(|x: &String| x == base) {
            urls.push(base.to_string());
        }
    }
    if urls.is_empty() {
        return Err(format!(
            "{what} is empty: give at least one inference server URL, e.g. http://127.0.0.1:8000"
        ));
    }
    Ok(urls)
}

/// Values given on the command line (each `None` when the flag was not given).
#[derive(Debug, Clone, Default)]
pub struct CliOverrides {
    /// `--config FILE`
    pub config: Option<PathBuf>,
    pub socket: Option<PathBuf>,
    pub nli_model: Option<PathBuf>,
    pub embed_model: Option<PathBuf>,
    pub ort_lib: Option<PathBuf>,
    /// `--device auto|cpu|cuda`
    pub device: Option<String>,
    /// `--precision auto|fp32|int8|fp16|original`
    pub precision: Option<String>,
    pub variants_dir: Option<PathBuf>,
    pub threads: Option<usize>,
    pub nli_sessions: Option<usize>,
    pub max_batch: Option<usize>,
    pub max_wait_ms: Option<u64>,
    pub nli_max_tokens: Option<usize>,
    pub embed_max_tokens: Option<usize>,
    pub cache_db: Option<PathBuf>,
    pub local_llm: Option<PathBuf>,
    /// `--nli-backend URL[,URL…]`
    pub nli_backend: Option<String>,
    pub nli_backend_model: Option<String>,
    pub nli_backend_timeout_ms: Option<u64>,
    pub nli_backend_retries: Option<usize>,
    pub nli_backend_health_ms: Option<u64>,
}

/// The JSON config file: the same keys as the settings, in snake_case. Unknown keys are refused.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub socket: Option<PathBuf>,
    pub nli_model: Option<PathBuf>,
    pub embed_model: Option<PathBuf>,
    pub ort_lib: Option<PathBuf>,
    pub device: Option<String>,
    pub precision: Option<String>,
    pub variants_dir: Option<PathBuf>,
    pub threads: Option<usize>,
    pub nli_sessions: Option<usize>,
    pub max_batch: Option<usize>,
    pub max_wait_ms: Option<u64>,
    pub nli_max_tokens: Option<usize>,
    pub embed_max_tokens: Option<usize>,
    pub cache_db: Option<PathBuf>,
    pub local_llm: Option<PathBuf>,
    pub nli_backend: Option<FileBackend>,
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

fn absolutize(p: PathBuf, base: &Path) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        base.join(p)
    }
}

fn parse_env<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.trim()
        .parse::<T>()
        .map_err(|_| format!("{name}={v:?} is not a valid non-negative integer"))
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
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                format!(
                    "cannot read config file {}: {e} (check --config or UQ_CONFIG)",
                    p.display()
                )
            })?;
            let f: FileConfig = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "config file {} is not valid: {e} (valid keys: socket, nli_model, embed_model, ort_lib, device, \
                     precision, variants_dir, threads, nli_sessions, max_batch, max_wait_ms, nli_max_tokens, embed_max_tokens, cache_db, local_llm, \
                     nli_backend {{urls, model, timeout_ms, retries, health_ms}})",
                    p.display()
                )
            })?;
            (
                f,
                p.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| cwd.to_path_buf()),
            )
        }
        None => (FileConfig::default(), cwd.to_path_buf()),
    };

    let nli_backend = resolve_backend(&cli, &env, file.nli_backend.as_ref())?;

    // Paths: flag (relative to cwd) > env (relative to cwd) > file (relative to the file) > default.
    let path_setting =
        |flag: Option<PathBuf>, var: &str, filev: Option<PathBuf>| -> Option<PathBuf> {
            flag.map(|p| absolutize(p, cwd))
                .or_else(|| env(var).map(|v| absolutize(PathBuf::from(v), cwd)))
                .or_else(|| filev.map(|p| absolutize(p, &file_dir)))
        };
    let socket = path_setting(cli.socket, "UQ_SOCKET", file.socket)
        .unwrap_or_else(uq_core::paths::default_socket_path);
    let nli_model = path_setting(cli.nli_model, "UQ_NLI_MODEL", file.nli_model)
        .unwrap_or_else(|| exe_dir.join("models").join("nli"));
    let embed_model =
        path_setting(cli.embed_model, "UQ_EMBED_MODEL", file.embed_model).or_else(|| {
            let d = exe_dir.join("models").join("embed");
            d.is_dir().then_some(d)
        });
    let variants_dir = path_setting(cli.variants_dir, "UQ_VARIANTS_DIR", file.variants_dir)
        .unwrap_or_else(|| exe_dir.join("models").join("variants"));
    let cache_db = path_setting(cli.cache_db, "UQ_CACHE_DB", file.cache_db)
        .unwrap_or_else(|| default_cache_db(&env));
    let local_llm =
        path_setting(cli.local_llm, "UQ_LOCAL_LLM", file.local_llm).unwrap_or_else(|| {
            exe_dir
                .join("models")
                .join("smollm2")
                .join(uq_llm::local::SMOLLM2_FILE)
        });

    let device = match cli.device {
        Some(d) => Device::parse(&d).map_err(|e| format!("--device: {e}"))?,
        None => match env("UQ_DEVICE") {
            Some(d) => Device::parse(&d).map_err(|e| format!("UQ_DEVICE: {e}"))?,
            None => match file.device {
                Some(d) => Device::parse(&d).map_err(|e| format!("config file device: {e}"))?,
                None => Device::Auto,
            },
        },
    };
    // The CUDA build that `make setup` fetches on a GPU machine, unless the device is cpu.
    let ort_lib = path_setting(cli.ort_lib, "UQ_ORT_LIB", file.ort_lib).unwrap_or_else(|| {
        let gpu = exe_dir.join("lib").join("gpu").join(ORT_LIB_NAME);
        if device != Device::Cpu && gpu.is_file() {
            gpu
        } else {
            exe_dir.join("lib").join(ORT_LIB_NAME)
        }
    });
    let precision = match cli.precision {
        Some(p) => Precision::parse(&p).map_err(|e| format!("--precision: {e}"))?,
        None => match env("UQ_PRECISION") {
            Some(p) => Precision::parse(&p).map_err(|e| format!("UQ_PRECISION: {e}"))?,
            None => match file.precision {
                Some(p) => {
                    Precision::parse(&p).map_err(|e| format!("config file precision: {e}"))?
                }
                None => Precision::Auto,
            },
        },
    };

    macro_rules! num {
        ($flag:expr, $var:literal, $file:expr, $ty:ty) => {
            match $flag {
                Some(v) => Some(v),
                None => match env($var) {
                    Some(v) => Some(parse_env::<$ty>($var, &v)?),
                    None => $file,
                },
            }
        };
    }
    let threads = num!(cli.threads, "UQ_THREADS", file.threads, usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let nli_sessions = num!(
        cli.nli_sessions,
        "UQ_NLI_SESSIONS",
        file.nli_sessions,
        usize
    );
    let max_batch =
        num!(cli.max_batch, "UQ_MAX_BATCH", file.max_batch, usize).unwrap_or(DEFAULT_MAX_BATCH);
    let max_wait_ms = num!(cli.max_wait_ms, "UQ_MAX_WAIT_MS", file.max_wait_ms, u64)
        .unwrap_or(DEFAULT_MAX_WAIT_MS);
    let nli_max_tokens = num!(
        cli.nli_max_tokens,
        "UQ_NLI_MAX_TOKENS",
        file.nli_max_tokens,
        usize
    );
    let embed_max_tokens = num!(
        cli.embed_max_tokens,
        "UQ_EMBED_MAX_TOKENS",
        file.embed_max_tokens,
        usize
    )
    .unwrap_or(DEFAULT_EMBED_MAX_TOKENS);

    if threads == 0 {
        return Err("threads must be at least 1 (--threads / UQ_THREADS)".into());
    }
    if max_batch == 0 {
        return Err("max batch must be at least 1 (--max-batch / UQ_MAX_BATCH)".into());
    }
    if let Some(n) = nli_sessions.filter(|&n| n == 0 || n > 64) {
        return Err(format!(
            "NLI sessions {n} (--nli-sessions / UQ_NLI_SESSIONS) is out of range: use 1 to 64"
        ));
    }
    if max_wait_ms > 60_000 {
        return Err(format!(
            "max wait {max_wait_ms} ms is too long: use at most 60000 (--max-wait-ms / UQ_MAX_WAIT_MS)"
        ));
    }
    if let Some(w) = nli_max_tokens {
        if w < 16 {
            return Err(format!(
                "NLI window of {w} tokens is too small: use at least 16 (--nli-max-tokens / UQ_NLI_MAX_TOKENS)"
            ));
        }
    }
    if embed_max_tokens < 8 {
        return Err(format!(
            "embedding token limit {embed_max_tokens} is too small: use at least 8 (--embed-max-tokens / UQ_EMBED_MAX_TOKENS)"
        ));
    }

    Ok(Config {
        socket,
        nli_model,
        embed_model,
        ort_lib,
        device,
        precision,
        variants_dir,
        threads,
        nli_sessions,
        max_batch,
        max_wait_ms,
        nli_max_tokens,
        embed_max_tokens,
        cache_db,
        local_llm,
        nli_backend,
    })
}

/// The NLI backend of flags > environment > config file; `None` when no URL is set anywhere.
fn resolve_backend(
    cli: &CliOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: Option<&FileBackend>,
) -> Result<Option<NliBackend>, String> {
    let file_urls = file.and_then(|f| f.urls.clone()).map(|u| match u {
        UrlList::One(s) => vec![s],
        UrlList::Many(v) => v,
    });
    let urls = match (&cli.nli_backend, env("UQ_NLI_BACKEND"), file_urls) {
        (Some(f), _, _) => parse_backend_urls(std::slice::from_ref(f), "--nli-backend")?,
        (None, Some(e), _) => parse_backend_urls(&[e], "UQ_NLI_BACKEND")?,
        (None, None, Some(list)) => parse_backend_urls(&list, "config file nli_backend.urls")?,
        (None, None, None) => return Ok(None),
    };
    let model = cli
        .nli_backend_model
        .clone()
        .or_else(|| env("UQ_NLI_BACKEND_MODEL"))
        .or_else(|| file.and_then(|f| f.model.clone()))
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| DEFAULT_BACKEND_MODEL.to_string());
    if model.is_empty() || model.contains(['/', '?', '#', ' ']) {
        return Err(format!(
            "NLI backend model name {model:?} (--nli-backend-model / UQ_NLI_BACKEND_MODEL) is not a model name: \
             give the name the server lists, e.g. nli (curl URL/v2/models/nli)"
        ));
    }
    macro_rules! num {
        ($flag:expr, $var:literal, $file:ident, $ty:ty, $default:expr) => {
            match $flag {
                Some(v) => v,
                None => match env($var) {
                    Some(v) => parse_env::<$ty>($var, &v)?,
                    None => file.and_then(|f| f.$file).unwrap_or($default),
                },
            }
        };
    }
    let timeout_ms = num!(
        cli.nli_backend_timeout_ms,
        "UQ_NLI_BACKEND_TIMEOUT_MS",
        timeout_ms,
        u64,
        DEFAULT_BACKEND_TIMEOUT_MS
    );
    let retries = num!(
        cli.nli_backend_retries,
        "UQ_NLI_BACKEND_RETRIES",
        retries,
        usize,
        DEFAULT_BACKEND_RETRIES
    );
    let health_ms = num!(
        cli.nli_backend_health_ms,
        "UQ_NLI_BACKEND_HEALTH_MS",
        health_ms,
        u64,
        DEFAULT_BACKEND_HEALTH_MS
    );
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
    Ok(Some(NliBackend {
        urls,
        model,
        timeout_ms,
        retries,
        health_ms,
    }))
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
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("uqd-cfg-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn resolve(
        cli: CliOverrides,
        env: &HashMap<&str, String>,
        exe: &Path,
    ) -> Result<Config, String> {
        resolve_with(cli, &|k| env.get(k).cloned(), exe, Path::new("/cwd"))
    }

    #[test]
    fn defaults_relative_to_exe() {
        let exe = tmpdir("exe");
        let env = HashMap::new();
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.nli_model, exe.join("models/nli"));
        assert_eq!(c.embed_model, None, "embed dir absent -> None");
        assert_eq!(c.ort_lib, exe.join("lib/libonnxruntime.so.1.31.1"));
        assert_eq!(c.device, Device::Auto);
        assert_eq!(c.precision, Precision::Auto);
        assert_eq!(c.variants_dir, exe.join("models/variants"));
        assert_eq!(c.max_batch, DEFAULT_MAX_BATCH);
        assert_eq!(c.max_wait_ms, DEFAULT_MAX_WAIT_MS);
        assert_eq!(c.nli_max_tokens, None);
        assert_eq!(c.embed_max_tokens, 256);
        assert!(c.threads >= 1);
        std::fs::create_dir_all(exe.join("models/embed")).unwrap();
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.embed_model, Some(exe.join("models/embed")));
        // With the CUDA build of `make setup` present, auto and cuda use it, cpu does not.
        std::fs::create_dir_all(exe.join("lib/gpu")).unwrap();
        std::fs::write(exe.join("lib/gpu/libonnxruntime.so.1.31.1"), b"x").unwrap();
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.ort_lib, exe.join("lib/gpu/libonnxruntime.so.1.31.1"));
        let cpu = CliOverrides {
            device: Some("cpu".into()),
            ..Default::default()
        };
        let c = resolve(cpu, &env, &exe).unwrap();
        assert_eq!(c.ort_lib, exe.join("lib/libonnxruntime.so.1.31.1"));
    }

    #[test]
    fn precedence_flags_env_file_default() {
        let exe = tmpdir("prec");
        let cfgfile = exe.join("uqd.json");
        std::fs::write(
            &cfgfile,
            r#"{"nli_model": "file_nli", "embed_model": "/abs/file_embed", "threads": 3, "max_batch": 7,
                "device": "cuda", "max_wait_ms": 9, "nli_max_tokens": 128, "ort_lib": "/f/lib.so", "socket": "/f/s.sock"}"#,
        )
        .unwrap();
        let mut env: HashMap<&str, String> = HashMap::new();
        env.insert("UQ_CONFIG", cfgfile.display().to_string());
        // File only.
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(
            c.nli_model,
            exe.join("file_nli"),
            "file paths are relative to the file"
        );
        assert_eq!(c.embed_model, Some(PathBuf::from("/abs/file_embed")));
        assert_eq!(
            (c.threads, c.max_batch, c.max_wait_ms, c.nli_max_tokens),
            (3, 7, 9, Some(128))
        );
        assert_eq!(c.device, Device::Cuda);
        assert_eq!(c.ort_lib, PathBuf::from("/f/lib.so"));
        assert_eq!(c.socket, PathBuf::from("/f/s.sock"));
        // Env beats file.
        env.insert("UQ_NLI_MODEL", "/env/nli".into());
        env.insert("UQ_THREADS", "5".into());
        env.insert("UQ_DEVICE", "CPU".into());
        env.insert("UQ_SOCKET", "/env/s.sock".into());
        env.insert("UQ_MAX_BATCH", "11".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.nli_model, PathBuf::from("/env/nli"));
        assert_eq!((c.threads, c.max_batch, c.max_wait_ms), (5, 11, 9));
        assert_eq!(c.device, Device::Cpu);
        assert_eq!(c.socket, PathBuf::from("/env/s.sock"));
        // Flags beat env.
        let cli = CliOverrides {
            nli_model: Some("rel/nli".into()),
            threads: Some(1),
            device: Some("cuda".into()),
            max_batch: Some(2),
            ..Default::default()
        };
        let c = resolve(cli, &env, &exe).unwrap();
        assert_eq!(
            c.nli_model,
            PathBuf::from("/cwd/rel/nli"),
            "flag paths are relative to cwd"
        );
        assert_eq!((c.threads, c.max_batch), (1, 2));
        assert_eq!(c.device, Device::Cuda);
        // --config beats UQ_CONFIG.
        let other = exe.join("other.json");
        std::fs::write(&other, r#"{"max_wait_ms": 1}"#).unwrap();
        let cli = CliOverrides {
            config: Some(other),
            ..Default::default()
        };
        let c = resolve(cli, &env, &exe).unwrap();
        assert_eq!(c.max_wait_ms, 1);
        assert_eq!(c.nli_max_tokens, None);
    }

    #[test]
    fn llm_settings() {
        let exe = tmpdir("llm");
        let mut env: HashMap<&str, String> = HashMap::new();
        env.insert("HOME", "/home/u".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(
            c.cache_db,
            PathBuf::from("/home/u/.cache/uqlite/completions.sqlite")
        );
        assert_eq!(
            c.local_llm,
            exe.join("models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        );
        env.insert("XDG_CACHE_HOME", "/xdg".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.cache_db, PathBuf::from("/xdg/uqlite/completions.sqlite"));
        env.insert("XDG_CACHE_HOME", "relative".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(
            c.cache_db,
            PathBuf::from("/home/u/.cache/uqlite/completions.sqlite"),
            "a relative XDG_CACHE_HOME is ignored"
        );
        env.clear();
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert!(c.cache_db.starts_with("/tmp"), "{}", c.cache_db.display());
        // file < env < flag
        let f = exe.join("llm.json");
        std::fs::write(
            &f,
            r#"{"cache_db": "c.sqlite", "local_llm": "/m/file.gguf"}"#,
        )
        .unwrap();
        env.insert("UQ_CONFIG", f.display().to_string());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(
            (c.cache_db, c.local_llm),
            (exe.join("c.sqlite"), PathBuf::from("/m/file.gguf"))
        );
        env.insert("UQ_CACHE_DB", "/env/c.sqlite".into());
        env.insert("UQ_LOCAL_LLM", "/env/m.gguf".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(
            (c.cache_db, c.local_llm),
            (PathBuf::from("/env/c.sqlite"), PathBuf::from("/env/m.gguf"))
        );
        let cli = CliOverrides {
            cache_db: Some("flag.sqlite".into()),
            local_llm: Some("/flag/m.gguf".into()),
            ..Default::default()
        };
        let c = resolve(cli, &env, &exe).unwrap();
        assert_eq!(
            (c.cache_db, c.local_llm),
            (
                PathBuf::from("/cwd/flag.sqlite"),
                PathBuf::from("/flag/m.gguf")
            )
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let exe = tmpdir("bad");
        let mut env: HashMap<&str, String> = HashMap::new();
        env.insert("UQ_THREADS", "many".into());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(e.contains("UQ_THREADS"), "{e}");
        env.clear();
        env.insert("UQ_DEVICE", "tpu".into());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(e.contains("tpu") && e.contains("cuda"), "{e}");
        env.clear();
        env.insert("UQ_PRECISION", "int4".into());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(
            e.contains("UQ_PRECISION") && e.contains("int4") && e.contains("int8"),
            "{e}"
        );
        env.remove("UQ_PRECISION");
        env.insert("UQ_NLI_SESSIONS", "0".into());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(e.contains("--nli-sessions") && e.contains("1 to 64"), "{e}");
        env.insert("UQ_NLI_SESSIONS", "3".into());
        let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
        assert_eq!(c.nli_sessions, Some(3));
        env.remove("UQ_NLI_SESSIONS");
        env.insert("UQ_PRECISION", "INT8".into());
        assert_eq!(
            resolve(CliOverrides::default(), &env, &exe)
                .unwrap()
                .precision,
            Precision::Int8
        );
        let cli = CliOverrides {
            precision: Some("fp16".into()),
            ..Default::default()
        };
        assert_eq!(resolve(cli, &env, &exe).unwrap().precision, Precision::Fp16);
        env.clear();
        let f = exe.join("bad.json");
        std::fs::write(&f, r#"{"max_batchh": 3}"#).unwrap();
        env.insert("UQ_CONFIG", f.display().to_string());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(e.contains("max_batchh"), "{e}");
        env.clear();
        let e = resolve(
            CliOverrides {
                max_batch: Some(0),
                ..Default::default()
            },
            &env,
            &exe,
        )
        .unwrap_err();
        assert!(e.contains("max batch"), "{e}");
        env.insert("UQ_CONFIG", "/nonexistent/uq.json".into());
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(e.contains("/nonexistent/uq.json"), "{e}");
    }

    #[test]
    fn nli_backend_settings() {
        let exe = tmpdir("backend");
        let mut env: HashMap<&str, String> = HashMap::new();
        assert_eq!(
            resolve(CliOverrides::default(), &env, &exe)
                .unwrap()
                .nli_backend,
            None
        );
        // File: one URL or a list; defaults for the rest.
        let f = exe.join("b.json");
        std::fs::write(
            &f,
            r#"{"nli_backend": {"urls": ["http://a:8000/", "http://b:8000/v2"], "retries": 5}}"#,
        )
        .unwrap();
        env.insert("UQ_CONFIG", f.display().to_string());
        let b = resolve(CliOverrides::default(), &env, &exe)
            .unwrap()
            .nli_backend
            .unwrap();
        assert_eq!(b.urls, vec!["http://a:8000", "http://b:8000"]);
        assert_eq!(
            (b.model.as_str(), b.timeout_ms, b.retries, b.health_ms),
            ("nli", 30_000, 5, 2_000)
        );
        std::fs::write(
            &f,
            r#"{"nli_backend": {"urls": "https://one", "model": "mnli", "timeout_ms": 900}}"#,
        )
        .unwrap();
        let b = resolve(CliOverrides::default(), &env, &exe)
            .unwrap()
            .nli_backend
            .unwrap();
        assert_eq!(
            (b.urls, b.model.as_str(), b.timeout_ms),
            (vec!["https://one".to_string()], "mnli", 900)
        );
        // Env beats file, flags beat env.
        env.insert("UQ_NLI_BACKEND", "http://e1:1, http://e2:2".into());
        env.insert("UQ_NLI_BACKEND_RETRIES", "0".into());
        let b = resolve(CliOverrides::default(), &env, &exe)
            .unwrap()
            .nli_backend
            .unwrap();
        assert_eq!((b.urls.len(), b.retries, b.model.as_str()), (2, 0, "mnli"));
        let cli = CliOverrides {
            nli_backend: Some("http://flag:3".into()),
            nli_backend_model: Some("m2".into()),
            nli_backend_health_ms: Some(500),
            ..Default::default()
        };
        let b = resolve(cli, &env, &exe).unwrap().nli_backend.unwrap();
        assert_eq!(
            (b.urls, b.model.as_str(), b.health_ms),
            (vec!["http://flag:3".to_string()], "m2", 500)
        );
        // Bad values name the setting and the fix.
        let bad =
            |cli: CliOverrides, env: &HashMap<&str, String>| resolve(cli, env, &exe).unwrap_err();
        env.insert("UQ_NLI_BACKEND", "triton:8000".into());
        let e = bad(CliOverrides::default(), &env);
        assert!(
            e.contains("UQ_NLI_BACKEND")
                && e.contains("\"triton:8000\"")
                && e.contains("http://127.0.0.1:8000"),
            "{e}"
        );
        env.insert("UQ_NLI_BACKEND", " , ".into());
        assert!(bad(CliOverrides::default(), &env).contains("UQ_NLI_BACKEND is empty"));
        env.insert("UQ_NLI_BACKEND", "http://x:1".into());
        env.insert("UQ_NLI_BACKEND_TIMEOUT_MS", "5".into());
        assert!(bad(CliOverrides::default(), &env).contains("--nli-backend-timeout-ms"));
        env.remove("UQ_NLI_BACKEND_TIMEOUT_MS");
        env.insert("UQ_NLI_BACKEND_MODEL", "a/b".into());
        assert!(bad(CliOverrides::default(), &env).contains("--nli-backend-model"));
        env.remove("UQ_NLI_BACKEND_MODEL");
        env.insert("UQ_NLI_BACKEND_RETRIES", "lots".into());
        assert!(bad(CliOverrides::default(), &env).contains("UQ_NLI_BACKEND_RETRIES"));
        env.clear();
        std::fs::write(&f, r#"{"nli_backend": {"url": "http://a"}}"#).unwrap();
        env.insert("UQ_CONFIG", f.display().to_string());
        let e = bad(CliOverrides::default(), &env);
        assert!(e.contains("url") && e.contains("nli_backend {urls"), "{e}");
    }

    #[test]
    fn model_dir_check() {
        let d = tmpdir("modeldir");
        let e = check_model_dir(&d.join("nope"), true).unwrap_err();
        assert!(
            e.contains("nope") && e.contains("does not exist") && e.contains("UQ_NLI_MODEL"),
            "{e}"
        );
        let e = check_model_dir(&d, true).unwrap_err();
        assert!(
            e.contains("model.onnx") && e.contains(&d.display().to_string()),
            "{e}"
        );
        assert!(
            e.contains("optimum-cli export onnx --model microsoft/deberta-large-mnli"),
            "{e}"
        );
        std::fs::write(d.join("model.onnx"), b"x").unwrap();
        let e = check_model_dir(&d, true).unwrap_err();
        assert!(e.contains("tokenizer.json"), "{e}");
        std::fs::write(d.join("tokenizer.json"), b"{}").unwrap();
        let e = check_model_dir(&d, true).unwrap_err();
        assert!(e.contains("config.json"), "{e}");
        check_model_dir(&d, false).unwrap();
        let e = check_model_dir(&d.join("nope"), false).unwrap_err();
        assert!(e.contains("UQ_EMBED_MODEL"), "{e}");
        std::fs::write(d.join("config.json"), b"{}").unwrap();
        check_model_dir(&d, true).unwrap();
    }
}
