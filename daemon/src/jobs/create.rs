//! Creating a job from the command line (`uqd score DB TABLE`): the same checks as the
//! extension's `uq_score_table` (table in the main database, columns, options), on the daemon's
//! own connection.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::jobs::{self, parse_job};

use super::run::table_columns;
use crate::store;

/// Checks `table` and `options` and inserts a queued job; returns its id.
pub fn create_job(
    func: &str,
    conn: &mut Connection,
    table: &str,
    options: &Map<String, Value>,
) -> Result<i64, String> {
    let name = jobs::table_name(func, table)?;
    let exact: Option<String> = conn
        .query_row(jobs::TABLE_NAME, [&name], |r| r.get(0))
        .optional()
        .map_err(|e| format!("{func}: cannot read the schema: {e}"))?;
    let Some(table) = exact else {
        let mut st = conn
            .prepare(jobs::LIST_TABLES)
            .map_err(|e| format!("{func}: {e}"))?;
        let tables = st
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("{func}: {e}"))?;
        return Err(jobs::no_such_table(func, &name, false, &tables));
    };
    let columns = table_columns(conn, &table)?;
    let spec = parse_job(func, options, &table, &columns)?;
    store::migrate(conn)?;
    let total: i64 = conn
        .query_row(&jobs::count_rows_sql(&table, &spec.columns), [], |r| r.get(0))
        .map_err(|e| format!("{func}: cannot count the rows of {table:?}: {e}"))?;
    conn.execute(
        jobs::INSERT_JOB,
        params![
            table,
            serde_json::to_string(&spec.columns).unwrap_or_default(),
            Value::Object(options.clone()).to_string(),
            total
        ],
    )
    .map_err(|e| format!("{func}: cannot create the job: {e}"))?;
    Ok(conn.last_insert_rowid())
}
