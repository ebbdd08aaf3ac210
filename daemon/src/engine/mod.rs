//! The model engine: NLI (cached, windowed, dynamically batched) and embeddings (cached).
//!
//! `Engine` is `Send + Sync`; share it as `Arc<Engine>`. Every method blocks the calling thread
//! until its results are ready; concurrent callers' NLI windows share forward passes.

pub mod batcher;
pub mod cache;
pub mod defaults;
pub mod embed;
pub mod nli;
pub mod onnx;
pub mod ort_env;
pub mod remote;
pub mod stages;
pub mod stand_in;
pub mod tokenizer;
pub mod tokens;
pub mod variants;
pub mod wordpiece;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use uq_core::protocol::NliProbs;

use crate::config::{check_model_dir, Config, Device, Precision, StandInMs};
use defaults::DeviceDefaults;

use batcher::{Batcher, Forward, Job};
pub use batcher::{EncodedWindow, PadSnapshot};
use cache::{pair_key, text_key, DedupCache};
use embed::EmbedModel;
use nli::NliText;
use onnx::OnnxModel;
use stages::{CpuTimer, Stage, StageSnapshot};
use stand_in::StandIn;
use variants::Variants;

/// Ready sentence embeddings kept at most (bytes) before that cache is emptied.
const SENTENCE_CACHE_BYTES: usize = 64 << 20;
/// Ready token embeddings kept at most (bytes) before that cache is emptied.
const TOKEN_CACHE_BYTES: usize = 256 << 20;
/// Ready NLI pair probabilities kept at most (entries, about 100 bytes each) before that cache
/// is emptied: memory stays bounded in a long-running daemon.
pub const NLI_CACHE_ENTRIES: usize = 1_000_000;

/// What `ping` reports about the engine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineInfo {
    pub nli_model: String,
    pub embed_model: Option<String>,
    /// Device actually used by the NLI model ("cpu" or "cuda").
    pub device: String,
    /// Why CUDA is not used when the device setting asked for it (`auto` or `cuda`).
    pub device_note: Option<String>,
    /// Precision of the NLI file that runs: "int8", "fp32" (optimized), "fp16" or "original".
    pub precision: String,
    /// Why `--precision auto` does not run the variant it prefers (int8 on the CPU, fp16 on
    /// CUDA), naming the fix.
    pub precision_note: Option<String>,
    /// NLI windows per forward pass at most (1: one window per pass, dynamic int8).
    pub nli_batch: usize,
    /// The NLI model file that runs (the model's `model.onnx` or a variant).
    pub nli_file: String,
    /// Whether that file's attention is fused, as its `variants.json` says (`None`: not a
    /// variant, e.g. `model.onnx`, or an inference server).
    pub attention_fused: Option<bool>,
    pub threads: usize,
    /// NLI sessions (batches run side by side).
    pub nli_sessions: usize,
    /// NLI batches in flight per session (`--nli-overlap`).
    pub nli_overlap: usize,
    /// The stand-in's time per batch when it replaces the NLI model (`--nli-stand-in-ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stand_in_ms: Option<f64>,
    /// NLI label names in model order.
    pub labels: Vec<String>,
    pub nli_cache_entries: usize,
    pub embed_cache_entries: usize,
    /// The inference servers' endpoints when the NLI model runs there (`--nli-backend`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nli_endpoints: Option<Vec<remote::EndpointInfo>>,
}

pub struct Engine {
    nli: NliText,
    batcher: Batcher,
    nli_cache: DedupCache<NliProbs>,
    /// Token ids of the NLI texts' sentences (`tokens`).
    token_ids: DedupCache<Arc<Vec<u32>>>,
    embed: Option<EmbedModel>,
    sentence_cache: DedupCache<Arc<Vec<f32>>>,
    token_cache: DedupCache<Arc<Vec<Vec<f32>>>>,
    nli_path: String,
    device: String,
    device_note: Option<String>,
    precision_note: Option<String>,
    precision: String,
    nli_file: String,
    attention_fused: Option<bool>,
    threads: usize,
    nli_sessions: usize,
    nli_overlap: usize,
    stand_in_ms: Option<f64>,
    max_batch: usize,
    /// The defaults of the device the NLI model runs on.
    defaults: DeviceDefaults,
    /// Whether the NLI runners take one window per pass (dynamic int8).
    one_at_a_time: bool,
    remote: Option<Arc<remote::Remote>>,
    pairs_computed: AtomicU64,
    windows_computed: AtomicU64,
    tokens_computed: AtomicU64,
}

