//! `uq_scorers()`: the scorer catalogue as a table, one row per scorer and granularity it works
//! at (`response` for the short-form scorers) (`scorer`, `family`, `granularity`, `consistency`, `cost`, `paper_name`), from
//! `uq_core::scorers`. Local: no daemon call.

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::client::Client;
use crate::tvf::TableFn;

pub struct Scorers;

impl TableFn for Scorers {
    const NAME: &'static str = "uq_scorers";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(scorer TEXT, family TEXT, granularity TEXT, consistency TEXT, cost TEXT, paper_name TEXT)";
    const N_OUT: usize = 6;
    const N_ARGS: usize = 0;
    const N_REQUIRED: usize = 0;
    const MISSING_ARGS: &'static str = "takes no arguments: SELECT * FROM uq_scorers()";
    const ESTIMATED_COST: f64 = 10.0;
    const LOCAL: bool = true;

    fn rows(
        _client: &Client,
        _conn: &Connection,
        _a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        let text = |s: &str| Value::Text(s.to_string());
        Ok(uq_core::scorers::ALL
            .iter()
            .flat_map(|&s| {
                s.granularity_names().into_iter().map(move |g| {
                    vec![
                        text(s.name()),
                        text(s.family().as_str()),
                        text(g),
                        text(s.consistency().as_str()),
                        text(s.cost_class()),
                        text(s.paper_name_at(g)),
                    ]
                })
            })
            .collect())
    }
}
