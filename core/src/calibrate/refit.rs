//! Refit from a few labels: a Platt model fitted on one LLM's answers, refitted on a handful of
//! labelled units of another LLM's answers with the old model as the prior.
//!
//! **MAP.** With θ = (a, b) as the model stores them (p(s) = σ(a·s + b)), θ₀ the old model's,
//! and tᵢ Platt's smoothed targets of the k target labels, the refit minimises
//!
//! F(θ) = Σᵢ [ (1 − tᵢ)·zᵢ + ln(1 + e^(−zᵢ)) ] + (λ/2)·‖θ − θ₀‖²,  zᵢ = a·sᵢ + b,
//!
//! the negative log-posterior under a Gaussian prior N(θ₀, λ⁻¹·I) (maximum a posteriori). Its
//! gradient is Σᵢ (pᵢ − tᵢ)·(sᵢ, 1) + λ·(θ − θ₀) and its Hessian Σᵢ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ + λ·I,
//! positive definite for λ > 0: Newton's method with backtracking finds the unique minimum.
//! λ → 0 is Platt's fit on the k labels alone; λ → ∞ keeps the old model.
//!
//! **From an adapted model.** A model adapted to the new answers' unlabelled scores
//! ([`super::adapt`], applied: not refused by the [`super::guard`]) maps a score to
//! σ(a·s + b + Δ), Δ = logit(π) − logit(π_t) (Bayes' re-weighting is a shift of the log-odds), so
//! its refit is centred on θ₀ = (a, b + Δ): what the old fit knew, moved to the base rate the
//! unlabelled scores suggest, then corrected by the labels.
//!
//! **λ, chosen on the old data** ([`choose_strength`], when the old model is fitted, recorded as
//! its `refit_strength`): cross-validation that plays the refit through on the old labels. The
//! rows, in the order given, are cut into [`FOLDS`] contiguous folds; for each fold the prior is
//! the Platt fit on the other folds, and the fold's two contiguous halves take turns as the few
//! labels (MAP fit) and as the held-out rows (log loss). λ is the value of [`STRENGTHS`] with the
//! least total held-out log loss. Contiguous folds of rows ordered by answer differ as answers
//! do, so λ measures how far a fit moves between sets of answers; between two LLMs it moves
//! further than within one, so the chosen λ leans towards the old model.

use serde_json::{json, Map, Value};

use super::{fit_platt, platt_targets, sigmoid, softplus, Calibration, Model};
use crate::json::type_name;

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

/// What a refitted model started from: the old model's parameters and counts, the prior
/// strength λ and the number of target labels (`"refit"` in the model JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Refit {
    /// θ₀ = (a, b), the centre: the old model's parameters, its intercept shifted by its
    /// adaptation when it was adapted.
    pub a: f64,
    pub b: f64,
    /// The old model's adaptation (its `prior` JSON) when θ₀ includes it.
    pub adaptation: Option<Value>,
    /// The old model's `n` and `positives`.
    pub n: usize,
    pub positives: usize,
    /// The old model's `fitted_on`, as JSON (`None`: not recorded).
    pub fitted_on: Option<Value>,
    /// λ used.
    pub strength: f64,
    /// The target labels refitted on (k; the new model's `n`).
    pub target_labels: usize,
}

/// The keys of `"refit"`.
const REFIT_KEYS: [&str; 3] = ["prior", "strength", "target_labels"];
const REFIT_PRIOR_KEYS: [&str; 6] = ["a", "b", "n", "positives", "fitted_on", "adaptation"];

impl Refit {
    pub fn to_json(&self) -> Value {
        let mut prior = Map::new();
        prior.insert("a".into(), json!(self.a));
        prior.insert("b".into(), json!(self.b));
        prior.insert("n".into(), json!(self.n));
        prior.insert("positives".into(), json!(self.positives));
        if let Some(f) = &self.fitted_on {
            prior.insert("fitted_on".into(), f.clone());
        }
        if let Some(p) = &self.adaptation {
            prior.insert("adaptation".into(), p.clone());
        }
        json!({"prior": prior, "strength": self.strength, "target_labels": self.target_labels})
    }

