//! The steps after a job's last row: the tally of its rows ([`Unparsed`]), then its notes
//! (failed rows, unreadable judge replies, the samples `sample_when_open` saved, UAD's conformal
//! guarantee, empty retrievals) and the calibration's adaptation and refit (`jobs/adapt.rs`).

use rusqlite::Connection;
use uq_core::jobs::JobSpec;

use crate::engine::Engine;
use crate::jobs::rows::{Progress, RowOut};
use crate::judge;

/// NLI pairs the judge LLM could not read, and in how many rows, in the rows of this run; the
/// samples `sample_when_open` saved and the retrieval notes.
#[derive(Default)]
pub(super) struct Unparsed {
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
    pub(super) fn add(&mut self, results: &[Result<RowOut, String>]) {
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
pub(super) fn run_notes(progress: &Progress, job_id: i64, unparsed: &Unparsed) -> Vec<String> {
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

/// The notes of a job run that ended with `progress` and `unparsed`, then the calibration steps
/// (adaptation, refit) with theirs; the job's message is these lines.
pub(super) fn after_rows(
    conn: &mut Connection,
    engine: &Engine,
    run_id: i64,
    spec: &JobSpec,
    progress: &Progress,
    job_id: i64,
    unparsed: &Unparsed,
) -> Result<Vec<String>, String> {
    // The job's notes: failed rows, unreadable judge replies, then calibration (adaptation,
    // settings that differ).
    let mut notes = run_notes(progress, job_id, unparsed);
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
    notes.extend(crate::jobs::adapt::finish_calibration(
        conn, engine, run_id, spec,
    )?);
    Ok(notes)
}
