//! Pieces shared by the benchmarks: scoring every item with a set of scorers through the full
//! pipeline (`clients` items in flight), the measured first run, the cached second run, the raw
//! model throughput and the summary line.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Map, Value};
use uq_core::decompose::split_sentences;
use uq_core::options::{parse_llm_config, NliPrompt};
use uq_core::protocol::ScoreResult;
use uq_core::score::premise::Premise;
use uq_core::scorers::{Family, Granularity, Scorer, ALL as ALL_SCORERS};

use crate::engine::{Engine, PadSnapshot};
use crate::judge::{self, Tally};
use crate::pipeline;
use crate::role_llms::{metered, LlmService, UsageMeter};
use crate::score::premise::premises;

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
    fn options(&self, scorers: &[&str], premise: Premise, judge: Option<&Judge>) -> Value {
        let mut o = json!({
            "units": self.units,
            "scorers": scorers,
            "num_samples": self.samples.len(),
            "granularity": self.granularity.as_str(),
            "premise": premise.to_json(),
        });
        if let Some(su) = &self.sample_units {
            o["sample_units"] = json!(su);
        }
        if let Some(cu) = &self.claim_union {
            o["claim_union"] = json!(cu);
        }
        if let Some(j) = judge {
            o["nli_llm"] = j.llm.clone();
            o["nli_prompt"] = json!(j.prompt.as_str());
        }
        o
    }
}

/// The NLI judge of a benchmark (`--nli-llm`, `--nli-prompt`): options `nli_llm`, `nli_prompt`.
#[derive(Debug, Clone)]
pub struct Judge {
    /// The LLM config object.
    pub llm: Value,
    pub prompt: NliPrompt,
}

