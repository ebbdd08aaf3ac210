//! The daemon's settings, each declared once in [`settings!`]: its doc comment (the `--help`
//! text), type, environment variable, config-file key, default and range. From each entry come
//! the flag of `serve`, `score` and the benchmarks ([`CliOverrides`]), the config-file key
//! ([`FileConfig`]), the precedence flag > environment > config file ([`GivenSettings::pick`]),
//! the value typed and range-checked with the source named in its error
//! ([`GivenSettings::values`]), the field of [`Config`] with its default, the `UQ_*` variables
//! that give a `Config` to a child daemon ([`Config::to_env`]) and docs/reference.md's settings
//! table ([`markdown_table`](super::reference::markdown_table)). The entries are turned into
//! these items by the macro of `config/declare.rs`: this file is one table of data (the
//! settings), exempt from the 450-line limit.
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
