//! The MAP refit of a Platt model with a Gaussian prior on (a, b), and the prior's precision: the
//! maths of [`super::refit`], free of [`Calibration`](super::model::Calibration) so that fitting a
//! model can record its precision. "Module doc" below is [`super::refit`]'s.

use serde_json::{json, Value};

use super::fit::{platt_targets, sigmoid, softplus};

/// The precision (inverse covariance) of the Gaussian prior on (a, b): the symmetric matrix
/// [[aa, ab], [ab, bb]], positive definite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub aa: f64,
    pub ab: f64,
    pub bb: f64,
}

impl Precision {
    /// λ·I: a prior N(θ₀, I/λ), as a hand-set `refit_strength` gives it.
    pub fn isotropic(lambda: f64) -> Precision {
        Precision {
            aa: lambda,
            ab: 0.0,
            bb: lambda,
        }
    }

    /// c·P: the same prior, c times as strong.
    pub fn scaled(&self, c: f64) -> Precision {
        Precision {
            aa: c * self.aa,
            ab: c * self.ab,
            bb: c * self.bb,
        }
    }

    /// The Fisher information of the Platt model (a, b) on the `scores` it was fitted on,
    /// Σᵢ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ with pᵢ = σ(a·sᵢ + b): the precision of the Laplace
    /// approximation of the fit's posterior (module doc). `None` when it is not positive definite
    /// (every score the same).
    pub fn of_fit(scores: &[f64], theta: (f64, f64)) -> Option<Precision> {
        let h = Precision::information(scores, theta);
        h.is_positive_definite().then_some(h)
    }

    /// Σᵢ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ at (a, b): the Hessian of the log loss at `scores`.
    fn information(scores: &[f64], (a, b): (f64, f64)) -> Precision {
        let mut h = Precision {
            aa: 0.0,
            ab: 0.0,
            bb: 0.0,
        };
        for &s in scores {
            let p = sigmoid(a * s + b);
            let w = p * (1.0 - p);
            h.aa += w * s * s;
            h.ab += w * s;
            h.bb += w;
        }
        h
    }

    /// Finite, aa > 0 and a positive determinant (relative to aa·bb, so that rounding of a
    /// rank-one sum is not taken for information).
    pub fn is_positive_definite(&self) -> bool {
        let Precision { aa, ab, bb } = *self;
        [aa, ab, bb].iter().all(|x| x.is_finite())
            && aa > 0.0
            && bb > 0.0
            && aa * bb - ab * ab > 1e-9 * aa * bb
    }

    fn det(&self) -> f64 {
        self.aa * self.bb - self.ab * self.ab
    }

    fn inverse(&self) -> Precision {
        let d = self.det();
        Precision {
            aa: self.bb / d,
            ab: -self.ab / d,
            bb: self.aa / d,
        }
    }

    /// The precision of the prior widened by a drift τ²: (P⁻¹ + τ²·I)⁻¹.
    pub fn widened(&self, tau2: f64) -> Precision {
        let c = self.inverse();
        Precision {
            aa: c.aa + tau2,
            ab: c.ab,
            bb: c.bb + tau2,
        }
        .inverse()
    }

    /// ½·dᵀPd for d = (da, db).
    fn half_quad(&self, da: f64, db: f64) -> f64 {
        0.5 * (self.aa * da * da + 2.0 * self.ab * da * db + self.bb * db * db)
    }

    /// "prior precision [aa, ab, bb]", for notes.
    pub fn describe(&self) -> String {
        format!(
            "prior precision [{:.4}, {:.4}, {:.4}]",
            self.aa, self.ab, self.bb
        )
    }

    /// `[aa, ab, bb]`.
    pub fn to_json(&self) -> Value {
        json!([self.aa, self.ab, self.bb])
    }

    /// Reads `[aa, ab, bb]`; `what` names it in errors, `fix` says what to pass instead.
    pub fn from_json(v: &Value, what: &str, fix: &str) -> Result<Precision, String> {
        let x: Vec<f64> = v
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let p = match x[..] {
            [aa, ab, bb] if v.as_array().is_some_and(|a| a.len() == 3) => Precision { aa, ab, bb },
            _ => {
                return Err(format!(
                    "{what} must be an array of three numbers [aa, ab, bb] (the prior precision \
                     of a refit over a and b), got {v}: {fix}"
                ))
            }
        };
        if !p.is_positive_definite() {
            return Err(format!(
                "{what} = {v} is not positive definite (aa > 0, bb > 0, aa·bb > ab²): {fix}"
            ));
        }
        Ok(p)
    }
}

