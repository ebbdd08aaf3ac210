//! Option `sources` naming an FTS5 table, resolved on a rusqlite connection (a job's database,
//! the grounded bench's index): the SQL of `uq_core::retrieve` run here.

use rusqlite::{params, Connection};
use serde_json::Value;
use uq_core::retrieve::{resolve_sources, SourceDb, COLUMNS_SQL, TABLE_SQL};

/// A connection the passages are retrieved from.
pub struct Db<'a>(pub &'a Connection);

impl SourceDb for Db<'_> {
    fn table_sql(&mut self, name: &str) -> Result<Option<String>, String> {
        use rusqlite::OptionalExtension;
        self.0
            .query_row(TABLE_SQL, [name], |r| r.get::<_, Option<String>>(0))
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
        let rows = st
            .query_map(params![query, limit as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string())?;
        Ok(rows)
    }
}

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