impl Engine {
    /// Checks the model directories, loads ONNX Runtime (once per process) and both models.
    pub fn load(cfg: &Config) -> Result<Engine, String> {
        if cfg.nli_backend.is_none() {
            check_model_dir(&cfg.nli_model, true)?;
        }
        if let Some(d) = &cfg.embed_model {
            check_model_dir(d, false)?;
        }
        let nli = NliText::load(&cfg.nli_model, cfg.nli_max_tokens)?;
        let nli_run = match (&cfg.nli_backend, cfg.nli_stand_in_ms) {
            (Some(_), Some(_)) => {
                return Err(
                    "--nli-stand-in-ms and --nli-backend are both set: the stand-in \
                            replaces the NLI model wherever it runs; unset one of them"
                        .into(),
                )
            }
            (Some(b), None) => remote_nli(b, nli.pad_id)?,
            (None, Some(ms)) => stand_in_nli(cfg, ms, nli.labels.names.len(), nli.pad_id),
            (None, None) => local_nli(cfg, nli.pad_id)?,
        };
        let max_batch = nli_batch(cfg, &nli_run.defaults);
        let embed = match &cfg.embed_model {
            // The embedding model runs where the NLI model ended up (no second CUDA attempt).
            Some(d) => {
                let embed_cfg = Config {
                    device: nli_run.embed_device,
                    max_batch: Some(max_batch),
                    ..cfg.clone()
                };
                let env = ort_env::init(&cfg.ort_lib)?;
                Some(EmbedModel::load(&env, d, &embed_cfg)?)
            }
            None => None,
        };
        // Local sessions, or batches in flight on the inference servers.
        let nli_sessions = nli_run.runners.len();
        let one_at_a_time = nli_run.runners.iter().all(|r| r.one_at_a_time());
        let nli_overlap = cfg.nli_overlap.unwrap_or(nli_run.overlap).max(1);
        let batcher = Batcher::start(
            nli_run.runners,
            nli_overlap,
            max_batch,
            Duration::from_millis(cfg.max_wait_ms),
        )?;
        Ok(Engine {
            nli,
            batcher,
            nli_cache: DedupCache::new(Some(NLI_CACHE_ENTRIES), |_| 1),
            token_ids: tokens::ids_cache(),
            embed,
            sentence_cache: DedupCache::new(Some(SENTENCE_CACHE_BYTES), |v| v.len() * 4 + 64),
            token_cache: DedupCache::new(Some(TOKEN_CACHE_BYTES), |v| {
                v.iter().map(|r| r.len() * 4 + 24).sum::<usize>() + 64
            }),
            nli_path: cfg.nli_model.display().to_string(),
            device: nli_run.device,
            device_note: nli_run.device_note,
            precision_note: nli_run.precision_note,
            precision: nli_run.precision,
            nli_file: nli_run.nli_file,
            attention_fused: nli_run.attention_fused,
            threads: cfg.threads,
            nli_sessions,
            nli_overlap,
            stand_in_ms: cfg.nli_stand_in_ms.map(|s| s.0),
            max_batch: max_batch.max(1),
            defaults: nli_run.defaults,
            one_at_a_time,
            remote: nli_run.remote,
            pairs_computed: AtomicU64::new(0),
            windows_computed: AtomicU64::new(0),
            tokens_computed: AtomicU64::new(0),
        })
    }

    /// NLI probabilities of `(premise, hypothesis)` pairs, in order. Cached; cache misses go
    /// through the shared batcher.
    pub fn nli(&self, pairs: &[(String, String)]) -> Result<Vec<NliProbs>, String> {
        let start = CpuTimer::start();
        let keys: Vec<u128> = pairs.iter().map(|(p, h)| pair_key(p, h)).collect();
        let mut computing = Duration::ZERO;
        let probs = self.nli_cache.get_or_compute(&keys, |owned| {
            let t = CpuTimer::start();
            let r = self.compute_nli(pairs, owned);
            computing = t.elapsed();
            r
        })?;
        let cache = start.elapsed().saturating_sub(computing);
        self.batcher.stages().add(Stage::Cache, cache);
        Ok(probs)
    }

