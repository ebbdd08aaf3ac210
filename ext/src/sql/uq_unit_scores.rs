//! `uq_unit_scores(response, samples_json[, options_json])`: eponymous table-valued function
//! over the daemon's `score` op, one row per unit and scorer (`unit_idx`, `unit`, `scorer`,
//! `score`, `origin`: where the unit came from, `calibrated`: the score through option
//! `calibration`'s model of the scorer, `evidence`: for a grounded scorer, what decided its
//! score as JSON (`decided_by`, `verdict`, `passage`, `passage_id`, `start`, `end`,
//! `entailment`, `contradiction`; `uq_core::protocol::Evidence`), NULL for the others; `start`,
//! `end`, `alignment`: the unit's place in the response, `uq_core::decompose::spans`).
//! `samples_json` may be NULL or `'[]'` when no scorer compares samples (grounded scorers);
//! option `sources` naming an FTS5 table is searched on this connection first (options.rs). A
//! blank response (without caller-supplied `units`) → no rows, no daemon call.

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::client;
use crate::client::Client;
use crate::options::{AnswerArgs, SamplesFor};
use crate::tvf::{span_values, text_or_null, TableFn};
use uq_core::decompose::spans::unit_spans;

pub struct UnitScores;

impl TableFn for UnitScores {
    const NAME: &'static str = "uq_unit_scores";
    const SCHEMA: &'static CStr =
        c"CREATE TABLE x(unit_idx INTEGER, unit TEXT, scorer TEXT, score REAL, origin TEXT, \
          calibrated REAL, evidence TEXT, start INTEGER, end INTEGER, alignment REAL, \
          response HIDDEN, samples_json HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 10;
    const N_ARGS: usize = 3;
    const N_REQUIRED: usize = 2;
    const MISSING_ARGS: &'static str = "pass the response and the samples, e.g. \
        SELECT * FROM uq_unit_scores(response, samples_json[, options_json])";
    const ESTIMATED_COST: f64 = 1e6; // one daemon round trip
    const ESTIMATED_ROWS: i64 = 30;
    const ARGS_AS_TEXT: bool = true;

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = UnitScores::NAME;
        let a = AnswerArgs::parse(conn, F, a, SamplesFor::Score)?;
        if !a.has_units() {
            client::note_blank_response(F, "no rows");
            return Ok(Vec::new());
        }
        let response = a.response.clone();
        let o = a.options;
        let llm = o.score_uses_llm();
        let result = client
            .score(a.response, a.samples, o.map, llm)
            .map_err(|e| o.used.error(F, e))?;
        client::add_last_notes(&o.notes);
        let spans = unit_spans(&response, &result.units);
        result
            .scores
            .into_iter()
            .map(|s| {
                let evidence = match &s.evidence {
                    Some(e) => Value::Text(
                        serde_json::to_string(e).map_err(|e| format!("{F}: evidence: {e}"))?,
                    ),
                    None => Value::Null,
                };
                let unit = result.units.get(s.unit_idx).ok_or_else(|| {
                    format!(
                        "{F}: unexpected reply from uqd: unit_idx {} but {} units",
                        s.unit_idx,
                        result.units.len()
                    )
                })?;
                let mut row = vec![
                    Value::Integer(s.unit_idx as i64),
                    Value::Text(unit.clone()),
                    Value::Text(s.scorer),
                    Value::Real(s.score),
                    text_or_null(result.origins.get(s.unit_idx)),
                    s.calibrated.map_or(Value::Null, Value::Real),
                    evidence,
                ];
                row.extend(span_values(spans.get(s.unit_idx).copied().flatten()));
                Ok(row)
            })
            .collect()
    }
}
