//! `uq_init()`: applies the uqlite schema (sql/migrations) to the main database; returns its
//! version. `uq_score_table` applies it too.

use rusqlite::functions::Context;
use rusqlite::types::Value;
use rusqlite::Connection;
use uq_core::schema::{APPLIED_VERSION, BOOTSTRAP, MIGRATIONS, RECORD};

use crate::client::Client;
use crate::glue::sql_err;

pub fn uq_init(_: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    migrate(&conn).map(Value::Integer)
}

fn sql(what: &str) -> impl Fn(rusqlite::Error) -> rusqlite::Error + '_ {
    move |e| sql_err(format!("{what}: {e}"))
}

/// Applies pending migrations in a savepoint (which works inside and outside a transaction) and
/// switches the database to WAL when it can (the daemon writes while readers read). Returns the
/// schema version.
pub fn migrate(conn: &Connection) -> rusqlite::Result<i64> {
    let f = sql("uqlite schema");
    conn.execute_batch(BOOTSTRAP).map_err(&f)?;
    let applied: i64 = conn
        .query_row(APPLIED_VERSION, [], |r| r.get(0))
        .map_err(&f)?;
    let pending: Vec<_> = MIGRATIONS.iter().filter(|m| m.version > applied).collect();
    if !pending.is_empty() {
        conn.execute_batch("SAVEPOINT uq_migrate").map_err(&f)?;
        let r = pending.iter().try_for_each(|m| {
            conn.execute_batch(m.sql)?;
            conn.execute(RECORD, rusqlite::params![m.version, m.name])
                .map(|_| ())
        });
        match r {
            Ok(()) => conn.execute_batch("RELEASE uq_migrate").map_err(&f)?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK TO uq_migrate; RELEASE uq_migrate");
                return Err(sql_err(format!("cannot apply the uqlite schema: {e}")));
            }
        }
    }
    // Best effort: inside a transaction the mode cannot change; the daemon retries before writing.
    let _ = conn.query_row("PRAGMA main.journal_mode=WAL", [], |r| {
        r.get::<_, String>(0)
    });
    conn.query_row(APPLIED_VERSION, [], |r| r.get(0))
        .map_err(&f)
}
