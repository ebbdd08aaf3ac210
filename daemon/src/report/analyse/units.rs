//! The unit-level table: per run, granularity and scorer, the unit scores against the factual
//! labels (AUROC, AUPRC both ways, Brier, ECE, best F1), as `uq_core::metrics` computes them.

use uq_core::metrics::{auroc, average_precision, best_f1_threshold, brier, ece};

use super::calibration::{CalibratedMetrics, CALIBRATION_BINS};
use super::groups::{evaluated, GroupKey};
use crate::report::load::UnitRow;

/// Unit-level metrics of one scorer in one (run, granularity).
#[derive(Debug, Clone)]
pub struct UnitMetrics {
    pub run_id: i64,
    pub granularity: String,
    pub scorer: String,
    pub n_units: usize,
    pub n_labelled: usize,
    /// Scored, labelled, and objective when the group has objective labels.
    pub n_evaluated: usize,
    pub objective_only: bool,
    pub factual_rate: Option<f64>,
    pub auroc: Option<f64>,
    pub auprc_factual: Option<f64>,
    pub auprc_nonfactual: Option<f64>,
    pub brier: Option<f64>,
    pub ece: Option<f64>,
    pub best_f1: Option<(f64, f64)>,
    /// Some score lies outside [0, 1]: Brier and ECE are not shown.
    pub out_of_range: bool,
    /// The evaluated (score, factual) pairs, for the reliability diagram.
    pub pairs: Vec<(f64, bool)>,
    /// Before and after calibration, when the run stored calibrated scores of this scorer.
    pub calibrated: Option<CalibratedMetrics>,
}

/// Unit metrics of the rows of one scorer.
pub fn unit_metrics(
    key: &GroupKey,
    scorer: &str,
    rows: &[&UnitRow],
    objective_only: bool,
) -> UnitMetrics {
    let pairs: Vec<(f64, bool)> = rows
        .iter()
        .filter_map(|u| evaluated(u, objective_only))
        .collect();
    let scores: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let labels: Vec<bool> = pairs.iter().map(|p| p.1).collect();
    let negated: Vec<f64> = scores.iter().map(|s| -s).collect();
    let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
    let out_of_range = scores.iter().any(|s| !(0.0..=1.0).contains(s));
    let n = pairs.len();
    UnitMetrics {
        run_id: key.0,
        granularity: key.1.clone(),
        scorer: scorer.to_string(),
        n_units: rows.len(),
        n_labelled: rows.iter().filter(|u| u.label.is_some()).count(),
        n_evaluated: n,
        objective_only,
        factual_rate: (n > 0).then(|| labels.iter().filter(|&&l| l).count() as f64 / n as f64),
        auroc: auroc(&scores, &labels),
        auprc_factual: average_precision(&scores, &labels),
        auprc_nonfactual: average_precision(&negated, &flipped),
        brier: if out_of_range {
            None
        } else {
            brier(&scores, &labels)
        },
        ece: if out_of_range {
            None
        } else {
            ece(&scores, &labels, CALIBRATION_BINS)
        },
        best_f1: best_f1_threshold(&scores, &labels),
        out_of_range,
        pairs,
        calibrated: CalibratedMetrics::of(rows, objective_only),
    }
}
