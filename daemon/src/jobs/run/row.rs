//! One source row scored: its options and samples (generated where missing), its grounded step,
//! the pipeline, then its UAD step and its labels.

use std::path::Path;

use serde_json::Value;
use uq_core::jobs::JobSpec;
use uq_core::protocol::ScoreResult;

use super::cells::row_options;
use super::grounded;
use super::labels::{given_labels, grader_labels};
use super::sampling::{generate_missing, logprob_options, row_samples, Generated};
use super::uad::row_uad;
use crate::engine::Engine;
use crate::jobs::rows::{RowOut, SourceRow};
use crate::pipeline;
use crate::role_llms::LlmService;

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
        Some(answer) => grounded::resolve_sources(db, &mut options, answer)?,
        None => Vec::new(),
    };
    // With sample_when_open, a row without samples is scored on its sources first; only when
    // they leave a unit open are the samples generated and the row scored again.
    if let (true, None, Some(answer)) = (spec.sample_when_open, &samples, given_answer) {
        if let Some(mut score) = grounded::decided_by_sources(engine, llm, answer, &options)? {
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
    let generated = generate_missing(llm, spec, row, &options, &mut samples)?;
    logprob_options(&mut options, &generated);
    let (generated_answer, generated_samples) = generated;
    let answer = match &generated_answer {
        Some(g) => g.text.clone(),
        None => row.answer.clone().unwrap_or_default(),
    };
    let samples = samples.unwrap_or_default();
    if given_answer.is_none() {
        notes = grounded::resolve_sources(db, &mut options, &answer)?;
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
