//! One job's run over its source table: read the rows not yet done, score them a chunk at a
//! time (rows of a chunk concurrently), and commit each chunk's results in one transaction
//! (results.rs). Resuming is the same run: rows already answered in the job's run, or recorded as
//! failed, are skipped by the source query, and `uq_answer`'s UNIQUE(run_id, source_key) makes a
//! second write of a row a no-op, so a killed job loses at most the chunk in flight and never
//! writes a row twice.
//!
//! The row loop is here; each row's steps are in `run/`: `row` (one row through the pipeline),
//! `cells` (the row's scoring options), `sampling` (samples given or generated), `grounded`
//! (sources from FTS5, `sample_when_open`), `uad` and `labels`; `after` runs the steps after the
//! last row (the job's notes, the calibration's adaptation and refit).

mod after;
mod cells;
mod grounded;
mod labels;
mod row;
mod sampling;
mod uad;

pub use row::score_row;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::jobs::{self, parse_job, JobSpec};
use uq_llm::Usage;

use super::rows::{JobRow, Progress, RowOut, SourceRow};
use super::{results, write};
use crate::engine::defaults::DeviceDefaults;
use crate::engine::Engine;
use crate::judge;
use crate::role_llms::{metered, LlmService, UsageMeter};
use crate::store;
use after::Unparsed;

/// Source rows read at a time.
pub const PAGE_ROWS: usize = 512;

/// How long a job waits for its row to become visible (the statement that created it commits
/// when it ends).
pub const ROW_WAIT: Duration = Duration::from_secs(30);

pub fn load_job(conn: &Connection, job_id: i64) -> Result<Option<JobRow>, String> {
    conn.query_row(
        "SELECT job_id, run_id, source_table, options_json, status FROM uq_job WHERE job_id = ?1",
        [job_id],
        |r| {
            Ok(JobRow {
                job_id: r.get(0)?,
                run_id: r.get(1)?,
                source_table: r.get(2)?,
                options_json: r.get(3)?,
                status: r.get(4)?,
            })
        },
    )
    .optional()
    .map_err(|e| format!("cannot read job {job_id}: {e}"))
}

