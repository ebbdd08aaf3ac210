//! Option `sources` naming an FTS5 table, resolved on a rusqlite connection (a job's database,
//! the grounded bench's index): the SQL of `uq_core::retrieve` run here.

use rusqlite::Connection;
use serde_json::Value;
use uq_core::retrieve::resolve_sources;

/// A connection the passages are retrieved from.
pub struct Db<'a>(pub &'a Connection);

uq_core::impl_source_db!(
    Db<'_>,
    cell = |r: &rusqlite::Row<'_>, i: usize| r.get::<_, Option<String>>(i)
);

/// Resolves `options.sources` when it names an FTS5 table of `conn` (see
/// [`resolve_sources`]); the retrieval's notes.
pub fn resolve(
    conn: &Connection,
    options: &mut Value,
    answer: &str,
) -> Result<Vec<String>, String> {
    match options.as_object_mut() {
        Some(map) => resolve_sources(&mut Db(conn), map, answer),
        None => Ok(Vec::new()),
    }
}
