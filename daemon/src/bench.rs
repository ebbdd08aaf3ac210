//! `uqd bench selfcheck`: every annotated SelfCheckGPT WikiBio sentence scored with every
//! sentence-level scorer, evaluated with the dataset's conventions (shared/data/README.md),
//! plus throughput, cache and memory figures. Prints one JSON object per line.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::decompose::split_sentences;
use uq_core::metrics::{auroc, average_precision, pearson};
use uq_core::protocol::ScoreResult;
use uq_core::scorers::{Scorer, ALL as ALL_SCORERS};

use crate::engine::Engine;
use crate::pipeline;

#[derive(Deserialize)]
struct Passage {
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
    annotation: Vec<String>,
}

pub struct SelfcheckArgs<'a> {
    pub data: &'a Path,
    pub samples: usize,
    /// Concurrent client threads submitting passages (they share the daemon's batcher).
    pub clients: usize,
    /// Only the first `limit` passages (all when `None`).
    pub limit: Option<usize>,
    /// Batch size of the raw-model measurement (the daemon's `max_batch`).
    pub max_batch: usize,
}

/// Runs the benchmark and prints its JSON lines to stdout (progress goes to stderr).
pub fn selfcheck(engine: &Engine, args: &SelfcheckArgs) -> Result<(), String> {
    let passages = load(args.data, args.limit)?;
    if let Some(p) = passages
        .iter()
        .find(|p| p.gpt3_text_samples.len() < args.samples)
    {
        return Err(format!(
            "--samples {} but a passage has only {} samples",
            args.samples,
            p.gpt3_text_samples.len()
        ));
    }
    let nli_scorers: Vec<Scorer> = ALL_SCORERS
        .iter()
        .copied()
        .filter(|s| s.needs_nli())
        .collect();
    let embed_scorers: Vec<Scorer> = ALL_SCORERS
        .iter()
        .copied()
        .filter(|s| !s.needs_nli())
        .collect();

    // Run 1, NLI scorers: throughput of the full path (pipeline, cache, batcher, model).
    let computed0 = engine.nli_pairs_computed();
    let t = Instant::now();
    let nli_results = run_all(engine, &passages, args, &nli_scorers)?;
    let nli_wall = t.elapsed().as_secs_f64();
    let nli_pairs = engine.nli_pairs_computed() - computed0;
    eprintln!("bench: NLI scorers {nli_pairs} pairs in {nli_wall:.1}s");

    // Run 1, embedding scorers.
    let t = Instant::now();
    let embed_results = run_all(engine, &passages, args, &embed_scorers)?;
    let first_wall = nli_wall + t.elapsed().as_secs_f64();
    let first: Vec<ScoreResult> = nli_results
        .into_iter()
        .zip(embed_results)
        .map(|(a, b)| merge(a, b))
        .collect();

    // Run 2, all scorers at once, on the warm caches.
    let t = Instant::now();
    let second = run_all(engine, &passages, args, ALL_SCORERS)?;
    let second_wall = t.elapsed().as_secs_f64();
    let max_diff = max_abs_diff(&first, &second);

    // The model alone on the same pairs, pre-tokenised and length-sorted.
    let pairs = all_nli_pairs(&passages, args.samples);
    let raw_pairs_per_s = raw_throughput(engine, &pairs, args.max_batch)?;

    for &scorer in ALL_SCORERS {
        println!("{}", evaluate(scorer, &passages, &first));
    }
    let units: usize = passages.iter().map(|p| p.gpt3_sentences.len()).sum();
    println!(
        "{}",
        json!({
            "summary": true,
            "samples": args.samples,
            "passages": passages.len(),
            "units": units,
            "nli_pairs": nli_pairs,
            "nli_pairs_per_s": round(nli_pairs as f64 / nli_wall),
            "raw_nli_pairs_per_s": round(raw_pairs_per_s),
            "wall_s": round(first_wall),
            "cached_wall_s": round(second_wall),
            "cache_speedup": round(first_wall / second_wall.max(1e-9)),
            "cached_identical": max_diff <= 1e-6,
            "cached_max_abs_diff": max_diff,
            "peak_rss_mb": round(peak_rss_mb()),
        })
    );
    Ok(())
}

