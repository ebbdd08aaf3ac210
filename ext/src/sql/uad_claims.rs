//! `uad_claims(response, samples_json[, options_json])` table: the claims of uncertainty-aware
//! decoding (uad.rs) and their fate, with each claim's place in the response (`start`, `end`,
//! `alignment`: `uq_core::decompose::spans`) and the run's `warnings` (a JSON array: kept
//! claims the reconstruction lost, claims by the bundled SmolLM2).

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use super::uad::uad;
use crate::client::{self, Client};
use crate::options::{AnswerArgs, SamplesFor};
use crate::tvf::{int, real, span_values, TableFn};
use uq_core::decompose::spans::unit_spans;

/// `uad_claims(response, samples_json[, options_json])`; a blank response → no rows.
pub struct UadClaims;

impl TableFn for UadClaims {
    const NAME: &'static str = "uad_claims";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, claim TEXT, score REAL, \
        kept INTEGER, threshold REAL, pre_confidence REAL, post_confidence REAL, \
        refined_response TEXT, origin TEXT, verified INTEGER, removed_sentences TEXT, \
        calibrated REAL, start INTEGER, end INTEGER, alignment REAL, warnings TEXT, response HIDDEN, samples_json HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 16;
    const N_ARGS: usize = 3;
    const N_REQUIRED: usize = 2;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uad_claims(response, samples_json[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        let a = AnswerArgs::parse(conn, Self::NAME, a, SamplesFor::Uad)?;
        if !a.has_units() {
            client::note_blank_response(Self::NAME, "no rows");
            return Ok(Vec::new());
        }
        let response = a.response.clone();
        let r = uad(client, Self::NAME, a)?;
        let texts: Vec<String> = r.claims.iter().map(|c| c.claim.clone()).collect();
        let spans = unit_spans(&response, &texts);
        let removed = serde_json::to_string(&r.removed_sentences)
            .map_err(|e| format!("{}: {e}", Self::NAME))?;
        let warnings =
            serde_json::to_string(&r.warnings).map_err(|e| format!("{}: {e}", Self::NAME))?;
        Ok(r.claims
            .into_iter()
            .zip(spans)
            .map(|(c, span)| {
                let mut row = vec![
                    int(c.idx),
                    Value::Text(c.claim),
                    real(Some(c.score)),
                    Value::Integer(c.kept as i64),
                    real(r.threshold),
                    real(r.pre_confidence),
                    real(r.post_confidence),
                    Value::Text(r.refined_response.clone()),
                    Value::Text(c.origin),
                    Value::Integer(r.verified as i64),
                    Value::Text(removed.clone()),
                    real(c.calibrated),
                ];
                row.extend(span_values(span));
                row.push(Value::Text(warnings.clone()));
                row
            })
            .collect())
    }
}
