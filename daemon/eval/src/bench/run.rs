//! Scoring every item with a set of scorers through the full pipeline (`clients` items in
//! flight): the measured first run, the cached second run and the summary line.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Map, Value};
use uq_core::protocol::ScoreResult;
use uq_core::score::premise::Premise;
use uq_core::scorers::{Family, Scorer, ALL as ALL_SCORERS};

use super::host::HostStart;
use super::lines::round;
use super::options::{Job, Judge};
use super::procfs::{peak_rss_mb, status_mb};
use super::raw::raw_ceiling;
use uqd::engine::{Engine, PadSnapshot};
use uqd::judge::{self, Tally};
use uqd::pipeline;
use uqd::role_llms::{metered, LlmService, UsageMeter};

/// What a scoring bench over one data file is given (`bench selfcheck`, and `bench claims`
/// within its own arguments).
pub struct ScoringArgs<'a> {
    pub data: &'a Path,
    pub samples: usize,
    /// Concurrent client threads submitting passages or responses (they share the daemon's batcher).
    pub clients: usize,
    /// Only the first `limit` passages or records (all when `None`).
    pub limit: Option<usize>,
    /// The premise settings, one run each (`--premise`).
    pub premises: Vec<uq_core::score::premise::Premise>,
    /// Pairs of the raw-model measurement (0: skipped).
    pub raw_pairs: usize,
    /// The LLM that judges NLI pairs (`--nli-llm`, `--nli-prompt`); `None`: the NLI model.
    pub judge: Option<Judge>,
    /// Only these scorers (comma-separated names; `None`: all the benchmark runs).
    pub scorers: Option<&'a str>,
}

/// How a benchmark runs: concurrent clients, the premise setting and the raw-model sample.
#[derive(Debug, Clone, Copy)]
pub struct RunConfig<'a> {
    /// Concurrent client threads submitting jobs (they share the daemon's batcher).
    pub clients: usize,
    /// Option `premise` of every request.
    pub premise: Premise,
    /// NLI pairs the raw-model ceiling is measured on (a sample spread over the run's pairs);
    /// 0 skips that measurement.
    pub raw_pairs: usize,
    /// The LLM that judges NLI pairs instead of the NLI model (`--nli-llm`).
    pub judge: Option<&'a Judge>,
    /// LLM usage of the run is added here.
    pub meter: Option<&'a Arc<UsageMeter>>,
    /// What the NLI judge did in the run is added here.
    pub tally: Option<&'a Mutex<Tally>>,
}