    fn compute_nli<'a>(
        &self,
        pairs: &'a [(String, String)],
        owned: &[usize],
    ) -> Result<Vec<NliProbs>, String> {
        let stages = self.batcher.stages();
        let tokenising = CpuTimer::start();
        // Each distinct text once, sentence by sentence (`tokens`).
        let mut index: HashMap<u128, usize> = HashMap::new();
        let mut texts: Vec<&str> = Vec::new();
        let mut slot = |s: &'a str| {
            *index.entry(text_key(s)).or_insert_with(|| {
                texts.push(s);
                texts.len() - 1
            })
        };
        let slots: Vec<(usize, usize)> = owned
            .iter()
            .map(|&i| (slot(&pairs[i].0), slot(&pairs[i].1)))
            .collect();
        let ids = tokens::token_ids(&self.nli, &self.token_ids, self.nli.by_sentence, &texts)?;
        let mut items = Vec::with_capacity(owned.len());
        for (&i, &(p, h)) in owned.iter().zip(&slots) {
            let (pi, hi) = (ids[p].clone(), ids[h].clone());
            let plan = self
                .nli
                .plan(pi.len(), hi.len())
                .map_err(|e| format!("NLI pair {i}: {e}"))?;
            items.push((pi, hi, plan));
        }
        stages.add(Stage::Tokenise, tokenising.elapsed());

        // Stream the windows through the batcher, a bounded number in flight.
        let (tx, rx) = crossbeam_channel::unbounded();
        let cap = self.defaults.in_flight(self.max_batch);
        let mut best: Vec<Option<NliProbs>> = vec![None; items.len()];
        let (mut item, mut win, mut inflight, mut total, mut tokens) =
            (0usize, 0usize, 0usize, 0u64, 0u64);
        loop {
            while inflight < cap && item < items.len() {
                let (pi, hi, plan) = &items[item];
                let built = CpuTimer::start();
                let window = self.nli.template.build(&pi[plan.range(win)], hi);
                stages.add(Stage::Tokenise, built.elapsed());
                tokens += window.len() as u64;
                self.batcher.submit(Job {
                    window,
                    tag: item,
                    reply: tx.clone(),
                })?;
                inflight += 1;
                total += 1;
                win += 1;
                if win == plan.count {
                    item += 1;
                    win = 0;
                }
            }
            if inflight == 0 {
                break;
            }
            let scattered = CpuTimer::start();
            let (tag, row) = loop {
                match rx.recv_timeout(Duration::from_millis(500)) {
                    Ok(r) => break r,
                    Err(_) if self.batcher.is_alive() => continue,
                    Err(_) => return Err("the NLI batcher thread has stopped".into()),
                }
            };
            inflight -= 1;
            let probs = self.nli.labels.probs(&row?)?;
            // A long premise's pair takes its most decisive window, the one with the highest
            // entailment or contradiction probability: any part of a sample may entail the unit
            // or contradict it, and a neutral window decides nothing (docs/reference.md, Models).
            let decisive = |p: &NliProbs| p.entailment.max(p.contradiction);
            let slot = &mut best[tag];
            if slot.as_ref().is_none_or(|b| decisive(&probs) > decisive(b)) {
                *slot = Some(probs);
            }
            stages.add(Stage::Scatter, scattered.elapsed());
        }
        self.windows_computed.fetch_add(total, Ordering::Relaxed);
        self.tokens_computed.fetch_add(tokens, Ordering::Relaxed);
        self.pairs_computed
            .fetch_add(items.len() as u64, Ordering::Relaxed);
        best.into_iter()
            .map(|b| b.ok_or_else(|| "internal error: an NLI pair got no result".to_string()))
            .collect()
    }

    /// Whether an embedding model is loaded (the cosine and BERTScore scorers need one).
    pub fn has_embeddings(&self) -> bool {
        self.embed.is_some()
    }

    fn embed_model(&self) -> Result<&EmbedModel, String> {
        self.embed.as_ref().ok_or_else(|| {
            "no embedding model loaded: set UQ_EMBED_MODEL or run make setup".to_string()
        })
    }

    /// Mean-pooled, L2-normalised sentence embeddings, in order. Cached by text.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Arc<Vec<f32>>>, String> {
        let m = self.embed_model()?;
        let keys: Vec<u128> = texts.iter().map(|t| text_key(t)).collect();
        self.sentence_cache.get_or_compute(&keys, |owned| {
            let t: Vec<&str> = owned.iter().map(|&i| texts[i].as_str()).collect();
            m.sentence(&t)
        })
    }

    /// Final-layer token embeddings (special tokens excluded, not normalised), in order. Cached by text.
    pub fn token_embeddings(&self, texts: &[String]) -> Result<Vec<Arc<Vec<Vec<f32>>>>, String> {
        let m = self.embed_model()?;
        let keys: Vec<u128> = texts.iter().map(|t| text_key(t)).collect();
        self.token_cache.get_or_compute(&keys, |owned| {
            let t: Vec<&str> = owned.iter().map(|&i| texts[i].as_str()).collect();
            m.tokens(&t)
        })
    }

    pub fn info(&self) -> EngineInfo {
        EngineInfo {
            nli_model: self.nli_path.clone(),
            embed_model: self.embed.as_ref().map(|e| e.path.clone()),
            device: self.device.clone(),
            device_note: self.device_note.clone(),
            precision: self.precision.clone(),
            precision_note: self.precision_note.clone(),
            nli_batch: self.nli_batch(),
            nli_file: self.nli_file.clone(),
            attention_fused: self.attention_fused,
            threads: self.threads,
            nli_sessions: self.nli_sessions,
            nli_overlap: self.nli_overlap,
            stand_in_ms: self.stand_in_ms,
            labels: self.nli.labels.names.clone(),
            nli_cache_entries: self.nli_cache.len(),
            embed_cache_entries: self.sentence_cache.len() + self.token_cache.len(),
            nli_endpoints: self.remote.as_ref().map(|r| r.endpoints()),
        }
    }

    /// NLI window size in tokens (special tokens included).
    pub fn nli_window(&self) -> usize {
        self.nli.window
    }

    /// Benchmark: all windows of `pairs`, tokenised (no cache, nothing run).
    pub fn nli_encode(&self, pairs: &[(String, String)]) -> Result<Vec<EncodedWindow>, String> {
        let mut out = Vec::new();
        for (i, (p, h)) in pairs.iter().enumerate() {
            let (pi, hi) = (self.nli.tokenize(p)?, self.nli.tokenize(h)?);
            out.extend(
                self.nli
                    .windows(&pi, &hi)
                    .map_err(|e| format!("NLI pair {i}: {e}"))?,
            );
        }
        Ok(out)
    }

    /// Benchmark: runs the NLI model alone on pre-made batches, as given (no cache, no queue,
    /// no re-sorting). Returns the number of windows run.
    pub fn nli_raw_forward(&self, batches: &[Vec<EncodedWindow>]) -> Result<usize, String> {
        self.batcher.raw(batches.to_vec())
    }

    /// Empties the NLI pair cache and the token ids of its texts (benchmarks: each setting
    /// measured cold).
    pub fn clear_nli_cache(&self) {
        self.nli_cache.clear();
        self.token_ids.clear();
    }

    /// NLI pairs computed so far (cache misses).
    pub fn nli_pairs_computed(&self) -> u64 {
        self.pairs_computed.load(Ordering::Relaxed)
    }

    /// NLI windows (forward-pass rows) computed so far through `nli`.
    pub fn nli_windows_computed(&self) -> u64 {
        self.windows_computed.load(Ordering::Relaxed)
    }

    /// NLI tokens (of every window, special tokens included, no padding) computed so far
    /// through `nli`.
    pub fn nli_tokens_computed(&self) -> u64 {
        self.tokens_computed.load(Ordering::Relaxed)
    }

    /// Where the NLI path's time went so far, per stage (the benches: µs per pair).
    pub fn nli_stages(&self) -> StageSnapshot {
        self.batcher.stages().snapshot()
    }

    /// Starts a new count of the most NLI batches in flight at once (benches: one per run).
    pub fn reset_nli_in_flight(&self) {
        self.batcher.stages().reset_max_in_flight();
    }

    /// Padding of the NLI batches run so far (`pad_ratio`).
    pub fn nli_pad_stats(&self) -> PadSnapshot {
        self.batcher.pad_stats()
    }

    /// The NLI batch the batcher forms at most: the configured or the device's default, or 1
    /// when the model runs one window per pass (dynamic int8).
    pub fn nli_batch(&self) -> usize {
        if self.one_at_a_time {
            1
        } else {
            self.max_batch
        }
    }

    /// The defaults of the device the NLI model runs on (rows in flight of table jobs, bench
    /// clients).
    pub fn device_defaults(&self) -> DeviceDefaults {
        self.defaults
    }
}