/// The source table's columns (bound name, never spliced).
pub fn table_columns(conn: &Connection, table: &str) -> Result<Vec<String>, String> {
    let mut st = conn
        .prepare(jobs::TABLE_COLUMNS)
        .map_err(|e| e.to_string())?;
    let cols = st
        .query_map([table], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the columns of {table:?}: {e}"))?;
    Ok(cols)
}

/// The job's spec, from its stored options and the table's columns now.
pub fn job_spec(conn: &Connection, job: &JobRow) -> Result<JobSpec, String> {
    let func = format!("job {}", job.job_id);
    let options: Map<String, Value> = serde_json::from_str(&job.options_json)
        .map_err(|e| format!("{func}: stored options are not a JSON object: {e}"))?;
    let cols = table_columns(conn, &job.source_table)?;
    if cols.is_empty() {
        return Err(format!(
            "{func}: table {:?} is gone from the database",
            job.source_table
        ));
    }
    parse_job(&func, &options, &job.source_table, &cols)
}

/// Runs (or resumes) job `job_id` of `db` to its end, a cancel, or an error. `cancel` is checked
/// between chunks, as is the job's stored status (`uq_cancel` sets it to 'cancelled').
/// `on_progress` is called after each committed chunk. Returns the final status.
pub fn run_job(
    engine: &Engine,
    llm: &LlmService,
    db: &Path,
    job_id: i64,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<String, String> {
    let mut conn = store::open(db)?;
    store::ensure_wal(&conn)?;
    store::migrate(&mut conn)?;
    let job = wait_for_job(&conn, db, job_id, cancel)?;
    if jobs::is_final(&job.status) {
        return Ok(job.status);
    }
    let spec = match job_spec(&conn, &job) {
        Ok(s) => s,
        Err(e) => {
            write::finish(&conn, job_id, jobs::FAILED, Some(&e))?;
            return Err(e);
        }
    };
    let run_id = match job.run_id {
        Some(r) => r,
        None => write::create_run(&mut conn, job_id, &spec, engine, llm)?,
    };
    start_counted(&conn, &job, &spec)?;
    let mut progress = write::progress(&conn, job_id)?;
    on_progress(&progress);
    let run = JobRun {
        engine,
        llm,
        db,
        job: &job,
        spec: &spec,
        run_id,
    };
    let rows = RowsInFlight::of(&spec, &engine.device_defaults());
    let mut unparsed = Unparsed::default();
    // Page by page (memory stays bounded on big tables), chunk by chunk within a page.
    loop {
        let page = pending_rows(&conn, &job.source_table, &spec, run_id, job_id, PAGE_ROWS)?;
        if page.is_empty() {
            break;
        }
        let done_before = progress.done;
        for chunk in page.chunks(rows.chunk_size) {
            if cancel.load(Ordering::SeqCst) || write::status(&conn, job_id)? == jobs::CANCELLED {
                write::finish(&conn, job_id, jobs::CANCELLED, Some("cancelled"))?;
                return Ok(jobs::CANCELLED.into());
            }
            unparsed.add(&run.score_and_commit(
                &mut conn,
                chunk,
                rows.concurrency,
                progress.done,
            )?);
            let rows_this_run = progress.rows_this_run + chunk.len();
            progress = write::progress(&conn, job_id)?;
            progress.rows_this_run = rows_this_run;
            on_progress(&progress);
        }
        if progress.done == done_before {
            // Every row of the page was written before (duplicate ids): nothing left to do.
            break;
        }
    }
    if write::status(&conn, job_id)? == jobs::CANCELLED {
        return Ok(jobs::CANCELLED.into());
    }
    let notes = after::after_rows(
        &mut conn, engine, run_id, &spec, &progress, job_id, &unparsed,
    )?;
    let message = (!notes.is_empty()).then(|| notes.join("\n"));
    write::finish(&conn, job_id, jobs::DONE, message.as_deref())?;
    Ok(jobs::DONE.into())
}

/// The job row of `job_id`, waiting up to `ROW_WAIT` for the transaction that creates it to
/// commit (or for a cancel).
fn wait_for_job(
    conn: &Connection,
    db: &Path,
    job_id: i64,
    cancel: &AtomicBool,
) -> Result<JobRow, String> {
    let deadline = Instant::now() + ROW_WAIT;
    loop {
        match load_job(conn, job_id)? {
            Some(j) => return Ok(j),
            None if Instant::now() < deadline && !cancel.load(Ordering::SeqCst) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            None => {
                return Err(format!(
                    "no job {job_id} in {} (a job is visible once the statement that created it has ended and its transaction is committed)",
                    db.display()
                ))
            }
        }
    }
}

/// Counts the rows the job will score and marks it running.
fn start_counted(conn: &Connection, job: &JobRow, spec: &JobSpec) -> Result<(), String> {
    let total: i64 = conn
        .query_row(
            &jobs::count_rows_sql(&job.source_table, &spec.columns),
            [],
            |r| r.get(0),
        )
        .map_err(|e| format!("cannot count the rows of {:?}: {e}", job.source_table))?;
    write::start(conn, job.job_id, total)
}

/// A job being run: what scoring and committing its chunks needs.
struct JobRun<'a> {
    engine: &'a Engine,
    llm: &'a LlmService,
    db: &'a Path,
    job: &'a JobRow,
    spec: &'a JobSpec,
    run_id: i64,
}

impl JobRun<'_> {
    /// Scores the rows of `chunk` (`concurrency` at a time) and commits them; the rows' results.
    /// `done`: the rows committed before, for the error text.
    fn score_and_commit(
        &self,
        conn: &mut Connection,
        chunk: &[SourceRow],
        concurrency: usize,
        done: i64,
    ) -> Result<Vec<Result<RowOut, String>>, String> {
        let meter = Arc::new(UsageMeter::default());
        let results = score_chunk(
            self.engine,
            self.llm,
            self.spec,
            concurrency,
            chunk,
            &meter,
            self.db,
        );
        let usage: Usage = meter.get();
        // A database file made read-only meanwhile fails this chunk: the open connection
        // (and SQLite's reuse of its descriptors) would otherwise go on writing.
        let committed = store::check_writable(self.db).and_then(|()| {
            results::commit_chunk(
                conn,
                self.run_id,
                self.job,
                self.spec,
                chunk,
                &results,
                &usage,
            )
        });
        if let Err(e) = committed {
            let first = chunk.first().map_or("", |r| r.key.as_str());
            return Err(format!(
                "the chunk of {} rows from key {first:?} could not be committed ({e}); the {} rows committed before are kept",
                chunk.len(),
                done
            ));
        }
        Ok(results)
    }
}

