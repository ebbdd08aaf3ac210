//! `uq_fit_calibration(score, label[, method[, fitted_on]])` (aggregate),
//! `uq_adapt_calibration(score, model_json)` (aggregate: the model adapted to the rows' base rate,
//! Saerens, Latinne & Decaestecker 2002) and `uq_calibrate(score, model_json)` (scalar):
//! calibration models as JSON, fitted, adapted and applied in the extension with
//! `uq_core::calibrate` (nothing is re-derived here). Arguments follow the metric aggregates'
//! conventions (`metrics.rs`): a row with a NULL score or label is skipped, labels are 0/1,
//! scores finite numbers. Unlike the metrics, a fit with nothing to fit on is an error, not
//! NULL: a NULL model would travel silently into `uq_calibrate` or the options.

use std::sync::Arc;

use rusqlite::functions::{Aggregate, Context};
use rusqlite::types::{Value, ValueRef};
use uq_core::calibrate::adapt::no_target_scores;
use uq_core::calibrate::{Calibration, FittedOn, Method};

use super::metric_aggregates::{describe, label, number};
use crate::client::Client;
use crate::glue::{guard, sql_err};

const FIT: &str = "uq_fit_calibration";
const APPLY: &str = "uq_calibrate";
const ADAPT: &str = "uq_adapt_calibration";

/// One group's rows.
#[derive(Default)]
pub struct Rows {
    scores: Vec<f64>,
    labels: Vec<bool>,
    method: Option<Method>,
    /// Argument 4 as given, and parsed.
    fitted_on: Option<(String, FittedOn)>,
    /// Rows skipped for a NULL score or label.
    skipped: usize,
}

pub struct FitCalibration;

/// `method`: 'platt' or 'isotonic'.
fn method(v: ValueRef<'_>) -> Result<Method, String> {
    match v {
        ValueRef::Text(t) => {
            Method::parse(&String::from_utf8_lossy(t)).map_err(|e| format!("{FIT}: method: {e}"))
        }
        other => Err(format!(
            "{FIT}: method must be TEXT 'platt' or 'isotonic', got {}; leave it out for 'platt'",
            describe(other)
        )),
    }
}

impl FitCalibration {
    fn step(ctx: &Context<'_>, rows: &mut Rows) -> Result<(), String> {
        if ctx.len() > 2 {
            let m = method(ctx.get_raw(2))?;
            match rows.method {
                None => rows.method = Some(m),
                Some(prev) if prev != m => {
                    return Err(format!(
                    "{FIT}: method must be the same for every row of a group (got '{}' and '{}')",
                    prev.as_str(),
                    m.as_str()
                ))
                }
                Some(_) => {}
            }
        }
        if ctx.len() > 3 {
            let text = json_text(FIT, "fitted_on", ctx.get_raw(3), FITTED_ON_FIX)?;
            match &rows.fitted_on {
                None => {
                    let v = parse_json(FIT, "fitted_on", &text, FITTED_ON_FIX)?;
                    let f =
                        FittedOn::from_json(&v, "fitted_on").map_err(|e| format!("{FIT}: {e}"))?;
                    rows.fitted_on = Some((text, f));
                }
                Some((prev, _)) if *prev != text => {
                    return Err(format!(
                        "{FIT}: fitted_on must be the same for every row of a group (got {prev} \
                         and {text})"
                    ))
                }
                Some(_) => {}
            }
        }
        let s = number(FIT, "score", ctx.get_raw(0))?;
        let l = label(FIT, "label", ctx.get_raw(1))?;
        match (s, l) {
            (Some(s), Some(l)) => {
                rows.scores.push(s);
                rows.labels.push(l);
            }
            _ => rows.skipped += 1,
        }
        Ok(())
    }

    fn finish(rows: Option<Rows>) -> Result<String, String> {
        let rows = rows.unwrap_or_default();
        let method = rows.method.unwrap_or_default();
        let skipped = if rows.skipped > 0 {
            format!(" ({} rows had a NULL score or label)", rows.skipped)
        } else {
            String::new()
        };
        let mut c = Calibration::fit(&rows.scores, &rows.labels, method, "score")
            .map_err(|e| format!("{FIT}: {e}{skipped}"))?;
        c.fitted_on = rows.fitted_on.map(|(_, f)| f);
        Ok(c.to_json().to_string())
    }
}

pub(super) const FITTED_ON_FIX: &str =
    "pass a JSON object of what the scores were made with, e.g. \
     '{\"scorer\":\"entailment\",\"num_samples\":5,\"premise\":\"whole\"}' (keys scorer, \
     nli_model, precision, premise, num_samples; uqd status names the NLI model and precision)";

