//! Option `sources` naming an FTS5 table (`{"fts": "docs", …}`; docs/reference.md, "Grounded
//! checking"), resolved on the caller's own connection before the request is sent: the daemon
//! cannot see this connection (an in-memory database, a temporary table, an uncommitted
//! transaction), so the extension runs `uq_core::retrieve`'s SQL here and sends the passages.

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{Map, Value};
use uq_core::retrieve::resolve_sources;

/// The caller's connection as the database sources are retrieved from.
pub struct Db<'a>(pub &'a Connection);

/// A passage cell as text: TEXT as is, a UTF-8 BLOB decoded, a number written out, NULL none.
fn cell_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(x) => Some(x.to_string()),
    }
}

uq_core::impl_source_db!(
    Db<'_>,
    cell = |r: &rusqlite::Row<'_>, i: usize| r.get_ref(i).map(cell_text)
);

/// Replaces `options.sources` by the passages retrieved from `conn` for `answer` when it names
/// an FTS5 table (see [`resolve_sources`]); the retrieval's notes (queries that found nothing).
/// Errors are `option sources…` messages, without the function name.
pub fn resolve(
    conn: &Connection,
    options: &mut Map<String, Value>,
    answer: &str,
) -> Result<Vec<String>, String> {
    resolve_sources(&mut Db(conn), options, answer)
}
