//! `bench grounded`'s cross-validated line: `grounded_fallback`'s thresholds chosen on folds of
//! WikiBio passages and judged on the held-out ones, beside the default, the threshold-free
//! form and the samples alone, with intervals over resampled passages.

use serde_json::{json, Value};
use uq_core::metrics::auroc;
use uq_core::protocol::NliProbs;
use uq_core::score::grounded::{band_score, check, Thresholds, DEFAULT_THRESHOLDS};

use super::super::lines::round;

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
    use uq_core::metrics::bootstrap::{bootstrap, paired, Clusters, Interval, RESAMPLES, SEED};
    let score = |t: Thresholds| -> Vec<f64> {
        probs
            .iter()
            .zip(ce)
            .map(|(p, &s)| band_score(&check(p, t), t, Some(s)))
            .collect()
    };
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
    let scored: Vec<Vec<f64>> = grid.iter().map(|&t| score(t)).collect();
    let auc_where = |conf: &[f64], keep: &dyn Fn(usize) -> bool| -> f64 {
        let (c, a): (Vec<f64>, Vec<bool>) = (0..conf.len())
            .filter(|&i| keep(i) && conf[i].is_finite())
            .map(|i| (conf[i], accurate[i]))
            .unzip();
        auroc(&c, &a).unwrap_or(0.0)
    };
    let mut cv = vec![f64::NAN; ce.len()];
    let mut chosen = Vec::new();
    for f in 0..CV_FOLDS {
        let best = (0..grid.len())
            .max_by(|&x, &y| {
                auc_where(&scored[x], &|i| rec[i] % CV_FOLDS != f)
                    .total_cmp(&auc_where(&scored[y], &|i| rec[i] % CV_FOLDS != f))
            })
            .unwrap_or(0);
        chosen.push(json!([grid[best].entailment, grid[best].contradiction]));
        for i in (0..cv.len()).filter(|&i| rec[i] % CV_FOLDS == f) {
            cv[i] = scored[best][i];
        }
    }
    let clusters = Clusters::of(rec);
    let fig = |conf: &[f64], idx: &[usize]| {
        let (c, a): (Vec<f64>, Vec<bool>) = idx
            .iter()
            .filter(|&&i| conf[i].is_finite())
            .map(|&i| (conf[i], accurate[i]))
            .unzip();
        auroc(&c, &a)
    };
    let ci = |i: Option<Interval>| {
        i.map(
            |i| json!({"estimate": round(i.estimate), "low": round(i.low), "high": round(i.high)}),
        )
    };
    let one = |conf: &[f64]| ci(bootstrap(&clusters, RESAMPLES, SEED, |idx| fig(conf, idx)));
    let diff = |a: &[f64], b: &[f64]| {
        ci(paired(
            &clusters,
            RESAMPLES,
            SEED,
            |idx| fig(a, idx),
            |idx| fig(b, idx),
        ))
    };
    let default = score(DEFAULT_THRESHOLDS);
    let max = &scored[0];
    json!({"bench": "grounded", "data": "wikibio",
        "thresholds": format!("cross-validated over {CV_FOLDS} folds of passages"),
        "chosen_per_fold": chosen, "auroc_cv": one(&cv), "auroc_default": one(&default),
        "auroc_max": one(max), "auroc_samples": one(ce),
        "cv_minus_default": diff(&cv, &default), "max_minus_default": diff(max, &default),
        "max_minus_samples": diff(max, ce), "default_minus_samples": diff(&default, ce)})
}