impl<'a> RunConfig<'a> {
    /// A benchmark run of one premise setting, with the judge of `--nli-llm` if any; the run's
    /// usage is metered by `measure` itself.
    pub fn new(
        clients: usize,
        premise: Premise,
        raw_pairs: usize,
        judge: Option<&'a Judge>,
    ) -> RunConfig<'a> {
        RunConfig {
            clients,
            premise,
            raw_pairs,
            judge,
            meter: None,
            tally: None,
        }
    }
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
/// `peak_rss_mb`, `device`, `threads`, `clients`, `premise`, `tokens_per_comparison` (NLI tokens
/// per pair computed), `pad_ratio` (padding tokens per real token of the batches run) and
/// `mean_batch`, and `max_batch`, the batch the batcher actually forms (1 for the dynamic int8
/// model), at which the raw ceiling is measured (on `raw_pairs` pairs); callers add their own
/// fields.
pub fn measure(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    run: &RunConfig,
    scorers: &[Scorer],
) -> Result<Measured, String> {
    let (nli_scorers, embed_scorers, model_free) = split_scorers(scorers);
    let mut nli = nli_run(engine, llm, jobs, run, &nli_scorers)?;
    let (nli_pairs, nli_wall) = (nli.pairs, nli.wall);
    eprintln!(
        "bench: NLI scorers, premise {}: {nli_pairs} pairs in {nli_wall:.1}s",
        run.premise.label()
    );
    let (embed_results, embed_wall) = timed_run(engine, llm, jobs, run, &embed_scorers)?;
    let (free_results, free_wall) = timed_run(engine, llm, jobs, run, &model_free)?;
    let first_wall = nli_wall + embed_wall + free_wall;
    let first: Vec<ScoreResult> = std::mem::take(&mut nli.results)
        .into_iter()
        .zip(embed_results)
        .zip(free_results)
        .map(|((a, b), c)| merge(merge(a, b), c))
        .collect();

    // Run 2, all scorers at once, on the warm caches.
    let meter2 = Arc::new(UsageMeter::default());
    let run2 = RunConfig {
        meter: Some(&meter2),
        ..*run
    };
    let (second, second_wall) = timed_run(engine, llm, jobs, &run2, scorers)?;
    let max_diff = max_abs_diff(&first, &second);
    let (raw_pairs_per_s, raw_pairs) = raw_nli(engine, jobs, run, &nli_scorers)?;
    let mut summary = fields_of(json!({
        "summary": true,
        "nli_pairs": nli_pairs,
        "nli_pairs_per_s": (nli_pairs > 0).then(|| round(nli_pairs as f64 / nli_wall)),
        "tokens_per_comparison": (nli_pairs > 0).then(|| round(nli.tokens as f64 / nli_pairs as f64)),
        "nli_tokens": nli.tokens,
        "pad_ratio": nli.pad.pad_ratio().map(round),
        "mean_batch": nli.pad.mean_batch().map(round),
        "raw_nli_pairs_per_s": raw_pairs_per_s.map(round),
        "raw_pairs": raw_pairs,
        "wall_s": round(first_wall),
        "cached_wall_s": round(second_wall),
        "model_free_wall_s": round(free_wall),
        "cache_speedup": round(first_wall / second_wall.max(1e-9)),
        "cached_identical": max_diff <= 1e-6,
        "cached_max_abs_diff": max_diff,
        "path_vs_raw": raw_pairs_per_s
            .filter(|_| nli_pairs > 0)
            .map(|raw| round(nli_pairs as f64 / nli_wall / raw)),
    }));
    summary.extend(setting_fields(engine, jobs, run));
    summary.extend(nli.host);
    if let Some(j) = run.judge {
        summary.extend(judge_fields(j, &nli.meter, &meter2, nli.tally));
    }
    Ok(Measured {
        results: first,
        summary,
    })
}

/// What the run ran on and with: the jobs' samples and units, the premise, the device, the NLI
/// model file, the threads, clients and batch, and the process's memory.
fn setting_fields(engine: &Engine, jobs: &[Job], run: &RunConfig) -> Map<String, Value> {
    let units: usize = jobs.iter().map(|j| j.units.len()).sum();
    let samples = jobs.iter().map(|j| j.samples.len()).max().unwrap_or(0);
    let info = engine.info();
    fields_of(json!({
        "samples": samples,
        "units": units,
        "premise": run.premise.label(),
        "peak_rss_mb": round(peak_rss_mb()),
        "rss_mb": round(status_mb("VmRSS:")),
        "device": info.device,
        "device_note": info.device_note,
        "precision": info.precision,
        "nli_file": info.nli_file,
        "attention_fused": info.attention_fused,
        "threads": info.threads,
        "clients": run.clients,
        "max_batch": engine.nli_batch(),
    }))
}

/// The fields of a `json!` object literal.
fn fields_of(v: Value) -> Map<String, Value> {
    let Value::Object(fields) = v else {
        unreachable!("json! of an object literal is an object")
    };
    fields
}

/// `scorers` split into the NLI, the embedding and the model-free ones.
fn split_scorers(scorers: &[Scorer]) -> (Vec<Scorer>, Vec<Scorer>, Vec<Scorer>) {
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
    (nli_scorers, embed_scorers, model_free)
}

/// Run 1 of the NLI scorers and what the engine computed for it.
struct NliRun {
    results: Vec<ScoreResult>,
    wall: f64,
    pairs: u64,
    tokens: u64,
    pad: PadSnapshot,
    /// The NLI path's stages per pair, batches in flight, the stand-in's figures.
    host: Map<String, Value>,
    /// The run's LLM usage (an LLM judge's).
    meter: Arc<UsageMeter>,
    /// What the NLI judge did in the run.
    tally: Tally,
}

