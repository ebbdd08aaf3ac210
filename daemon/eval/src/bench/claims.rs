//! `uqd bench claims`: the claims of the FActScore-Bio answers in the graph-uq data
//! (shared/data/README.md) scored with the claim-level scorers, evaluated against the GPT-4
//! grader's labels, plus uncertainty-aware decoding (UAD) accuracy per percentile threshold and
//! the same throughput, cache and memory figures as `bench selfcheck`. Prints one JSON object
//! per line.
//!
//! * Units: each record's `response_claims` (all of them, null-labelled ones included, as
//!   `options.units` at granularity "claim": no decomposition call). Samples: the first m of
//!   `samples`.
//! * Scorers: the NLI scorers of the unit-response family (entailment, noncontradiction,
//!   contrasted_entailment). The matched-claim scorers need each sample's claims, which the
//!   data does not have per sample; they run only with `--sample-units sentences`, which gives
//!   each sample's sentences (`split_sentences`) as its units: an APPROXIMATION of matched-claim
//!   scoring (a sentence often carries several claims), not the paper's matched-claim setup.
//!   Without it a `{"skipped": "matched_*", ...}` line says so.
//! * N-gram scorers (`unigram_avg`, `unigram_max`): the unigram model is fitted on the
//!   response and the first m samples; each claim is scored by its tokens.
//! * Graph scorers (betweenness, closeness, harmonic, Laplacian centrality, PageRank): each
//!   record's `all_claims` (field `claim`) is the `claim_union` (the data's union over the
//!   response and ALL its samples, even when `--samples` uses fewer); the graph's response
//!   nodes are the response and the first m samples, as uqlm.
//! * Metrics, per scorer, over the claims labelled 0 or 1 (nulls excluded): positive class =
//!   supported (label 1), score = confidence; AUROC, AUC-PR (average precision), ECE (10 equal
//!   bins), Brier.
//! * `--uad`: per scorer and percentile q in 10, 20, …, 90, the claims kept by UAD at the
//!   threshold `percentile(q)` (numpy linear) of THAT RESPONSE's claim scores (all its claims,
//!   unlabelled included), kept ⇔ score ≥ threshold (`uq_core::aggregate::uad_retained`, as the
//!   daemon's `uad` op and `uqd report`: tied claims stay together); `kept_claims` counts the kept labelled
//!   claims and `kept_accuracy` is the share of them that are supported. A `percentile: 0`
//!   baseline line gives the accuracy of all labelled claims (nothing filtered), as the paper's
//!   UAD figure. No reconstruction call is made: accuracy needs none.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::aggregate::uad_kept_accuracy;
use uq_core::decompose::split_sentences;
use uq_core::metrics::{auroc, average_precision, brier, ece};
use uq_core::protocol::ScoreResult;
use uq_core::scorers::{Family, Granularity, Scorer, ALL as ALL_SCORERS};

use super::lines::{compare_premises, load_jsonl, round};
use super::options::{select_scorers, Job};
use super::run::{measure, RunConfig, ScoringArgs};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

#[derive(Deserialize)]
pub(super) struct Record {
    response: String,
    samples: Vec<String>,
    response_claims: Vec<Claim>,
    /// The union of unique claims over the response and all the data's samples (field `claim`
    /// of each entry); the graph scorers' `claim_union`.
    #[serde(default)]
    all_claims: Vec<UnionClaim>,
}

#[derive(Deserialize)]
struct UnionClaim {
    claim: String,
}

#[derive(Deserialize)]
struct Claim {
    claim: String,
    /// 1 supported, 0 not supported, null excluded from the metrics.
    label: Option<u8>,
}

impl Claim {
    fn supported(&self) -> Option<bool> {
        self.label.map(|l| l == 1)
    }
}

/// What stands in for each sample's claims for the matched-claim scorers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SampleUnits {
    /// Each sample's sentences (`split_sentences`): an approximation.
    Sentences,
}

pub struct ClaimsArgs<'a> {
    /// The data file, samples, clients, premises, judge and scorers, as `bench selfcheck`'s.
    pub scoring: ScoringArgs<'a>,
    /// Matched-claim scorers run only when given.
    pub sample_units: Option<SampleUnits>,
    /// Print the UAD accuracy lines.
    pub uad: bool,
}

/// UAD percentile thresholds.
const UAD_PERCENTILES: [u32; 9] = [10, 20, 30, 40, 50, 60, 70, 80, 90];
/// ECE bins.
pub(super) const ECE_BINS: usize = 10;

