//! The daemon's settings, each declared once in [`settings!`]: its doc comment (the `--help`
//! text), type, environment variable, config-file key, default and range. From each entry come
//! the flag of `serve`, `score` and the benchmarks ([`CliOverrides`]), the config-file key
//! ([`FileConfig`]), the precedence flag > environment > config file ([`GivenSettings::pick`]),
//! the value typed and range-checked with the source named in its error
//! ([`GivenSettings::values`]), the field of [`Config`] with its default, the `UQ_*` variables
//! that give a `Config` to a child daemon ([`Config::to_env`]) and docs/reference.md's settings
//! table ([`markdown_table`]).
//!
//! Adding a setting: one entry below, then its use. A default is one of `value(LITERAL)` (the
//! field holds the value), `computed(FN, "docs")` (`FN(&Defaults)` when not given),
//! `maybe(FN, "docs")` (an `Option`: `FN(&Defaults)` may give none) or `later("docs")` (an
//! `Option`: `None` when not given, decided where it is used, e.g. the device's batch size).

use std::path::PathBuf;

use clap::Args;
use serde::Deserialize;

use super::backend::NliBackend;
use super::defaults::Defaults;
use super::device::{Device, Precision, StandInMs};
use super::values::{
    Dirs, DocDefault, EnvValue, Given, GivenValue, Literal, Setting, SettingValue, UrlList,
};

/// The variable of `--config`, the JSON config file.
pub const CONFIG_ENV: &str = "UQ_CONFIG";

/// `Some` of an entry's optional part, `None` when the entry leaves it out.
macro_rules! opt {
    () => {
        None
    };
    ($v:expr) => {
        Some($v)
    };
}

/// The type of a value as given (flag, variable, file): the raw type when the entry parses one.
macro_rules! given_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $raw:ty) => {
        $raw
    };
}

/// The type of a file key, when not the given type.
macro_rules! file_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $file:ty) => {
        $file
    };
}

/// The type of a decided setting: the value, or an `Option` (`maybe`, `later`).
macro_rules! decided_ty {
    ($t:ty, value) => { $t };
    ($t:ty, computed) => { $t };
    ($t:ty, maybe) => { Option<$t> };
    ($t:ty, later) => { Option<$t> };
}

/// A given value typed: parsed by the entry's function (its error prefixed with the source).
macro_rules! typed {
    ($g:expr, $dirs:expr) => {
        GivenValue::from_given($g, $dirs)
    };
    ($g:expr, $dirs:expr, $parse:path) => {
        $g.parse($parse)
    };
}

/// The value decided from the given one (`Option`) and the default.
macro_rules! decide {
    ($given:expr, $d:expr, $t:ty, value($v:literal)) => {
        $given.unwrap_or_else(|| <$t as Literal<_>>::literal($v))
    };
    ($given:expr, $d:expr, $t:ty, computed($f:path, $text:literal)) => {
        $given.unwrap_or_else(|| $f($d))
    };
    ($given:expr, $d:expr, $t:ty, maybe($f:path, $text:literal)) => {
        $given.or_else(|| $f($d))
    };
    ($given:expr, $d:expr, $t:ty, later($text:literal)) => {
        $given
    };
}

/// The docs' default of an entry.
macro_rules! doc_default {
    (value($v:literal)) => {
        DocDefault::Value(stringify!($v))
    };
    (later($text:literal)) => {
        DocDefault::Text($text)
    };
    ($kind:ident($f:path, $text:literal)) => {
        DocDefault::Text($text)
    };
}

/// A decided value's variable, `None` when it is unset.
macro_rules! env_of {
    ($v:expr, value) => {
        Some($v.to_env())
    };
    ($v:expr, computed) => {
        Some($v.to_env())
    };
    ($v:expr, maybe) => {
        $v.as_ref().map(SettingValue::to_env)
    };
    ($v:expr, later) => {
        $v.as_ref().map(SettingValue::to_env)
    };
}

