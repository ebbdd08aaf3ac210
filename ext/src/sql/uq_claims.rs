//! `uq_claims(text[, options_json])` table: the claims of a text, by the decomposition LLM
//! (docs/reference.md, "LLM functions"). Every LLM role option may name an LLM registered in
//! `temp.uq_llms` (options.rs).

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::args;
use crate::client::Client;
use crate::options::Options;
use crate::tvf::{int, span_values, TableFn};
use uq_core::decompose::spans::unit_spans;

/// `uq_claims(text[, options_json])`; NULL or blank text → no rows, no daemon call.
pub struct Claims;

impl TableFn for Claims {
    const NAME: &'static str = "uq_claims";
    const SCHEMA: &'static CStr =
        c"CREATE TABLE x(idx INTEGER, claim TEXT, start INTEGER, end INTEGER, \
          alignment REAL, text HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 5;
    const N_ARGS: usize = 2;
    const N_REQUIRED: usize = 1;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uq_claims('Marie Curie was a physicist born in Warsaw.'[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = Claims::NAME;
        let text = args::text(F, "text", a[0])?;
        let o = Options::from_arg(conn, F, Some(a[1]))?;
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Ok(Vec::new());
        };
        let result = client
            .claims(text.clone(), o.map)
            .map_err(|e| o.used.error(F, e))?;
        let spans = unit_spans(&text, &result.claims);
        Ok(result
            .claims
            .into_iter()
            .zip(spans)
            .enumerate()
            .map(|(i, (c, span))| {
                let mut row = vec![int(i), Value::Text(c)];
                row.extend(span_values(span));
                row
            })
            .collect())
    }
}