/// How the NLI forward passes run: the batcher's runners and what `info` says of them.
struct NliRun {
    runners: Vec<Arc<dyn Forward>>,
    /// Batches in flight per runner unless `--nli-overlap` says.
    overlap: usize,
    device: String,
    device_note: Option<String>,
    precision_note: Option<String>,
    precision: String,
    nli_file: String,
    attention_fused: Option<bool>,
    /// Where the embedding model is to run.
    embed_device: Device,
    /// The defaults of the device the model runs on.
    defaults: DeviceDefaults,
    remote: Option<Arc<remote::Remote>>,
}

/// The NLI batch: `--max-batch` when given (even at a device's default value), else the
/// default of the device the model runs on (16 on the CPU and for inference servers, 128 on
/// CUDA).
pub(crate) fn nli_batch(cfg: &Config, defaults: &DeviceDefaults) -> usize {
    cfg.max_batch.unwrap_or(defaults.max_batch).max(1)
}

/// Batcher workers per inference-server endpoint: one request in flight while the next is made.
const WORKERS_PER_ENDPOINT: usize = 2;

/// The NLI model on the inference servers of `backend`.
fn remote_nli(backend: &crate::config::NliBackend, pad_id: u32) -> Result<NliRun, String> {
    let r = Arc::new(remote::Remote::connect(backend, pad_id)?);
    remote::start_health_checks(&r, Duration::from_millis(backend.health_ms))?;
    let runners: Vec<Arc<dyn Forward>> = (0..WORKERS_PER_ENDPOINT * r.endpoint_count())
        .map(|_| Arc::new(remote::RemoteRunner(r.clone())) as Arc<dyn Forward>)
        .collect();
    Ok(NliRun {
        overlap: 1,
        device: "remote".into(),
        device_note: None,
        precision_note: None,
        precision: "remote".into(),
        nli_file: r.describe(),
        attention_fused: None,
        embed_device: Device::Cpu,
        defaults: defaults::CPU,
        remote: Some(r),
        runners,
    })
}

