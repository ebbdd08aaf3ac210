//! What `uqd eval` evaluates ([`EvalArgs`]) and finds ([`Evaluation`]).

use std::path::Path;

use uq_core::calibrate::conformal::Conformal;
use uq_core::calibrate::Calibration;
use uq_core::evaluation::Labelled;
use uq_core::metrics::bootstrap::Interval;

use super::labels::LabelsSpec;
use super::relabel::Matching;

pub struct EvalArgs<'a> {
    pub db: &'a Path,
    /// Only the answers of this source table (`None`: all).
    pub table: Option<&'a str>,
    pub resamples: usize,
    pub seed: u64,
    /// The conformal level.
    pub alpha: f64,
    /// Write `uq_eval` / `uq_eval_figure` (else print only).
    pub write: bool,
    /// `--labels`: the labels from this table instead of the job's (needs `table`).
    pub labels: Option<&'a LabelsSpec>,
}

/// One scorer's labelled units and figures (name, interval).
pub struct Scored {
    pub scorer: String,
    pub set: Labelled,
    pub figures: Vec<(&'static str, Option<Interval>)>,
}

/// One run and granularity evaluated.
pub struct Evaluation {
    pub run_id: i64,
    pub granularity: String,
    pub scorers: Vec<Scored>,
    pub recommended: Option<String>,
    pub calibration: Option<Calibration>,
    pub conformal: Option<Conformal>,
    pub notes: Vec<String>,
    /// With `--labels`: how the units were matched to the labelled sentences.
    pub matching: Option<Matching>,
}

impl Evaluation {
    /// (labelled units, answers) of the scorer that scored the most.
    pub(crate) fn size(&self) -> (usize, usize) {
        self.scorers
            .iter()
            .map(|s| (s.set.labels.len(), s.set.clusters().answers()))
            .max()
            .unwrap_or((0, 0))
    }
}
