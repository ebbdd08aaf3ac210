//! `uqd score DB TABLE [--options JSON]` and `uqd score DB --resume JOB`: a job run in the
//! foreground, in this process (its own engine and LLM layer), with a progress bar on stderr.
//! The results, the resume rules and the `uq_jobs` view are those of `uq_score_table`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value};

use super::{create, run};
use crate::engine::Engine;
use crate::role_llms::LlmService;
use crate::store;

/// What to run: a new job over a table, or an existing job.
pub enum Target<'a> {
    Table {
        table: &'a str,
        options: &'a str,
    },
    /// An existing job (reopened when it failed); `retry_errors`: score its failed rows again.
    Resume {
        job: i64,
        retry_errors: bool,
    },
}

/// Runs the job; returns (job id, final status, rows done by this run, seconds).
pub fn score(
    engine: &Engine,
    llm: &LlmService,
    db: &Path,
    target: Target<'_>,
    progress_bar: bool,
) -> Result<(i64, String, usize, f64), String> {
    let job_id = match target {
        Target::Resume { job, retry_errors } => {
            let mut conn = store::open(db)?;
            store::migrate(&mut conn)?;
            if run::load_job(&conn, job)?.is_none() {
                return Err(format!(
                    "no job {job} in {}: see SELECT job_id, status FROM uq_jobs",
                    db.display()
                ));
            }
            super::write::reopen(&mut conn, job, retry_errors)?;
            job
        }
        Target::Table { table, options } => {
            let v: Value = serde_json::from_str(options).map_err(|e| {
                format!(
                    "--options is not JSON ({e}): pass an object, e.g. '{{\"scorers\":[\"luq\"]}}'"
                )
            })?;
            let map: Map<String, Value> = match v {
                Value::Object(m) => m,
                other => return Err(format!("--options must be a JSON object, got {other}")),
            };
            let mut conn = store::open(db)?;
            create::create_job("uqd score", &mut conn, table, &map)?
        }
    };
    let bar = if progress_bar {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "job {msg} [{elapsed_precise}] {wide_bar} {pos}/{len} rows ({per_sec}, ETA {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(job_id.to_string());
    let t = Instant::now();
    let mut rows = 0;
    let status = run::run_job(engine, llm, db, job_id, &AtomicBool::new(false), &mut |p| {
        bar.set_length(p.total.max(0) as u64);
        bar.set_position(p.done.max(0) as u64);
        if p.errors > 0 {
            bar.set_message(format!("{job_id} ({} failed)", p.errors));
        }
        rows = p.rows_this_run;
    })?;
    bar.finish();
    Ok((job_id, status, rows, t.elapsed().as_secs_f64()))
}