/// The NLI model in local ONNX Runtime sessions: on the CPU `cfg.nli_sessions` of them (default:
/// 2 for a model that runs one window per pass, dynamic int8, when there are 2 threads or more,
/// else 1), sharing `cfg.threads`; on CUDA one. On 2 cores two one-thread int8 sessions run 1.4×
/// the pairs/s of one two-thread session, while the batched fp32 model runs best as one session
/// whose worker sorts a large pool into batches (docs/design.md, "Batching").
fn local_nli(cfg: &Config, pad_id: u32) -> Result<NliRun, String> {
    let env = ort_env::init(&cfg.ort_lib)?;
    let sessions_for = |p: Precision| {
        cfg.nli_sessions
            .unwrap_or(if p == Precision::Int8 && cfg.threads >= 2 {
                2
            } else {
                1
            })
    };
    let threads_for = |p: Precision| (cfg.threads / sessions_for(p)).max(1);
    let (model, precision, precision_note) = load_nli_model(&env, cfg, pad_id, &threads_for)?;
    let device = model.device;
    let sessions = if device == Device::Cuda {
        1
    } else {
        sessions_for(precision)
    };
    let (file, row_at_a_time) = (std::path::PathBuf::from(&model.path), model.row_at_a_time);
    let mut runners: Vec<Arc<dyn Forward>> = Vec::with_capacity(sessions);
    for _ in 1..sessions {
        let mut m = OnnxModel::load(
            &env,
            &file,
            threads_for(precision),
            Device::Cpu,
            "logits",
            pad_id,
        )?;
        m.row_at_a_time = row_at_a_time;
        runners.push(Arc::new(m));
    }
    // The batch (`nli_batch`), the windows in flight per call and the overlap follow the device.
    let defaults = DeviceDefaults::of(device);
    Ok(NliRun {
        overlap: defaults.overlap,
        device: device.as_str().to_string(),
        device_note: model.cuda_not_used.clone(),
        precision_note,
        precision: precision.as_str().to_string(),
        nli_file: model.path.clone(),
        attention_fused: variants::attention_fused(std::path::Path::new(&model.path)),
        embed_device: device,
        defaults,
        remote: None,
        runners: std::iter::once(Arc::new(model) as Arc<dyn Forward>)
            .chain(runners)
            .collect(),
    })
}

