//! `bench grounded` on `grounded_dev.jsonl`: run (a), the answer checked against its source per
//! unit, per task and overall beside the whole-source `uq_nli` baselines, each line with the
//! AUROC of each half of the records (even / odd record index).

use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::aggregate::{aggregate, Aggregation};
use uq_core::decompose::split_sentences;
use uq_core::metrics::auroc;
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

use super::super::lines::{load_jsonl, round};
use super::run::{run, GroundedArgs, Item};

/// A row of grounded_dev.jsonl (shared/data/README.md).
#[derive(Deserialize)]
pub(crate) struct GroundedRow {
    pub source: String,
    #[serde(default)]
    pub question: Option<String>,
    pub response: String,
    pub label: i64,
    pub task: String,
}

impl GroundedRow {
    /// What is checked against the source: a QA row's question and answer together (the answer
    /// alone is length-confounded: shared/data/README.md), a summary as it is.
    pub fn hypothesis(&self) -> String {
        match (&self.question, self.task.as_str()) {
            (Some(q), "qa") => format!("{q} {}", self.response),
            _ => self.response.clone(),
        }
    }

    /// The units scored: a QA row's hypothesis as one unit, a summary's sentences.
    pub fn units(&self) -> Vec<String> {
        if self.task == "qa" {
            vec![self.hypothesis()]
        } else {
            split_sentences(&self.response)
        }
    }
}

/// The tasks of the data, each with its own AUROC.
const TASKS: [&str; 2] = ["qa", "summarization"];

/// The rows and their labels (1: grounded).
struct Rows {
    rows: Vec<GroundedRow>,
    label: Vec<bool>,
}

/// Runs the baselines and run (a), printing a line each.
pub(super) fn grounded_dev(
    engine: &Engine,
    llm: &LlmService,
    args: &GroundedArgs,
) -> Result<(), String> {
    let rows: Vec<GroundedRow> = load_jsonl(args.data, args.limit)?;
    let label: Vec<bool> = rows.iter().map(|r| r.label == 1).collect();
    let rows = Rows { rows, label };
    baselines(engine, &rows)?;
    source_runs(engine, llm, &rows, args)
}

impl Rows {
    /// Prints the line of run `name`'s answer confidences `conf`: the AUROC over all rows, each
    /// half and each task, and the `extra` fields.
    fn report(&self, name: &str, conf: &[f64], extra: Value) {
        let sel = |f: &dyn Fn(usize) -> bool| -> Option<f64> {
            let (c, l): (Vec<f64>, Vec<bool>) = (0..self.rows.len())
                .filter(|&i| f(i) && conf[i].is_finite())
                .map(|i| (conf[i], self.label[i]))
                .unzip();
            auroc(&c, &l).map(round)
        };
        let mut l = json!({"bench": "grounded", "data": "grounded_dev", "run": name,
            "auroc_all": sel(&|_| true),
            "auroc_tune_half": sel(&|i| i % 2 == 0), "auroc_check_half": sel(&|i| i % 2 == 1)});
        for t in TASKS {
            l[format!("auroc_{t}")] = json!(sel(&|i| self.rows[i].task == t));
        }
        if let Value::Object(e) = extra {
            for (k, v) in e {
                l[k] = v;
            }
        }
        println!("{l}");
    }
}

/// Baseline: uq_nli(source, hypothesis), one windowed NLI call over the whole source; then the
/// same with the QA answer alone.
fn baselines(engine: &Engine, rows: &Rows) -> Result<(), String> {
    engine.clear_nli_cache();
    let (p0, t0) = (engine.nli_pairs_computed(), engine.nli_tokens_computed());
    let start = Instant::now();
    let pairs: Vec<(String, String)> = rows
        .rows
        .iter()
        .map(|r| (r.source.clone(), r.hypothesis()))
        .collect();
    let probs = engine.nli(&pairs)?;
    let base: Vec<f64> = probs.iter().map(|p| p.entailment).collect();
    rows.report(
        "baseline_uq_nli_whole_source",
        &base,
        json!({
        "nli_pairs": engine.nli_pairs_computed() - p0, "nli_tokens": engine.nli_tokens_computed() - t0,
        "wall_s": round(start.elapsed().as_secs_f64()), "llm_calls": 0}),
    );
    // The same with the QA answer alone (length-confounded: see shared/data/README.md).
    let pairs: Vec<(String, String)> = rows
        .rows
        .iter()
        .map(|r| (r.source.clone(), r.response.clone()))
        .collect();
    let alone: Vec<f64> = engine.nli(&pairs)?.iter().map(|p| p.entailment).collect();
    rows.report(
        "baseline_uq_nli_whole_source_answer_alone",
        &alone,
        json!({"llm_calls": 0}),
    );
    Ok(())
}

/// (a) per sentence of the response (QA: question + answer as one unit) against the source's
/// most relevant sentences; the answer's score is its least supported unit (min) or the
/// mean of its units.
fn source_runs(
    engine: &Engine,
    llm: &LlmService,
    rows: &Rows,
    args: &GroundedArgs,
) -> Result<(), String> {
    for setting in &args.source_premises {
        let premise = setting.to_json();
        let items: Vec<Item> = rows
            .rows
            .iter()
            .map(|r| {
                let units = r.units();
                Item {
                    response: r.response.clone(),
                    samples: vec![],
                    options: json!({"units": units, "scorers": ["grounded_entailment", "grounded_noncontradiction"],
                        "sources": r.source, "source_premise": premise}),
                }
            })
            .collect();
        let a = run(engine, llm, &items, args.clients)?;
        for s in ["grounded_entailment", "grounded_noncontradiction"] {
            for agg in [Aggregation::Min, Aggregation::Mean] {
                let conf: Vec<f64> = a
                    .results
                    .iter()
                    .map(|r| aggregate(&r.unit_scores(s), agg).unwrap_or(f64::NAN))
                    .collect();
                rows.report(
                    &format!("a_source_{s}"),
                    &conf,
                    json!({"scorer": s, "source_premise": premise, "setting": setting.label(),
                    "aggregation": agg.as_str(),
                    "nli_pairs": a.nli_pairs, "nli_tokens": a.nli_tokens,
                    "wall_s": round(a.wall_s), "llm_calls": 0}),
                );
            }
        }
    }
    Ok(())
}