    /// Reads `{"prior":{"a":…,"b":…,"n":…,"positives":…[,"fitted_on":…]},"strength":…,
    /// "target_labels":…}` (`what` names it in errors).
    pub fn from_json(v: &Value, what: &str) -> Result<Refit, String> {
        let fix = "pass the JSON that uq_refit_calibration returns, or drop \"refit\"";
        let o = v
            .as_object()
            .ok_or_else(|| format!("{what} must be a JSON object, got {}: {fix}", type_name(v)))?;
        if let Some(k) = o.keys().find(|k| !REFIT_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                REFIT_KEYS.join(", ")
            ));
        }
        let strength = match o.get("strength").and_then(Value::as_f64) {
            Some(x) if x > 0.0 && x.is_finite() => x,
            _ => {
                return Err(format!(
                    "{what}.strength must be a positive number (the prior strength λ): {fix}"
                ))
            }
        };
        let p = match o.get("prior") {
            Some(Value::Object(p)) => p,
            _ => return Err(format!("{what}.prior must be a JSON object: {fix}")),
        };
        if let Some(k) = p.keys().find(|k| !REFIT_PRIOR_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what}.prior has unknown key {k:?}: its keys are {}",
                REFIT_PRIOR_KEYS.join(", ")
            ));
        }
        let num = |k: &str| match p.get(k).and_then(Value::as_f64) {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(format!("{what}.prior.{k} must be a finite number: {fix}")),
        };
        let count = |k: &str| {
            p.get(k)
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                .ok_or_else(|| format!("{what}.prior.{k} must be a non-negative integer: {fix}"))
        };
        let target_labels = o
            .get("target_labels")
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .ok_or_else(|| format!("{what}.target_labels must be a non-negative integer: {fix}"))?;
        Ok(Refit {
            a: num("a")?,
            b: num("b")?,
            n: count("n")?,
            positives: count("positives")?,
            fitted_on: p.get("fitted_on").filter(|f| !f.is_null()).cloned(),
            adaptation: p.get("adaptation").filter(|f| !f.is_null()).cloned(),
            strength,
            target_labels,
        })
    }
}

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

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

fn both_classes(labels: &[bool]) -> bool {
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

impl Calibration {
    /// This Platt model refitted on the target's labelled units (`scores`, `labels`) by MAP with
    /// itself as the prior (module doc: centred on its adapted map when it carries an applied
    /// adaptation), λ its recorded `refit_strength`. The new model's `n` and
    /// `positives` count the target labels, `refit` records what it started from, its
    /// `fitted_on` is this model's (the caller may replace it), it carries the same
    /// `refit_strength` and no prior-shift adaptation. `what` names this model and `score` the
    /// scores in errors. Errors: not Platt, no recorded λ, no target labels, one class, a
    /// non-finite score.
    pub fn refit(
        &self,
        scores: &[f64],
        labels: &[bool],
        what: &str,
        score: &str,
    ) -> Result<Calibration, String> {
        let (a, b, lambda) = self.refit_prior(what)?;
        if scores.is_empty() {
            return Err(format!(
                "no target labels to refit on (rows with a NULL {score} or label are skipped): \
                 pass the scores and 0/1 labels of a few labelled units of the new answers"
            ));
        }
        if scores.len() == labels.len() && !both_classes(labels) {
            return Err(format!(
                "all {} target labels are {}: a refit needs labelled units of both classes (1 = \
                 true, 0 = false) to move the model; label a few units of the other class, or \
                 use the old model as it is",
                labels.len(),
                u8::from(labels[0])
            ));
        }
        let positives = super::check_training(scores, labels, score)?;
        let adaptation = self.prior.as_ref().filter(|p| p.applied);
        let b = match adaptation {
            Some(p) => b + logit(p.target) - logit(p.train),
            None => b,
        };
        let (na, nb) = map_platt(scores, labels, (a, b), lambda)?;
        Ok(Calibration {
            model: Model::Platt { a: na, b: nb },
            n: scores.len(),
            positives,
            fitted_on: self.fitted_on.clone(),
            prior: None,
            refit_strength: Some(lambda),
            refit: Some(Refit {
                a,
                b,
                n: self.n,
                positives: self.positives,
                fitted_on: self.fitted_on.as_ref().map(|f| f.to_json()),
                adaptation: adaptation.map(|p| p.to_json()),
                strength: lambda,
                target_labels: scores.len(),
            }),
        })
    }

    /// (a, b, λ) of this model as a refit's prior; `what` names it. Errors: not Platt, no
    /// recorded λ.
    pub fn refit_prior(&self, what: &str) -> Result<(f64, f64, f64), String> {
        let Model::Platt { a, b } = self.model else {
            return Err(format!(
                "{what} is an isotonic model: a refit with the old model as the prior is defined \
                 for platt models (a Gaussian prior on a and b); fit the old model with \
                 uq_fit_calibration(score, label, 'platt')"
            ));
        };
        let Some(lambda) = self.refit_strength else {
            return Err(format!(
                "{what} has no \"refit_strength\" (the prior strength λ, chosen by \
                 cross-validation when uq_fit_calibration fits a platt model on at least {} \
                 rows): fit the old model again with uq_fit_calibration on its labelled units \
                 (which records it), or add \"refit_strength\" to its JSON",
                4 * FOLDS
            ));
        };
        Ok((a, b, lambda))
    }
}

#[cfg(test)]
mod tests;
