//! Daemon configuration: model directories, ONNX Runtime library, device, threads, batching knobs,
//! and the LLM layer's completion cache file and local model.
//!
//! Precedence (design.md): command-line flags > environment > JSON config file (`--config FILE`
//! or `UQ_CONFIG`) > defaults relative to the `uqd` executable's directory. Each setting's
//! flag, variable and key are declared once, in [`settings`].

mod backend;
#[macro_use]
mod declare;
mod defaults;
mod device;
pub mod reference;
pub mod settings;
mod values;

use std::path::{Path, PathBuf};

pub use backend::NliBackend;
use defaults::Defaults;
pub use defaults::{CACHE_DB_NAME, ORT_LIB_NAME};
pub use device::{Device, Precision, StandInMs};
use settings::{BackendSettings, GivenSettings};
pub use settings::{CliOverrides, Config, FileBackend, FileConfig, GivenValues};
pub use values::UrlList;
use values::{absolutize, Dirs};

impl Config {
    /// Resolves the configuration from flags, the process environment, the config file and the
    /// defaults next to the current executable, and sets the process's busy timeout from it.
    pub fn resolve(cli: CliOverrides) -> Result<Config, String> {
        let config = resolve_with(cli, &|k| std::env::var(k).ok(), &exe_dir(), &cwd())?;
        crate::store::set_busy_timeout(std::time::Duration::from_millis(config.busy_timeout_ms));
        Ok(config)
    }
}

/// The current executable's directory (the defaults are relative to it).
fn exe_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok().or(Some(p)))
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// The raw text of `--precision` (or UQ_PRECISION, or the config file's `precision`) as given,
/// for `bench selfcheck`'s list of precisions; `None` when not given.
pub fn given_precision_text(cli: &CliOverrides) -> Result<Option<String>, String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let cwd = cwd();
    let (file, _) = config_file(cli, &env, &cwd)?;
    let given = GivenSettings::pick(cli.clone(), &env, file);
    Ok(given.precision.map(values::Given::text))
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
    let (file, file_dir) = config_file(&cli, &env, cwd)?;
    let mut given = GivenSettings::pick(cli, &env, file);
    let dirs = Dirs {
        cwd,
        file: &file_dir,
    };
    let nli_backend = nli_backend(given.nli_backend(&dirs)?);
    let values = given.values(&dirs)?;
    let defaults = Defaults {
        exe_dir,
        env: &env,
        device: values.device,
    };
    Ok(values.decide(&defaults, nli_backend))
}

/// The NLI backend of its decided settings (`None`: no URL given).
fn nli_backend(s: Option<BackendSettings>) -> Option<NliBackend> {
    let s = s?;
    Some(NliBackend {
        urls: s.urls?,
        model: s.model,
        timeout_ms: s.timeout_ms,
        retries: s.retries,
        health_ms: s.health_ms,
    })
}

/// The config file (`--config`, else UQ_CONFIG; none: empty) and the directory its paths are
/// relative to.
fn config_file(
    cli: &CliOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<(FileConfig, PathBuf), String> {
    let file_path = cli
        .config
        .clone()
        .map(|p| absolutize(p, cwd))
        .or_else(|| env(settings::CONFIG_ENV).map(|p| absolutize(PathBuf::from(p), cwd)));
    Ok(match &file_path {
        Some(p) => (
            read_file(p)?,
            p.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| cwd.to_path_buf()),
        ),
        None => (FileConfig::default(), cwd.to_path_buf()),
    })
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
