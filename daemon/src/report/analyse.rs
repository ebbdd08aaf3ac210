//! The report's figures of merit, computed from the loaded rows (see the module doc of
//! `report`).
//!
//! One file per section of the page: `units` (the unit-level table), `response` (the
//! response-level table), `calibration` (the reliability diagrams, ECE and Brier before and
//! after calibration), `uad` (the UAD figure), `ablation` (AUROC vs m), `highlighted` and
//! `lowest` (the least confident answers and units), `notes` (the notes above the tables);
//! `groups` holds the grouping of the units they share.

mod ablation;
mod calibration;
mod groups;
mod highlighted;
mod lowest;
mod notes;
mod response;
mod uad;
mod units;

pub use ablation::{AblationGroup, Series};
pub use calibration::{calibration_bin, reliability, CalibratedMetrics, CALIBRATION_BINS};
pub use groups::GroupKey;
pub use highlighted::{HighlightedAnswer, HIGHLIGHTED_ANSWERS};
pub use response::ResponseMetrics;
#[cfg(test)]
pub(super) use uad::uad_curve;
pub use uad::{UadCurve, UadGroup, UAD_PERCENTILES};
pub use units::{unit_metrics, UnitMetrics};

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::report::load::{Data, Run, UnitRow};
use ablation::ablation;
use groups::{group_units, ordered_scorers};
use highlighted::least_confident_answers;
use lowest::lowest_units;
use notes::notes;
use response::response_metrics;
use uad::uad_group;

/// Everything computed for the page.
#[derive(Debug, Default)]
pub struct Report {
    pub db: String,
    pub data: Data,
    pub notes: Vec<String>,
    pub unit_metrics: Vec<UnitMetrics>,
    pub response_metrics: Vec<ResponseMetrics>,
    pub uad: Vec<UadGroup>,
    pub ablation: Vec<AblationGroup>,
    /// Per (run, granularity): the scorer shown and its lowest-scored units.
    pub lowest: Vec<(GroupKey, String, Vec<UnitRow>)>,
    /// Per (run, granularity): the scorer shown and its least confident answers, highlighted.
    pub highlighted: Vec<(GroupKey, String, Vec<HighlightedAnswer>)>,
}

/// Computes every table and figure's data.
pub fn analyse(db: String, data: Data) -> Report {
    let runs_by_id: HashMap<i64, &Run> = data.runs.iter().map(|r| (r.id, r)).collect();
    let groups = group_units(&data.units);
    let objective_only: BTreeMap<GroupKey, bool> = groups
        .iter()
        .map(|(k, by)| {
            (
                k.clone(),
                by.values().flatten().any(|u| u.objective.is_some()),
            )
        })
        .collect();

    let mut unit_metrics_v = Vec::new();
    let mut uad = Vec::new();
    let mut lowest = Vec::new();
    let mut highlighted = Vec::new();
    for (key, by_scorer) in &groups {
        let obj = objective_only[key];
        let present: BTreeSet<String> = by_scorer.keys().cloned().collect();
        let scorers = ordered_scorers(runs_by_id.get(&key.0).copied(), &present);
        for scorer in &scorers {
            unit_metrics_v.push(unit_metrics(key, scorer, &by_scorer[scorer], obj));
        }
        uad.extend(uad_group(key, by_scorer, &scorers, obj));
        if let Some(first) = scorers.first() {
            lowest.push((key.clone(), first.clone(), lowest_units(&by_scorer[first])));
            let answers = least_confident_answers(&data, &by_scorer[first]);
            highlighted.push((key.clone(), first.clone(), answers));
        }
    }
    let response_metrics = response_metrics(&data.answers);
    let ablation = ablation(&data.units, &unit_metrics_v, &runs_by_id);
    let notes = notes(&data, &objective_only, &unit_metrics_v);
    Report {
        db,
        data,
        notes,
        unit_metrics: unit_metrics_v,
        response_metrics,
        uad,
        ablation,
        lowest,
        highlighted,
    }
}