/// Run 1, NLI scorers, on a cold NLI cache (an earlier setting's pairs are not reused).
fn nli_run(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    run: &RunConfig,
    nli_scorers: &[Scorer],
) -> Result<NliRun, String> {
    engine.clear_nli_cache();
    let computed0 = engine.nli_pairs_computed();
    let tokens0 = engine.nli_tokens_computed();
    let pad0 = engine.nli_pad_stats();
    let host0 = HostStart::now(engine);
    let (meter1, tally1) = (
        Arc::new(UsageMeter::default()),
        Mutex::new(Tally::default()),
    );
    let run1 = RunConfig {
        meter: Some(&meter1),
        tally: Some(&tally1),
        ..*run
    };
    let t = Instant::now();
    let nli_results = run_all(engine, llm, jobs, &run1, nli_scorers)?;
    let nli_wall = t.elapsed().as_secs_f64();
    let nli_pairs = engine.nli_pairs_computed() - computed0;
    let nli_tokens = engine.nli_tokens_computed() - tokens0;
    let pad = engine.nli_pad_stats().since(&pad0);
    let host = host0.fields(engine, nli_pairs, &pad);
    let tally = *tally1.lock().unwrap_or_else(|e| e.into_inner());
    Ok(NliRun {
        results: nli_results,
        wall: nli_wall,
        pairs: nli_pairs,
        tokens: nli_tokens,
        pad,
        host,
        meter: meter1,
        tally,
    })
}

/// One run of `scorers` over every job and its wall time (s).
fn timed_run(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    run: &RunConfig,
    scorers: &[Scorer],
) -> Result<(Vec<ScoreResult>, f64), String> {
    let t = Instant::now();
    let results = run_all(engine, llm, jobs, run, scorers)?;
    Ok((results, t.elapsed().as_secs_f64()))
}

/// The NLI model alone on the run's pairs: (pairs/s, pairs); none with no NLI scorer or with
/// an LLM judge (no NLI model to measure alone).
fn raw_nli(
    engine: &Engine,
    jobs: &[Job],
    run: &RunConfig,
    nli_scorers: &[Scorer],
) -> Result<(Option<f64>, usize), String> {
    let matched_nli = nli_scorers
        .iter()
        .any(|s| s.family() == Family::MatchedUnit);
    let graph = nli_scorers.iter().any(|s| s.family() == Family::Graph);
    if nli_scorers.is_empty() || run.judge.is_some() {
        Ok((None, 0))
    } else {
        raw_ceiling(engine, jobs, matched_nli, graph, run.premise, run.raw_pairs)
    }
}

/// What the judge cost: a user sees it before pointing it at a paid endpoint.
fn judge_fields(
    j: &Judge,
    meter1: &UsageMeter,
    meter2: &UsageMeter,
    tally: Tally,
) -> Map<String, Value> {
    let (u1, u2) = (meter1.get(), meter2.get());
    fields_of(json!({
        "nli_llm": j.llm,
        "nli_prompt": j.prompt.as_str(),
        "judge_pairs": tally.pairs,
        "judge_from_logprobs": tally.from_logprobs,
        "judge_from_labels": tally.from_labels,
        "judge_unparsed": tally.unparsed,
        "llm_calls": u1.requests,
        "llm_prompt_tokens": u1.prompt_tokens,
        "llm_completion_tokens": u1.completion_tokens,
        "llm_cache_hits": u1.cache_hits,
        "cached_run_llm_calls": u2.requests,
    }))
}

/// Scores every job with `scorers`, `run.clients` jobs in flight at once. No scorers: one empty
/// result per job.
pub fn run_all(
    engine: &Engine,
    llm: &LlmService,
    jobs: &[Job],
    run: &RunConfig,
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
        for _ in 0..run.clients.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let score = || {
                    pipeline::score(
                        engine,
                        llm,
                        &job.response,
                        &job.samples,
                        &job.options(&names, run.premise, run.judge),
                    )
                };
                let (r, t) = judge::tallied(|| match run.meter {
                    Some(m) => metered(m, score),
                    None => score(),
                });
                if let Some(total) = run.tally {
                    total.lock().unwrap_or_else(|e| e.into_inner()).add(&t);
                }
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
