//! The units of the report, grouped by (run, granularity) and then by scorer, the scorers in
//! their run's order, and which units are evaluated.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::load::{Run, UnitRow};

/// (run, granularity): the units of one run at one granularity.
pub type GroupKey = (i64, String);

/// (run, granularity) → scorer → rows.
pub(super) type Groups<'a> = BTreeMap<GroupKey, BTreeMap<String, Vec<&'a UnitRow>>>;

/// The units grouped by (run, granularity), then by scorer.
pub(super) fn group_units(units: &[UnitRow]) -> Groups<'_> {
    let mut groups: Groups = BTreeMap::new();
    for u in units {
        groups
            .entry((u.run_id, u.granularity.clone()))
            .or_default()
            .entry(u.scorer.clone())
            .or_default()
            .push(u);
    }
    groups
}

/// Scorers of a group in the run's `scorers_json` order, then any others by name.
pub(super) fn ordered_scorers(run: Option<&Run>, present: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = run
        .map(|r| {
            r.scorers
                .iter()
                .filter(|s| present.contains(*s))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    out.dedup();
    for s in present {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// Whether a unit row is evaluated: scored, labelled factual/non-factual, and objective when
/// the group is restricted to objective units.
pub(super) fn evaluated(u: &UnitRow, objective_only: bool) -> Option<(f64, bool)> {
    let label = u.label?;
    if objective_only && u.objective != Some(true) {
        return None;
    }
    Some((u.score?, label))
}
