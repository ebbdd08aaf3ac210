//! `uqd bench selfcheck`: every annotated SelfCheckGPT WikiBio sentence scored with every
//! sentence-level scorer, evaluated with the dataset's conventions (shared/data/README.md),
//! plus throughput, cache and memory figures. Prints one JSON object per line.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::metrics::{auroc, average_precision, pearson};
use uq_core::protocol::ScoreResult;
use uq_core::scorers::{Family, Granularity, Scorer, ALL as ALL_SCORERS};

use super::lines::{compare_premises, load_jsonl, pct, round};
use super::options::{select_scorers, Job};
use super::run::{measure, RunConfig, ScoringArgs};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

#[derive(Deserialize)]
struct Passage {
    /// The response under audit (the n-gram scorers' model is fitted on it and the samples).
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
    annotation: Vec<String>,
}

/// Runs the benchmark and prints its JSON lines to stdout (progress goes to stderr); returns
/// them too (for `compare_precisions`).
/// The LLM-judged scorers are left out (they need a question and an LLM, which the dataset run
/// does not have); `llm` is only passed through the pipeline.
pub fn selfcheck(
    engine: &Engine,
    llm: &LlmService,
    args: &ScoringArgs,
) -> Result<Vec<Value>, String> {
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
    let model_scorers: Vec<Scorer> = select_scorers(
        ALL_SCORERS
            .iter()
            .copied()
            // The ensemble needs weights fitted on labels (uq_fit_ensemble): `bench calibration`;
            // the grounded scorers need sources: `bench grounded`; the white-box ones the
            // generating LLM's tokens, which the data has not: `bench white-box`.
            .filter(|s| {
                !s.needs_llm()
                    && !matches!(
                        s.family(),
                        Family::Graph | Family::Ensemble | Family::Grounded | Family::WhiteBox
                    )
                    && !s.is_response_level()
            })
            .collect(),
        args.scorers,
    )?;
    // The pipeline splits the samples into sentences for the matched-unit scorers.
    let jobs: Vec<Job> = passages
        .iter()
        .map(|p| Job {
            response: p.gpt3_text.clone(),
            units: p.gpt3_sentences.clone(),
            samples: p.gpt3_text_samples[..args.samples].to_vec(),
            sample_units: None,
            claim_union: None,
            granularity: Granularity::Sentence,
        })
        .collect();
    let precision = engine.info().precision;
    let mut lines = Vec::new();
    let mut runs = Vec::new();
    for &premise in &args.premises {
        let run = RunConfig::new(args.clients, premise, args.raw_pairs, args.judge.as_ref());
        let mut measured = measure(engine, llm, &jobs, &run, &model_scorers)?;
        let mut run_lines = Vec::new();
        for &scorer in &model_scorers {
            let mut line = evaluate(scorer, &passages, &measured.results);
            line["precision"] = json!(precision);
            line["premise"] = json!(premise.label());
            println!("{line}");
            run_lines.push(line);
        }
        measured
            .summary
            .insert("passages".into(), json!(passages.len()));
        let summary = Value::Object(measured.summary);
        println!("{summary}");
        run_lines.push(summary);
        lines.extend(run_lines.iter().cloned());
        runs.push(run_lines);
    }
    if runs.len() > 1 {
        println!("{}", compare_premises(&runs));
    }
    Ok(lines)
}