/// Runs the benchmark and prints its JSON lines to stdout (progress goes to stderr).
/// No LLM call is made; `llm` is only passed through the pipeline.
pub fn claims(engine: &Engine, llm: &LlmService, args: &ClaimsArgs) -> Result<(), String> {
    let (units, uad, args) = (args.sample_units, args.uad, &args.scoring);
    let records = load(args.data, args.limit)?;
    check_samples(&records, args.samples)?;
    let scorers = select_scorers(claim_scorers(units.is_some()), args.scorers)?;
    if units.is_none() && args.scorers.is_none() {
        println!(
            "{}",
            json!({
                "skipped": "matched_*",
                "reason": "the data has no claims per sample; pass --sample-units sentences to \
                           score the matched-claim scorers with each sample's sentences standing \
                           in for its claims (an approximation)",
            })
        );
    }
    let jobs = jobs(&records, args.samples, units);
    let mut runs = Vec::new();
    for &premise in &args.premises {
        let run = RunConfig::new(args.clients, premise, args.raw_pairs, args.judge.as_ref());
        let mut measured = measure(engine, llm, &jobs, &run, &scorers)?;
        let mut lines = Vec::new();
        let per_scorer: Vec<(Scorer, Vec<Vec<f64>>)> = scorers
            .iter()
            .map(|&s| Ok((s, claim_scores(s, &records, &measured.results)?)))
            .collect::<Result<_, String>>()?;
        for (scorer, scores) in &per_scorer {
            let mut line = evaluate(*scorer, &records, scores);
            line["premise"] = json!(premise.label());
            println!("{line}");
            lines.push(line);
        }
        if uad {
            for (scorer, scores) in &per_scorer {
                for line in uad_lines(*scorer, &records, scores) {
                    println!("{line}");
                }
            }
        }
        let s = &mut measured.summary;
        s.insert("responses".into(), json!(records.len()));
        s.insert("granularity".into(), json!(Granularity::Claim.as_str()));
        s.insert(
            "sample_units".into(),
            json!(units.map(|SampleUnits::Sentences| "sentences")),
        );
        let summary = Value::Object(measured.summary);
        println!("{summary}");
        lines.push(summary);
        runs.push(lines);
    }
    if runs.len() > 1 {
        println!("{}", compare_premises(&runs));
    }
    Ok(())
}

/// The claim-level scorers the data can feed without an LLM: the NLI unit-response scorers and
/// the graph scorers, plus the matched-claim scorers when `matched` (sample units given).
pub(super) fn claim_scorers(matched: bool) -> Vec<Scorer> {
    ALL_SCORERS
        .iter()
        .copied()
        .filter(|s| match s.family() {
            Family::UnitResponse => s.needs_nli(),
            Family::MatchedUnit => matched,
            Family::Verbalized
            | Family::UnitQa
            | Family::ShortForm
            | Family::WhiteBox
            | Family::Ensemble
            | Family::Grounded => false,
            Family::Graph | Family::Ngram => true,
        })
        .collect()
}

/// One scoring job per record: its claims as units, its first `samples` samples, its
/// `all_claims` as the claim union.
pub(super) fn jobs(
    records: &[Record],
    samples: usize,
    sample_units: Option<SampleUnits>,
) -> Vec<Job> {
    records
        .iter()
        .map(|r| {
            let samples = r.samples[..samples].to_vec();
            let sample_units = sample_units
                .map(|SampleUnits::Sentences| samples.iter().map(|s| split_sentences(s)).collect());
            Job {
                response: r.response.clone(),
                units: r.response_claims.iter().map(|c| c.claim.clone()).collect(),
                samples,
                sample_units,
                claim_union: Some(r.all_claims.iter().map(|c| c.claim.clone()).collect()),
                granularity: Granularity::Claim,
            }
        })
        .collect()
}

/// The scores and labels of the claims labelled 0 or 1, in record then claim order (the same
/// order for every scorer); positive = supported.
/// NULL (NaN) scores are left out (see [`null_labelled`]).
pub(super) fn labelled(records: &[Record], scores: &[Vec<f64>]) -> (Vec<f64>, Vec<bool>) {
    let (mut conf, mut supported) = (Vec::new(), Vec::new());
    for (rec, sc) in records.iter().zip(scores) {
        for (c, &s) in rec.response_claims.iter().zip(sc) {
            if let Some(l) = c.supported() {
                if s.is_finite() {
                    conf.push(s);
                    supported.push(l);
                }
            }
        }
    }
    (conf, supported)
}

/// Per record, each claim's score (NaN when NULL) and label (`None` unlabelled), in claim
/// order: the answers of `bench conformal`.
pub(super) fn answer_claims(
    records: &[Record],
    scores: &[Vec<f64>],
) -> Vec<Vec<(f64, Option<bool>)>> {
    records
        .iter()
        .zip(scores)
        .map(|(rec, sc)| {
            rec.response_claims
                .iter()
                .zip(sc)
                .map(|(c, &s)| (s, c.supported()))
                .collect()
        })
        .collect()
}