/// Declares the settings: top-level config-file keys first, then the keys of one object
/// (`@group name: FileType => GroupSettings as Decided`), whose fields name their key
/// (`field / key`) and may take another type in the file (`as Type`, converted with `Into`), then
/// the variables of commands whose flags are their own (`@vars Struct { field: Type { env } }`).
/// An entry's type may be parsed from a string (`Type = String => parse_fn`, its error prefixed
/// with the source). The doc comment is required: it is the `--help` text, which names the
/// variable and, if it names a literal default, the entry's (both checked by `config::tests`).
macro_rules! settings {
    (
        $(
            $(#[doc = $doc:literal])+
            $field:ident: $ty:ty $(= $raw:ty => $parse:path)? {
                $(value_name: $value_name:literal,)?
                env: $env:literal,
                label: $label:literal,
                default: $kind:ident($($default:tt)*),
                $(min: $min:literal,)?
                $(max: $max:literal,)?
                $(note: $note:literal,)?
            }
        )*
        @group $group:ident: $Group:ident => $GroupSettings:ident as $Decided:ty {
            $(
                $(#[doc = $gdoc:literal])+
                $gfield:ident / $gkey:ident: $gty:ty $(= $graw:ty => $gparse:path)? $(as $gfile:ty)? {
                    $(value_name: $gvalue_name:literal,)?
                    env: $genv:literal,
                    $(key_note: $gnote:literal,)?
                    label: $glabel:literal,
                    default: $gkind:ident($($gdefault:tt)*),
                    $(min: $gmin:literal,)?
                    $(max: $gmax:literal,)?
                    $(note: $gdnote:literal,)?
                }
            )*
        }
        $(
            @vars $Vars:ident {
                $(
                    $(#[doc = $vdoc:literal])+
                    $vfield:ident: $vty:ty { env: $venv:literal }
                )*
            }
        )*
    ) => {
        /// Values given on the command line (each `None` when the flag was not given).
        #[derive(Args, Debug, Clone, Default)]
        pub struct CliOverrides {
            /// JSON config file (keys as the flags, in snake_case); also UQ_CONFIG.
            #[arg(long)]
            pub config: Option<PathBuf>,
            $(
                $(#[doc = $doc])+
                #[arg(long $(, value_name = $value_name)?)]
                pub $field: Option<given_ty!($ty $(, $raw)?)>,
            )*
            $(
                $(#[doc = $gdoc])+
                #[arg(long $(, value_name = $gvalue_name)?)]
                pub $gfield: Option<given_ty!($gty $(, $graw)?)>,
            )*
        }

        /// The JSON config file: the same keys as the settings, in snake_case. Unknown keys are
        /// refused.
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FileConfig {
            $(pub $field: Option<given_ty!($ty $(, $raw)?)>,)*
            pub $group: Option<$Group>,
        }

        #[doc = concat!("The `", stringify!($group), "` object of the config file.")]
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $Group {
            $(pub $gkey: Option<file_ty!(given_ty!($gty $(, $graw)?) $(, $gfile)?)>,)*
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
                default: doc_default!($kind($($default)*)),
                note: opt!($($note)?),
                min: opt!($($min)?),
                max: opt!($($max)?),
            },)*
            $(Setting {
                field: stringify!($gfield),
                value_name: opt!($($gvalue_name)?),
                env: $genv,
                key: concat!(stringify!($group), ".", stringify!($gkey)),
                key_note: opt!($($gnote)?),
                label: $glabel,
                default: doc_default!($gkind($($gdefault)*)),
                note: opt!($($gdnote)?),
                min: opt!($($gmin)?),
                max: opt!($($gmax)?),
            },)*
        ];

        /// Each setting's value from the first source that gives it, as given.
        pub struct GivenSettings {
            $(pub $field: Option<Given<given_ty!($ty $(, $raw)?)>>,)*
            $(pub $gfield: Option<Given<given_ty!($gty $(, $graw)?)>>,)*
        }

        /// What was given of the top-level settings, typed and range-checked (`None`: not
        /// given, so a default set to its own value is still told apart from an unset one).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct GivenValues {
            $(pub $field: Option<$ty>,)*
        }

        #[doc = concat!("The `", stringify!($group), "` settings decided (their URLs given).")]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $GroupSettings {
            $(pub $gkey: decided_ty!($gty, $gkind),)*
        }

        /// The resolved configuration of the daemon: each setting given, else its default.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Config {
            $(
                $(#[doc = $doc])+
                pub $field: decided_ty!($ty, $kind),
            )*
            #[doc = concat!("The `", stringify!($group), "` settings; `None` when not given.")]
            pub $group: Option<$Decided>,
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
                    $($field: Given::pick(cli.$field, env, file.$field, setting(stringify!($field))),)*
                    $($gfield: Given::pick(
                        cli.$gfield,
                        env,
                        group.$gkey.map(Into::into),
                        setting(stringify!($gfield)),
                    ),)*
                }
            }

            /// The top-level settings typed and range-checked (an error names the source).
            pub fn values(&mut self, dirs: &Dirs) -> Result<GivenValues, String> {
                Ok(GivenValues {
                    $($field: match self.$field.take() {
                        Some(g) => Some(g.checked(|g| typed!(g, dirs $(, $parse)?))?),
                        None => None,
                    },)*
                })
            }

            #[doc = concat!("The `", stringify!($group), "` settings decided when its first \
                             setting is given, else `None` (the others are then not looked at).")]
            pub fn $group(&mut self, dirs: &Dirs) -> Result<Option<$GroupSettings>, String> {
                if ![$(self.$gfield.is_some(),)*][0] {
                    return Ok(None);
                }
                $(let $gfield: Option<$gty> = match self.$gfield.take() {
                    Some(g) => Some(g.checked(|g| typed!(g, dirs $(, $gparse)?))?),
                    None => None,
                };)*
                Ok(Some($GroupSettings {
                    $($gkey: decide!($gfield, &(), $gty, $gkind($($gdefault)*)),)*
                }))
            }
        }

        impl GivenValues {
            /// The configuration: each value given, else its default.
            pub fn decide(self, d: &Defaults, $group: Option<$Decided>) -> Config {
                Config {
                    $($field: decide!(self.$field, d, $ty, $kind($($default)*)),)*
                    $group,
                }
            }
        }

        $(
            /// Variables of one command (its flags are its own), read from the environment.
            #[derive(Debug, Clone, Default, PartialEq)]
            pub struct $Vars {
                $(
                    $(#[doc = $vdoc])+
                    pub $vfield: Option<$vty>,
                )*
            }

            impl $Vars {
                /// Each variable that is set and not blank, parsed (an error names it).
                pub fn read(env: &dyn Fn(&str) -> Option<String>) -> Result<$Vars, String> {
                    Ok($Vars {
                        $($vfield: env($venv)
                            .filter(|v| !v.trim().is_empty())
                            .map(|v| <$vty as EnvValue>::from_env($venv, &v))
                            .transpose()?,)*
                    })
                }
            }
        )*

        /// Every variable read beside the settings' (a command's own).
        pub const COMMAND_VARIABLES: &[&str] = &[$($($venv,)*)*];

        impl Config {
            /// The `UQ_*` variables that give a child daemon this configuration (unset
            /// settings are left out, so the child decides them as this one would).
            pub fn to_env(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                $(if let Some(v) = env_of!(self.$field, $kind) {
                    out.push(($env, v));
                })*
                if let Some(g) = &self.$group {
                    $(out.push(($genv, g.$gkey.to_env()));)*
                }
                out
            }
        }
    };
}

