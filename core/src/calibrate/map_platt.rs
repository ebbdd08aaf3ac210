//! The MAP refit of a Platt model with a Gaussian prior on (a, b), and the cross-validated choice
//! of its strength λ: the maths of [`super::refit`], free of
//! [`Calibration`](super::model::Calibration) so that fitting a model can choose λ. "Module doc"
//! below is [`super::refit`]'s.

use super::fit::{fit_platt, platt_targets, sigmoid, softplus};

/// Folds of the cross-validation that chooses λ.
pub const FOLDS: usize = 5;
/// The λ grid: 2^−6, 2^−5, …, 2^12.
pub const STRENGTHS: [f64; 19] = {
    let mut v = [0.0; 19];
    let mut i = 0;
    let mut x = 1.0 / 64.0;
    while i < 19 {
        v[i] = x;
        x *= 2.0;
        i += 1;
    }
    v
};

/// The MAP (a, b) (module doc) for the smoothed targets of `labels` at `scores`, prior centre
/// `theta0`, strength `lambda` > 0. Newton's method with backtracking on F.
pub fn map_platt(
    scores: &[f64],
    labels: &[bool],
    theta0: (f64, f64),
    lambda: f64,
) -> Result<(f64, f64), String> {
    let targets = platt_targets(labels);
    let (a0, b0) = theta0;
    let loss = |a: f64, b: f64| -> f64 {
        let nll: f64 = scores
            .iter()
            .zip(&targets)
            .map(|(&s, &t)| {
                let z = a * s + b;
                (1.0 - t) * z + softplus(-z)
            })
            .sum();
        nll + 0.5 * lambda * ((a - a0).powi(2) + (b - b0).powi(2))
    };
    let (mut a, mut b) = theta0;
    let mut f = loss(a, b);
    for _ in 0..200 {
        let (mut ga, mut gb) = (lambda * (a - a0), lambda * (b - b0));
        let (mut haa, mut hab, mut hbb) = (lambda, 0.0, lambda);
        for (&s, &t) in scores.iter().zip(&targets) {
            let p = sigmoid(a * s + b);
            let w = p * (1.0 - p);
            ga += (p - t) * s;
            gb += p - t;
            haa += w * s * s;
            hab += w * s;
            hbb += w;
        }
        let scale = 1.0 + lambda + scores.len() as f64;
        if ga.abs() < 1e-12 * scale && gb.abs() < 1e-12 * scale {
            break;
        }
        let det = haa * hbb - hab * hab;
        let da = -(hbb * ga - hab * gb) / det;
        let db = -(haa * gb - hab * ga) / det;
        let slope = ga * da + gb * db;
        if slope.abs() < 1e-9 * (1.0 + f.abs()) {
            // quadratic region: the full Newton step (as in `fit_platt`)
            (a, b) = (a + da, b + db);
            f = loss(a, b);
            continue;
        }
        let mut step = 1.0;
        let mut moved = false;
        while step >= 1e-10 {
            let (na, nb) = (a + step * da, b + step * db);
            let nf = loss(na, nb);
            if nf <= f + 1e-4 * step * slope {
                (a, b, f) = (na, nb, nf);
                moved = true;
                break;
            }
            step /= 2.0;
        }
        if !moved {
            break;
        }
    }
    if a.is_finite() && b.is_finite() {
        Ok((a, b))
    } else {
        Err("internal error: the MAP refit diverged".to_string())
    }
}

/// Log loss Σ −[y ln p + (1 − y) ln(1 − p)] of σ(a·s + b) on 0/1 labels.
fn log_loss(scores: &[f64], labels: &[bool], (a, b): (f64, f64)) -> f64 {
    scores
        .iter()
        .zip(labels)
        .map(|(&s, &l)| {
            let z = a * s + b;
            if l {
                softplus(-z)
            } else {
                softplus(z)
            }
        })
        .sum()
}

pub(super) fn both_classes(labels: &[bool]) -> bool {
    labels.iter().any(|&l| l) && labels.iter().any(|&l| !l)
}

/// One round of [`choose_strength`]: the prior centre, the training half and the held-out half
/// (row ranges).
type Round = ((f64, f64), (usize, usize), (usize, usize));

/// λ for refits from a Platt model fitted on (`scores`, `labels`), by the cross-validation of the
/// module doc; `None` when no fold can be played through (too few rows, or every fold's other
/// folds or halves of one class).
pub fn choose_strength(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let n = scores.len();
    if n < 4 * FOLDS {
        return None;
    }
    let mut rounds: Vec<Round> = Vec::new();
    for f in 0..FOLDS {
        let (lo, hi) = (f * n / FOLDS, (f + 1) * n / FOLDS);
        let rest_s: Vec<f64> = [&scores[..lo], &scores[hi..]].concat();
        let rest_l: Vec<bool> = [&labels[..lo], &labels[hi..]].concat();
        if !both_classes(&rest_l) {
            continue;
        }
        let Ok(theta0) = fit_platt(&rest_s, &rest_l) else {
            continue;
        };
        let mid = (lo + hi) / 2;
        for (train, held) in [((lo, mid), (mid, hi)), ((mid, hi), (lo, mid))] {
            if train.1 > train.0 && held.1 > held.0 {
                rounds.push((theta0, train, held));
            }
        }
    }
    if rounds.is_empty() {
        return None;
    }
    let mut best: Option<(f64, f64)> = None; // (loss, λ)
    for &lambda in &STRENGTHS {
        let mut total = 0.0;
        for &(theta0, (t0, t1), (h0, h1)) in &rounds {
            let theta = match map_platt(&scores[t0..t1], &labels[t0..t1], theta0, lambda) {
                Ok(t) => t,
                Err(_) => theta0,
            };
            total += log_loss(&scores[h0..h1], &labels[h0..h1], theta);
        }
        if best.is_none_or(|(l, _)| total < l) {
            best = Some((total, lambda));
        }
    }
    best.map(|(_, l)| l)
}