impl Judge {
    /// From the flags: `--nli-llm` an LLM config object (JSON), `--nli-prompt` binary|ternary.
    pub fn from_flags(llm: Option<&str>, prompt: Option<&str>) -> Result<Option<Judge>, String> {
        let Some(text) = llm else {
            return match prompt {
                Some(_) => Err(
                    "--nli-prompt needs --nli-llm, the LLM that judges NLI pairs, \
                                e.g. --nli-llm '{\"backend\":\"local\"}'"
                        .into(),
                ),
                None => Ok(None),
            };
        };
        let llm: Value = serde_json::from_str(text).map_err(|e| {
            format!("--nli-llm must be an LLM config object (JSON), e.g. --nli-llm '{{\"backend\":\"local\"}}': {e}")
        })?;
        parse_llm_config("--nli-llm", &llm)?;
        let prompt = match prompt {
            None => NliPrompt::default(),
            Some(p) => NliPrompt::parse(&json!(p)).map_err(|e| format!("--nli-prompt: {e}"))?,
        };
        Ok(Some(Judge { llm, prompt }))
    }
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

/// Pairs of the raw-model measurement when `--raw-pairs` is not given.
pub const DEFAULT_RAW_PAIRS: usize = 1000;

/// The premise settings of `--premise` (comma-separated labels: whole, top3,
/// top2_embedding, …); `None`: the default at granularity `g`.
pub fn parse_premises(list: Option<&str>, g: Granularity) -> Result<Vec<Premise>, String> {
    let Some(list) = list else {
        return Ok(vec![uq_core::score::premise::default_premise(g)]);
    };
    let out: Vec<Premise> = list
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| Premise::from_label(p).map_err(|e| format!("--premise: {e}")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(
            "--premise is empty: give whole, topK or topK_embedding, e.g. whole,top3".into(),
        );
    }
    Ok(out)
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
    let nli = nli_run(engine, llm, jobs, run, &nli_scorers)?;
    let (nli_pairs, nli_wall) = (nli.pairs, nli.wall);
    eprintln!(
        "bench: NLI scorers, premise {}: {nli_pairs} pairs in {nli_wall:.1}s",
        run.premise.label()
    );
    let (embed_results, embed_wall) = timed_run(engine, llm, jobs, run, &embed_scorers)?;
    let (free_results, free_wall) = timed_run(engine, llm, jobs, run, &model_free)?;
    let first_wall = nli_wall + embed_wall + free_wall;
    let first: Vec<ScoreResult> = nli
        .results
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
    let batch = engine.nli_batch();
    let units: usize = jobs.iter().map(|j| j.units.len()).sum();
    let samples = jobs.iter().map(|j| j.samples.len()).max().unwrap_or(0);
    let summary = json!({
        "summary": true,
        "samples": samples,
        "units": units,
        "nli_pairs": nli_pairs,
        "nli_pairs_per_s": (nli_pairs > 0).then(|| round(nli_pairs as f64 / nli_wall)),
        "premise": run.premise.label(),
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
        "peak_rss_mb": round(peak_rss_mb()),
        "rss_mb": round(status_mb("VmRSS:")),
        "device": engine.info().device,
        "device_note": engine.info().device_note,
        "precision": engine.info().precision,
        "nli_file": engine.info().nli_file,
        "threads": engine.info().threads,
        "clients": run.clients,
        "max_batch": batch,
    });
    let Value::Object(mut summary) = summary else {
        unreachable!("json! of an object literal is an object")
    };
    if let Some(j) = run.judge {
        summary.extend(judge_fields(j, &nli.meter, &meter2, nli.tally));
    }
    Ok(Measured {
        results: first,
        summary,
    })
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
    let nli_results = run_all(engine, llm, jobs, &run1, &nli_scorers)?;
    let nli_wall = t.elapsed().as_secs_f64();
    let nli_pairs = engine.nli_pairs_computed() - computed0;
    let nli_tokens = engine.nli_tokens_computed() - tokens0;
    let pad = engine.nli_pad_stats().since(&pad0);
    let tally = *tally1.lock().unwrap_or_else(|e| e.into_inner());
    Ok(NliRun {
        results: nli_results,
        wall: nli_wall,
        pairs: nli_pairs,
        tokens: nli_tokens,
        pad,
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
    let extra = json!({
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
    });
    let Value::Object(extra) = extra else {
        unreachable!("json! of an object literal is an object")
    };
    extra
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

/// The distinct NLI pairs the scorers ask for: (sample, unit) for the unit-response family and,
/// when `matched`, (sample unit, unit) with each sample's units as given, else its sentences,
/// and, when `graph`, (response or sample, claim) for every claim of the union and the units;
/// whole texts reduced as `premise` selects.
fn all_nli_pairs(
    engine: &Engine,
    jobs: &[Job],
    matched: bool,
    graph: bool,
    premise: Premise,
) -> Result<Vec<(String, String)>, String> {
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    let mut add = |pair: (String, String)| {
        if seen.insert(pair.clone()) {
            pairs.push(pair);
        }
    };
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
        let samples: Vec<&str> = job.samples.iter().map(String::as_str).collect();
        let selected = premises(engine, premise, &samples, &job.units)?;
        for (u, row) in job.units.iter().zip(selected) {
            for p in row.into_iter().chain(sample_units.iter().cloned()) {
                add((p, u.clone()));
            }
        }
        if let (true, Some(union)) = (graph, &job.claim_union) {
            let answers: Vec<&str> = std::iter::once(job.response.as_str())
                .filter(|r| !r.trim().is_empty())
                .chain(samples.iter().copied())
                .collect();
            let claims: Vec<String> = union.iter().chain(&job.units).cloned().collect();
            let selected = premises(engine, premise, &answers, &claims)?;
            for (c, row) in claims.iter().zip(selected) {
                for p in row {
                    add((p, c.clone()));
                }
            }
        }
    }
    Ok(pairs)
}

/// At most `n` of `items`, evenly spread over them.
fn spread_sample<T>(items: Vec<T>, n: usize) -> Vec<T> {
    if items.len() <= n {
        return items;
    }
    let step = items.len() as f64 / n as f64;
    let mut want = (0..n).map(|i| (i as f64 * step) as usize).peekable();
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, x)| {
            if want.peek() == Some(&i) {
                want.next();
                Some(x)
            } else {
                None
            }
        })
        .collect()
}

/// The raw model's pairs/s on at most `n` of the jobs' distinct NLI pairs (evenly spread), at
/// the batch the batcher forms, and the number of pairs it ran; `(None, 0)` when `n` is 0.
pub(super) fn raw_ceiling(
    engine: &Engine,
    jobs: &[Job],
    matched: bool,
    graph: bool,
    premise: Premise,
    n: usize,
) -> Result<(Option<f64>, usize), String> {
    if n == 0 {
        return Ok((None, 0));
    }
    let pairs = spread_sample(all_nli_pairs(engine, jobs, matched, graph, premise)?, n);
    if pairs.is_empty() {
        return Ok((None, 0));
    }
    Ok((
        Some(raw_throughput(engine, &pairs, engine.nli_batch())?),
        pairs.len(),
    ))
}

/// Pairs per second of the ONNX model alone on length-sorted batches of `max_batch` (the batch
/// the batcher forms).
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

/// One line comparing the runs of several premise settings (each run's scorer lines and its
/// summary line last): per setting its NLI tokens per comparison, how many times fewer than the
/// first setting's (`token_cut`), pairs/s and padding, and per scorer its AUROC and the change
/// against the first setting's.
pub fn compare_premises(runs: &[Vec<Value>]) -> Value {
    let summary = |run: &[Value]| {
        run.iter()
            .find(|l| l["summary"] == json!(true))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let auroc = |run: &[Value], scorer: &str| {
        run.iter()
            .find(|l| l["scorer"] == json!(scorer))
            .and_then(|l| l["auroc"].as_f64())
    };
    let base = &runs[0];
    let base_tokens = summary(base)["tokens_per_comparison"].as_f64();
    let settings: Vec<Value> = runs
        .iter()
        .map(|run| {
            let s = summary(run);
            let mut per_scorer = Map::new();
            for l in run.iter().filter(|l| l["scorer"].is_string()) {
                let name = l["scorer"].as_str().unwrap_or_default();
                let a = l["auroc"].as_f64();
                let d = a.zip(auroc(base, name)).map(|(a, b)| round(a - b));
                per_scorer.insert(name.into(), json!({"auroc": a, "delta": d}));
            }
            let tokens = s["tokens_per_comparison"].as_f64();
            json!({
                "premise": s["premise"],
                "tokens_per_comparison": tokens,
                "token_cut": base_tokens.zip(tokens).map(|(b, t)| round(b / t)),
                "nli_pairs_per_s": s["nli_pairs_per_s"],
                "pad_ratio": s["pad_ratio"],
                "scorers": per_scorer,
            })
        })
        .collect();
    json!({
        "premise_comparison": true,
        "baseline": summary(base)["premise"],
        "settings": settings,
    })
}
