//! A job's results written into the user's database (schema: sql/migrations/*.sql). Every chunk
//! of rows is one IMMEDIATE transaction: its answers, samples, units, scores, UAD results,
//! labels and errors, and the job's counters, commit together or not at all.

use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use uq_core::decompose::spans::unit_spans;
use uq_core::jobs::JobSpec;
use uq_core::protocol::{GeneratedResponse, ScoreResult, UadResult};
use uq_llm::Usage;

use super::rows::{JobRow, RowOut, SourceRow};
use super::write::{sql_err, NOW};
use crate::grade::Graded;

/// `x`, or `None` (NULL in the database) when it is not finite.
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

/// A generated answer's tokens as `uq_generate`'s `logprobs` column holds them (NULL: none).
fn logprobs_json(g: &GeneratedResponse) -> Option<String> {
    g.logprobs
        .as_ref()
        .and_then(|t| serde_json::to_string(t).ok())
}