/// The drifts τ² tried by [`map_platt_widened`]: 2^−12, 2^−11, …, 2^4.
pub const DRIFTS: [f64; 17] = {
    let mut v = [0.0; 17];
    let mut i = 0;
    let mut x = 1.0 / 4096.0;
    while i < 17 {
        v[i] = x;
        x *= 2.0;
        i += 1;
    }
    v
};

/// The natural log of the Bayes factor above which the labels' evidence for a drift widens the
/// prior (module doc).
pub const WIDEN_LOG_BF: f64 = 20.0;

/// The MAP (a, b) under `prior`, or under the prior widened by the drift τ² of [`DRIFTS`] with
/// the most evidence when that beats the unwidened prior's by more than [`WIDEN_LOG_BF`]
/// (module doc); with the τ² used (`None`: not widened).
pub fn map_platt_widened(
    scores: &[f64],
    labels: &[bool],
    theta0: (f64, f64),
    prior: Precision,
) -> Result<((f64, f64), Option<f64>), String> {
    let theta = map_platt(scores, labels, theta0, prior)?;
    let base = log_evidence(scores, labels, theta0, prior, theta);
    let mut best: Option<(f64, f64, (f64, f64))> = None; // (evidence, τ², θ)
    for &tau2 in &DRIFTS {
        let p = prior.widened(tau2);
        if !p.is_positive_definite() {
            continue;
        }
        let t = map_platt(scores, labels, theta0, p)?;
        let e = log_evidence(scores, labels, theta0, p, t);
        if best.is_none_or(|(b, _, _)| e > b) {
            best = Some((e, tau2, t));
        }
    }
    Ok(match best {
        Some((e, tau2, t)) if e - base > WIDEN_LOG_BF => (t, Some(tau2)),
        _ => (theta, None),
    })
}

/// The Laplace approximation of the log evidence ln ∫ L(θ)·N(θ; θ₀, P⁻¹) dθ of the labels
/// under the prior, at its MAP `theta`: −F(θ̂) + ½·ln|P| − ½·ln|H_F(θ̂)|, F the objective of the
/// module doc and H_F its Hessian.
fn log_evidence(
    scores: &[f64],
    labels: &[bool],
    theta0: (f64, f64),
    prior: Precision,
    theta: (f64, f64),
) -> f64 {
    let targets = platt_targets(labels);
    let f = objective(scores, &targets, theta0, prior, theta);
    let data = Precision::information(scores, theta);
    let h = Precision {
        aa: prior.aa + data.aa,
        ab: prior.ab + data.ab,
        bb: prior.bb + data.bb,
    };
    -f + 0.5 * prior.det().ln() - 0.5 * h.det().ln()
}

/// F(θ) of the module doc: the log loss of σ(a·s + b) against the smoothed `targets`, plus
/// ½·(θ − θ₀)ᵀP(θ − θ₀).
fn objective(
    scores: &[f64],
    targets: &[f64],
    theta0: (f64, f64),
    prior: Precision,
    (a, b): (f64, f64),
) -> f64 {
    let nll: f64 = scores
        .iter()
        .zip(targets)
        .map(|(&s, &t)| {
            let z = a * s + b;
            (1.0 - t) * z + softplus(-z)
        })
        .sum();
    nll + prior.half_quad(a - theta0.0, b - theta0.1)
}

/// The MAP (a, b) (module doc) for the smoothed targets of `labels` at `scores`, prior centre
/// `theta0`, precision `prior` (positive definite). Newton's method with backtracking on F.
pub fn map_platt(
    scores: &[f64],
    labels: &[bool],
    theta0: (f64, f64),
    prior: Precision,
) -> Result<(f64, f64), String> {
    if !prior.is_positive_definite() {
        return Err(format!(
            "internal error: the refit's prior precision {prior:?} is not positive definite"
        ));
    }
    let targets = platt_targets(labels);
    let (a0, b0) = theta0;
    let loss = |a: f64, b: f64| objective(scores, &targets, theta0, prior, (a, b));
    let (mut a, mut b) = theta0;
    let mut f = loss(a, b);
    for _ in 0..200 {
        let (da0, db0) = (a - a0, b - b0);
        let mut ga = prior.aa * da0 + prior.ab * db0;
        let mut gb = prior.ab * da0 + prior.bb * db0;
        let (mut haa, mut hab, mut hbb) = (prior.aa, prior.ab, prior.bb);
        for (&s, &t) in scores.iter().zip(&targets) {
            let p = sigmoid(a * s + b);
            let w = p * (1.0 - p);
            ga += (p - t) * s;
            gb += p - t;
            haa += w * s * s;
            hab += w * s;
            hbb += w;
        }
        let scale = 1.0 + prior.aa.max(prior.bb) + scores.len() as f64;
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

pub(super) fn both_classes(labels: &[bool]) -> bool {
    labels.iter().any(|&l| l) && labels.iter().any(|&l| !l)
}
