//! The daemon's settings, each declared once in [`settings!`]: its flag (with its `--help`
//! text), environment variable, config-file key and documented default. The flags of `serve`,
//! `score` and the benchmarks ([`CliOverrides`]), the config file ([`FileConfig`]), the
//! precedence flag > environment > config file ([`GivenSettings::pick`]), the config file's list
//! of valid keys and docs/reference.md's settings table ([`markdown_table`]) all come from it.
//! Adding a setting: one entry below, then its use in `Config` and `resolve_with`.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;

/// One setting as the docs and messages name it.
#[derive(Debug, PartialEq, Eq)]
pub struct Setting {
    /// The field of [`CliOverrides`]; the flag is `--` and the field with `-` for `_`.
    pub field: &'static str,
    /// The `--help` value name, when not the field's.
    pub value_name: Option<&'static str>,
    pub env: &'static str,
    /// The config-file key (`group.key` inside an object).
    pub key: &'static str,
    /// What the docs add after the key, e.g. the forms the value takes.
    pub key_note: Option<&'static str>,
    /// The docs' name of the setting.
    pub label: &'static str,
    /// The docs' default (with the allowed range).
    pub default: &'static str,
}

impl Setting {
    pub fn flag(&self) -> String {
        format!("--{}", self.field.replace('_', "-"))
    }
}

macro_rules! opt {
    () => {
        None
    };
    ($v:literal) => {
        Some($v)
    };
}

macro_rules! file_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $file:ty) => {
        $file
    };
}

