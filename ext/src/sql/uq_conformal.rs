//! `uq_fit_conformal(score, label, answer_key, alpha[, options_json])` (aggregate): the
//! conformal factuality threshold of UAD (Mohri & Hashimoto 2024), fitted in the extension with
//! `uq_core::calibrate::conformal` (nothing is re-derived here). One row per labelled claim:
//! its score, its label (1 supported, 0 not, NULL left out and counted), the key of the answer
//! it belongs to; `alpha` and `options_json` (`{"beta":…,"fitted_on":{…}}`) the same in every
//! row of a group.

use std::collections::HashMap;

use rusqlite::functions::{Aggregate, Context};
use rusqlite::types::ValueRef;
use serde_json::Value;
use uq_core::calibrate::conformal::Conformal;
use uq_core::calibrate::FittedOn;

use super::metric_aggregates::{describe, number, zero_one};
use super::uq_calibration::{json_text, parse_json, FITTED_ON_FIX};
use crate::args::same_in_group;
use crate::glue::{guard, sql_err};

const FIT: &str = "uq_fit_conformal";

const ALPHA_FIX: &str = "pass the miscoverage level, a number strictly between 0 and 1 (e.g. \
                         0.1 for P(all kept claims true) ≥ 0.9)";
const OPTIONS_FIX: &str = "pass a JSON object with keys beta (a number in [0, 1), the false \
                           share allowed among kept claims) and fitted_on (what the scores were \
                           made with), e.g. '{\"beta\":0.2}'";

/// One group's rows.
#[derive(Default)]
pub struct Rows {
    /// The labelled claims (score, true?) of each answer, in order of first appearance.
    answers: Vec<Vec<(f64, bool)>>,
    /// Answer key → index in `answers`.
    index: HashMap<String, usize>,
    /// Claims left out for a NULL label.
    null_labels: usize,
    /// `alpha` of the first row.
    alpha: Option<f64>,
    /// Argument 5 as given, and its beta and fitted_on.
    options: Option<(String, Option<f64>, Option<FittedOn>)>,
}

pub struct FitConformal;

/// 1 supported, 0 not, NULL left out.
fn label(v: ValueRef<'_>) -> Result<Option<bool>, String> {
    zero_one(v).ok_or_else(|| {
        format!(
            "{FIT}: label must be 1 (the claim is supported), 0 (it is not) or NULL (unlabelled: \
             left out and counted in null_labels), got {}",
            describe(v)
        )
    })
}

/// The answer key as a map key: equal SQL values give equal keys (1 and 1.0 alike).
fn answer_key(v: ValueRef<'_>) -> Result<String, String> {
    match v {
        ValueRef::Null => Err(format!(
            "{FIT}: answer_key is NULL: every claim needs the key of the answer it belongs to \
             (e.g. the answer's id), since the guarantee is per answer"
        )),
        ValueRef::Integer(i) => Ok(format!("n{i}")),
        ValueRef::Real(r) if r.fract() == 0.0 && r.abs() < 9.0e15 => Ok(format!("n{}", r as i64)),
        ValueRef::Real(r) => Ok(format!("r{r:?}")),
        ValueRef::Text(t) => Ok(format!("t{}", String::from_utf8_lossy(t))),
        ValueRef::Blob(b) => Ok(format!("b{b:?}")),
    }
}

fn alpha(v: ValueRef<'_>) -> Result<f64, String> {
    let a = match v {
        ValueRef::Null => return Err(format!("{FIT}: alpha is NULL; {ALPHA_FIX}")),
        ValueRef::Integer(i) => i as f64,
        ValueRef::Real(r) => r,
        other => {
            return Err(format!(
                "{FIT}: alpha must be a number, got {}; {ALPHA_FIX}",
                describe(other)
            ))
        }
    };
    if !(a > 0.0 && a < 1.0) {
        return Err(format!(
            "{FIT}: alpha must be strictly between 0 and 1, got {a}; {ALPHA_FIX}"
        ));
    }
    Ok(a)
}

