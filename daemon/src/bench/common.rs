//! Pieces shared by the benchmarks: scoring every item with a set of scorers through the full
//! pipeline (`clients` items in flight), the measured first run, the cached second run, the raw
//! model throughput and the summary line.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{json, Map, Value};
use uq_core::decompose::split_sentences;
use uq_core::protocol::ScoreResult;
use uq_core::scorers::{Family, Granularity, Scorer, ALL as ALL_SCORERS};

use crate::engine::Engine;
use crate::pipeline;
use crate::role_llms::LlmService;

/// One scoring request of a benchmark: the units are given (no decomposition call).
pub struct Job {
    /// The response under audit (only its size is checked: the units are given).
    pub response: String,
    pub units: Vec<String>,
    /// The sampled responses in use (the first m).
    pub samples: Vec<String>,
    /// One array of units per sample (`options.sample_units`); `None` lets the pipeline
    /// decompose the samples at `granularity`.
    pub sample_units: Option<Vec<Vec<String>>>,
    /// The union of unique claims over the response and its samples (`options.claim_union`,
    /// graph scorers).
    pub claim_union: Option<Vec<String>>,
    pub granularity: Granularity,
}

impl Job {
    fn options(&self, scorers: &[&str]) -> Value {
        let mut o = json!({
            "units": self.units,
            "scorers": scorers,
            "num_samples": self.samples.len(),
            "granularity": self.granularity.as_str(),
        });
        if let Some(su) = &self.sample_units {
            o["sample_units"] = json!(su);
        }
        if let Some(cu) = &self.claim_union {
            o["claim_union"] = json!(cu);
        }
        o
    }
}

/// How a benchmark runs: concurrent clients and the batch size of the raw-model measurement.
pub struct RunConfig {
    /// Concurrent client threads submitting jobs (they share the daemon's batcher).
    pub clients: usize,
    /// Batch size of the raw-model measurement (the daemon's `max_batch`).
    pub max_batch: usize,
}

/// The first run's results (one per job, every scorer merged) and the summary figures.
pub struct Measured {
    pub results: Vec<ScoreResult>,
    pub summary: Map<String, Value>,
}

