//! `uq_fit_calibration(score, label[, method])` (aggregate) and `uq_calibrate(score,
//! model_json)` (scalar): calibration models as JSON, fitted and applied in the extension with
//! `uq_core::calibrate` (nothing is re-derived here). Arguments follow the metric aggregates'
//! conventions (`metrics.rs`): a row with a NULL score or label is skipped, labels are 0/1,
//! scores finite numbers. Unlike the metrics, a fit with nothing to fit on is an error, not
//! NULL: a NULL model would travel silently into `uq_calibrate` or the options.

use std::sync::Arc;

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use uq_core::calibrate::{Calibration, Method};

use crate::metric_aggregates::{describe, label, number};
use crate::{guard, sql_err};

const FIT: &str = "uq_fit_calibration";
const APPLY: &str = "uq_calibrate";

/// One group's rows.
#[derive(Default)]
struct Rows {
    scores: Vec<f64>,
    labels: Vec<bool>,
    method: Option<Method>,
    /// Rows skipped for a NULL score or label.
    skipped: usize,
}

struct FitCalibration;

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
        Calibration::fit(&rows.scores, &rows.labels, method, "score")
            .map(|c| c.to_json().to_string())
            .map_err(|e| format!("{FIT}: {e}{skipped}"))
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

fn calibrate(ctx: &Context<'_>) -> Result<Option<f64>, String> {
    let m = model(ctx)?;
    let s = number(APPLY, "score", ctx.get_raw(0))?;
    Ok(s.map(|s| m.apply(s)))
}

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    db.create_aggregate_function(c"uq_fit_calibration", 2, flags, FitCalibration)?;
    db.create_aggregate_function(c"uq_fit_calibration", 3, flags, FitCalibration)?;
    db.create_scalar_function(c"uq_calibrate", 2, flags, |ctx| {
        guard(APPLY, || calibrate(ctx).map_err(sql_err))
    })?;
    Ok(())
}