/// The bench's stand-in in place of the NLI model (`--nli-stand-in-ms`): one device, with the
/// defaults of CUDA (a card is what it stands in for) unless `--device cpu`, and 2 batches in
/// flight unless `--nli-overlap` says.
fn stand_in_nli(cfg: &Config, ms: StandInMs, labels: usize, pad_id: u32) -> NliRun {
    let defaults = DeviceDefaults::of(match cfg.device {
        Device::Cpu => Device::Cpu,
        Device::Auto | Device::Cuda => Device::Cuda,
    });
    NliRun {
        runners: vec![Arc::new(StandIn::new(ms.per_batch(), labels, pad_id))],
        overlap: defaults::STAND_IN_OVERLAP,
        device: "stand-in".into(),
        device_note: None,
        precision_note: None,
        precision: "stand-in".into(),
        nli_file: format!("stand-in: {} ms per batch", ms.0),
        attention_fused: None,
        embed_device: Device::Cpu,
        defaults,
        remote: None,
    }
}

/// Loads the NLI model file that `cfg.precision` picks for the device it gets (see `variants`):
/// with `auto`/`cuda` devices CUDA is tried when the ONNX Runtime library has it, and when it
/// does not load, the file the precision picks for the CPU runs.
/// On the CPU the session gets `cpu_threads(precision)` intra-op threads, on CUDA `cfg.threads`.
/// Also returns why `--precision auto` does not run its preferred variant, if it does not.
fn load_nli_model(
    env: &ort::environment::Environment,
    cfg: &Config,
    pad_id: u32,
    cpu_threads: &dyn Fn(Precision) -> usize,
) -> Result<(OnnxModel, Precision, Option<String>), String> {
    let variants = Variants::find(&cfg.nli_model, &cfg.variants_dir);
    if let Some(n) = &variants.note {
        eprintln!("uqd: {n}");
    }
    let pick = |device| variants.pick(&cfg.nli_model, cfg.precision, device);
    // `auto` that cannot run the variant it prefers says so, naming the fix (never silently 3×
    // slower).
    let auto_note = |device| {
        let note = (cfg.precision == Precision::Auto)
            .then(|| variants.auto_note(&cfg.nli_model, device))
            .flatten();
        if let Some(n) = &note {
            eprintln!("uqd: {n}");
        }
        note
    };
    let load = |file: &std::path::Path, device, threads| {
        OnnxModel::load(env, file, threads, device, "logits", pad_id)
    };
    let mut cuda_note = None;
    if cfg.device != Device::Cpu {
        match ort_env::cuda_missing(&cfg.ort_lib) {
            None => {
                let (file, precision) = pick(Device::Cuda)?;
                let mut model = load(&file, Device::Cuda, cfg.threads)?;
                model.row_at_a_time = precision == Precision::Int8;
                if model.device == Device::Cuda {
                    return Ok((model, precision, auto_note(Device::Cuda)));
                }
                cuda_note = model.cuda_not_used.clone();
                // It fell back to the CPU: keep it when it is the CPU's file with the CPU's threads.
                if pick(Device::Cpu)?.0 == file && cpu_threads(precision) == cfg.threads {
                    return Ok((model, precision, auto_note(Device::Cpu)));
                }
            }
            Some(why) => {
                // `auto` with the CPU build is the usual case: the reason goes to `uqd status`
                // and uq_debug(), and to stderr only when CUDA was asked for.
                if cfg.device == Device::Cuda {
                    eprintln!("uqd: CUDA not used ({why}); running on the CPU");
                }
                cuda_note = Some(why);
            }
        }
    }
    let (file, precision) = pick(Device::Cpu)?;
    let mut model = load(&file, Device::Cpu, cpu_threads(precision))?;
    model.cuda_not_used = cuda_note;
    // Dynamic int8: one window per forward pass, so that a pair's probabilities do not depend on
    // what else shares its batch (see `OnnxModel::row_at_a_time`).
    model.row_at_a_time = precision == Precision::Int8;
    Ok((model, precision, auto_note(Device::Cpu)))
}
