//! The notes above the report's tables.

use std::collections::BTreeMap;

use super::groups::GroupKey;
use super::units::UnitMetrics;
use crate::report::load::{Data, NO_SCHEMA};

/// The notes above the tables: what is missing, objective-only groups, out-of-range scores.
pub(super) fn notes(
    data: &Data,
    objective_only: &BTreeMap<GroupKey, bool>,
    unit_metrics_v: &[UnitMetrics],
) -> Vec<String> {
    let mut notes = Vec::new();
    if data.runs.is_empty() && data.units.is_empty() {
        notes.push(format!("no scored answers in the database: {NO_SCHEMA}"));
    } else if data.units.is_empty() {
        notes.push(
            "the runs have no unit scores yet (a job may still be running: see the view uq_jobs)"
                .into(),
        );
    } else if data.units.iter().all(|u| u.label.is_none()) {
        notes.push(
            "no factual labels (uq_label rows of kind 'factual'): AUROC, AUPRC, Brier, ECE, \
             calibration, UAD and the AUROC-vs-m figures need them; the tables show n/a"
                .into(),
        );
    }
    for (key, obj) in objective_only {
        if *obj {
            notes.push(format!(
                "run {} ({}): units carry 'objective' labels, so, as the paper, only units labelled objective (1) are evaluated",
                key.0, key.1
            ));
        }
    }
    if unit_metrics_v.iter().any(|m| m.out_of_range) {
        notes.push("some scorers give scores outside [0, 1]: their Brier, ECE and reliability diagram are not shown".into());
    }
    notes
}
