//! The calibration section: the reliability diagrams' bins, and ECE and Brier before and after
//! calibration for scorers with calibrated scores (column `calibrated`, option `calibration`).

use uq_core::metrics::{brier, ece};

use super::groups::evaluated;
use crate::report::load::UnitRow;

/// Equal-width bins of the ECE and of the reliability diagrams.
pub const CALIBRATION_BINS: usize = 10;

/// ECE and Brier of a scorer's raw and calibrated scores (column `calibrated`, a run with
/// option `calibration`), over the evaluated units that have a calibrated score.
#[derive(Debug, Clone)]
pub struct CalibratedMetrics {
    pub n_evaluated: usize,
    /// Raw scores of the same units; `None` when some lies outside [0, 1].
    pub ece_raw: Option<f64>,
    pub brier_raw: Option<f64>,
    pub ece: Option<f64>,
    pub brier: Option<f64>,
    /// The evaluated (calibrated score, factual) pairs, for the reliability diagram.
    pub pairs: Vec<(f64, bool)>,
}

impl CalibratedMetrics {
    pub(super) fn of(rows: &[&UnitRow], objective_only: bool) -> Option<CalibratedMetrics> {
        let (mut raw, mut cal, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for u in rows {
            if let (Some((s, l)), Some(c)) = (evaluated(u, objective_only), u.calibrated) {
                raw.push(s);
                cal.push(c);
                labels.push(l);
            }
        }
        if cal.is_empty() {
            return None;
        }
        let raw_ok = raw.iter().all(|s| (0.0..=1.0).contains(s));
        Some(CalibratedMetrics {
            n_evaluated: cal.len(),
            ece_raw: raw_ok
                .then(|| ece(&raw, &labels, CALIBRATION_BINS))
                .flatten(),
            brier_raw: raw_ok.then(|| brier(&raw, &labels)).flatten(),
            ece: ece(&cal, &labels, CALIBRATION_BINS),
            brier: brier(&cal, &labels),
            pairs: cal.into_iter().zip(labels).collect(),
        })
    }
}

/// The calibration bin of a score, as `uq_core::metrics::ece` bins it.
pub fn calibration_bin(s: f64, bins: usize) -> usize {
    uq_core::metrics::ece_bin(s, bins)
}

/// Per bin: (count, mean score, factual rate).
pub fn reliability(pairs: &[(f64, bool)]) -> Vec<(usize, f64, f64)> {
    let mut acc = vec![(0usize, 0.0f64, 0usize); CALIBRATION_BINS];
    for &(s, l) in pairs {
        let b = &mut acc[calibration_bin(s, CALIBRATION_BINS)];
        b.0 += 1;
        b.1 += s;
        b.2 += usize::from(l);
    }
    acc.into_iter()
        .map(|(c, sum, pos)| {
            if c == 0 {
                (0, f64::NAN, f64::NAN)
            } else {
                (c, sum / c as f64, pos as f64 / c as f64)
            }
        })
        .collect()
}