settings! {
    /// Unix socket path; also UQ_SOCKET.
    socket: PathBuf {
        env: "UQ_SOCKET",
        label: "socket",
        default: computed(Defaults::socket, "as above"),
    }
    /// NLI model directory (model.onnx, tokenizer.json, config.json); also UQ_NLI_MODEL.
    nli_model: PathBuf {
        env: "UQ_NLI_MODEL",
        label: "NLI model directory",
        default: computed(Defaults::nli_model, "`<exe dir>/models/nli`"),
    }
    /// Embedding model directory (model.onnx, tokenizer.json); also UQ_EMBED_MODEL.
    embed_model: PathBuf {
        env: "UQ_EMBED_MODEL",
        label: "embedding model directory",
        default: maybe(Defaults::embed_model, "`<exe dir>/models/embed` if present"),
    }
    /// Path of libonnxruntime.so; also UQ_ORT_LIB.
    ort_lib: PathBuf {
        env: "UQ_ORT_LIB",
        label: "ONNX Runtime library",
        default: computed(Defaults::ort_lib, "`<exe dir>/lib/libonnxruntime.so.1.31.1`"),
    }
    /// auto (default: CUDA when it loads, else the CPU, saying why), cpu or cuda (falls back to
    /// the CPU, saying why); also UQ_DEVICE.
    device: Device = String => Device::parse {
        env: "UQ_DEVICE",
        label: "device",
        default: value("auto"),
        note: ": CUDA when it loads, else the CPU, saying why (`cpu`; `cuda`, alias `gpu`: see [GPU](#gpu))",
    }
    /// NLI model file: auto (int8 on the CPU, fp16 on CUDA, when `uqd models optimize` wrote
    /// them), fp32 (the optimized graph), int8, fp16 or original (model.onnx); also UQ_PRECISION.
    /// `uqd bench selfcheck` takes a comma-separated list and runs once per precision.
    precision: Precision = String => Precision::parse {
        env: "UQ_PRECISION",
        label: "NLI model file",
        default: value("auto"),
        note: ": `int8` on the CPU, `fp16` on CUDA, when written, else `fp32` (see [Model variants](#model-variants))",
    }
    /// Directory of the models' optimized variants (`uqd models optimize`); also UQ_VARIANTS_DIR.
    variants_dir: PathBuf {
        env: "UQ_VARIANTS_DIR",
        label: "variants directory",
        default: computed(Defaults::variants_dir, "`<exe dir>/models/variants`"),
    }
    /// ONNX Runtime threads of the NLI model on the CPU (default: the cores); also UQ_THREADS.
    threads: usize {
        env: "UQ_THREADS",
        label: "NLI threads on the CPU",
        default: computed(Defaults::threads, "number of cores"),
        min: 1,
        note: ", shared out among the NLI sessions",
    }
    /// NLI sessions on the CPU, sharing --threads and running batches side by side (default 2
    /// for the int8 model when --threads is at least 2, else 1); also UQ_NLI_SESSIONS.
    nli_sessions: usize {
        env: "UQ_NLI_SESSIONS",
        label: "NLI sessions on the CPU",
        default: later("2 for the `int8` model when there are ≥ 2 threads, else 1"),
        min: 1,
        max: 64,
        note: "; each runs batches of its own from the one queue",
    }
    /// NLI batches in flight per session: while one runs, the others are taken from the queue and
    /// padded, and their results handed back (default 2 on CUDA and with the stand-in, 1 on the
    /// CPU; 1: no overlap); also UQ_NLI_OVERLAP.
    nli_overlap: usize {
        env: "UQ_NLI_OVERLAP",
        label: "NLI batches in flight per session",
        default: later("2 on CUDA and with the stand-in, else 1"),
        min: 1,
        max: 8,
        note: "; see [GPU](#gpu)",
    }
    /// Benchmarks: the NLI model replaced by a stand-in that takes MS per batch (0: no time), one
    /// batch at a time as one device, and returns fixed logits; the defaults are CUDA's unless
    /// --device cpu (default: none, the model runs); also UQ_NLI_STAND_IN_MS.
    nli_stand_in_ms: StandInMs = String => StandInMs::parse {
        value_name: "MS",
        env: "UQ_NLI_STAND_IN_MS",
        label: "stand-in NLI model (ms per batch)",
        default: later("none: the model runs; for benchmarks (see [Benchmarks](#the-stand-in-nli-model))"),
    }
    /// NLI windows per forward pass (default: the device's, 16 on the CPU, 128 on CUDA); also
    /// UQ_MAX_BATCH.
    max_batch: usize {
        env: "UQ_MAX_BATCH",
        label: "NLI batch size",
        default: later("the device's: 16 on the CPU, 128 on CUDA"),
        min: 1,
        note: "; see [GPU](#gpu)",
    }
    /// Time the batcher waits for more work after the first queued window, in ms (default 2);
    /// also UQ_MAX_WAIT_MS.
    max_wait_ms: u64 {
        env: "UQ_MAX_WAIT_MS",
        label: "batcher wait (ms)",
        default: value(2),
        max: 60000,
    }
    /// NLI window in tokens (default: min(512, the model's maximum)); also UQ_NLI_MAX_TOKENS.
    nli_max_tokens: usize {
        env: "UQ_NLI_MAX_TOKENS",
        label: "NLI window (tokens)",
        default: later("min(512, model maximum)"),
        min: 16,
    }
    /// Token limit of the embedding model, texts truncated to it (default 256); also
    /// UQ_EMBED_MAX_TOKENS.
    embed_max_tokens: usize {
        env: "UQ_EMBED_MAX_TOKENS",
        label: "embedding window (tokens)",
        default: value(256),
        min: 8,
    }
    /// Completion cache of the LLM layer (SQLite file); also UQ_CACHE_DB.
    /// Default: $XDG_CACHE_HOME/uqlite/completions.sqlite, else ~/.cache/uqlite/completions.sqlite.
    cache_db: PathBuf {
        env: "UQ_CACHE_DB",
        label: "completion cache (SQLite file)",
        default: computed(Defaults::cache_db, "`$XDG_CACHE_HOME/uqlite/completions.sqlite`, else `~/.cache/uqlite/completions.sqlite`, else `/tmp/uqlite-<uid>/completions.sqlite`"),
    }
    /// GGUF file of the local LLM (default LLM); also UQ_LOCAL_LLM.
    /// Default: <exe dir>/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf.
    local_llm: PathBuf {
        env: "UQ_LOCAL_LLM",
        label: "local LLM (`.gguf`)",
        default: computed(Defaults::local_llm, "`<exe dir>/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`"),
    }
    /// How long a job's write waits for another connection's lock on the user's database before
    /// the job fails, in ms (default 30000); also UQ_BUSY_TIMEOUT_MS.
    busy_timeout_ms: u64 {
        env: "UQ_BUSY_TIMEOUT_MS",
        label: "database lock wait (ms)",
        default: value(30000),
        max: 3600000,
    }
    @group nli_backend: FileBackend => BackendSettings as NliBackend {
        /// NLI on an inference server: KServe v2 / Triton base URL(s), comma-separated, used in turn
        /// with health checks (the tokenizer and labels still come from --nli-model); also UQ_NLI_BACKEND.
        nli_backend / urls: Vec<String> = String => super::backend::parse_urls as UrlList {
            value_name: "URL[,URL...]",
            env: "UQ_NLI_BACKEND",
            key_note: "(a string or a list)",
            label: "NLI inference servers",
            default: later("none: the model runs locally (see [NLI on an inference server](#nli-on-an-inference-server))"),
        }
        /// The model's name on the inference server (default nli); also UQ_NLI_BACKEND_MODEL.
        nli_backend_model / model: String = String => super::backend::parse_model_name {
            env: "UQ_NLI_BACKEND_MODEL",
            label: "their model's name",
            default: value("nli"),
        }
        /// Time limit of one inference request (default 30000); also UQ_NLI_BACKEND_TIMEOUT_MS.
        nli_backend_timeout_ms / timeout_ms: u64 {
            env: "UQ_NLI_BACKEND_TIMEOUT_MS",
            label: "request time limit (ms)",
            default: value(30000),
            min: 100,
            max: 3600000,
        }
        /// Retries of a failed inference request, each on the next endpoint (default 2); also
        /// UQ_NLI_BACKEND_RETRIES.
        nli_backend_retries / retries: usize {
            env: "UQ_NLI_BACKEND_RETRIES",
            label: "retries of a failed request",
            default: value(2),
            max: 100,
            note: ", each on the next server",
        }
        /// Interval of the endpoints' health checks (default 2000); also UQ_NLI_BACKEND_HEALTH_MS.
        nli_backend_health_ms / health_ms: u64 {
            env: "UQ_NLI_BACKEND_HEALTH_MS",
            label: "health-check interval (ms)",
            default: value(2000),
            min: 50,
            max: 3600000,
        }
    }
    @vars ModelsVars {
        /// `models pull --revision` (default main).
        revision: String { env: "UQ_MODEL_REVISION" }
        /// `models pull --kind`: nli or embedding (default nli).
        kind: String { env: "UQ_MODEL_KIND" }
        /// `models pull --models-dir`.
        models_dir: PathBuf { env: "UQ_MODELS_DIR" }
        /// `models pull --onnx-file`.
        onnx_file: String { env: "UQ_MODEL_ONNX_FILE" }
        /// `models optimize --python`.
        python: PathBuf { env: "UQ_MODEL_PYTHON" }
    }
}

/// The setting of a field of [`CliOverrides`].
fn setting(field: &str) -> &'static Setting {
    SETTINGS
        .iter()
        .find(|s| s.field == field)
        .expect("every setting is in SETTINGS")
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
            s.default_doc()
        );
    }
    out
}

/// The line after which docs/reference.md holds [`markdown_table`].
pub const DOCS_BEGIN: &str = "<!-- settings:begin (generated from daemon/src/config/settings.rs; UQ_BLESS=1 cargo test -p uq-daemon settings_table regenerates it) -->";
/// The line before which docs/reference.md's generated settings table ends.
pub const DOCS_END: &str = "<!-- settings:end -->";
