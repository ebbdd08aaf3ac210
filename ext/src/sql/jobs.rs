//! Jobs that score a table (docs/reference.md, "Jobs, grading and schema functions"; internals: docs/design.md, "Jobs"): background jobs.
//! * `uq_score_table(table[, options_json])`: checks the table and the options, creates a job row
//!   in `uq_job` and has the daemon run it in the background; returns the job id.
//! * `uq_wait(job_id[, timeout_s])`: blocks until the job ends (or `timeout_s`, default 3600,
//!   passes) and returns its status; resumes a job that no daemon runs (after a kill or reboot).
//! * `uq_cancel(job_id)`: stops a job after its chunk in flight; committed rows stay.
//!
//! Progress is the view `uq_jobs`. The daemon writes from its own connection, so results are
//! visible to statements that start after they are committed. A job is created by
//! `uq_core::jobs::create_job`, as `uqd score` creates one; this connection runs its statements.

use std::time::{Duration, Instant};

use rusqlite::functions::Context;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::jobs::{self, JOB_KEYS};
use uq_core::protocol::{JobInfo, Request};

use super::uq_init::migrate;
use crate::args;
use crate::client::Client;
use crate::glue::sql_err;
use crate::options::Options;

/// How long `uq_wait` waits by default, in seconds.
pub const DEFAULT_WAIT_S: f64 = 3600.0;
/// How long the daemon may fail to see a job row before `uq_wait` says why.
const INVISIBLE_LIMIT: Duration = Duration::from_secs(10);

/// The main database's file, which the daemon opens.
fn db_path(func: &str, conn: &Connection) -> Result<String, String> {
    match conn.path() {
        Some(p) if !p.is_empty() => Ok(p.to_string()),
        _ => Err(format!(
            "{func}: this database has no file (it is in-memory or temporary): jobs write their results into the database file, so open one (sqlite3 results.db, or ATTACH is not enough: the main database must be a file)"
        )),
    }
}

pub fn uq_score_table(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<SqlValue> {
    const F: &str = "uq_score_table";
    let name = args::required_text(
        F,
        "table",
        ctx.get_raw(0),
        "the name of the table of answers",
    )
    .map_err(sql_err)?;
    let name = jobs::table_name(F, &name).map_err(sql_err)?;
    let options = args::options(F, (ctx.len() > 1).then(|| ctx.get_raw(1))).map_err(sql_err)?;
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let db = db_path(F, &conn).map_err(sql_err)?;
    let job_id = jobs::create_job(F, &mut UserDb(&conn), &name, options).map_err(sql_err)?;
    client
        .call(&Request::JobStart { db, job_id }, false)
        .map_err(|e| {
            sql_err(format!(
                "{F}: job {job_id} is queued but the daemon cannot start it: {e}; once the daemon runs, SELECT uq_wait({job_id}) starts it"
            ))
        })?;
    Ok(SqlValue::Integer(job_id))
}

/// The user's connection as a [`JobDb`](jobs::JobDb).
struct UserDb<'a>(&'a Connection);

uq_core::impl_job_db! {
    impl JobDb for UserDb<'_> {
        fn migrate(&mut self) -> Result<(), String> {
            migrate(self.0).map(drop).map_err(|e| e.to_string())
        }

        /// Registered LLM names are resolved here: the daemon cannot see temp.uq_llms.
        fn resolve_options(
            &mut self,
            func: &str,
            options: Map<String, Value>,
        ) -> Result<Map<String, Value>, String> {
            let (job_keys, scoring): (Map<String, Value>, Map<String, Value>) = options
                .into_iter()
                .partition(|(k, _)| JOB_KEYS.contains(&k.as_str()));
            // A sources_column gives each row its sources: checked as if option sources were
            // given.
            let mut checked = scoring;
            let stood_in = jobs::stand_in_sources(&job_keys, &mut checked);
            let mut resolved = Options::new(self.0, func, checked)?.map;
            if stood_in {
                resolved.remove("sources");
            }
            resolved.extend(job_keys);
            Ok(resolved)
        }
    }
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
        conn.query_row(
            "SELECT status FROM main.uq_job WHERE job_id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| format!("{func}: {e}"))?
    } else {
        None
    };
    status.ok_or_else(|| {
        format!("{func}: no job {id} in this database; see SELECT job_id, status FROM uq_jobs (jobs are created by uq_score_table)")
    })
}

pub fn uq_wait(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<SqlValue> {
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
        let req = Request::JobStatus {
            db: db.clone(),
            job_id: id,
        };
        let info: Option<JobInfo> = client.call_for(F, &req, false).map_err(sql_err)?;
        match info {
            Some(i) if jobs::is_final(&i.status) => return Ok(SqlValue::Text(i.status)),
            Some(i) if Instant::now() >= deadline => return Ok(SqlValue::Text(i.status)),
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

pub fn uq_cancel(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<SqlValue> {
    const F: &str = "uq_cancel";
    let id = job_id(F, ctx.get_raw(0)).map_err(sql_err)?;
    let conn = unsafe { ctx.get_connection() }?;
    let db = db_path(F, &conn).map_err(sql_err)?;
    stored_status(F, &conn, id).map_err(sql_err)?;
    let req = Request::JobCancel { db, job_id: id };
    let info: Option<JobInfo> = client.call_for(F, &req, false).map_err(sql_err)?;
    info.map(|i| SqlValue::Text(i.status)).ok_or_else(|| {
        sql_err(format!(
            "{F}: job {id} is not committed yet: cancel it in a statement after the one that created it"
        ))
    })
}