/// Scores every job with `scorers` (no LLM-judged one) and measures it:
/// run 1 with the NLI scorers alone (the NLI throughput of the full path: pipeline, cache,
/// batcher, model), run 1 with the embedding scorers, run 1 with the model-free ones (n-gram),
/// run 2 with all of them at once on the warm
/// caches (its wall time and whether it gives the same scores), and the NLI model alone on the
/// distinct NLI pairs of the jobs, pre-tokenised and length-sorted. The summary holds `samples`,
/// `units`, `nli_pairs`, `nli_pairs_per_s`, `raw_nli_pairs_per_s`, `wall_s`, `cached_wall_s`,
/// `model_free_wall_s`, `cache_speedup`, `cached_identical`, `cached_max_abs_diff`,
/// `peak_rss_mb`, `device`,
/// `threads`, `max_batch`; callers add their own fields.
pub fn measure(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    run: &RunConfig,
    scorers: &[Scorer],
) -> Result<Measured, String> {
    let nli_scorers: Vec<Scorer> = scorers.iter().copied().filter(|s| s.needs_nli()).collect();
    let embed_scorers: Vec<Scorer> = scorers
        .iter()
        .copied()
        .filter(|s| s.needs_embeddings())
        .collect();
    let model_free: Vec<Scorer> = scorers
        .iter()
        .copied()
        .filter(|s| !s.needs_nli() && !s.needs_embeddings())
        .collect();

    // Run 1, NLI scorers.
    let computed0 = engine.nli_pairs_computed();
    let t = Instant::now();
    let nli_results = run_all(engine, llm, jobs, run.clients, &nli_scorers)?;
    let nli_wall = t.elapsed().as_secs_f64();
    let nli_pairs = engine.nli_pairs_computed() - computed0;
    eprintln!("bench: NLI scorers {nli_pairs} pairs in {nli_wall:.1}s");

    // Run 1, embedding scorers.
    let t = Instant::now();
    let embed_results = run_all(engine, llm, jobs, run.clients, &embed_scorers)?;
    let embed_wall = t.elapsed().as_secs_f64();

    // Run 1, model-free scorers.
    let t = Instant::now();
    let free_results = run_all(engine, llm, jobs, run.clients, &model_free)?;
    let free_wall = t.elapsed().as_secs_f64();
    let first_wall = nli_wall + embed_wall + free_wall;
    let first: Vec<ScoreResult> = nli_results
        .into_iter()
        .zip(embed_results)
        .zip(free_results)
        .map(|((a, b), c)| merge(merge(a, b), c))
        .collect();

    // Run 2, all scorers at once, on the warm caches.
    let t = Instant::now();
    let second = run_all(engine, llm, jobs, run.clients, scorers)?;
    let second_wall = t.elapsed().as_secs_f64();
    let max_diff = max_abs_diff(&first, &second);

    // The model alone on the same pairs.
    let matched_nli = nli_scorers
        .iter()
        .any(|s| s.family() == Family::MatchedUnit);
    let graph = nli_scorers.iter().any(|s| s.family() == Family::Graph);
    let pairs = if nli_scorers.is_empty() {
        Vec::new()
    } else {
        all_nli_pairs(jobs, matched_nli, graph)
    };
    let raw_pairs_per_s = if pairs.is_empty() {
        None
    } else {
        Some(raw_throughput(engine, &pairs, run.max_batch)?)
    };

    let units: usize = jobs.iter().map(|j| j.units.len()).sum();
    let samples = jobs.iter().map(|j| j.samples.len()).max().unwrap_or(0);
    let summary = json!({
        "summary": true,
        "samples": samples,
        "units": units,
        "nli_pairs": nli_pairs,
        "nli_pairs_per_s": (nli_pairs > 0).then(|| round(nli_pairs as f64 / nli_wall)),
        "raw_nli_pairs_per_s": raw_pairs_per_s.map(round),
        "wall_s": round(first_wall),
        "cached_wall_s": round(second_wall),
        "model_free_wall_s": round(free_wall),
        "cache_speedup": round(first_wall / second_wall.max(1e-9)),
        "cached_identical": max_diff <= 1e-6,
        "cached_max_abs_diff": max_diff,
        "path_vs_raw": raw_pairs_per_s
            .filter(|_| nli_pairs > 0)
            .map(|raw| round(nli_pairs as f64 / nli_wall / raw)),
        "peak_rss_mb": round(peak_rss_mb()),
        "rss_mb": round(status_mb("VmRSS:")),
        "device": engine.info().device,
        "device_note": engine.info().device_note,
        "precision": engine.info().precision,
        "nli_file": engine.info().nli_file,
        "threads": engine.info().threads,
        "max_batch": run.max_batch,
    });
    let Value::Object(summary) = summary else {
        unreachable!("json! of an object literal is an object")
    };
    Ok(Measured {
        results: first,
        summary,
    })
}

