//! A validated job: what [`super::parse_job`] returns.

use serde_json::Value;

use super::columns::Columns;
use super::keys::Prices;
use crate::options::{Adapt, ScoreOptions};

/// A validated job.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub columns: Columns,
    pub generate: usize,
    pub grade: bool,
    pub objectivity: bool,
    pub uad: bool,
    /// Option `sample_when_open`: generate samples only for rows the sources leave open
    /// (`grounded_fallback` as the band: a threshold option given).
    pub sample_when_open: bool,
    /// Option `chunk_size`; `None`: the device's default (the daemon's `DeviceDefaults`).
    pub chunk_size: Option<usize>,
    /// Option `concurrency`; `None`: the device's default.
    pub concurrency: Option<usize>,
    pub prices: Option<Prices>,
    /// Option `calibration.adapt`: adapt the calibration models to the job's answers.
    pub adapt: Option<Adapt>,
    /// Option `calibration.refit`: refit the calibration models on the job's labelled units
    /// (per the same groups as `adapt`).
    pub refit: Option<Adapt>,
    /// The scoring options (job keys and `calibration.adapt` removed), as given.
    pub scoring: Value,
    /// The same, parsed.
    pub parsed: ScoreOptions,
}
