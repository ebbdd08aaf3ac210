//! `uq_fit_calibration(score, label[, method[, fitted_on]])` (aggregate),
//! `uq_adapt_calibration(score, model_json[, label])` (aggregate: the model adapted to the rows'
//! base rate, Saerens, Latinne & Decaestecker 2002, checked on the labelled rows when there are
//! some: `uq_core::calibrate::guard`), `uq_refit_calibration(score, label, prior_model[,
//! fitted_on])` (aggregate: the model refitted on a few labels with the old one as the prior,
//! `uq_core::calibrate::refit`) and `uq_calibrate(score, model_json)` (scalar):
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
use crate::client::{self, Client};
use crate::glue::{guard, sql_err};

const FIT: &str = "uq_fit_calibration";
const APPLY: &str = "uq_calibrate";
const ADAPT: &str = "uq_adapt_calibration";
const REFIT: &str = "uq_refit_calibration";

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
    /// The rows with a label too: their scores and labels (the guard's).
    labelled_scores: Vec<f64>,
    labels: Vec<bool>,
    /// `model_json` as given (the same in every row), and parsed.
    model: Option<(String, Calibration)>,
    /// Rows skipped for a NULL score.
    skipped: usize,
}

/// The model argument `arg` of aggregate `f` (the same in every row of a group), parsed into
/// `slot` on the first row.
fn same_model(
    f: &str,
    arg: &str,
    v: ValueRef<'_>,
    slot: &mut Option<(String, Calibration)>,
    verb: &str,
) -> Result<(), String> {
    let fix = "pass the JSON that uq_fit_calibration returns";
    let text = json_text(f, arg, v, fix)?;
    match slot {
        None => {
            let v = parse_json(f, arg, &text, fix)?;
            let m = Calibration::from_json(&v, arg).map_err(|e| format!("{f}: {e}"))?;
            *slot = Some((text, m));
        }
        Some((prev, _)) if *prev != text => {
            return Err(format!(
                "{f}: {arg} must be the same for every row of a group; {verb} each model in its \
                 own query or GROUP BY the model"
            ))
        }
        Some(_) => {}
    }
    Ok(())
}

/// `uq_adapt_calibration(score, model_json[, label])`: the model adapted to the rows' raw scores
/// (`uq_core::calibrate::adapt`), checked on the rows with a label (`guard`): refused when
/// adapting raises their ECE. The adaptation's note goes to `uq_debug()`.
pub struct AdaptCalibration;

impl AdaptCalibration {
    fn step(ctx: &Context<'_>, t: &mut Target) -> Result<(), String> {
        same_model(ADAPT, "model_json", ctx.get_raw(1), &mut t.model, "adapt")?;
        let l = if ctx.len() > 2 {
            label(ADAPT, "label", ctx.get_raw(2))?
        } else {
            None
        };
        match number(ADAPT, "score", ctx.get_raw(0))? {
            Some(s) => {
                t.scores.push(s);
                if let Some(l) = l {
                    t.labelled_scores.push(s);
                    t.labels.push(l);
                }
            }
            None => t.skipped += 1,
        }
        Ok(())
    }

    fn finish(t: Option<Target>) -> Result<String, String> {
        let t = t.unwrap_or_default();
        let Some((_, model)) = &t.model else {
            return Err(format!("{ADAPT}: {}", no_target_scores("score")));
        };
        let adapted = model
            .adapt_guarded(
                &t.scores,
                &t.labelled_scores,
                &t.labels,
                "model_json",
                "score",
            )
            .map_err(|e| format!("{ADAPT}: {e}"))?;
        if let Some(p) = &adapted.prior {
            client::set_last_notes(&[format!("{ADAPT}: {}", p.note())]);
        }
        Ok(adapted.to_json().to_string())
    }
}

/// One group's rows for [`RefitCalibration`].
#[derive(Default)]
pub struct Refit {
    scores: Vec<f64>,
    labels: Vec<bool>,
    prior: Option<(String, Calibration)>,
    fitted_on: Option<(String, FittedOn)>,
    skipped: usize,
}