/// The scorers of `names` (comma-separated; `None`: all of `available`), each of which must be
/// one the benchmark runs (`available`).
pub fn select_scorers(available: Vec<Scorer>, names: Option<&str>) -> Result<Vec<Scorer>, String> {
    let Some(names) = names else {
        return Ok(available);
    };
    let listed = || {
        available
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for name in names.split(',').filter(|n| !n.trim().is_empty()) {
        let s = Scorer::parse(name).map_err(|e| format!("--scorers: {e}"))?;
        if !available.contains(&s) {
            return Err(format!(
                "--scorers: this benchmark does not run {}; it runs {}",
                s.name(),
                listed()
            ));
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(format!("--scorers is empty: name some of {}", listed()));
    }
    Ok(out)
}

/// Scores every job with `scorers`, `clients` jobs in flight at once. No scorers: one empty
/// result per job.
pub fn run_all(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    clients: usize,
    scorers: &[Scorer],
) -> Result<Vec<ScoreResult>, String> {
    if scorers.is_empty() {
        let empty = || ScoreResult {
            units: Vec::new(),
            origins: Vec::new(),
            scores: Vec::new(),
            response_scores: Default::default(),
            calibrated_scores: Default::default(),
            notes: Vec::new(),
            coverage: Vec::new(),
        };
        return Ok(jobs.iter().map(|_| empty()).collect());
    }
    let names: Vec<&str> = scorers.iter().map(|s| s.name()).collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<ScoreResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..clients.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let r = pipeline::score(
                    engine,
                    llm,
                    &job.response,
                    &job.samples,
                    &job.options(&names),
                );
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: job not scored".into())))
        .collect()
}

fn merge(mut a: ScoreResult, b: ScoreResult) -> ScoreResult {
    if a.units.is_empty() {
        a.units = b.units;
    }
    a.scores.extend(b.scores);
    a.response_scores.extend(b.response_scores);
    a
}

fn max_abs_diff(a: &[ScoreResult], b: &[ScoreResult]) -> f64 {
    let mut d: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for &scorer in ALL_SCORERS {
            for (p, q) in x
                .unit_scores(scorer.name())
                .iter()
                .zip(y.unit_scores(scorer.name()))
            {
                d = d.max((p - q).abs());
            }
        }
    }
    d
}

/// The distinct NLI pairs the scorers ask for: (sample, unit) for the unit-response family and,
/// when `matched`, (sample unit, unit) with each sample's units as given, else its sentences,
/// and, when `graph`, (response or sample, claim) for every claim of the union and the units.
fn all_nli_pairs(jobs: &[Job], matched: bool, graph: bool) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    for job in jobs {
        let sample_units: Vec<String> = if !matched {
            Vec::new()
        } else if let Some(su) = &job.sample_units {
            su.iter().flatten().cloned().collect()
        } else {
            job.samples
                .iter()
                .flat_map(|s| split_sentences(s))
                .collect()
        };
        for u in &job.units {
            for premise in job.samples.iter().chain(&sample_units) {
                let pair = (premise.clone(), u.clone());
                if seen.insert(pair.clone()) {
                    pairs.push(pair);
                }
            }
        }
        if let (true, Some(union)) = (graph, &job.claim_union) {
            let premises: Vec<&String> = std::iter::once(&job.response)
                .filter(|r| !r.trim().is_empty())
                .chain(&job.samples)
                .collect();
            for claim in union.iter().chain(&job.units) {
                for &premise in &premises {
                    let pair = (premise.clone(), claim.clone());
                    if seen.insert(pair.clone()) {
                        pairs.push(pair);
                    }
                }
            }
        }
    }
    pairs
}

/// Pairs per second of the ONNX model alone on length-sorted batches of `max_batch`.
fn raw_throughput(
    engine: &Engine,
    pairs: &[(String, String)],
    max_batch: usize,
) -> Result<f64, String> {
    let mut windows = engine.nli_encode(pairs)?;
    windows.sort_by_key(|w| w.len());
    let batches: Vec<Vec<_>> = windows
        .chunks(max_batch.max(1))
        .map(|c| c.to_vec())
        .collect();
    let t = Instant::now();
    engine.nli_raw_forward(&batches)?;
    Ok(pairs.len() as f64 / t.elapsed().as_secs_f64())
}

/// Peak resident set size of this process (VmHWM), in MB.
pub fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// A memory figure of /proc/self/status (`field` e.g. "VmRSS:"), in MB.
pub fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(field)).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// Reads a JSON-lines file, at most `limit` records (all when `None`).
pub fn load_jsonl<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    limit: Option<usize>,
) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let r: T = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        out.push(r);
    }
    Ok(out)
}

pub fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

pub fn pct(x: f64) -> f64 {
    round(x * 100.0)
}
