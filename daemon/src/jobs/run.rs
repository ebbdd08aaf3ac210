//! One job's run over its source table: read the rows not yet done, score them a chunk at a
//! time (rows of a chunk concurrently), and commit each chunk's results in one transaction
//! (write.rs). Resuming is the same run: rows already answered in the job's run, or recorded as
//! failed, are skipped by the source query, and `uq_answer`'s UNIQUE(run_id, source_key) makes a
//! second write of a row a no-op, so a killed job loses at most the chunk in flight and never
//! writes a row twice.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use uq_core::jobs::{self, parse_job, JobSpec};
use uq_core::options::{parse_samples, LlmRole};
use uq_core::protocol::{GeneratedResponse, ScoreResult, UadResult};
use uq_llm::Usage;

use super::rows::{JobRow, Progress, RowOut, SourceRow};
use super::write;
use crate::aggregate::uad;
use crate::engine::defaults::DeviceDefaults;
use crate::engine::Engine;
use crate::grade::{self, Graded};
use crate::judge;
use crate::role_llms::{metered, LlmService, UsageMeter};
use crate::{generate, pipeline, store};

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
    // The job's notes: failed rows, unreadable judge replies, then calibration (adaptation,
    // settings that differ).
    let mut notes = run_notes(&progress, job_id, &unparsed);
    if spec.sample_when_open {
        notes.push(format!(
            "sample_when_open: the sources decided every unit of {} of the {} rows scored in this \
             run, so their samples were not generated: {} LLM calls saved",
            unparsed.rows_unsampled, unparsed.scored, unparsed.samples_saved
        ));
    }
    // UAD with a conformal model: the guarantee its threshold carries, and the settings that
    // differ from those it was fitted on (num_samples as the job's option; all when not set).
    if spec.uad {
        notes.extend(crate::aggregate::uad::conformal_notes(
            engine,
            &spec.parsed,
            spec.parsed.scoring.num_samples,
        ));
    }
    if unparsed.retrieval_notes > 0 {
        notes.push(format!(
            "sources: {} FTS5 queries found no passage (those units were scored as the sources \
             being silent)",
            unparsed.retrieval_notes
        ));
    }
    notes.extend(super::adapt::finish_calibration(
        &mut conn, engine, run_id, &spec,
    )?);
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
            write::commit_chunk(
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

/// NLI pairs the judge LLM could not read, and in how many rows, in the rows of this run; the
/// samples `sample_when_open` saved and the retrieval notes.
#[derive(Default)]
struct Unparsed {
    pairs: usize,
    rows: usize,
    /// Rows scored, rows that needed no samples, and the samples (LLM answers) saved.
    scored: usize,
    rows_unsampled: usize,
    samples_saved: usize,
    retrieval_notes: usize,
}

impl Unparsed {
    /// Adds the rows of `results` that have unreadable pairs.
    fn add(&mut self, results: &[Result<RowOut, String>]) {
        for r in results.iter().flatten() {
            self.scored += 1;
            if r.samples_saved > 0 {
                self.rows_unsampled += 1;
                self.samples_saved += r.samples_saved;
            }
            self.retrieval_notes += r.retrieval_notes;
            if r.nli_unparsed > 0 {
                self.pairs += r.nli_unparsed;
                self.rows += 1;
            }
        }
    }
}

/// The notes on a job run that ended with `progress`: failed rows, then NLI pairs the judge LLM
/// could not read.
fn run_notes(progress: &Progress, job_id: i64, unparsed: &Unparsed) -> Vec<String> {
    let mut notes = Vec::new();
    if progress.errors > 0 {
        notes.push(format!(
            "{} of {} rows failed: see SELECT * FROM uq_job_error WHERE job_id = {job_id}",
            progress.errors, progress.total
        ));
    }
    let Unparsed { pairs, rows, .. } = unparsed;
    if *pairs > 0 {
        notes.push(format!(
            "nli_llm: {pairs} NLI pairs in {rows} rows could not be read after up to {} retries \
             (NULL, left out of their units' scores): see uq_debug() on one of these answers, or \
             try another nli_llm or \"nli_prompt\"",
            judge::RETRIES
        ));
    }
    notes
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

/// Scores one source row: generates what is missing, scores, and runs UAD and grading when asked.
/// Option `sources` naming an FTS5 table is searched in `db` (the job's database).
pub fn score_row(
    engine: &Engine,
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    db: Option<&Path>,
) -> Result<RowOut, String> {
    let mut options = row_options(spec, row)?;
    let mut samples = row_samples(spec, row)?;
    // An FTS5 table named by option sources is searched for the answer (once it is known).
    let given_answer = row.answer.as_deref().filter(|a| !a.trim().is_empty());
    let mut notes = match given_answer {
        Some(answer) => resolve_sources(db, &mut options, answer)?,
        None => Vec::new(),
    };
    // With sample_when_open, a row without samples is scored on its sources first; only when
    // they leave a unit open are the samples generated and the row scored again.
    if let (true, None, Some(answer)) = (spec.sample_when_open, &samples, given_answer) {
        let mut score = pipeline::score(engine, llm, answer, &[], &options)?;
        let open = score
            .scores
            .iter()
            .any(|s| s.evidence.as_ref().is_some_and(|e| e.verdict == "silent"));
        if !open {
            score.notes.extend(notes.iter().cloned());
            let saved = Saved {
                samples: spec.generate,
                retrieval_notes: notes.len(),
            };
            let answer = answer.to_string();
            return finish_row(
                engine,
                llm,
                spec,
                row,
                answer,
                (None, None),
                vec![],
                options,
                score,
                saved,
            );
        }
    }
    let (generated_answer, generated_samples) =
        generate_missing(llm, spec, row, &options, &mut samples)?;
    let answer = match &generated_answer {
        Some(g) => g.text.clone(),
        None => row.answer.clone().unwrap_or_default(),
    };
    let samples = samples.unwrap_or_default();
    if given_answer.is_none() {
        notes = resolve_sources(db, &mut options, &answer)?;
    }
    let mut score = pipeline::score(engine, llm, &answer, &samples, &options)?;
    score.notes.extend(notes.iter().cloned());
    let saved = Saved {
        samples: 0,
        retrieval_notes: notes.len(),
    };
    finish_row(
        engine,
        llm,
        spec,
        row,
        answer,
        (generated_answer, generated_samples),
        samples,
        options,
        score,
        saved,
    )
}

/// What a row records beside its results: the samples `sample_when_open` did not generate, and
/// the notes of its FTS5 retrieval.
struct Saved {
    samples: usize,
    retrieval_notes: usize,
}

/// Option `sources` naming an FTS5 table, searched in the job's database `db` (read only);
/// the retrieval's notes.
fn resolve_sources(
    db: Option<&Path>,
    options: &mut Value,
    answer: &str,
) -> Result<Vec<String>, String> {
    if !options
        .as_object()
        .is_some_and(uq_core::retrieve::names_fts_table)
    {
        return Ok(Vec::new());
    }
    let db = db
        .ok_or("option sources names an FTS5 table, but this row is scored without its database")?;
    let conn = Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open {} to retrieve sources: {e}", db.display()))?;
    crate::sources::resolve(&conn, options, answer)
}

/// The rest of a scored row: UAD and the labels.
#[allow(clippy::too_many_arguments)]
fn finish_row(
    engine: &Engine,
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    answer: String,
    (generated_answer, generated_samples): Generated,
    samples: Vec<String>,
    options: Value,
    score: ScoreResult,
    saved: Saved,
) -> Result<RowOut, String> {
    let uad = row_uad(engine, llm, spec, &answer, &samples, &options, &score)?;
    let mut labels = given_labels(spec, row, score.units.len())?;
    labels.extend(grader_labels(llm, spec, row, &score.units)?);
    Ok(RowOut {
        answer,
        generated_answer,
        samples,
        generated_samples,
        score,
        uad,
        labels,
        nli_unparsed: 0,
        samples_saved: saved.samples,
        retrieval_notes: saved.retrieval_notes,
    })
}

/// The name of a source column in an error text.
fn col(c: &Option<String>) -> String {
    c.as_deref().unwrap_or("?").to_string()
}

/// The job's scoring options with this row's prompt, stored decomposition and claim union.
fn row_options(spec: &JobSpec, row: &SourceRow) -> Result<Value, String> {
    let mut options = spec.scoring.clone();
    if let (Some(p), Some(map)) = (&row.prompt, options.as_object_mut()) {
        if !map.contains_key("prompt") && !p.trim().is_empty() {
            map.insert("prompt".into(), Value::String(p.clone()));
        }
    }
    // The row's sources: a JSON array of passages, else the text itself.
    if let (Some(text), Some(map)) = (&row.sources, options.as_object_mut()) {
        let v = match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Array(_)) => v,
            _ => Value::String(text.clone()),
        };
        map.insert("sources".into(), v);
    } else if let (Some(_), Some(map)) = (&spec.columns.sources, options.as_object_mut()) {
        // A NULL sources cell: no passage (the grounded scores are NULL, with a note).
        map.insert("sources".into(), Value::Array(Vec::new()));
    }
    // Stored decompositions and claim unions (JSON arrays of strings) become this row's options.
    for (given, key, column) in [
        (&row.units, "units", &spec.columns.units),
        (&row.claim_union, "claim_union", &spec.columns.claim_union),
    ] {
        if let (Some(text), Some(map)) = (given, options.as_object_mut()) {
            let v: Value = serde_json::from_str(text)
                .ok()
                .filter(|v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
                .ok_or_else(|| {
                    format!(
                        "column {:?} must hold a JSON array of strings, e.g. json_array('unit 1', 'unit 2')",
                        col(column)
                    )
                })?;
            map.insert(key.into(), v);
        }
    }
    Ok(options)
}

/// The row's samples column (a JSON array of strings), `None` when NULL.
fn row_samples(spec: &JobSpec, row: &SourceRow) -> Result<Option<Vec<String>>, String> {
    Ok(match &row.samples {
        None => None,
        Some(s) => {
            let v: Value = serde_json::from_str(s).map_err(|e| {
            format!(
                "column {:?} is not JSON ({e}): store samples as a JSON array of strings, e.g. json_array('a', 'b')",
                col(&spec.columns.samples)
            )
        })?;
            Some(
                parse_samples(&v)
                    .map_err(|e| format!("column {:?}: {e}", col(&spec.columns.samples)))?,
            )
        }
    })
}

/// The answer and the samples generated for a row (`None`: the row had them).
type Generated = (Option<GeneratedResponse>, Option<Vec<GeneratedResponse>>);

/// Generates the answer and the samples the row lacks, from its prompt (job option `generate`):
/// the generated answer and samples, `samples` set to the latter.
fn generate_missing(
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    options: &Value,
    samples: &mut Option<Vec<String>>,
) -> Result<Generated, String> {
    let answer_missing = row.answer.as_deref().is_none_or(|a| a.trim().is_empty());
    // grounded_fallback falls back on samples where the sources are silent: generated when asked.
    let samples_missing = samples.is_none()
        && (spec.parsed.scoring.needs_samples()
            || (spec.generate > 0
                && spec
                    .parsed
                    .scoring
                    .scorers
                    .contains(&uq_core::scorers::Scorer::GroundedFallback)));
    let mut generated_answer = None;
    let mut generated_samples = None;
    if !(answer_missing || samples_missing) {
        return Ok((generated_answer, generated_samples));
    }
    let what = if answer_missing {
        "the answer"
    } else {
        "the samples"
    };
    if spec.generate == 0 {
        return Err(format!(
            "{what} column is NULL for this row: fill it, or set job option generate to the number of samples to generate from the prompt"
        ));
    }
    let prompt = row
        .prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("{what} must be generated but the prompt is NULL or empty"))?;
    let g = generate::generate(llm, prompt, spec.generate, options)?;
    let mut responses = g.responses.into_iter();
    let original = responses.next();
    if answer_missing {
        generated_answer = original;
    }
    if samples_missing {
        let gen: Vec<GeneratedResponse> = responses.collect();
        *samples = Some(gen.iter().map(|r| r.text.clone()).collect());
        generated_samples = Some(gen);
    }
    Ok((generated_answer, generated_samples))
}