/// `uq_refit_calibration(score, label, prior_model[, fitted_on])`: the Platt model
/// `prior_model` refitted on the rows' labelled units with itself as the prior (MAP,
/// `uq_core::calibrate::refit`). The new model's `fitted_on` is argument 4, else the prior's.
pub struct RefitCalibration;

impl RefitCalibration {
    fn step(ctx: &Context<'_>, r: &mut Refit) -> Result<(), String> {
        same_model(REFIT, "prior_model", ctx.get_raw(2), &mut r.prior, "refit")?;
        if ctx.len() > 3 {
            let text = json_text(REFIT, "fitted_on", ctx.get_raw(3), FITTED_ON_FIX)?;
            match &r.fitted_on {
                None => {
                    let v = parse_json(REFIT, "fitted_on", &text, FITTED_ON_FIX)?;
                    let f = FittedOn::from_json(&v, "fitted_on")
                        .map_err(|e| format!("{REFIT}: {e}"))?;
                    r.fitted_on = Some((text, f));
                }
                Some((prev, _)) if *prev != text => {
                    return Err(format!(
                        "{REFIT}: fitted_on must be the same for every row of a group (got \
                         {prev} and {text})"
                    ))
                }
                Some(_) => {}
            }
        }
        let s = number(REFIT, "score", ctx.get_raw(0))?;
        let l = label(REFIT, "label", ctx.get_raw(1))?;
        match (s, l) {
            (Some(s), Some(l)) => {
                r.scores.push(s);
                r.labels.push(l);
            }
            _ => r.skipped += 1,
        }
        Ok(())
    }

    fn finish(r: Option<Refit>) -> Result<String, String> {
        let r = r.unwrap_or_default();
        let skipped = if r.skipped > 0 {
            format!(" ({} rows had a NULL score or label)", r.skipped)
        } else {
            String::new()
        };
        let Some((_, prior)) = &r.prior else {
            return Err(format!(
                "{REFIT}: no target labels to refit on (an empty table): pass the scores and 0/1 \
                 labels of a few labelled units of the new answers"
            ));
        };
        let now = r.fitted_on.map(|(_, f)| f);
        if let (Some(then), Some(now)) = (
            prior.fitted_on.as_ref().and_then(|f| f.scorer.as_deref()),
            now.as_ref().and_then(|f| f.scorer.as_deref()),
        ) {
            if then != now {
                return Err(format!(
                    "{REFIT}: prior_model: the model was fitted for scorer '{then}' but these \
                     scores are '{now}' (fitted_on.scorer); refit from a model fitted on '{now}' \
                     scores, or pass the scores of '{then}'"
                ));
            }
        }
        let mut c = prior
            .refit(&r.scores, &r.labels, None, "prior_model", "score")
            .map_err(|e| format!("{REFIT}: {e}{skipped}"))?;
        let mut notes = Vec::new();
        if let (Some(then), Some(now)) = (&prior.fitted_on, &now) {
            let diff = then.differences(now);
            if !diff.is_empty() {
                notes.push(format!(
                    "{REFIT}: the prior model was fitted on scores made with another setting \
                     ({}); the refit starts from it all the same",
                    diff.join("; ")
                ));
            }
        }
        if let Some(f) = now {
            c.fitted_on = Some(f);
        }
        if let Some(rf) = &c.refit {
            notes.push(format!(
                "{REFIT}: refitted on {} target labels ({} labelled 1) from a prior fitted on \
                 {} units, {}",
                rf.target_labels,
                c.positives,
                rf.n,
                rf.describe_prior()
            ));
        }
        client::set_last_notes(&notes);
        Ok(c.to_json().to_string())
    }
}

impl Aggregate<Refit, String> for RefitCalibration {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Refit> {
        Ok(Refit::default())
    }

    fn step(&self, ctx: &mut Context<'_>, r: &mut Refit) -> rusqlite::Result<()> {
        guard(REFIT, || RefitCalibration::step(ctx, r).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, r: Option<Refit>) -> rusqlite::Result<String> {
        guard(REFIT, || RefitCalibration::finish(r).map_err(sql_err))
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
