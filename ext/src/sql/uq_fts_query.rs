//! `uq_fts_query(text)`: a safe FTS5 query for `text` (`uq_core::retrieve::fts_query`): its
//! distinct content words, each quoted, joined by OR; NULL when it has none. The query the
//! extension searches an FTS5 table named by option `sources` with, for one's own
//! `… WHERE docs MATCH uq_fts_query(question) ORDER BY rank`.

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::retrieve::fts_query;

use crate::args;
use crate::client::Client;
use crate::glue::sql_err;

/// `uq_fts_query(text)` → `"word" OR "word" …`; NULL for NULL or a text without a content word.
pub fn uq_fts_query(_: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uq_fts_query";
    let text = args::text(F, "text", ctx.get_raw(0)).map_err(sql_err)?;
    Ok(text
        .and_then(|t| fts_query(&t))
        .map_or(Value::Null, Value::Text))
}
