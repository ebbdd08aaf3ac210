//! Tables of scores (docs/design.md, "Jobs"): the schema and background jobs.
//! * `uq_init()`: applies the uqlite schema (sql/migrations) to the main database; returns its
//!   version.
//! * `uq_score_table(table[, options_json])`: checks the table and the options, creates a job row
//!   in `uq_job` and has the daemon run it in the background; returns the job id.
//! * `uq_wait(job_id[, timeout_s])`: blocks until the job ends (or `timeout_s`, default 3600,
//!   passes) and returns its status; resumes a job that no daemon runs (after a kill or reboot).
//! * `uq_cancel(job_id)`: stops a job after its chunk in flight; committed rows stay.
//! * `uq_grade(unit, reference[, options_json])`, `uq_objectivity(claim[, options_json])`: the
//!   paper's FactScore grading and objectivity labels (1, 0, or NULL for an unreadable reply).
//!
//! Progress is the view `uq_jobs`. The daemon writes from its own connection, so results are
//! visible to statements that start after they are committed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::jobs::{self, parse_job, JOB_KEYS};
use uq_core::protocol::{GradeResult, JobInfo, Request};
use uq_core::schema::{APPLIED_VERSION, BOOTSTRAP, MIGRATIONS, RECORD};

use crate::client::Client;
use crate::llms::Options;
use crate::{args, guard, sql_err};

/// How long `uq_wait` waits by default, in seconds.
pub const DEFAULT_WAIT_S: f64 = 3600.0;
/// How long the daemon may fail to see a job row before `uq_wait` says why.
const INVISIBLE_LIMIT: Duration = Duration::from_secs(10);

pub fn register(db: &Connection, client: &Arc<Client>) -> rusqlite::Result<()> {
    db.create_scalar_function(c"uq_init", 0, FunctionFlags::SQLITE_UTF8, |ctx| {
        guard("uq_init", || {
            let conn = unsafe { ctx.get_connection() }?;
            migrate(&conn)
        })
    })?;
    for n in [1, 2] {
        let c = Arc::clone(client);
        db.create_scalar_function(c"uq_score_table", n, FunctionFlags::SQLITE_UTF8, move |ctx| {
            guard("uq_score_table", || score_table(&c, ctx))
        })?;
        let c = Arc::clone(client);
        db.create_scalar_function(c"uq_wait", n, FunctionFlags::SQLITE_UTF8, move |ctx| {
            guard("uq_wait", || wait(&c, ctx))
        })?;
        let c = Arc::clone(client);
        db.create_scalar_function(c"uq_objectivity", n, FunctionFlags::SQLITE_UTF8, move |ctx| {
            guard("uq_objectivity", || objectivity(&c, ctx))
        })?;
    }
    let c = Arc::clone(client);
    db.create_scalar_function(c"uq_cancel", 1, FunctionFlags::SQLITE_UTF8, move |ctx| {
        guard("uq_cancel", || cancel(&c, ctx))
    })?;
    for n in [2, 3] {
        let c = Arc::clone(client);
        db.create_scalar_function(c"uq_grade", n, FunctionFlags::SQLITE_UTF8, move |ctx| {
            guard("uq_grade", || grade(&c, ctx))
        })?;
    }
    Ok(())
}

fn sql<T>(what: &str) -> impl Fn(rusqlite::Error) -> rusqlite::Error + '_ {
    move |e| sql_err(format!("{what}: {e}"))
}

/// Applies pending migrations in a savepoint (which works inside and outside a transaction) and
/// switches the database to WAL when it can (the daemon writes while readers read). Returns the
/// schema version.
pub fn migrate(conn: &Connection) -> rusqlite::Result<i64> {
    let f = sql::<()>("uqlite schema");
    conn.execute_batch(BOOTSTRAP).map_err(&f)?;
    let applied: i64 = conn.query_row(APPLIED_VERSION, [], |r| r.get(0)).map_err(&f)?;
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
    let _ = conn.query_row("PRAGMA main.journal_mode=WAL", [], |r| r.get::<_, String>(0));
    conn.query_row(APPLIED_VERSION, [], |r| r.get(0)).map_err(&f)
}

/// The main database's file, which the daemon opens.
fn db_path(func: &str, conn: &Connection) -> Result<String, String> {
    match conn.path() {
        Some(p) if !p.is_empty() => Ok(p.to_string()),
        _ => Err(format!(
            "{func}: this database has no file (it is in-memory or temporary): jobs write their results into the database file, so open one (sqlite3 results.db, or ATTACH is not enough: the main database must be a file)"
        )),
    }
}

