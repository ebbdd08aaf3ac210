//! The UAD figure: accuracy vs percentile threshold per scorer, each answer keeping its units at
//! or above the q-th percentile of its own unit scores (`uq_core::aggregate::uad_kept_accuracy`).

use std::collections::BTreeMap;

use uq_core::aggregate::uad_kept_accuracy;

use super::groups::GroupKey;
use crate::report::load::UnitRow;

/// UAD percentile thresholds (0 = nothing filtered).
pub const UAD_PERCENTILES: [u32; 10] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90];

/// UAD accuracy per percentile for one scorer (index i ↔ `UAD_PERCENTILES[i]`).
#[derive(Debug, Clone)]
pub struct UadCurve {
    pub scorer: String,
    pub accuracy: Vec<Option<f64>>,
    pub kept: Vec<usize>,
}

/// UAD curves of one (run, granularity) with its baseline accuracy.
#[derive(Debug, Clone)]
pub struct UadGroup {
    pub key: GroupKey,
    pub objective_only: bool,
    pub baseline: Option<f64>,
    pub n_labelled: usize,
    pub curves: Vec<UadCurve>,
}

/// The units of one answer for UAD: (score, evaluated factual label) in unit order.
type UadUnits = Vec<(Option<f64>, Option<bool>)>;

/// UAD accuracy of one scorer over answers (each a list of (score, evaluated label)), per
/// percentile of [`UAD_PERCENTILES`] (`uq_core::aggregate::uad_kept_accuracy`, as
/// `uqd bench claims --uad`).
pub(in crate::report) fn uad_curve(scorer: &str, answers: &[UadUnits]) -> UadCurve {
    let split: Vec<(Vec<f64>, Vec<Option<bool>>)> = answers
        .iter()
        .map(|units| units.iter().map(|u| (u.0.unwrap_or(f64::NAN), u.1)).unzip())
        .collect();
    let (mut accuracy, mut kept_n) = (Vec::new(), Vec::new());
    for q in UAD_PERCENTILES {
        let pooled = split.iter().map(|(s, l)| (s.as_slice(), l.as_slice()));
        let (kept, acc) = uad_kept_accuracy(pooled, f64::from(q));
        accuracy.push(acc);
        kept_n.push(kept);
    }
    UadCurve {
        scorer: scorer.to_string(),
        accuracy,
        kept: kept_n,
    }
}

/// UAD curves of one (run, granularity): per scorer, per answer, (score, evaluated label) in
/// unit order; `None` when no unit is evaluated.
pub(super) fn uad_group(
    key: &GroupKey,
    by_scorer: &BTreeMap<String, Vec<&UnitRow>>,
    scorers: &[String],
    obj: bool,
) -> Option<UadGroup> {
    let mut labelled_units: BTreeMap<i64, bool> = BTreeMap::new();
    for u in by_scorer.values().flatten() {
        if let Some(l) = u.label.filter(|_| !obj || u.objective == Some(true)) {
            labelled_units.insert(u.unit_id, l);
        }
    }
    if labelled_units.is_empty() {
        return None;
    }
    let n = labelled_units.len();
    let baseline = labelled_units.values().filter(|&&l| l).count() as f64 / n as f64;
    let curves = scorers
        .iter()
        .map(|scorer| {
            let mut per_answer: BTreeMap<i64, UadUnits> = BTreeMap::new();
            for u in &by_scorer[scorer] {
                let l = u.label.filter(|_| !obj || u.objective == Some(true));
                per_answer
                    .entry(u.answer_id)
                    .or_default()
                    .push((u.score, l));
            }
            uad_curve(scorer, &per_answer.into_values().collect::<Vec<_>>())
        })
        .collect();
    Some(UadGroup {
        key: key.clone(),
        objective_only: obj,
        baseline: Some(baseline),
        n_labelled: n,
        curves,
    })
}
