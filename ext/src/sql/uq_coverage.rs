//! `uq_coverage(response[, options_json])`: which sentences of an answer its claims entail
//! (docs/reference.md, "Coverage"). One row per sentence: `idx`, `sentence`, `entailment`
//! (p_e with the claims joined as premise), `covered` (≥ option `coverage_threshold`) and
//! `claims` (the JSON array of the claims checked: option `units`, else the decomposition LLM's).

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::args;
use crate::client::Client;
use crate::options::Options;
use crate::tvf::{int, real, TableFn};

/// `uq_coverage(response[, options_json])`; NULL or blank response → no rows, no daemon call.
pub struct Coverage;

impl TableFn for Coverage {
    const NAME: &'static str = "uq_coverage";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, sentence TEXT, \
        entailment REAL, covered INTEGER, claims TEXT, response HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 5;
    const N_ARGS: usize = 2;
    const N_REQUIRED: usize = 1;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uq_coverage('Marie Curie was a physicist. She was born in Vienna.'[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = Coverage::NAME;
        let response = args::text(F, "response", a[0])?;
        let o = Options::from_arg(conn, F, Some(a[1]))?;
        let Some(response) = response.filter(|t| !t.trim().is_empty()) else {
            return Ok(Vec::new());
        };
        let r = client
            .coverage(response, o.map)
            .map_err(|e| o.used.error(F, e))?;
        let claims = serde_json::to_string(&r.claims).map_err(|e| format!("{F}: {e}"))?;
        Ok(r.sentences
            .into_iter()
            .map(|s| {
                vec![
                    int(s.idx),
                    Value::Text(s.sentence),
                    real(Some(s.entailment)),
                    Value::Integer(s.covered as i64),
                    Value::Text(claims.clone()),
                ]
            })
            .collect())
    }
}