fn load(path: &Path, limit: Option<usize>) -> Result<Vec<Passage>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let p: Passage = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        if p.annotation.len() != p.gpt3_sentences.len() {
            return Err(format!(
                "{} line {}: annotation and gpt3_sentences differ in length",
                path.display(),
                i + 1
            ));
        }
        out.push(p);
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
    }
    Ok(out)
}

/// Scores every passage with `scorers`, `clients` passages in flight at once.
fn run_all(
    engine: &Engine,
    passages: &[Passage],
    args: &SelfcheckArgs,
    scorers: &[Scorer],
) -> Result<Vec<ScoreResult>, String> {
    let names: Vec<&str> = scorers.iter().map(|s| s.name()).collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<ScoreResult, String>>>> =
        Mutex::new((0..passages.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..args.clients.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = passages.get(i) else { break };
                let options = json!({"units": p.gpt3_sentences, "scorers": names, "num_samples": args.samples});
                let r = pipeline::score(engine, "", &p.gpt3_text_samples, &options);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: passage not scored".into())))
        .collect()
}

fn merge(mut a: ScoreResult, b: ScoreResult) -> ScoreResult {
    a.scores.extend(b.scores);
    a.response_scores.extend(b.response_scores);
    a
}

/// Unit scores of `scorer` for one passage, in unit order.
fn unit_scores(r: &ScoreResult, scorer: Scorer) -> Vec<f64> {
    let mut v: Vec<(usize, f64)> = r
        .scores
        .iter()
        .filter(|s| s.scorer == scorer.name())
        .map(|s| (s.unit_idx, s.score))
        .collect();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

fn max_abs_diff(a: &[ScoreResult], b: &[ScoreResult]) -> f64 {
    let mut d: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for &scorer in ALL_SCORERS {
            for (p, q) in unit_scores(x, scorer).iter().zip(unit_scores(y, scorer)) {
                d = d.max((p - q).abs());
            }
        }
    }
    d
}

/// SelfCheckGPT conventions: non-factual = minor or major inaccurate; NonFact AUC-PR on
/// 1 − confidence, Factual AUC-PR on confidence, passage Pearson between the mean
/// 1 − confidence and the share of non-factual sentences.
fn evaluate(scorer: Scorer, passages: &[Passage], results: &[ScoreResult]) -> Value {
    let (mut conf, mut factual) = (Vec::new(), Vec::new());
    let (mut passage_score, mut passage_share) = (Vec::new(), Vec::new());
    for (p, r) in passages.iter().zip(results) {
        let scores = unit_scores(r, scorer);
        let labels: Vec<bool> = p.annotation.iter().map(|a| a == "accurate").collect();
        if scores.is_empty() {
            continue;
        }
        passage_score.push(scores.iter().map(|c| 1.0 - c).sum::<f64>() / scores.len() as f64);
        passage_share.push(labels.iter().filter(|&&f| !f).count() as f64 / labels.len() as f64);
        conf.extend(scores);
        factual.extend(labels);
    }
    let hallu: Vec<f64> = conf.iter().map(|c| 1.0 - c).collect();
    let nonfact: Vec<bool> = factual.iter().map(|f| !f).collect();
    json!({
        "scorer": scorer.name(),
        "family": scorer.family().as_str(),
        "nonfact_auc_pr": average_precision(&hallu, &nonfact).map(pct),
        "factual_auc_pr": average_precision(&conf, &factual).map(pct),
        "auroc": auroc(&conf, &factual).map(round),
        "passage_pearson": pearson(&passage_score, &passage_share).map(pct),
    })
}

/// The distinct NLI pairs the sentence-level scorers ask for (unit-response and matched-unit).
fn all_nli_pairs(passages: &[Passage], m: usize) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    for p in passages {
        let samples = &p.gpt3_text_samples[..m];
        let sample_units: Vec<String> = samples.iter().flat_map(|s| split_sentences(s)).collect();
        for u in &p.gpt3_sentences {
            for premise in samples.iter().chain(&sample_units) {
                let pair = (premise.clone(), u.clone());
                if seen.insert(pair.clone()) {
                    pairs.push(pair);
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
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn pct(x: f64) -> f64 {
    round(x * 100.0)
}