/// The exact name of table `name` in main (case-insensitive match), or an error naming the
/// tables there.
fn find_table(func: &str, conn: &Connection, name: &str) -> Result<String, String> {
    let found: Option<String> = conn
        .query_row(jobs::TABLE_NAME, [name], |r| r.get(0))
        .optional()
        .map_err(|e| format!("{func}: cannot read the schema: {e}"))?;
    if let Some(t) = found {
        return Ok(t);
    }
    let temp: bool = conn
        .query_row(
            "SELECT count(*) FROM temp.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .unwrap_or(false);
    let mut st = conn
        .prepare(jobs::LIST_TABLES)
        .map_err(|e| format!("{func}: {e}"))?;
    let tables = st
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{func}: {e}"))?;
    Err(jobs::no_such_table(func, name, temp, &tables))
}

fn score_table(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<i64> {
    const F: &str = "uq_score_table";
    let name = args::required_text(F, "table", ctx.get_raw(0), "the name of the table of answers")
        .map_err(sql_err)?;
    let name = jobs::table_name(F, &name).map_err(sql_err)?;
    let all = args::options(F, (ctx.len() > 1).then(|| ctx.get_raw(1))).map_err(sql_err)?;
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let db = db_path(F, &conn).map_err(sql_err)?;
    let table = find_table(F, &conn, &name).map_err(sql_err)?;
    let mut cols_st = conn.prepare(jobs::TABLE_COLUMNS).map_err(sql::<()>(F))?;
    let columns = cols_st
        .query_map([&table], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql::<()>(F))?;

    // Registered LLM names are resolved here: the daemon cannot see temp.uq_llms.
    let (job_keys, scoring): (Map<String, Value>, Map<String, Value>) = all
        .into_iter()
        .partition(|(k, _)| JOB_KEYS.contains(&k.as_str()));
    let resolved = Options::new(&conn, F, scoring).map_err(sql_err)?;
    let mut options = resolved.map;
    options.extend(job_keys);
    let spec = parse_job(F, &options, &table, &columns).map_err(sql_err)?;

    migrate(&conn)?;
    let total: i64 = conn
        .query_row(&jobs::count_rows_sql(&table, &spec.columns), [], |r| r.get(0))
        .map_err(sql::<()>(F))?;
    conn.execute(
        jobs::INSERT_JOB,
        rusqlite::params![
            table,
            serde_json::to_string(&spec.columns).unwrap_or_default(),
            Value::Object(options).to_string(),
            total
        ],
    )
    .map_err(sql::<()>(F))?;
    let job_id = conn.last_insert_rowid();
    client
        .call(&Request::JobStart { db, job_id }, false)
        .map_err(|e| {
            sql_err(format!(
                "{F}: job {job_id} is queued but the daemon cannot start it: {e}; once the daemon runs, SELECT uq_wait({job_id}) starts it"
            ))
        })?;
    Ok(job_id)
}

/// A job id argument: an INTEGER ≥ 1 naming a row of uq_job.
fn job_id(func: &str, v: ValueRef<'_>) -> Result<i64, String> {
    match v {
        ValueRef::Integer(n) if n >= 1 => Ok(n),
        other => Err(format!(
            "{func}: job_id must be a job's id (an INTEGER ≥ 1, as uq_score_table returned), got {}; see SELECT job_id, status FROM uq_jobs",
            args::describe(other)
        )),
    }
}

/// Checks on this connection that the job exists (NULL status = no such job).
fn stored_status(func: &str, conn: &Connection, id: i64) -> Result<String, String> {
    let has_jobs: i64 = conn
        .query_row(
            "SELECT count(*) FROM main.sqlite_master WHERE name = 'uq_job'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| format!("{func}: {e}"))?;
    let status: Option<String> = if has_jobs > 0 {
        conn.query_row("SELECT status FROM main.uq_job WHERE job_id = ?1", [id], |r| {
            r.get(0)
        })
        .optional()
        .map_err(|e| format!("{func}: {e}"))?
    } else {
        None
    };
    status.ok_or_else(|| {
        format!("{func}: no job {id} in this database; see SELECT job_id, status FROM uq_jobs (jobs are created by uq_score_table)")
    })
}

fn wait(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uq_wait";
    let id = job_id(F, ctx.get_raw(0)).map_err(sql_err)?;
    let timeout = if ctx.len() > 1 {
        match ctx.get_raw(1) {
            ValueRef::Integer(n) if n >= 0 => n as f64,
            ValueRef::Real(x) if x >= 0.0 && x.is_finite() => x,
            other => {
                return Err(sql_err(format!(
                    "{F}: timeout_s must be a number of seconds ≥ 0, got {}",
                    args::describe(other)
                )))
            }
        }
    } else {
        DEFAULT_WAIT_S
    };
    let conn = unsafe { ctx.get_connection() }?;
    let db = db_path(F, &conn).map_err(sql_err)?;
    let mine = stored_status(F, &conn, id).map_err(sql_err)?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(timeout.min(1e7));
    loop {
        let reply = client
            .call(&Request::JobStatus { db: db.clone(), job_id: id }, false)
            .map_err(|e| sql_err(format!("{F}: {e}")))?;
        let info: Option<JobInfo> = serde_json::from_value(reply)
            .map_err(|e| sql_err(format!("{F}: unexpected reply from uqd ({e})")))?;
        match info {
            Some(i) if jobs::is_final(&i.status) => return Ok(i.status),
            Some(i) if Instant::now() >= deadline => return Ok(i.status),
            Some(_) => {}
            None if start.elapsed() > INVISIBLE_LIMIT || Instant::now() >= deadline => {
                return Err(sql_err(format!(
                    "{F}: job {id} ({mine}) is not committed yet, so the daemon cannot see it: call uq_wait in a statement after the one that created the job (SELECT uq_score_table(...); then SELECT uq_wait({id});), and COMMIT first inside BEGIN … COMMIT"
                )))
            }
            None => {}
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn cancel(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uq_cancel";
    let id = job_id(F, ctx.get_raw(0)).map_err(sql_err)?;
    let conn = unsafe { ctx.get_connection() }?;
    let db = db_path(F, &conn).map_err(sql_err)?;
    stored_status(F, &conn, id).map_err(sql_err)?;
    let reply = client
        .call(&Request::JobCancel { db, job_id: id }, false)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    let info: Option<JobInfo> = serde_json::from_value(reply)
        .map_err(|e| sql_err(format!("{F}: unexpected reply from uqd ({e})")))?;
    info.map(|i| i.status).ok_or_else(|| {
        sql_err(format!(
            "{F}: job {id} is not committed yet: cancel it in a statement after the one that created it"
        ))
    })
}

fn label(r: GradeResult) -> Option<i64> {
    r.label.map(i64::from)
}

fn judge_options(func: &str, ctx: &Context<'_>, idx: usize) -> rusqlite::Result<Map<String, Value>> {
    let conn = unsafe { ctx.get_connection() }?;
    let map = args::options(func, (ctx.len() > idx).then(|| ctx.get_raw(idx))).map_err(sql_err)?;
    Ok(Options::new(&conn, func, map).map_err(sql_err)?.map)
}

fn grade(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Option<i64>> {
    const F: &str = "uq_grade";
    let unit = args::required_text(F, "unit", ctx.get_raw(0), "the sentence or claim to grade")
        .map_err(sql_err)?;
    let reference = args::required_text(
        F,
        "reference_text",
        ctx.get_raw(1),
        "the reference text (e.g. the Wikipedia article) to grade against",
    )
    .map_err(sql_err)?;
    let options = Value::Object(judge_options(F, ctx, 2)?);
    let reply = client
        .call(&Request::Grade { unit, reference, options }, true)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    let r: GradeResult = serde_json::from_value(reply)
        .map_err(|e| sql_err(format!("{F}: unexpected reply from uqd ({e})")))?;
    Ok(label(r))
}

fn objectivity(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Option<i64>> {
    const F: &str = "uq_objectivity";
    let claim = args::required_text(F, "claim", ctx.get_raw(0), "the claim to classify")
        .map_err(sql_err)?;
    let options = Value::Object(judge_options(F, ctx, 1)?);
    let reply = client
        .call(&Request::Objectivity { claim, options }, true)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    let r: GradeResult = serde_json::from_value(reply)
        .map_err(|e| sql_err(format!("{F}: unexpected reply from uqd ({e})")))?;
    Ok(label(r))
}