/// Declares the settings: top-level config-file keys first, then the keys of one object
/// (`@group name: Type`), whose fields name their key (`field / key`) and may take another type
/// in the file (`as Type`, converted with `Into`).
macro_rules! settings {
    (
        $(
            $(#[doc = $doc:literal])*
            $field:ident: $ty:ty {
                $(value_name: $value_name:literal,)?
                env: $env:literal,
                label: $label:literal,
                default: $default:literal $(,)?
            }
        )*
        @group $group:ident: $Group:ident {
            $(
                $(#[doc = $gdoc:literal])*
                $gfield:ident / $gkey:ident: $gty:ty $(as $gfile:ty)? {
                    $(value_name: $gvalue_name:literal,)?
                    env: $genv:literal,
                    $(key_note: $gnote:literal,)?
                    label: $glabel:literal,
                    default: $gdefault:literal $(,)?
                }
            )*
        }
    ) => {
        /// Values given on the command line (each `None` when the flag was not given).
        #[derive(Args, Debug, Clone, Default)]
        pub struct CliOverrides {
            /// JSON config file (keys as the flags, in snake_case); also UQ_CONFIG.
            #[arg(long)]
            pub config: Option<PathBuf>,
            $(
                $(#[doc = $doc])*
                #[arg(long $(, value_name = $value_name)?)]
                pub $field: Option<$ty>,
            )*
            $(
                $(#[doc = $gdoc])*
                #[arg(long $(, value_name = $gvalue_name)?)]
                pub $gfield: Option<$gty>,
            )*
        }

        /// The JSON config file: the same keys as the settings, in snake_case. Unknown keys are
        /// refused.
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FileConfig {
            $(pub $field: Option<$ty>,)*
            pub $group: Option<$Group>,
        }

        #[doc = concat!("The `", stringify!($group), "` object of the config file.")]
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $Group {
            $(pub $gkey: Option<file_ty!($gty $(, $gfile)?)>,)*
        }

        /// Every setting, in the order of the flags.
        pub const SETTINGS: &[Setting] = &[
            $(Setting {
                field: stringify!($field),
                value_name: opt!($($value_name)?),
                env: $env,
                key: stringify!($field),
                key_note: None,
                label: $label,
                default: $default,
            },)*
            $(Setting {
                field: stringify!($gfield),
                value_name: opt!($($gvalue_name)?),
                env: $genv,
                key: concat!(stringify!($group), ".", stringify!($gkey)),
                key_note: opt!($($gnote)?),
                label: $glabel,
                default: $gdefault,
            },)*
        ];

        /// Each setting's value from the first source that gives it.
        pub struct GivenSettings {
            $(pub $field: Option<Given<$ty>>,)*
            $(pub $gfield: Option<Given<$gty>>,)*
        }

        impl GivenSettings {
            /// Flag > environment (`env` yields only non-blank values) > config file.
            pub fn pick(
                cli: CliOverrides,
                env: &dyn Fn(&str) -> Option<String>,
                file: FileConfig,
            ) -> GivenSettings {
                let group = file.$group.unwrap_or_default();
                GivenSettings {
                    $($field: Given::pick(cli.$field, env, file.$field, stringify!($field)),)*
                    $($gfield: Given::pick(
                        cli.$gfield,
                        env,
                        group.$gkey.map(Into::into),
                        stringify!($gfield),
                    ),)*
                }
            }
        }
    };
}

settings! {
    socket: PathBuf {
        env: "UQ_SOCKET",
        label: "socket",
        default: "as above",
    }
    /// NLI model directory (model.onnx, tokenizer.json, config.json); also UQ_NLI_MODEL.
    nli_model: PathBuf {
        env: "UQ_NLI_MODEL",
        label: "NLI model directory",
        default: "`<exe dir>/models/nli`",
    }
    /// Embedding model directory (model.onnx, tokenizer.json); also UQ_EMBED_MODEL.
    embed_model: PathBuf {
        env: "UQ_EMBED_MODEL",
        label: "embedding model directory",
        default: "`<exe dir>/models/embed` if present",
    }
    /// Path of libonnxruntime.so; also UQ_ORT_LIB.
    ort_lib: PathBuf {
        env: "UQ_ORT_LIB",
        label: "ONNX Runtime library",
        default: "`<exe dir>/lib/libonnxruntime.so.1.31.1`",
    }
    /// auto (default: CUDA when it loads, else the CPU, saying why), cpu or cuda (falls back to
    /// the CPU, saying why); also UQ_DEVICE.
    device: String {
        env: "UQ_DEVICE",
        label: "device",
        default: "`auto`: CUDA when it loads, else the CPU, saying why (`cpu`; `cuda`, alias `gpu`: see [GPU](#gpu))",
    }
    /// NLI model file: auto (int8 on the CPU, fp16 on CUDA, when `uqd models optimize` wrote
    /// them), fp32 (the optimized graph), int8, fp16 or original (model.onnx); also UQ_PRECISION.
    /// `uqd bench selfcheck` takes a comma-separated list and runs once per precision.
    precision: String {
        env: "UQ_PRECISION",
        label: "NLI model file",
        default: "`auto`: `int8` on the CPU, `fp16` on CUDA, when written, else `fp32` (see [Model variants](#model-variants))",
    }
    /// Directory of the models' optimized variants (`uqd models optimize`); also UQ_VARIANTS_DIR.
    variants_dir: PathBuf {
        env: "UQ_VARIANTS_DIR",
        label: "variants directory",
        default: "`<exe dir>/models/variants`",
    }
    /// ONNX Runtime threads of the NLI model on the CPU (default: the cores); also UQ_THREADS.
    threads: usize {
        env: "UQ_THREADS",
        label: "NLI threads on the CPU",
        default: "number of cores (≥ 1), shared out among the NLI sessions",
    }
    /// NLI sessions on the CPU, sharing --threads and running batches side by side (default 2
    /// for the int8 model when --threads is at least 2, else 1); also UQ_NLI_SESSIONS.
    nli_sessions: usize {
        env: "UQ_NLI_SESSIONS",
        label: "NLI sessions on the CPU",
        default: "2 for the `int8` model when there are ≥ 2 threads, else 1 (1 to 64); each runs batches of its own from the one queue",
    }
    max_batch: usize {
        env: "UQ_MAX_BATCH",
        label: "NLI batch size",
        default: "16 (≥ 1)",
    }
    max_wait_ms: u64 {
        env: "UQ_MAX_WAIT_MS",
        label: "batcher wait (ms)",
        default: "2 (≤ 60000)",
    }
    nli_max_tokens: usize {
        env: "UQ_NLI_MAX_TOKENS",
        label: "NLI window (tokens)",
        default: "min(512, model maximum) (≥ 16)",
    }
    embed_max_tokens: usize {
        env: "UQ_EMBED_MAX_TOKENS",
        label: "embedding window (tokens)",
        default: "256 (≥ 8)",
    }
    /// Completion cache of the LLM layer (SQLite file); also UQ_CACHE_DB.
    /// Default: $XDG_CACHE_HOME/uqlite/completions.sqlite, else ~/.cache/uqlite/completions.sqlite.
    cache_db: PathBuf {
        env: "UQ_CACHE_DB",
        label: "completion cache (SQLite file)",
        default: "`$XDG_CACHE_HOME/uqlite/completions.sqlite`, else `~/.cache/uqlite/completions.sqlite`, else `/tmp/uqlite-<uid>/completions.sqlite`",
    }
    /// GGUF file of the local LLM (default LLM); also UQ_LOCAL_LLM.
    /// Default: <exe dir>/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf.
    local_llm: PathBuf {
        env: "UQ_LOCAL_LLM",
        label: "local LLM (`.gguf`)",
        default: "`<exe dir>/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`",
    }
    @group nli_backend: FileBackend {
        /// NLI on an inference server: KServe v2 / Triton base URL(s), comma-separated, used in turn
        /// with health checks (the tokenizer and labels still come from --nli-model); also UQ_NLI_BACKEND.
        nli_backend / urls: String as UrlList {
            value_name: "URL[,URL...]",
            env: "UQ_NLI_BACKEND",
            key_note: "(a string or a list)",
            label: "NLI inference servers",
            default: "none: the model runs locally (see [NLI on an inference server](#nli-on-an-inference-server))",
        }
        /// The model's name on the inference server (default nli); also UQ_NLI_BACKEND_MODEL.
        nli_backend_model / model: String {
            env: "UQ_NLI_BACKEND_MODEL",
            label: "their model's name",
            default: "`nli`",
        }
        /// Time limit of one inference request (default 30000); also UQ_NLI_BACKEND_TIMEOUT_MS.
        nli_backend_timeout_ms / timeout_ms: u64 {
            env: "UQ_NLI_BACKEND_TIMEOUT_MS",
            label: "request time limit (ms)",
            default: "30000 (100 to 3600000)",
        }
        /// Retries of a failed inference request, each on the next endpoint (default 2); also
        /// UQ_NLI_BACKEND_RETRIES.
        nli_backend_retries / retries: usize {
            env: "UQ_NLI_BACKEND_RETRIES",
            label: "retries of a failed request",
            default: "2 (≤ 100), each on the next server",
        }
        /// Interval of the endpoints' health checks (default 2000); also UQ_NLI_BACKEND_HEALTH_MS.
        nli_backend_health_ms / health_ms: u64 {
            env: "UQ_NLI_BACKEND_HEALTH_MS",
            label: "health-check interval (ms)",
            default: "2000 (50 to 3600000)",
        }
    }
}

/// A URL or a list of URLs (the config file's `nli_backend.urls`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum UrlList {
    One(String),
    Many(Vec<String>),
}

/// The list as one comma-separated value, as the flag and the variable give it.
impl From<UrlList> for String {
    fn from(urls: UrlList) -> String {
        match urls {
            UrlList::One(s) => s,
            UrlList::Many(v) => v.join(","),
        }
    }
}

/// Where a setting's value came from; an environment value is parsed when it is used, so that
/// a bad value fails only where the setting matters.
enum Raw<T> {
    Flag(T),
    Env(String),
    File(T),
}

/// A setting's value as its first source gave it.
pub struct Given<T> {
    raw: Raw<T>,
    setting: &'static Setting,
}

/// A type a setting's environment variable is parsed into.
pub trait EnvValue: Sized {
    fn from_env(var: &str, v: &str) -> Result<Self, String>;
}

impl EnvValue for PathBuf {
    fn from_env(_: &str, v: &str) -> Result<Self, String> {
        Ok(PathBuf::from(v))
    }
}

impl EnvValue for String {
    fn from_env(_: &str, v: &str) -> Result<Self, String> {
        Ok(v.to_string())
    }
}

macro_rules! env_number {
    ($($t:ty),*) => {$(
        impl EnvValue for $t {
            fn from_env(var: &str, v: &str) -> Result<Self, String> {
                v.trim()
                    .parse()
                    .map_err(|_| format!("{var}={v:?} is not a valid non-negative integer"))
            }
        }
    )*};
}
env_number!(usize, u64);

impl<T: EnvValue> Given<T> {
    fn pick(
        flag: Option<T>,
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<T>,
        field: &str,
    ) -> Option<Given<T>> {
        let setting = SETTINGS
            .iter()
            .find(|s| s.field == field)
            .expect("every setting is in SETTINGS");
        let raw = match (flag, env(setting.env), file) {
            (Some(v), _, _) => Raw::Flag(v),
            (None, Some(v), _) => Raw::Env(v),
            (None, None, Some(v)) => Raw::File(v),
            (None, None, None) => return None,
        };
        Some(Given { raw, setting })
    }

    /// The value (an environment value parsed, its error naming the variable).
    pub fn value(self) -> Result<T, String> {
        match self.raw {
            Raw::Flag(v) | Raw::File(v) => Ok(v),
            Raw::Env(v) => T::from_env(self.setting.env, &v),
        }
    }
}

impl<T> Given<T> {
    /// How messages name the source: `--flag`, `VAR` or `config file key`.
    pub fn origin(&self) -> String {
        match self.raw {
            Raw::Flag(_) => self.setting.flag(),
            Raw::Env(_) => self.setting.env.to_string(),
            Raw::File(_) => format!("config file {}", self.setting.key),
        }
    }
}

impl Given<String> {
    /// The value parsed by `parse`, its error prefixed with the source.
    pub fn parse<U>(self, parse: impl FnOnce(&str) -> Result<U, String>) -> Result<U, String> {
        let origin = self.origin();
        let (Raw::Flag(v) | Raw::Env(v) | Raw::File(v)) = self.raw;
        parse(&v).map_err(|e| format!("{origin}: {e}"))
    }
}

impl Given<PathBuf> {
    /// The path, absolute: a flag's or variable's relative to `cwd`, the file's to `file_dir`.
    pub fn path(self, cwd: &Path, file_dir: &Path) -> PathBuf {
        match self.raw {
            Raw::Flag(p) => absolutize(p, cwd),
            Raw::Env(p) => absolutize(PathBuf::from(p), cwd),
            Raw::File(p) => absolutize(p, file_dir),
        }
    }
}

pub(super) fn absolutize(p: PathBuf, base: &Path) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        base.join(p)
    }
}

/// The config file's keys, for the message on a file that is not valid:
/// `socket, …, nli_backend {urls, model, …}`.
pub fn valid_keys() -> String {
    let mut out: Vec<String> = Vec::new();
    for s in SETTINGS {
        match s.key.split_once('.') {
            None => out.push(s.key.to_string()),
            Some((group, key)) => match out.last_mut() {
                Some(last) if last.starts_with(&format!("{group} {{")) => {
                    last.pop();
                    *last += &format!(", {key}}}");
                }
                _ => out.push(format!("{group} {{{key}}}")),
            },
        }
    }
    out.join(", ")
}

/// docs/reference.md's table of the settings.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| setting | flag | variable | config key | default |\n|---|---|---|---|---|\n",
    );
    for s in SETTINGS {
        let value = s
            .value_name
            .map(|v| format!(" {}", v.replace("...", "…")))
            .unwrap_or_default();
        let note = s.key_note.map(|n| format!(" {n}")).unwrap_or_default();
        out += &format!(
            "| {} | `{}{value}` | `{}` | `{}`{note} | {} |\n",
            s.label,
            s.flag(),
            s.env,
            s.key,
            s.default
        );
    }
    out
}

/// The line after which docs/reference.md holds [`markdown_table`].
pub const DOCS_BEGIN: &str = "<!-- settings:begin (generated from daemon/src/config/settings.rs; UQ_BLESS=1 cargo test -p uqd settings_table regenerates it) -->";
/// The line before which docs/reference.md's generated settings table ends.
pub const DOCS_END: &str = "<!-- settings:end -->";
