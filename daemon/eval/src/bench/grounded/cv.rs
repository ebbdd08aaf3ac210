//! `bench grounded`'s cross-validated line: `grounded_fallback`'s thresholds chosen on folds of
//! WikiBio passages and judged on the held-out ones, beside the default, the threshold-free
//! form and the samples alone, with intervals over resampled passages.

use serde_json::{json, Value};
use uq_core::evaluation::{Figure, Labelled};
use uq_core::metrics::bootstrap::{Interval, RESAMPLES, SEED};
use uq_core::protocol::NliProbs;
use uq_core::score::grounded::{Thresholds, DEFAULT_THRESHOLDS};

use super::super::lines::round;
use super::metrics::fallback_scores;

/// Folds of passages for the cross-validated thresholds.
const CV_FOLDS: usize = 5;

/// `grounded_fallback`'s thresholds chosen by cross-validation over the passages: per fold, the
/// (τ_e, τ_c) of the grid (with (1, 1): no verdict, the larger of the source's p_e and the
/// samples' score everywhere) with the best AUROC on the other folds, applied to the held-out
/// passages; the pooled held-out scores' AUROC beside the default thresholds', the (1, 1)
/// form's and the samples' alone, with 95 % intervals over resampled passages and the paired
/// differences (docs/design.md, the rule for defaults).
pub(super) fn cross_validated(
    probs: &[Vec<NliProbs>],
    ce: &[f64],
    accurate: &[bool],
    rec: &[usize],
) -> Value {
    let score = |t: Thresholds| fallback_scores(probs, ce, t);
    let mut grid = vec![Thresholds {
        entailment: 1.0,
        contradiction: 1.0,
    }];
    for te in [0.5, 0.6, 0.7, 0.8, 0.9] {
        for tc in [0.5, 0.7, 0.8, 0.9, 0.95] {
            grid.push(Thresholds {
                entailment: te,
                contradiction: tc,
            });
        }
    }
    // The units' scores under a setting, labelled and grouped by passage.
    let set = |conf: &[f64]| Labelled {
        scores: conf.to_vec(),
        labels: accurate.to_vec(),
        answers: rec.to_vec(),
        major: Vec::new(),
    };
    let scored: Vec<Labelled> = grid.iter().map(|&t| set(&score(t))).collect();
    let mut cv = vec![f64::NAN; ce.len()];
    let mut chosen = Vec::new();
    for f in 0..CV_FOLDS {
        let train: Vec<usize> = (0..rec.len()).filter(|&i| rec[i] % CV_FOLDS != f).collect();
        let auc: Vec<f64> = scored
            .iter()
            .map(|s| Figure::Auroc.of(s, &train).unwrap_or(0.0))
            .collect();
        let best = (0..grid.len())
            .max_by(|&x, &y| auc[x].total_cmp(&auc[y]))
            .unwrap_or(0);
        chosen.push(json!([grid[best].entailment, grid[best].contradiction]));
        for i in (0..cv.len()).filter(|&i| rec[i] % CV_FOLDS == f) {
            cv[i] = scored[best].scores[i];
        }
    }
    let ci = |i: Option<Interval>| {
        i.map(
            |i| json!({"estimate": round(i.estimate), "low": round(i.low), "high": round(i.high)}),
        )
    };
    let one = |s: &Labelled| ci(Figure::Auroc.interval(s, RESAMPLES, SEED));
    // a − b, paired
    let diff =
        |a: &Labelled, b: &Labelled| ci(Figure::Auroc.paired(b, a, RESAMPLES, SEED).ok().flatten());
    let (cv, default, max, samples) = (
        set(&cv),
        set(&score(DEFAULT_THRESHOLDS)),
        &scored[0],
        set(ce),
    );
    json!({"bench": "grounded", "data": "wikibio",
        "thresholds": format!("cross-validated over {CV_FOLDS} folds of passages"),
        "chosen_per_fold": chosen, "auroc_cv": one(&cv), "auroc_default": one(&default),
        "auroc_max": one(max), "auroc_samples": one(&samples),
        "cv_minus_default": diff(&cv, &default), "max_minus_default": diff(max, &default),
        "max_minus_samples": diff(max, &samples), "default_minus_samples": diff(&default, &samples)})
}
