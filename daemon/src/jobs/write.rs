//! A job's own records in the user's database (schema: sql/migrations/*.sql): its run (the
//! configuration and models), its status and counters, and the job requests' reads of it. The
//! results of its rows are written by `results.rs`, a chunk at a time.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use uq_core::jobs::JobSpec;

use super::rows::Progress;
use crate::engine::Engine;
use crate::role_llms::LlmService;

pub(super) const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// An SQLite error as the job's message: `cannot WHAT: …`.
pub(super) fn sql_err(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("cannot {what}: {e}")
}

/// Creates the job's run (its configuration and models) and links it to the job.
pub fn create_run(
    conn: &mut Connection,
    job_id: i64,
    spec: &JobSpec,
    engine: &Engine,
    llm: &LlmService,
) -> Result<i64, String> {
    let info = engine.info();
    let p = &spec.parsed;
    let scorers: Vec<&str> = p.scoring.scorers.iter().map(|s| s.name()).collect();
    let generation = if spec.generate > 0 {
        Some(
            llm.for_role(p, uq_core::options::LlmRole::Generation)?
                .label()
                .to_string(),
        )
    } else {
        None
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_err("start the run"))?;
    // A concurrent resume may have created it meanwhile.
    if let Some(run_id) = tx
        .query_row(
            "SELECT run_id FROM uq_job WHERE job_id = ?1",
            [job_id],
            |r| r.get::<_, Option<i64>>(0),
        )
        .map_err(sql_err("read the job"))?
    {
        return Ok(run_id);
    }
    tx.execute(
        "INSERT INTO uq_run(uqlite_version, options_json, granularity, scorers_json, aggregation, \
         num_samples, nli_model, embed_model, llm_model, device) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            env!("CARGO_PKG_VERSION"),
            spec.scoring.to_string(),
            p.decompose.granularity.as_str(),
            serde_json::to_string(&scorers).unwrap_or_default(),
            p.aggregate.aggregation.as_str(),
            p.scoring.num_samples.map(|m| m as i64).or(Some(spec.generate as i64).filter(|&g| g > 0)),
            info.nli_model,
            info.embed_model,
            generation,
            info.device,
        ],
    )
    .map_err(sql_err("create the run"))?;
    let run_id = tx.last_insert_rowid();
    tx.execute(
        "UPDATE uq_job SET run_id = ?2 WHERE job_id = ?1",
        params![job_id, run_id],
    )
    .map_err(sql_err("link the run"))?;
    tx.commit().map_err(sql_err("create the run"))?;
    Ok(run_id)
}

/// Marks the job running (keeping the first start time) with the table's row count now, unless
/// it was cancelled meanwhile.
pub fn start(conn: &Connection, job_id: i64, total: i64) -> Result<(), String> {
    conn.execute(
        &format!(
            "UPDATE uq_job SET status = 'running', total = ?2, message = NULL, \
             started_at = coalesce(started_at, {NOW}), updated_at = {NOW} \
             WHERE job_id = ?1 AND status IN ('queued', 'running')"
        ),
        params![job_id, total],
    )
    .map_err(sql_err("start the job"))?;
    Ok(())
}

/// Reopens a failed job for a resume (`uqd score --resume`): its status becomes 'running' again.
/// With `retry_errors`, its rows recorded in `uq_job_error` are forgotten, so the resume scores
/// them again (after an LLM outage, say). Committed rows are kept either way.
pub fn reopen(conn: &mut Connection, job_id: i64, retry_errors: bool) -> Result<(), String> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_err("reopen the job"))?;
    tx.execute(
        &format!(
            "UPDATE uq_job SET status = 'running', message = NULL, finished_at = NULL, updated_at = {NOW} \
             WHERE job_id = ?1 AND status = 'failed'"
        ),
        [job_id],
    )
    .map_err(sql_err("reopen the job"))?;
    if retry_errors {
        tx.execute("DELETE FROM uq_job_error WHERE job_id = ?1", [job_id])
            .map_err(sql_err("forget the job's row errors"))?;
        tx.execute(
            &format!(
                "UPDATE uq_job SET status = CASE WHEN status = 'done' THEN 'running' ELSE status END, \
                 finished_at = CASE WHEN status = 'done' THEN NULL ELSE finished_at END, \
                 errors = 0, done = (SELECT count(*) FROM uq_answer WHERE job_id = ?1), updated_at = {NOW} \
                 WHERE job_id = ?1"
            ),
            [job_id],
        )
        .map_err(sql_err("forget the job's row errors"))?;
    }
    tx.commit().map_err(sql_err("reopen the job"))
}

