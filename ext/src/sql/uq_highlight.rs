//! `uq_highlight(response, units_json[, options_json])`: the answer as HTML (or text with
//! markers) with each unit's span marked by its score (`uq_core::highlight`, computed here, no
//! daemon). As an aggregate over the rows of a unit-score query, one answer per group:
//! `uq_highlight(response, unit, score, scorer[, options_json])`, each unit's span found in the
//! response over the group's units. NULL response → NULL; an aggregate without rows → NULL.
//!
//! Option `legend` adds the key of the levels under the answer, in both forms and for every
//! answer that asks (deterministic: whatever order SQLite computes a `GROUP BY`'s groups in).
//! The key on its own, for a query that wants it once: the scalar form on an empty answer,
//! `uq_highlight('', '[]', '{"legend":true}')`.

use rusqlite::functions::{Aggregate, Context};
use rusqlite::types::{Value, ValueRef};
use serde_json::json;
use uq_core::highlight::{marks, render, Options};

use super::metric_aggregates::describe;
use crate::args;
use crate::client::Client;
use crate::glue::{guard, sql_err};

const F: &str = "uq_highlight";

const OPTIONS_FIX: &str =
    "pass a JSON object or NULL, e.g. '{\"doubtful\":0.5,\"unsupported\":0.2,\"format\":\"text\"}'";

/// Argument `options_json` (NULL: the defaults).
fn options(v: ValueRef<'_>) -> Result<Options, String> {
    let Some(text) = args::text(F, "options_json", v)? else {
        return Ok(Options::default());
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(o)) => Options::parse(&o).map_err(|e| format!("{F}: {e}")),
        Ok(_) => Err(format!(
            "{F}: options_json must be a JSON object; {OPTIONS_FIX}"
        )),
        Err(e) => Err(format!(
            "{F}: options_json is not valid JSON ({e}); {OPTIONS_FIX}"
        )),
    }
}

/// The scalar form.
pub fn uq_highlight(_: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    highlight(ctx).map_err(sql_err)
}

fn highlight(ctx: &Context<'_>) -> Result<Value, String> {
    let Some(response) = args::text(F, "response", ctx.get_raw(0))? else {
        return Ok(Value::Null);
    };
    let units = args::required_text(
        F,
        "units_json",
        ctx.get_raw(1),
        "a JSON array of units, e.g. '[{\"unit\":\"She was born in 1867.\",\"score\":0.2}]'",
    )?;
    let units: serde_json::Value = serde_json::from_str(&units).map_err(|e| {
        format!(
            "{F}: units_json is not valid JSON ({e}); pass a JSON array of units, e.g. \
             json_group_array(json_object('unit', unit, 'score', score))"
        )
    })?;
    let o = match ctx.len() {
        3 => options(ctx.get_raw(2))?,
        _ => Options::default(),
    };
    let m = marks(&response, &units).map_err(|e| format!("{F}: {e}"))?;
    Ok(Value::Text(render(&response, &m, &o)))
}

/// One group's rows of the aggregate form.
#[derive(Default)]
pub struct Rows {
    response: Option<String>,
    units: Vec<serde_json::Value>,
    options: Option<(String, Options)>,
}

pub struct HighlightRows;

impl HighlightRows {
    fn step(ctx: &Context<'_>, rows: &mut Rows) -> Result<(), String> {
        let response = args::required_text(F, "response", ctx.get_raw(0), "the answer text")?;
        match &rows.response {
            None => rows.response = Some(response),
            Some(r) if *r != response => {
                return Err(format!(
                    "{F}: response must be the same in every row of a group (one answer per \
                     group): GROUP BY the answer, e.g. … GROUP BY a.id"
                ))
            }
            Some(_) => {}
        }
        let unit = args::required_text(F, "unit", ctx.get_raw(1), "the unit's text")?;
        let score = match ctx.get_raw(2) {
            ValueRef::Null => None,
            ValueRef::Integer(i) => Some(i as f64),
            ValueRef::Real(r) => Some(r),
            other => {
                return Err(format!(
                    "{F}: score must be a number from 0 to 1 or NULL (not scored), got {}; \
                     pass the unit's confidence",
                    describe(other)
                ))
            }
        };
        if let Some(s) = score.filter(|s| !(0.0..=1.0).contains(s)) {
            return Err(format!(
                "{F}: score must be a number from 0 to 1 (a confidence), got {s}; map other \
                 scores into [0, 1] first (e.g. uq_calibrate)"
            ));
        }
        let scorer = match ctx.get_raw(3) {
            ValueRef::Null => None,
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            other => {
                return Err(format!(
                    "{F}: scorer must be TEXT or NULL, got {}; pass the scorer's name",
                    describe(other)
                ))
            }
        };
        if ctx.len() > 4 {
            let text = args::text(F, "options_json", ctx.get_raw(4))?.unwrap_or_default();
            match &rows.options {
                None => rows.options = Some((text, options(ctx.get_raw(4))?)),
                Some((prev, _)) if *prev != text => {
                    return Err(format!(
                        "{F}: options_json must be the same for every row of a group (got \
                         {prev} and {text})"
                    ))
                }
                Some(_) => {}
            }
        }
        rows.units
            .push(json!({"unit": unit, "score": score, "scorer": scorer}));
        Ok(())
    }

    fn finish(rows: Option<Rows>) -> Result<Value, String> {
        let Some(Rows {
            response: Some(response),
            units,
            options,
        }) = rows
        else {
            return Ok(Value::Null);
        };
        let o = options.map(|(_, o)| o).unwrap_or_default();
        let m =
            marks(&response, &serde_json::Value::Array(units)).map_err(|e| format!("{F}: {e}"))?;
        Ok(Value::Text(render(&response, &m, &o)))
    }
}

impl Aggregate<Rows, Value> for HighlightRows {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Rows> {
        Ok(Rows::default())
    }

    fn step(&self, ctx: &mut Context<'_>, rows: &mut Rows) -> rusqlite::Result<()> {
        guard(F, || HighlightRows::step(ctx, rows).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, rows: Option<Rows>) -> rusqlite::Result<Value> {
        guard(F, || HighlightRows::finish(rows).map_err(sql_err))
    }
}
