//! A job's writes into the user's database (schema: sql/migrations/*.sql). Every chunk
//! of rows is one IMMEDIATE transaction: its answers, samples, units, scores, UAD results,
//! labels and errors, and the job's counters, commit together or not at all.

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use uq_core::decompose::spans::unit_spans;
use uq_core::jobs::JobSpec;
use uq_core::protocol::{GeneratedResponse, ScoreResult, UadResult};
use uq_llm::Usage;

use super::rows::{JobRow, Progress, RowOut, SourceRow};
use crate::engine::Engine;
use crate::grade::Graded;
use crate::role_llms::LlmService;

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

fn sql_err(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
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

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Commits one chunk: every row's results (or its error) and the job's counters.
pub fn commit_chunk(
    conn: &mut Connection,
    run_id: i64,
    job: &JobRow,
    spec: &JobSpec,
    rows: &[SourceRow],
    results: &[Result<RowOut, String>],
    usage: &Usage,
) -> Result<(), String> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_err("write results"))?;
    for (row, result) in rows.iter().zip(results) {
        match result {
            Ok(out) => write_row(&tx, run_id, job, spec, row, out)?,
            Err(e) => {
                tx.execute(
                    "INSERT OR IGNORE INTO uq_job_error(job_id, source_key, error) VALUES (?1, ?2, ?3)",
                    params![job.job_id, row.key, e],
                )
                .map_err(sql_err("record a row's error"))?;
            }
        }
    }
    let cost = spec
        .prices
        .map(|p| p.cost(usage.prompt_tokens, usage.completion_tokens));
    tx.execute(
        &format!(
            "UPDATE uq_job SET \
               errors = (SELECT count(*) FROM uq_job_error WHERE job_id = ?1), \
               done = (SELECT count(*) FROM uq_answer WHERE job_id = ?1) + (SELECT count(*) FROM uq_job_error WHERE job_id = ?1), \
               llm_calls = llm_calls + ?2, prompt_tokens = prompt_tokens + ?3, completion_tokens = completion_tokens + ?4, \
               cost_usd = CASE WHEN ?5 IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ?5 END, \
               updated_at = {NOW} WHERE job_id = ?1"
        ),
        params![
            job.job_id,
            usage.requests as i64,
            usage.prompt_tokens as i64,
            usage.completion_tokens as i64,
            cost
        ],
    )
    .map_err(sql_err("update the job's progress"))?;
    tx.commit().map_err(sql_err("commit results"))
}

/// Writes one row's results, unless its answer is already there (a resumed job).
fn write_row(
    tx: &Transaction<'_>,
    run_id: i64,
    job: &JobRow,
    spec: &JobSpec,
    row: &SourceRow,
    out: &RowOut,
) -> Result<(), String> {
    if insert_answer(tx, run_id, job, row, out)? == 0 {
        return Ok(()); // already written (a resumed job): nothing twice
    }
    let answer_id = tx.last_insert_rowid();
    insert_samples(tx, answer_id, out)?;
    let granularity = spec.parsed.decompose.granularity.as_str();
    let unit_ids = insert_units(tx, answer_id, &out.answer, granularity, &out.score)?;
    insert_unit_scores(tx, &unit_ids, &out.score)?;
    insert_response_scores(tx, answer_id, spec, &out.score)?;
    if let Some(u) = &out.uad {
        insert_uad(tx, answer_id, u)?;
    }
    insert_labels(tx, &unit_ids, row, &out.labels)
}

/// The row's answer (with its generation record, if uqlite generated it); 0 rows inserted when
/// the run has it already.
fn insert_answer(
    tx: &Transaction<'_>,
    run_id: i64,
    job: &JobRow,
    row: &SourceRow,
    out: &RowOut,
) -> Result<usize, String> {
    let g = out.generated_answer.as_ref();
    tx.execute(
        "INSERT INTO uq_answer(run_id, job_id, source_table, source_key, prompt, answer, model, \
         prompt_tokens, completion_tokens, generated, logprobs) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
         ON CONFLICT(run_id, source_key) DO NOTHING",
        params![
            run_id,
            job.job_id,
            job.source_table,
            row.key,
            row.prompt,
            out.answer,
            g.map(|g| g.model.clone()),
            g.map(|g| g.prompt_tokens as i64),
            g.map(|g| g.completion_tokens as i64),
            g.is_some() as i64,
            g.and_then(logprobs_json),
        ],
    )
    .map_err(sql_err("write an answer"))
}

/// The answer's samples, numbered from 1 (with their generation records, if generated).
fn insert_samples(tx: &Transaction<'_>, answer_id: i64, out: &RowOut) -> Result<(), String> {
    for (j, text) in out.samples.iter().enumerate() {
        let gs = out.generated_samples.as_ref().and_then(|v| v.get(j));
        tx.execute(
            "INSERT INTO uq_sample(answer_id, sample_idx, text, temperature, model, prompt_tokens, \
             completion_tokens, generated, logprobs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                answer_id,
                j as i64 + 1,
                text,
                gs.map(|g| g.temperature),
                gs.map(|g| g.model.clone()),
                gs.map(|g| g.prompt_tokens as i64),
                gs.map(|g| g.completion_tokens as i64),
                gs.is_some() as i64,
                gs.and_then(logprobs_json),
            ],
        )
        .map_err(sql_err("write a sample"))?;
    }
    Ok(())
}

