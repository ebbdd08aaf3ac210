//! `uq_fit_ensemble(scores_json, label[, options_json])` (aggregate) and
//! `uq_ensemble(scores_json, weights_json)` (scalar): tuned ensembles of scorers, with
//! `uq_core::ensemble` (nothing is re-derived here). `scores_json` is one unit's scores, a JSON
//! object scorer → score (null when missing); the weights are a JSON object scorer → weight.
//! As `uq_fit_calibration`, a fit with nothing to fit on is an error, not NULL.

use std::sync::Arc;

use rusqlite::functions::{Aggregate, Context};
use rusqlite::types::ValueRef;
use serde_json::Value;
use uq_core::ensemble::{combine, scores_from_json, Objective, Training, Weights};

use super::metric_aggregates::{describe, label};
use crate::client::Client;
use crate::glue::{guard, sql_err};

const FIT: &str = "uq_fit_ensemble";
const APPLY: &str = "uq_ensemble";
const OPTIONS_EXAMPLE: &str = r#"'{"objective":"auroc"}'"#;

/// A JSON argument (TEXT); `None` for NULL.
fn json_arg(f: &str, arg: &str, v: ValueRef<'_>, fix: &str) -> Result<Option<Value>, String> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Text(t) => serde_json::from_str(&String::from_utf8_lossy(t))
            .map(Some)
            .map_err(|e| format!("{f}: {arg} is not valid JSON ({e}); {fix}")),
        other => Err(format!(
            "{f}: {arg} must be TEXT (JSON), got {}; {fix}",
            describe(other)
        )),
    }
}

/// `uq_fit_ensemble`'s options: `{"objective": "auroc" | "log_loss"}`, NULL for the default.
fn objective(v: ValueRef<'_>) -> Result<Objective, String> {
    let fix = format!("pass e.g. {OPTIONS_EXAMPLE} or NULL");
    let Some(o) = json_arg(FIT, "options_json", v, &fix)? else {
        return Ok(Objective::default());
    };
    let Value::Object(o) = o else {
        return Err(format!("{FIT}: options_json must be a JSON object; {fix}"));
    };
    if let Some(k) = o.keys().find(|k| *k != "objective") {
        return Err(format!(
            "{FIT}: unknown option {k:?} in options_json: the only option is objective \
             (\"auroc\" or \"log_loss\")"
        ));
    }
    match o.get("objective") {
        None | Some(Value::Null) => Ok(Objective::default()),
        Some(Value::String(s)) => {
            Objective::parse(s).map_err(|e| format!("{FIT}: option objective: {e}"))
        }
        Some(other) => Err(format!(
            "{FIT}: option objective must be a string, got {other}; {fix}"
        )),
    }
}

/// One group's units and options.
#[derive(Default)]
pub struct Rows {
    training: Training,
    objective: Option<Objective>,
    /// Rows skipped for a NULL scores_json or label.
    skipped: usize,
}

pub struct FitEnsemble;

impl FitEnsemble {
    fn step(ctx: &Context<'_>, rows: &mut Rows) -> Result<(), String> {
        if ctx.len() > 2 {
            let o = objective(ctx.get_raw(2))?;
            match rows.objective {
                None => rows.objective = Some(o),
                Some(prev) if prev != o => {
                    return Err(format!(
                        "{FIT}: options_json must be the same for every row of a group (objective \
                         {} and {})",
                        prev.as_str(),
                        o.as_str()
                    ))
                }
                Some(_) => {}
            }
        }
        let fix = "pass one unit's scores as a JSON object, e.g. json_object('entailment', 0.8, 'page_rank', 0.6)";
        let scores = json_arg(FIT, "scores_json", ctx.get_raw(0), fix)?
            .map(|v| scores_from_json(&v, "scores_json").map_err(|e| format!("{FIT}: {e}")))
            .transpose()?;
        let l = label(FIT, "label", ctx.get_raw(1))?;
        match (scores, l) {
            (Some(s), Some(l)) => rows
                .training
                .push(s, l, "scores_json")
                .map_err(|e| format!("{FIT}: {e}")),
            _ => {
                rows.skipped += 1;
                Ok(())
            }
        }
    }

    fn finish(rows: Option<Rows>) -> Result<String, String> {
        let rows = rows.unwrap_or_default();
        let skipped = if rows.skipped > 0 {
            format!(" ({} rows had a NULL scores_json or label)", rows.skipped)
        } else {
            String::new()
        };
        rows.training
            .fit(rows.objective.unwrap_or_default())
            .map(|w| w.to_json().to_string())
            .map_err(|e| format!("{FIT}: {e}{skipped}"))
    }
}

impl Aggregate<Rows, String> for FitEnsemble {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Rows> {
        Ok(Rows::default())
    }

    fn step(&self, ctx: &mut Context<'_>, rows: &mut Rows) -> rusqlite::Result<()> {
        guard(FIT, || FitEnsemble::step(ctx, rows).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, rows: Option<Rows>) -> rusqlite::Result<String> {
        guard(FIT, || FitEnsemble::finish(rows).map_err(sql_err))
    }
}

/// The weights of argument 1, parsed once per statement when constant (auxiliary data).
fn weights(ctx: &Context<'_>) -> Result<Arc<Weights>, String> {
    if let Ok(Some(w)) = ctx.get_aux::<Weights>(1) {
        return Ok(w);
    }
    let fix = "pass the JSON that uq_fit_ensemble returns";
    let v = json_arg(APPLY, "weights_json", ctx.get_raw(1), fix)?
        .ok_or_else(|| format!("{APPLY}: weights_json is NULL; {fix}"))?;
    let w = Weights::from_json(&v, "weights_json").map_err(|e| format!("{APPLY}: {e}"))?;
    ctx.set_aux(1, w).map_err(|e| format!("{APPLY}: {e}"))
}

/// `uq_ensemble(scores_json, weights_json)` → the weighted combination of one unit's scores.
pub fn uq_ensemble(_: &Client, ctx: &Context<'_>) -> rusqlite::Result<rusqlite::types::Value> {
    ensemble(ctx).map(Into::into).map_err(sql_err)
}

fn ensemble(ctx: &Context<'_>) -> Result<Option<f64>, String> {
    let w = weights(ctx)?;
    let fix = "pass one unit's scores as a JSON object, e.g. json_object('entailment', 0.8, 'page_rank', 0.6)";
    let Some(v) = json_arg(APPLY, "scores_json", ctx.get_raw(0), fix)? else {
        return Ok(None);
    };
    let scores = scores_from_json(&v, "scores_json").map_err(|e| format!("{APPLY}: {e}"))?;
    let mut s = Vec::with_capacity(w.names.len());
    for (name, &weight) in w.names.iter().zip(&w.values) {
        match scores.iter().find(|(k, _)| k == name) {
            Some((_, v)) => s.push(v.unwrap_or(f64::NAN)),
            None if weight == 0.0 => s.push(f64::NAN),
            None => {
                return Err(format!(
                    "{APPLY}: scores_json has no {name:?}, which weights_json weights {weight}; \
                     give its score (null when it is missing)"
                ))
            }
        }
    }
    Ok(combine(&s, &w.values))
}