/// The job's stored status.
pub fn status(conn: &Connection, job_id: i64) -> Result<String, String> {
    conn.query_row(
        "SELECT status FROM uq_job WHERE job_id = ?1",
        [job_id],
        |r| r.get(0),
    )
    .map_err(sql_err("read the job's status"))
}

/// Ends the job with `status` (unless it was cancelled meanwhile).
pub fn finish(
    conn: &Connection,
    job_id: i64,
    status: &str,
    message: Option<&str>,
) -> Result<(), String> {
    conn.execute(
        &format!(
            "UPDATE uq_job SET status = ?2, message = coalesce(?3, message), finished_at = {NOW}, \
             updated_at = {NOW} WHERE job_id = ?1 AND status NOT IN ('done', 'failed', 'cancelled')"
        ),
        params![job_id, status, message],
    )
    .map_err(sql_err("end the job"))?;
    // A job cancelled by uq_cancel gets its finish time too.
    conn.execute(
        &format!("UPDATE uq_job SET finished_at = coalesce(finished_at, {NOW}) WHERE job_id = ?1 AND status = 'cancelled'"),
        [job_id],
    )
    .map_err(sql_err("end the job"))?;
    Ok(())
}

/// The job's counters.
pub fn progress(conn: &Connection, job_id: i64) -> Result<Progress, String> {
    conn.query_row(
        "SELECT done, total, errors FROM uq_job WHERE job_id = ?1",
        [job_id],
        |r| {
            Ok(Progress {
                done: r.get(0)?,
                total: r.get(1)?,
                errors: r.get(2)?,
                rows_this_run: 0,
            })
        },
    )
    .map_err(sql_err("read the job's progress"))
}

/// Reads a job as the job requests report it.
pub fn job_info(
    conn: &Connection,
    job_id: i64,
    running_here: bool,
) -> Result<Option<uq_core::protocol::JobInfo>, String> {
    conn.query_row(
        "SELECT job_id, status, done, total, errors, message FROM uq_job WHERE job_id = ?1",
        [job_id],
        |r| {
            Ok(uq_core::protocol::JobInfo {
                job_id: r.get(0)?,
                status: r.get(1)?,
                done: r.get(2)?,
                total: r.get(3)?,
                errors: r.get(4)?,
                message: r.get(5)?,
                running_here,
            })
        },
    )
    .optional()
    .map_err(sql_err("read the job"))
}

/// Sets a job's status to cancelled (unless it has ended).
pub fn cancel(conn: &Connection, job_id: i64) -> Result<(), String> {
    conn.execute(
        &format!(
            "UPDATE uq_job SET status = 'cancelled', message = 'cancelled', finished_at = {NOW}, updated_at = {NOW} \
             WHERE job_id = ?1 AND status IN ('queued', 'running')"
        ),
        [job_id],
    )
    .map_err(sql_err("cancel the job"))?;
    Ok(())
}

/// Unfinished jobs of a database.
pub fn unfinished_jobs(conn: &Connection) -> Result<Vec<i64>, String> {
    let exists: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'uq_job'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql_err("read the schema"))?;
    if exists.is_none() {
        return Ok(Vec::new());
    }
    let mut st = conn
        .prepare("SELECT job_id FROM uq_job WHERE status IN ('queued', 'running') ORDER BY job_id")
        .map_err(sql_err("list jobs"))?;
    let ids = st
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect::<Result<Vec<i64>, _>>())
        .map_err(sql_err("list jobs"))?;
    Ok(ids)
}
