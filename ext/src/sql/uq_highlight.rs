//! `uq_highlight(response, units_json[, options_json])`: the answer as HTML (or text with
//! markers) with each unit's span marked by its score (`uq_core::highlight`, computed here, no
//! daemon). As an aggregate over the rows of a unit-score query, one answer per group:
//! `uq_highlight(response, unit, score, scorer[, options_json])`, each unit's span found in the
//! response over the group's units. NULL response → NULL; an aggregate without rows → NULL.
//!
//! Option `legend`: the scalar form adds the key under its answer; the aggregate under the first
//! answer of each run of the query only (not under every answer of a `GROUP BY`): the first
//! group's first row leaves a mark in the statement's auxiliary data ([`FIRST_GROUP_MARK`]),
//! which SQLite drops when the statement is reset or finalized.

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
    /// Whether this is the statement's first group (it carries the legend); `None` before its
    /// first row.
    first_group: Option<bool>,
}

/// The argument whose auxiliary data marks that a statement's first group has begun. SQLite
/// documents auxiliary data for scalar functions; for an aggregate it keeps what a step sets
/// until the statement is reset or finalized (`OP_AggStep` deletes none: SQLite 3.53's
/// vdbe.c, and Debian's 3.40 behaves the same in tests/tests/e2e/highlight_sql.rs) and keys it
/// by the call's place in the statement, so two `uq_highlight` calls of one query each have
/// their own first group. Should a SQLite drop it sooner, a later answer carries the legend
/// again: never none.
const FIRST_GROUP_MARK: i32 = 0;

/// The mark's type (the auxiliary data is typed).
struct FirstGroupSeen;

/// Whether the group whose first row `ctx` holds is the statement's first; marks it so.
fn first_group(ctx: &Context<'_>) -> bool {
    match ctx.get_aux::<FirstGroupSeen>(FIRST_GROUP_MARK) {
        Ok(Some(_)) => false,
        _ => {
            // Set last: SQLite may drop the data at once (docs of sqlite3_set_auxdata).
            let _ = ctx.set_aux(FIRST_GROUP_MARK, FirstGroupSeen);
            true
        }
    }
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
        if rows.first_group.is_none() {
            rows.first_group = Some(first_group(ctx));
        }
        Ok(())
    }

    fn finish(rows: Option<Rows>) -> Result<Value, String> {
        let Some(Rows {
            response: Some(response),
            units,
            options,
            first_group,
        }) = rows
        else {
            return Ok(Value::Null);
        };
        let mut o = options.map(|(_, o)| o).unwrap_or_default();
        // The legend once per query: under its first answer.
        o.legend &= first_group.unwrap_or(true);
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