/// One line comparing the runs of several precisions (each the lines `selfcheck` returned):
/// per precision its NLI pairs/s, raw ceiling and peak RSS, and per scorer its AUROC and the
/// change against the first run's.
pub fn compare_precisions(runs: &[Vec<Value>]) -> Value {
    let summary = |run: &[Value]| run.iter().find(|l| l["summary"] == json!(true)).cloned();
    let auroc = |run: &[Value], scorer: &str| {
        run.iter()
            .find(|l| l["scorer"] == json!(scorer))
            .and_then(|l| l["auroc"].as_f64())
    };
    let base = &runs[0];
    let base_name = summary(base)
        .map(|s| s["precision"].clone())
        .unwrap_or(Value::Null);
    let mut variants = Vec::new();
    for run in runs {
        let s = summary(run).unwrap_or(Value::Null);
        let mut per_scorer = serde_json::Map::new();
        for l in run.iter().filter(|l| l["scorer"].is_string()) {
            let name = l["scorer"].as_str().unwrap_or_default();
            let a = l["auroc"].as_f64();
            let d = a.zip(auroc(base, name)).map(|(a, b)| round(a - b));
            per_scorer.insert(name.into(), json!({"auroc": a, "delta": d}));
        }
        variants.push(json!({
            "precision": s["precision"],
            "nli_file": s["nli_file"],
            "attention_fused": s["attention_fused"],
            "nli_pairs_per_s": s["nli_pairs_per_s"],
            "raw_nli_pairs_per_s": s["raw_nli_pairs_per_s"],
            "path_vs_raw": s["path_vs_raw"],
            "rss_mb": s["rss_mb"],
            "scorers": per_scorer,
        }));
    }
    let max_loss = runs[1..]
        .iter()
        .flat_map(|run| {
            run.iter().filter_map(|l| {
                let name = l["scorer"].as_str()?;
                Some(auroc(base, name)? - l["auroc"].as_f64()?)
            })
        })
        .fold(f64::NEG_INFINITY, f64::max);
    json!({
        "precision_comparison": true,
        "baseline": base_name,
        "max_auroc_loss_vs_baseline": max_loss.is_finite().then(|| round(max_loss)),
        "variants": variants,
    })
}

fn load(path: &Path, limit: Option<usize>) -> Result<Vec<Passage>, String> {
    let passages: Vec<Passage> = load_jsonl(path, limit)?;
    for (i, p) in passages.iter().enumerate() {
        if p.annotation.len() != p.gpt3_sentences.len() {
            return Err(format!(
                "{} record {}: annotation and gpt3_sentences differ in length",
                path.display(),
                i + 1
            ));
        }
    }
    Ok(passages)
}

/// SelfCheckGPT conventions: non-factual = minor or major inaccurate; NonFact AUC-PR on
/// 1 − confidence, Factual AUC-PR on confidence, passage Pearson between the mean
/// 1 − confidence and the share of non-factual sentences. For the n-gram scorers also
/// `passage_pearson_neg_log`: the same Pearson with the passage mean of −ln(confidence), i.e. of
/// SelfCheckGPT's own score (mean −ln p or max −ln p of a sentence), as its passage score.
fn evaluate(scorer: Scorer, passages: &[Passage], results: &[ScoreResult]) -> Value {
    let (mut conf, mut factual) = (Vec::new(), Vec::new());
    let (mut passage_score, mut passage_share) = (Vec::new(), Vec::new());
    let mut passage_neg_log = Vec::new();
    let mut dropped = 0usize;
    for (p, r) in passages.iter().zip(results) {
        // NULL unit scores (NaN, e.g. every NLI pair of the unit unparsed by the LLM judge) are
        // left out, and counted in `null_scores_dropped`.
        let all = r.unit_scores(scorer.name());
        let (scores, labels): (Vec<f64>, Vec<bool>) = all
            .iter()
            .zip(&p.annotation)
            .filter(|(s, _)| s.is_finite())
            .map(|(&s, a)| (s, a == "accurate"))
            .unzip();
        dropped += all.len().min(p.annotation.len()) - scores.len();
        if scores.is_empty() {
            continue;
        }
        passage_score.push(scores.iter().map(|c| 1.0 - c).sum::<f64>() / scores.len() as f64);
        passage_neg_log.push(scores.iter().map(|c| -c.ln()).sum::<f64>() / scores.len() as f64);
        passage_share.push(labels.iter().filter(|&&f| !f).count() as f64 / labels.len() as f64);
        conf.extend(scores);
        factual.extend(labels);
    }
    let hallu: Vec<f64> = conf.iter().map(|c| 1.0 - c).collect();
    let nonfact: Vec<bool> = factual.iter().map(|f| !f).collect();
    let mut line = json!({
        "scorer": scorer.name(),
        "family": scorer.family().as_str(),
        "nonfact_auc_pr": average_precision(&hallu, &nonfact).map(pct),
        "factual_auc_pr": average_precision(&conf, &factual).map(pct),
        "auroc": auroc(&conf, &factual).map(round),
        "passage_pearson": pearson(&passage_score, &passage_share).map(pct),
        "units": conf.len(),
        "null_scores_dropped": dropped,
    });
    if scorer.family() == Family::Ngram {
        line["passage_pearson_neg_log"] = json!(pearson(&passage_neg_log, &passage_share).map(pct));
    }
    line
}
