//! `uad_claims(response, samples_json[, options_json])` table: the claims of uncertainty-aware
//! decoding (uad.rs) and their fate.

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use super::uad::uad;
use crate::client::Client;
use crate::options::{AnswerArgs, SamplesFor};
use crate::tvf::{int, real, TableFn};

/// `uad_claims(response, samples_json[, options_json])`; a blank response → no rows.
pub struct UadClaims;

impl TableFn for UadClaims {
    const NAME: &'static str = "uad_claims";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, claim TEXT, score REAL, \
        kept INTEGER, threshold REAL, pre_confidence REAL, post_confidence REAL, \
        refined_response TEXT, origin TEXT, verified INTEGER, removed_sentences TEXT, \
        calibrated REAL, response HIDDEN, samples_json HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 12;
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
            return Ok(Vec::new());
        }
        let r = uad(client, Self::NAME, a)?;
        let removed = serde_json::to_string(&r.removed_sentences)
            .map_err(|e| format!("{}: {e}", Self::NAME))?;
        Ok(r.claims
            .into_iter()
            .map(|c| {
                vec![
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
                ]
            })
            .collect())
    }
}