/// `options_json`: `{"beta":…,"fitted_on":{…}}`, each optional.
fn options(text: &str) -> Result<(Option<f64>, Option<FittedOn>), String> {
    let v = parse_json(FIT, "options_json", text, OPTIONS_FIX)?;
    let o = v
        .as_object()
        .ok_or_else(|| format!("{FIT}: options_json must be a JSON object; {OPTIONS_FIX}"))?;
    if let Some(k) = o
        .keys()
        .find(|k| !["beta", "fitted_on"].contains(&k.as_str()))
    {
        return Err(format!(
            "{FIT}: options_json has unknown key {k:?}: its keys are beta, fitted_on"
        ));
    }
    let beta = match o.get("beta") {
        None | Some(Value::Null) => None,
        Some(b) => match b.as_f64() {
            Some(x) if (0.0..1.0).contains(&x) => Some(x),
            _ => {
                return Err(format!(
                    "{FIT}: options_json.beta must be a number from 0 up to, not including, 1 \
                     (the false share allowed among kept claims), got {b}"
                ))
            }
        },
    };
    let fitted_on = match o.get("fitted_on") {
        None | Some(Value::Null) => None,
        Some(f) => Some(
            FittedOn::from_json(f, "options_json.fitted_on")
                .map_err(|e| format!("{FIT}: {e}; {FITTED_ON_FIX}"))?,
        ),
    };
    Ok((beta, fitted_on))
}

impl FitConformal {
    fn step(ctx: &Context<'_>, rows: &mut Rows) -> Result<(), String> {
        same_in_group(FIT, "alpha", &mut rows.alpha, alpha(ctx.get_raw(3))?)?;
        if ctx.len() > 4 {
            let text = json_text(FIT, "options_json", ctx.get_raw(4), OPTIONS_FIX)?;
            match &rows.options {
                None => {
                    let (b, f) = options(&text)?;
                    rows.options = Some((text, b, f));
                }
                Some((prev, _, _)) if *prev != text => {
                    return Err(format!(
                        "{FIT}: options_json must be the same for every row of a group (got \
                         {prev} and {text})"
                    ))
                }
                Some(_) => {}
            }
        }
        let key = answer_key(ctx.get_raw(2))?;
        let s = number(FIT, "score", ctx.get_raw(0))?;
        let Some(l) = label(ctx.get_raw(1))? else {
            rows.null_labels += 1;
            return Ok(());
        };
        let n = rows.answers.len();
        let i = *rows.index.entry(key).or_insert(n);
        if i == n {
            rows.answers.push(Vec::new());
        }
        // A NULL score: a claim UAD never keeps (it cannot break the guarantee).
        rows.answers[i].push((s.unwrap_or(f64::NAN), l));
        Ok(())
    }

    fn finish(rows: Option<Rows>) -> Result<String, String> {
        let rows = rows.unwrap_or_default();
        let Some(alpha) = rows.alpha else {
            return Err(format!(
                "{FIT}: no rows: pass one row per labelled claim (score, label, answer_key, \
                 alpha)"
            ));
        };
        let (beta, fitted_on) = rows.options.map(|(_, b, f)| (b, f)).unwrap_or((None, None));
        let mut m = Conformal::fit(&rows.answers, alpha, beta, rows.null_labels)
            .map_err(|e| format!("{FIT}: {e}"))?;
        m.fitted_on = fitted_on;
        Ok(m.to_json().to_string())
    }
}

impl Aggregate<Rows, String> for FitConformal {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Rows> {
        Ok(Rows::default())
    }

    fn step(&self, ctx: &mut Context<'_>, rows: &mut Rows) -> rusqlite::Result<()> {
        guard(FIT, || FitConformal::step(ctx, rows).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, rows: Option<Rows>) -> rusqlite::Result<String> {
        guard(FIT, || FitConformal::finish(rows).map_err(sql_err))
    }
}
