//! The strength of a refit's prior, chosen on the target labels (module doc of
//! [`super`]): the prior c·P for c in [`SCALES`], each scored by the held-out log loss of
//! leave-one-answer-out over the labelled answers (refit on the other answers, predict the
//! held-out answer's units). The strongest prior whose loss is within one standard error of the
//! lowest is chosen (the one-standard-error rule, Hastie, Tibshirani & Friedman 2009, §7.10;
//! the error of the paired per-answer differences): with ten answers the lowest loss alone is
//! noisy, and a prior weakened on noise costs more than one kept a little too strong.

use crate::calibrate::fit::sigmoid;
use crate::calibrate::map_platt::{map_platt, Precision};
pub use crate::calibrate::records::ScaleChoice as Choice;
use crate::metrics::bootstrap::Clusters;

/// The scales c of the prior c·P tried, strongest first: 16 keeps the old model, 1 is Bayes' rule
/// with the old fit's information, 1/256 is close to Platt on the target labels alone.
pub const SCALES: [f64; 7] = [16.0, 4.0, 1.0, 0.25, 0.0625, 0.015625, 0.00390625];

/// Predictions are clipped to [ε, 1 − ε] in the held-out log loss.
const EPS: f64 = 1e-6;

/// Chooses c (module doc) for the labelled units `scores`, `labels`, grouped by `answers` (each
/// unit's answer id; `None`: each unit alone), the prior centred on `theta0` with precision
/// `precision`. With fewer than two folds nothing can be held out: c = 1.
pub fn choose(
    scores: &[f64],
    labels: &[bool],
    answers: Option<&[usize]>,
    theta0: (f64, f64),
    precision: Precision,
) -> Result<Choice, String> {
    if answers.is_some_and(|a| a.len() != scores.len()) || labels.len() != scores.len() {
        return Err(
            "internal error: the refit's scores, labels and answers differ in length".into(),
        );
    }
    let clusters = match answers {
        Some(a) => Clusters::of(a),
        None => Clusters::singletons(scores.len()),
    };
    let folds = clusters.groups();
    let by_answer = answers.is_some();
    if folds.len() < 2 {
        return Ok(Choice {
            scale: 1.0,
            folds: folds.len(),
            by_answer,
            log_loss: Vec::new(),
        });
    }
    let mut held_out = vec![false; scores.len()];
    let mut log_loss = Vec::with_capacity(SCALES.len());
    // per scale, each fold's summed held-out loss (None: a fit failed)
    let mut per_fold: Vec<Option<Vec<f64>>> = Vec::with_capacity(SCALES.len());
    for &c in &SCALES {
        let prior = precision.scaled(c);
        let mut fold_loss = Vec::with_capacity(folds.len());
        let mut failed = false;
        for fold in folds {
            fold.iter().for_each(|&i| held_out[i] = true);
            let (ts, tl): (Vec<f64>, Vec<bool>) = (0..scores.len())
                .filter(|&i| !held_out[i])
                .map(|i| (scores[i], labels[i]))
                .unzip();
            fold.iter().for_each(|&i| held_out[i] = false);
            let Ok((a, b)) = map_platt(&ts, &tl, theta0, prior) else {
                failed = true;
                break;
            };
            let loss: f64 = fold
                .iter()
                .map(|&i| {
                    let p = sigmoid(a * scores[i] + b).clamp(EPS, 1.0 - EPS);
                    -if labels[i] { p.ln() } else { (1.0 - p).ln() }
                })
                .sum();
            fold_loss.push(loss);
        }
        let n = scores.len() as f64;
        log_loss.push((c, (!failed).then(|| fold_loss.iter().sum::<f64>() / n)));
        per_fold.push((!failed).then_some(fold_loss));
    }
    let scale = one_standard_error(&per_fold).map_or(1.0, |k| SCALES[k]);
    Ok(Choice {
        scale,
        folds: folds.len(),
        by_answer,
        log_loss,
    })
}

/// The index of the first (strongest) scale whose summed held-out loss exceeds the lowest by at
/// most one standard error of the paired per-fold differences, √(F·var(dᵢ)) over the F folds;
/// `None` when every scale failed.
fn one_standard_error(per_fold: &[Option<Vec<f64>>]) -> Option<usize> {
    let total = |k: usize| per_fold[k].as_ref().map(|v| v.iter().sum::<f64>());
    let best = (0..per_fold.len())
        .filter_map(|k| Some((k, total(k)?)))
        .min_by(|x, y| x.1.total_cmp(&y.1))?;
    let best_folds = per_fold[best.0].as_ref()?;
    (0..per_fold.len()).find(|&k| {
        let Some(v) = &per_fold[k] else { return false };
        let d: Vec<f64> = v.iter().zip(best_folds).map(|(x, y)| x - y).collect();
        let f = d.len() as f64;
        let mean = d.iter().sum::<f64>() / f;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (f - 1.0).max(1.0);
        d.iter().sum::<f64>() <= (f * var).sqrt()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_standard_error_by_hand() {
        // Scale 1 has the lowest total (3.8 against 4.0). Scale 0's per-fold differences from
        // it, [0.1, −0.1, 0.2, 0], sum to 0.2, with variance 0.05/3: √(4 · 0.05/3) = 0.258 ≥
        // 0.2, so the stronger scale 0 is chosen.
        let near = vec![
            Some(vec![1.0, 1.0, 1.0, 1.0]),
            Some(vec![0.9, 1.1, 0.8, 1.0]),
            None,
        ];
        assert_eq!(one_standard_error(&near), Some(0));
        // Differences [0.4, 0.1, 0.45, 0.3]: sum 1.25 against √(4 · 0.02396) = 0.31: too far.
        let far = vec![Some(vec![1.3, 1.2, 1.25, 1.3]), near[1].clone()];
        assert_eq!(one_standard_error(&far), Some(1));
        assert_eq!(one_standard_error(&[None, None]), None);
    }
}