/// Labelled claims whose score is NULL (NaN, e.g. every NLI pair unparsed by the LLM judge),
/// which [`labelled`] leaves out.
fn null_labelled(records: &[Record], scores: &[Vec<f64>]) -> usize {
    records
        .iter()
        .zip(scores)
        .flat_map(|(rec, sc)| rec.response_claims.iter().zip(sc))
        .filter(|(c, s)| c.supported().is_some() && !s.is_finite())
        .count()
}

/// Every record must have at least `m` samples.
pub(super) fn check_samples(records: &[Record], m: usize) -> Result<(), String> {
    match records.iter().find(|r| r.samples.len() < m) {
        Some(r) => Err(format!(
            "--samples {m} but a record has only {} samples",
            r.samples.len()
        )),
        None => Ok(()),
    }
}

/// Reads the records (the first `limit`) and checks their labels.
pub(super) fn load(path: &Path, limit: Option<usize>) -> Result<Vec<Record>, String> {
    let records: Vec<Record> = load_jsonl(path, limit)?;
    for (i, r) in records.iter().enumerate() {
        if let Some(c) = r
            .response_claims
            .iter()
            .find(|c| c.label.is_some_and(|l| l > 1))
        {
            return Err(format!(
                "{} record {}: claim label {:?} is not 0, 1 or null",
                path.display(),
                i + 1,
                c.label
            ));
        }
    }
    Ok(records)
}

/// `scorer`'s score of every claim, per record, checked against the record's claim count.
pub(super) fn claim_scores(
    scorer: Scorer,
    records: &[Record],
    results: &[ScoreResult],
) -> Result<Vec<Vec<f64>>, String> {
    records
        .iter()
        .zip(results)
        .enumerate()
        .map(|(i, (rec, res))| {
            let v = res.unit_scores(scorer.name());
            if v.len() != rec.response_claims.len() {
                return Err(format!(
                    "internal error: record {} has {} claims but {} {} scores",
                    i + 1,
                    rec.response_claims.len(),
                    v.len(),
                    scorer.name()
                ));
            }
            Ok(v)
        })
        .collect()
}

/// AUROC, AUC-PR, ECE and Brier over the labelled claims; positive class = supported.
fn evaluate(scorer: Scorer, records: &[Record], scores: &[Vec<f64>]) -> Value {
    let (conf, supported) = labelled(records, scores);
    json!({
        "scorer": scorer.name(),
        "family": scorer.family().as_str(),
        "auroc": auroc(&conf, &supported).map(round),
        "auprc": average_precision(&conf, &supported).map(round),
        "ece": ece(&conf, &supported, ECE_BINS).map(round),
        "brier": brier(&conf, &supported).map(round),
        "claims": conf.len(),
        "null_scores_dropped": null_labelled(records, scores),
    })
}

/// The UAD lines of one scorer: the unfiltered baseline (percentile 0), then one line per
/// percentile threshold, each threshold taken over one response's claim scores
/// (`uq_core::aggregate::uad_kept_accuracy`, as `uqd report`).
fn uad_lines(scorer: Scorer, records: &[Record], scores: &[Vec<f64>]) -> Vec<Value> {
    let labels: Vec<Vec<Option<bool>>> = records
        .iter()
        .map(|r| r.response_claims.iter().map(Claim::supported).collect())
        .collect();
    std::iter::once(0)
        .chain(UAD_PERCENTILES)
        .map(|q| {
            let pooled = scores
                .iter()
                .zip(&labels)
                .map(|(s, l)| (s.as_slice(), l.as_slice()));
            let (kept, accuracy) = uad_kept_accuracy(pooled, f64::from(q));
            json!({
                "uad": scorer.name(),
                "percentile": q,
                "kept_claims": kept,
                "kept_accuracy": accuracy.map(round),
            })
        })
        .collect()
}

/// One graph-uq file scored for the benches that fit on one file and test on another
/// (`calibration`, `conformal`): its name (the file stem less `graph_uq_factscore_`), its
/// records (the first `limit`) and each record's scores by the scorers.
pub(super) struct ScoredFile {
    pub name: String,
    pub records: Vec<Record>,
    pub results: Vec<ScoreResult>,
}

/// Scores one graph-uq file's records by `scorers` (the answer's claims as units, the first
/// `samples` samples, the claim default premise).
pub(super) fn score_file(
    engine: &Engine,
    llm: &LlmService,
    path: &Path,
    (samples, clients, limit): (usize, usize, Option<usize>),
    scorers: &[Scorer],
) -> Result<ScoredFile, String> {
    let records = load(path, limit)?;
    check_samples(&records, samples).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
        .trim_start_matches("graph_uq_factscore_")
        .to_string();
    eprintln!("bench: scoring {} ({} answers)", name, records.len());
    let run = RunConfig::new(
        clients,
        uq_core::score::premise::default_premise(Granularity::Claim),
        0,
        None,
    );
    let results = super::run::run_all(engine, llm, &jobs(&records, samples, None), &run, scorers)?;
    Ok(ScoredFile {
        name,
        records,
        results,
    })
}