fn pending_rows(
    conn: &Connection,
    table: &str,
    spec: &JobSpec,
    run_id: i64,
    job_id: i64,
    limit: usize,
) -> Result<Vec<SourceRow>, String> {
    let sql = jobs::pending_rows_sql(table, &spec.columns);
    let mut st = conn
        .prepare(&sql)
        .map_err(|e| format!("cannot read table {table:?}: {e}"))?;
    let text = |r: &rusqlite::Row, i: usize| -> rusqlite::Result<Option<String>> {
        use rusqlite::types::ValueRef;
        Ok(match r.get_ref(i)? {
            ValueRef::Null => None,
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Integer(n) => Some(n.to_string()),
            ValueRef::Real(x) => Some(x.to_string()),
            ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        })
    };
    let rows = st
        .query_map(params![run_id, job_id, limit as i64], |r| {
            Ok(SourceRow {
                key: text(r, 0)?.unwrap_or_default(),
                prompt: text(r, 1)?,
                answer: text(r, 2)?,
                samples: text(r, 3)?,
                reference: text(r, 4)?,
                units: text(r, 5)?,
                claim_union: text(r, 6)?,
                labels: text(r, 7)?,
                sources: text(r, 8)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read table {table:?}: {e}"))?;
    Ok(rows)
}

/// How a job takes its rows: options `chunk_size` and `concurrency`, else the defaults of the
/// device the NLI model runs on (a GPU needs many rows in flight to run full batches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowsInFlight {
    pub chunk_size: usize,
    pub concurrency: usize,
}

impl RowsInFlight {
    pub fn of(spec: &JobSpec, defaults: &DeviceDefaults) -> RowsInFlight {
        RowsInFlight {
            chunk_size: spec.chunk_size.unwrap_or(defaults.job_chunk_size),
            concurrency: spec.concurrency.unwrap_or(defaults.job_concurrency),
        }
    }
}

/// Scores the rows of a chunk, `concurrency` at a time (the engine batches NLI work across
/// them). Results are in row order.
fn score_chunk(
    engine: &Engine,
    llm: &LlmService,
    spec: &JobSpec,
    concurrency: usize,
    rows: &[SourceRow],
    meter: &Arc<UsageMeter>,
    db: &Path,
) -> Vec<Result<RowOut, String>> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<RowOut, String>>>> = Mutex::new(vec![None; rows.len()]);
    std::thread::scope(|s| {
        for _ in 0..concurrency.min(rows.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(row) = rows.get(i) else { break };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let (r, tally) = judge::tallied(|| {
                        metered(meter, || score_row(engine, llm, spec, row, Some(db)))
                    });
                    r.map(|mut out| {
                        out.nli_unparsed = tally.unparsed;
                        out
                    })
                }))
                .unwrap_or_else(|_| {
                    Err("internal error (panic) while scoring this row; please report it".into())
                });
                out.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: row not scored".into())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Device;

    fn spec(options: Value) -> JobSpec {
        let Value::Object(o) = options else { panic!() };
        let cols = ["answer".to_string(), "samples".to_string()];
        parse_job("t", &o, "answers", &cols).unwrap()
    }

    /// A job on CUDA takes the device's rows in flight unless its options set them.
    #[test]
    fn a_job_on_cuda_uses_the_device_defaults() {
        let cuda = DeviceDefaults::of(Device::Cuda);
        let cpu = DeviceDefaults::of(Device::Cpu);
        let plain = spec(serde_json::json!({}));
        assert_eq!(
            RowsInFlight::of(&plain, &cuda),
            RowsInFlight {
                chunk_size: 64,
                concurrency: 32
            }
        );
        assert_eq!(
            RowsInFlight::of(&plain, &cpu),
            RowsInFlight {
                chunk_size: 8,
                concurrency: 4
            }
        );
        let set = spec(serde_json::json!({"concurrency": 3, "chunk_size": 5}));
        assert_eq!(
            RowsInFlight::of(&set, &cuda),
            RowsInFlight {
                chunk_size: 5,
                concurrency: 3
            }
        );
    }
}