/// A JSON argument's text (`arg` names it); `fix` says what to pass.
pub(super) fn json_text(f: &str, arg: &str, v: ValueRef<'_>, fix: &str) -> Result<String, String> {
    match v {
        ValueRef::Text(t) => Ok(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Null => Err(format!("{f}: {arg} is NULL; {fix}")),
        other => Err(format!(
            "{f}: {arg} must be TEXT (JSON), got {}; {fix}",
            describe(other)
        )),
    }
}

pub(super) fn parse_json(
    f: &str,
    arg: &str,
    text: &str,
    fix: &str,
) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{f}: {arg} is not valid JSON ({e}); {fix}"))
}

/// One group's target rows for [`AdaptCalibration`].
#[derive(Default)]
pub struct Target {
    scores: Vec<f64>,
    /// `model_json` as given (the same in every row), and parsed.
    model: Option<(String, Calibration)>,
    /// Rows skipped for a NULL score.
    skipped: usize,
}

/// `uq_adapt_calibration(score, model_json)`: the model adapted to the rows' raw scores
/// (`uq_core::calibrate::adapt`).
pub struct AdaptCalibration;

impl AdaptCalibration {
    fn step(ctx: &Context<'_>, t: &mut Target) -> Result<(), String> {
        let fix = "pass the JSON that uq_fit_calibration returns";
        let text = json_text(ADAPT, "model_json", ctx.get_raw(1), fix)?;
        match &t.model {
            None => {
                let v = parse_json(ADAPT, "model_json", &text, fix)?;
                let m = Calibration::from_json(&v, "model_json")
                    .map_err(|e| format!("{ADAPT}: {e}"))?;
                t.model = Some((text, m));
            }
            Some((prev, _)) if *prev != text => {
                return Err(format!(
                    "{ADAPT}: model_json must be the same for every row of a group; adapt each \
                     model in its own query or GROUP BY the model"
                ))
            }
            Some(_) => {}
        }
        match number(ADAPT, "score", ctx.get_raw(0))? {
            Some(s) => t.scores.push(s),
            None => t.skipped += 1,
        }
        Ok(())
    }

    fn finish(t: Option<Target>) -> Result<String, String> {
        let t = t.unwrap_or_default();
        let Some((_, model)) = &t.model else {
            return Err(format!("{ADAPT}: {}", no_target_scores("score")));
        };
        model
            .adapt(&t.scores, "model_json", "score")
            .map(|c| c.to_json().to_string())
            .map_err(|e| format!("{ADAPT}: {e}"))
    }
}

impl Aggregate<Target, String> for AdaptCalibration {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Target> {
        Ok(Target::default())
    }

    fn step(&self, ctx: &mut Context<'_>, t: &mut Target) -> rusqlite::Result<()> {
        guard(ADAPT, || AdaptCalibration::step(ctx, t).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, t: Option<Target>) -> rusqlite::Result<String> {
        guard(ADAPT, || AdaptCalibration::finish(t).map_err(sql_err))
    }
}

impl Aggregate<Rows, String> for FitCalibration {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Rows> {
        Ok(Rows::default())
    }

    fn step(&self, ctx: &mut Context<'_>, rows: &mut Rows) -> rusqlite::Result<()> {
        guard(FIT, || FitCalibration::step(ctx, rows).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, rows: Option<Rows>) -> rusqlite::Result<String> {
        guard(FIT, || FitCalibration::finish(rows).map_err(sql_err))
    }
}

/// The model of argument 1, parsed once per statement when it is a constant (SQLite keeps the
/// parsed model as the argument's auxiliary data).
fn model(ctx: &Context<'_>) -> Result<Arc<Calibration>, String> {
    if let Ok(Some(m)) = ctx.get_aux::<Calibration>(1) {
        return Ok(m);
    }
    let fix = "pass the JSON that uq_fit_calibration returns";
    let text = match ctx.get_raw(1) {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Null => return Err(format!("{APPLY}: model_json is NULL; {fix}")),
        other => {
            return Err(format!(
                "{APPLY}: model_json must be TEXT (JSON), got {}; {fix}",
                describe(other)
            ))
        }
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{APPLY}: model_json is not valid JSON ({e}); {fix}"))?;
    let m = Calibration::from_json(&v, "model_json").map_err(|e| format!("{APPLY}: {e}"))?;
    ctx.set_aux(1, m).map_err(|e| format!("{APPLY}: {e}"))
}

/// `uq_calibrate(score, model_json)` → the calibrated score.
pub fn uq_calibrate(_: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    calibrate(ctx).map(Value::from).map_err(sql_err)
}

fn calibrate(ctx: &Context<'_>) -> Result<Option<f64>, String> {
    let m = model(ctx)?;
    let s = number(APPLY, "score", ctx.get_raw(0))?;
    Ok(s.map(|s| m.apply(s)))
}