/// The answer's units in order, each with its span in `answer` (`uq_core::decompose::spans`);
/// returns their ids, by unit index.
fn insert_units(
    tx: &Transaction<'_>,
    answer_id: i64,
    answer: &str,
    granularity: &str,
    score: &ScoreResult,
) -> Result<Vec<i64>, String> {
    let mut unit_ids = Vec::with_capacity(score.units.len());
    let spans = unit_spans(answer, &score.units);
    for (i, u) in score.units.iter().enumerate() {
        let span = spans.get(i).copied().flatten();
        tx.execute(
            "INSERT INTO uq_unit(answer_id, granularity, position, text, origin, start, end, \
             alignment) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                answer_id,
                granularity,
                i as i64,
                u,
                score.origins.get(i),
                span.map(|s| s.start as i64),
                span.map(|s| s.end as i64),
                span.map(|s| s.alignment),
            ],
        )
        .map_err(sql_err("write a unit"))?;
        unit_ids.push(tx.last_insert_rowid());
    }
    Ok(unit_ids)
}

/// The units' scores (non-finite ones as NULL).
fn insert_unit_scores(
    tx: &Transaction<'_>,
    unit_ids: &[i64],
    score: &ScoreResult,
) -> Result<(), String> {
    for s in &score.scores {
        if let Some(&unit_id) = unit_ids.get(s.unit_idx) {
            tx.execute(
                "INSERT OR REPLACE INTO uq_unit_score(unit_id, scorer, score, calibrated, evidence) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    unit_id,
                    s.scorer,
                    finite(s.score),
                    s.calibrated.and_then(finite),
                    s.evidence
                        .as_ref()
                        .and_then(|e| serde_json::to_string(e).ok())
                ],
            )
            .map_err(sql_err("write a unit score"))?;
        }
    }
    Ok(())
}

/// The answer's response scores, with the aggregation each was computed with.
fn insert_response_scores(
    tx: &Transaction<'_>,
    answer_id: i64,
    spec: &JobSpec,
    score: &ScoreResult,
) -> Result<(), String> {
    for (scorer, value) in &score.response_scores {
        tx.execute(
            "INSERT OR REPLACE INTO uq_response_score(answer_id, scorer, aggregation, score, \
             calibrated) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                answer_id,
                scorer,
                response_aggregation(spec, scorer),
                value.and_then(finite),
                score
                    .calibrated_scores
                    .get(scorer)
                    .copied()
                    .flatten()
                    .and_then(finite)
            ],
        )
        .map_err(sql_err("write a response score"))?;
    }
    Ok(())
}

/// The answer's uncertainty-aware decoding result.
fn insert_uad(tx: &Transaction<'_>, answer_id: i64, u: &UadResult) -> Result<(), String> {
    tx.execute(
        "INSERT OR REPLACE INTO uq_uad(answer_id, scorer, threshold, pre_confidence, post_confidence, \
         n_units, n_kept, refined_response, verified, removed_sentences, calibrated, warnings) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            answer_id,
            u.scorer,
            u.threshold,
            u.pre_confidence.and_then(finite),
            u.post_confidence.and_then(finite),
            u.claims.len() as i64,
            u.claims.iter().filter(|c| c.kept).count() as i64,
            u.refined_response,
            u.verified as i64,
            serde_json::to_string(&u.removed_sentences).unwrap_or_default(),
            i64::from(u.calibrated),
            (!u.warnings.is_empty())
                .then(|| serde_json::to_string(&u.warnings).unwrap_or_default()),
        ],
    )
    .map_err(sql_err("write a UAD result"))?;
    Ok(())
}

/// The units' labels (the row's reference goes with the factual ones).
fn insert_labels(
    tx: &Transaction<'_>,
    unit_ids: &[i64],
    row: &SourceRow,
    labels: &[(usize, &'static str, Graded)],
) -> Result<(), String> {
    for (i, kind, graded) in labels {
        if let Some(&unit_id) = unit_ids.get(*i) {
            tx.execute(
                "INSERT OR REPLACE INTO uq_label(unit_id, kind, grader, label, reference, raw_reply) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    unit_id,
                    kind,
                    graded.grader,
                    graded.label.map(i64::from),
                    (*kind == "factual").then_some(row.reference.as_deref()).flatten(),
                    graded.raw,
                ],
            )
            .map_err(sql_err("write a label"))?;
        }
    }
    Ok(())
}

/// The aggregation a response score was computed with: the run's, or 'none' for scorers that
/// score the whole response (no units to aggregate).
fn response_aggregation(spec: &JobSpec, scorer: &str) -> &'static str {
    match uq_core::scorers::Scorer::parse(scorer) {
        Ok(s) if s.is_response_level() => "none",
        _ => spec.parsed.aggregate.aggregation.as_str(),
    }
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

/// A generated answer's tokens as `uq_generate`'s `logprobs` column holds them (NULL: none).
fn logprobs_json(g: &GeneratedResponse) -> Option<String> {
    g.logprobs
        .as_ref()
        .and_then(|t| serde_json::to_string(t).ok())
}
