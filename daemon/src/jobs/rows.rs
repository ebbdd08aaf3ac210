//! The rows a job reads and writes: its `uq_job` row, a source row, what scoring a row produced,
//! and the progress after each chunk (shared by run.rs and write.rs).

use uq_core::protocol::{GeneratedResponse, ScoreResult, UadResult};

use crate::grade::Graded;

/// A job row as stored.
#[derive(Debug, Clone)]
pub struct JobRow {
    pub job_id: i64,
    pub run_id: Option<i64>,
    pub source_table: String,
    pub options_json: String,
    pub status: String,
}

/// Progress after each committed chunk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    pub done: i64,
    pub total: i64,
    pub errors: i64,
    /// Rows committed by this run (not counting earlier runs of a resumed job).
    pub rows_this_run: usize,
}

/// One source row.
#[derive(Debug, Clone)]
pub struct SourceRow {
    pub key: String,
    pub prompt: Option<String>,
    pub answer: Option<String>,
    pub samples: Option<String>,
    pub reference: Option<String>,
    pub units: Option<String>,
    pub claim_union: Option<String>,
    pub labels: Option<String>,
    /// The row's sources (job option `sources_column`): a text or a JSON array of passages.
    pub sources: Option<String>,
}

/// What scoring one row produced.
#[derive(Debug, Clone)]
pub struct RowOut {
    pub answer: String,
    /// The generated original answer, when the row had none.
    pub generated_answer: Option<GeneratedResponse>,
    pub samples: Vec<String>,
    /// Per sample, its generation record when uqlite generated the samples.
    pub generated_samples: Option<Vec<GeneratedResponse>>,
    pub score: ScoreResult,
    pub uad: Option<UadResult>,
    /// (unit index, kind, grade): graders' labels, and the labels of `labels_column`.
    pub labels: Vec<(usize, &'static str, Graded)>,
    /// NLI pairs the judge LLM (option `nli_llm`) could not read in this row (NULL, left out).
    pub nli_unparsed: usize,
    /// With job option `sample_when_open`: the samples the row did not need (the sources
    /// decided every unit), 0 otherwise.
    pub samples_saved: usize,
    /// Notes of the FTS5 retrieval of this row's sources (queries that found nothing).
    pub retrieval_notes: usize,
}
