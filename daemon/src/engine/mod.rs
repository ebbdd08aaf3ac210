//! The model engine: NLI (cached, windowed, dynamically batched) and embeddings (cached).
//!
//! `Engine` is `Send + Sync`; share it as `Arc<Engine>`. Every method blocks the calling thread
//! until its results are ready; concurrent callers' NLI windows share forward passes.

pub mod batcher;
pub mod cache;
pub mod defaults;
pub mod embed;
mod info;
pub mod nli;
mod nli_run;
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

use uq_core::protocol::NliProbs;

use crate::config::{check_model_dir, Config};
use defaults::DeviceDefaults;

use batcher::{Batcher, Job};
pub use batcher::{EncodedWindow, PadSnapshot};
use cache::{pair_key, text_key, DedupCache};
use embed::EmbedModel;
pub use info::EngineInfo;
use nli::{NliText, WindowPlan};
pub(crate) use nli_run::nli_batch;
use nli_run::{NliRun, RunInfo};
use stages::{CpuTimer, Stage, StageSnapshot};

/// Ready sentence embeddings kept at most (bytes) before that cache is emptied.
const SENTENCE_CACHE_BYTES: usize = 64 << 20;
/// Ready token embeddings kept at most (bytes) before that cache is emptied.
const TOKEN_CACHE_BYTES: usize = 256 << 20;
/// Ready NLI pair probabilities kept at most (entries, about 100 bytes each) before that cache
/// is emptied: memory stays bounded in a long-running daemon.
pub const NLI_CACHE_ENTRIES: usize = 1_000_000;

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
    run_info: RunInfo,
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
        let nli_run = NliRun::start(cfg, nli.labels.names.len(), nli.pad_id)?;
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
            run_info: nli_run.info,
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

    fn compute_nli(
        &self,
        pairs: &[(String, String)],
        owned: &[usize],
    ) -> Result<Vec<NliProbs>, String> {
        let tokenising = CpuTimer::start();
        let items = self.plan_pairs(pairs, owned)?;
        self.batcher
            .stages()
            .add(Stage::Tokenise, tokenising.elapsed());
        self.run_windows(&items)
    }

    /// The token ids and window plan of each owned pair, each distinct text tokenised once,
    /// sentence by sentence (`tokens`).
    fn plan_pairs<'a>(
        &self,
        pairs: &'a [(String, String)],
        owned: &[usize],
    ) -> Result<Vec<PlannedPair>, String> {
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
        Ok(items)
    }

    /// Streams the windows of `items` through the batcher, a bounded number in flight; each
    /// pair gets the probabilities of its most decisive window.
    fn run_windows(&self, items: &[PlannedPair]) -> Result<Vec<NliProbs>, String> {
        let stages = self.batcher.stages();
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
            keep_decisive(&mut best[tag], self.nli.labels.probs(&row?)?);
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
            device: self.run_info.device.clone(),
            device_note: self.run_info.device_note.clone(),
            precision: self.run_info.precision.clone(),
            precision_note: self.run_info.precision_note.clone(),
            nli_batch: self.nli_batch(),
            nli_file: self.run_info.nli_file.clone(),
            attention_fused: self.run_info.attention_fused,
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

/// One NLI pair to run: the premise's and the hypothesis's token ids, and the premise's windows.
type PlannedPair = (Arc<Vec<u32>>, Arc<Vec<u32>>, WindowPlan);

/// A long premise's pair takes its most decisive window, the one with the highest entailment or
/// contradiction probability: any part of a sample may entail the unit or contradict it, and a
/// neutral window decides nothing (docs/reference.md, Models).
fn keep_decisive(best: &mut Option<NliProbs>, probs: NliProbs) {
    let decisive = |p: &NliProbs| p.entailment.max(p.contradiction);
    if best.as_ref().is_none_or(|b| decisive(&probs) > decisive(b)) {
        *best = Some(probs);
    }
}