/// UAD over the claims just scored (job option `uad`): their scores by the UAD scorer are reused
/// when the job computed them (the UAD scorer is the first of `scorers` unless `uad_scorer`
/// names another).
fn row_uad(
    engine: &Engine,
    llm: &LlmService,
    spec: &JobSpec,
    answer: &str,
    samples: &[String],
    options: &Value,
    score: &ScoreResult,
) -> Result<Option<UadResult>, String> {
    if !spec.uad || score.units.is_empty() {
        return Ok(None);
    }
    let uad_scorer = spec.parsed.uad_scorer();
    Ok(Some(if spec.parsed.scoring.scorers.contains(&uad_scorer) {
        let scores = score.unit_scores(uad_scorer.name());
        uad::decide(
            engine,
            llm,
            &spec.parsed,
            answer,
            score.units.clone(),
            &score.origins,
            scores,
        )?
    } else {
        let mut o = options.clone();
        if let Some(map) = o.as_object_mut() {
            map.insert("units".into(), serde_json::json!(score.units));
            // The job's granularity decides: sentences are filtered without an LLM.
            let g = spec.parsed.decompose.granularity;
            map.insert("granularity".into(), serde_json::json!(g.as_str()));
        }
        uad::uad(engine, llm, answer, samples, &o)?
    }))
}

