//! The "least confident units" section: per run and granularity, the lowest-scored units.

use crate::report::load::UnitRow;

/// The 8 lowest-scored units of one scorer (ties by unit id).
pub(super) fn lowest_units(rows: &[&UnitRow]) -> Vec<UnitRow> {
    let mut rows: Vec<UnitRow> = rows
        .iter()
        .filter(|u| u.score.is_some())
        .map(|u| (*u).clone())
        .collect();
    rows.sort_by(|a, b| {
        a.score
            .unwrap_or(0.0)
            .total_cmp(&b.score.unwrap_or(0.0))
            .then(a.unit_id.cmp(&b.unit_id))
    });
    rows.truncate(8);
    rows
}
