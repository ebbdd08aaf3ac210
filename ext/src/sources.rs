//! Option `sources` naming an FTS5 table (`{"fts": "docs", …}`; docs/reference.md, "Grounded
//! checking"), resolved on the caller's own connection before the request is sent: the daemon
//! cannot see this connection (an in-memory database, a temporary table, an uncommitted
//! transaction), so the extension runs `uq_core::retrieve`'s SQL here and sends the passages.

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::retrieve::{resolve_sources, SourceDb, COLUMNS_SQL, TABLE_SQL};

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

impl SourceDb for Db<'_> {
    fn table_sql(&mut self, name: &str) -> Result<Option<String>, String> {
        self.0
            .query_row(TABLE_SQL, [name], |r| r.get_ref(0).map(cell_text))
            .optional()
            .map(Option::flatten)
            .map_err(|e| e.to_string())
    }

    fn columns(&mut self, name: &str) -> Result<Vec<String>, String> {
        let mut st = self.0.prepare(COLUMNS_SQL).map_err(|e| e.to_string())?;
        let cols = st
            .query_map([name], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string())?;
        Ok(cols)
    }

    fn search(
        &mut self,
        sql: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(i64, Option<String>)>, String> {
        let mut st = self.0.prepare(sql).map_err(|e| e.to_string())?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st
            .query_map(params![query, limit], |r| {
                Ok((r.get::<_, i64>(0)?, cell_text(r.get_ref(1)?)))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string())?;
        Ok(rows)
    }
}

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