/// The graders' labels of the units (job options `grade` and `objectivity`).
fn grader_labels(
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    units: &[String],
) -> Result<Vec<(usize, &'static str, Graded)>, String> {
    let mut labels = Vec::new();
    if !(spec.grade || spec.objectivity) || units.is_empty() {
        return Ok(labels);
    }
    let judge = llm.for_role(&spec.parsed, LlmRole::Judge)?;
    if spec.grade {
        let reference = row.reference.as_deref().unwrap_or("");
        if reference.trim().is_empty() {
            return Err(format!(
                "the reference column {:?} is NULL or empty for this row: grading needs the reference text",
                col(&spec.columns.reference)
            ));
        }
        let graded = llm.block_on(grade::factscore_many(&judge, units, reference))?;
        labels.extend(
            graded
                .into_iter()
                .enumerate()
                .map(|(i, g)| (i, "factual", g)),
        );
    }
    if spec.objectivity {
        let graded = llm.block_on(grade::objectivity_many(&judge, units))?;
        labels.extend(
            graded
                .into_iter()
                .enumerate()
                .map(|(i, g)| (i, "objective", g)),
        );
    }
    Ok(labels)
}

/// The labels of `labels_column` for a row with `n_units` units: a JSON array of 0/1 (or
/// true/false), null for an unlabelled unit, one per unit.
fn given_labels(
    spec: &JobSpec,
    row: &SourceRow,
    n_units: usize,
) -> Result<Vec<(usize, &'static str, Graded)>, String> {
    let (Some(column), Some(text)) = (&spec.columns.labels, &row.labels) else {
        return Ok(Vec::new());
    };
    let how =
        "store one label per unit as a JSON array of 0, 1 or null, e.g. json_array(1, 0, null)";
    let items: Vec<Value> = serde_json::from_str(text)
        .map_err(|e| format!("column {column:?} is not a JSON array ({e}): {how}"))?;
    if items.len() != n_units {
        return Err(format!(
            "column {column:?} holds {} labels for {n_units} units: {how}",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_null())
        .map(|(i, v)| {
            let label = match v {
                Value::Bool(b) => *b,
                Value::Number(n) if n.as_i64() == Some(1) => true,
                Value::Number(n) if n.as_i64() == Some(0) => false,
                other => {
                    return Err(format!("column {column:?}[{i}] is {other}: {how}"));
                }
            };
            Ok((
                i,
                "factual",
                Graded {
                    label: Some(label),
                    raw: v.to_string(),
                    grader: format!("column:{column}"),
                },
            ))
        })
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
