//! `uqd eval --json`: the evaluations as one JSON object (what `uqlite.evaluate` returns).

use serde_json::{json, Map, Value};
use uq_core::metrics::bootstrap::Interval;

use super::evaluation::{EvalArgs, Evaluation};

/// `{"db", "table", "labels", "resamples", "seed", "alpha", "written", "evaluations": [{"run_id",
/// "granularity", "units", "answers", "scorers": [{"scorer", "units", "answers", "figures":
/// {name: {"estimate", "low", "high"} or null}}], "recommended", "calibration", "conformal",
/// "notes", "matching"}]}`.
pub fn evaluations(args: &EvalArgs, evals: &[Evaluation]) -> Value {
    json!({
        "db": args.db.display().to_string(),
        "table": args.table,
        "labels": args.labels.map(|l| l.table.clone()),
        "resamples": args.resamples,
        "seed": args.seed,
        "alpha": args.alpha,
        "written": args.write,
        "evaluations": evals.iter().map(evaluation).collect::<Vec<_>>(),
    })
}

fn evaluation(e: &Evaluation) -> Value {
    let (units, answers) = e.size();
    let scorers: Vec<Value> = e
        .scorers
        .iter()
        .map(|s| {
            let figures: Map<String, Value> = s
                .figures
                .iter()
                .map(|(name, i)| (name.to_string(), i.as_ref().map_or(Value::Null, interval)))
                .collect();
            json!({
                "scorer": s.scorer,
                "units": s.set.labels.len(),
                "answers": s.set.clusters().answers(),
                "figures": figures,
            })
        })
        .collect();
    json!({
        "run_id": e.run_id,
        "granularity": e.granularity,
        "units": units,
        "answers": answers,
        "scorers": scorers,
        "recommended": e.recommended,
        "calibration": e.calibration.as_ref().map(|c| c.to_json()),
        "conformal": e.conformal.as_ref().map(|c| {
            let mut v = c.to_json();
            v["guarantee"] = json!(c.guarantee());
            v
        }),
        "notes": e.notes,
        "matching": e.matching.as_ref().map(|m| m.to_json()),
    })
}

fn interval(i: &Interval) -> Value {
    json!({"estimate": i.estimate, "low": i.low, "high": i.high})
}
