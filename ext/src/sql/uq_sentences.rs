//! `uq_sentences(text)`: eponymous table-valued function, one row per sentence (`idx` from 0,
//! `sentence`, and its place in the text: `start`, `end` in characters from 0, end exclusive),
//! split locally by `uq_core::decompose::split_sentences`. NULL/empty → no rows.

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::args;
use crate::client::Client;
use crate::tvf::{span_values, TableFn};
use uq_core::decompose::spans::unit_spans;

pub struct Sentences;

impl TableFn for Sentences {
    const NAME: &'static str = "uq_sentences";
    const SCHEMA: &'static CStr =
        c"CREATE TABLE x(idx INTEGER, sentence TEXT, start INTEGER, end INTEGER, text HIDDEN)";
    const N_OUT: usize = 4;
    const N_ARGS: usize = 1;
    const N_REQUIRED: usize = 1;
    const MISSING_ARGS: &'static str =
        "pass the text, e.g. SELECT idx, sentence FROM uq_sentences('First. Second.')";
    const ESTIMATED_COST: f64 = 10.0;
    const LOCAL: bool = true;
    const ARGS_AS_TEXT: bool = true;

    fn rows(
        _client: &Client,
        _conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        let Some(text) = args::text(Self::NAME, "text", a[0])?.filter(|t| !t.is_empty()) else {
            return Ok(Vec::new());
        };
        let sentences = uq_core::decompose::split_sentences(&text);
        let spans = unit_spans(&text, &sentences);
        Ok(sentences
            .into_iter()
            .zip(spans)
            .enumerate()
            .map(|(i, (s, span))| {
                let [start, end, _] = span_values(span);
                vec![Value::Integer(i as i64), Value::Text(s), start, end]
            })
            .collect())
    }
}
