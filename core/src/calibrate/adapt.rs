//! Calibration that travels: prior-shift adaptation and the record of what a model was fitted on.
//!
//! **Prior shift** (label shift). A calibration model fitted on one set of answers carries that
//! set's base rate π_t = positives / n (the share of true units). Applied to another model's
//! answers, whose units are true at another rate, its probabilities are off even when the
//! scorer separates true from false units as well as before. Saerens, Latinne & Decaestecker
//! (2002), "Adjusting the outputs of a classifier to new a priori probabilities: a simple
//! procedure", Neural Computation 14(1):21–41, re-weight the posteriors by Bayes' rule (their
//! eq. 2.3): with p = P_t(true | s),
//!
//! p' = (π/π_t)·p / ((π/π_t)·p + ((1 − π)/(1 − π_t))·(1 − p)),
//!
//! and estimate the unknown target prior π from the target's unlabelled scores by EM (their
//! §2.3, eqs. 2.9–2.10): start at π⁽⁰⁾ = π_t; E-step, p_i⁽ˢ⁾ from p_i with π⁽ˢ⁾; M-step,
//! π⁽ˢ⁺¹⁾ = (1/N)·Σ_i p_i⁽ˢ⁾; stop when |π⁽ˢ⁺¹⁾ − π⁽ˢ⁾| < [`TOLERANCE`] or after
//! [`MAX_ITERATIONS`]. Each step does not decrease the target's likelihood, so π converges to
//! its maximum-likelihood value.
//!
//! It assumes that only the base rate changed: P(s | true) and P(s | false) are the same on the
//! new answers. When the scorer ranks the new model's units differently (another AUROC, other
//! score distributions per class), the adjustment cannot repair the probabilities.
//!
//! **Fitted on.** A model records the setting its scores were made with ([`FittedOn`]); applying
//! it to scores made with another setting is reported (never silently) by
//! [`Calibration::mismatches`].

use serde_json::Value;

pub use super::fit::shift;
use super::model::Calibration;
pub use super::records::{FittedOn, Prior, FITTED_ON_KEYS};

/// EM stops when the prior moves by less than this between two iterations.
pub const TOLERANCE: f64 = 1e-6;
/// EM stops after this many iterations at most.
pub const MAX_ITERATIONS: usize = 1000;
/// A target prior closer than this to 0 or 1 means the target looks like a single class.
const EDGE: f64 = 1e-4;

/// The EM estimate of the target prior from posteriors fitted under prior `train` (Saerens et al.
/// 2002, §2.3, eqs. 2.9–2.10; module doc): `(prior, iterations)`. `posteriors` must be non-empty
/// probabilities and 0 < `train` < 1.
pub fn em_prior(posteriors: &[f64], train: f64) -> (f64, usize) {
    let n = posteriors.len() as f64;
    let mut prior = train;
    for it in 1..=MAX_ITERATIONS {
        let next = posteriors
            .iter()
            .map(|&p| shift(p, train, prior))
            .sum::<f64>()
            / n;
        let moved = (next - prior).abs();
        prior = next;
        if moved < TOLERANCE || !(EDGE..=1.0 - EDGE).contains(&prior) {
            return (prior, it);
        }
    }
    (prior, MAX_ITERATIONS)
}

/// The error of an adaptation with no target scores (`score` names them).
pub fn no_target_scores(score: &str) -> String {
    format!(
        "no target scores to adapt to (rows with a NULL {score} are skipped): pass the raw \
         scores of the new answers, of the scorer the model calibrates"
    )
}

impl Calibration {
    /// π_t = positives / n, the base rate the model was fitted under; `what` names the model.
    pub fn training_prior(&self, what: &str) -> Result<f64, String> {
        if self.n == 0 {
            return Err(format!(
                "{what} has no training prior: its \"n\" and \"positives\" (the labelled units it \
                 was fitted on, and those labelled 1) are missing; pass the JSON that \
                 uq_fit_calibration returns, which records them"
            ));
        }
        if self.positives == 0 || self.positives == self.n {
            return Err(format!(
                "{what} records {} of {} units labelled 1: a training prior of {} is one class \
                 only, and no base rate can be re-weighted from it; refit on labelled units of \
                 both classes",
                self.positives,
                self.n,
                u8::from(self.positives > 0)
            ));
        }
        Ok(self.positives as f64 / self.n as f64)
    }

    /// The model adapted to a target whose raw scores are `scores` (Saerens et al. 2002; module
    /// doc): the same fitted map with `prior` set to the EM estimate. An adapted model is adapted
    /// afresh (from its fitted map, not its previous adaptation). `what` names the model and
    /// `score` the scores in errors. Errors: no scores, a non-finite score, a model without a
    /// training prior or of one class, a target whose scores all look like one class.
    pub fn adapt(&self, scores: &[f64], what: &str, score: &str) -> Result<Calibration, String> {
        if scores.is_empty() {
            return Err(no_target_scores(score));
        }
        let train = self.training_prior(what)?;
        if let Some(s) = scores.iter().find(|s| !s.is_finite()) {
            return Err(format!("{score} must be a finite number, got {s}"));
        }
        let posteriors: Vec<f64> = scores.iter().map(|&s| self.apply_fitted(s)).collect();
        let (target, iterations) = em_prior(&posteriors, train);
        if !(EDGE..=1.0 - EDGE).contains(&target) {
            return Err(format!(
                "the {} target scores all look like one class: the estimated base rate goes to \
                 {} (from a training base rate of {train:.3}), where no probability can be \
                 re-weighted; adapt on a target with units of both classes, or use the model \
                 unadapted",
                scores.len(),
                u8::from(target > 0.5)
            ));
        }
        Ok(Calibration {
            prior: Some(Prior {
                train,
                target,
                iterations,
                applied: true,
                check: None,
            }),
            ..self.clone()
        })
    }

    /// How `now`, the setting of the scores this model is applied to, differs from what it was
    /// fitted on: one line per field recorded on both sides and different ("nli_model: fitted
    /// on X, applied to Y"). Empty when nothing was recorded.
    pub fn mismatches(&self, now: &FittedOn) -> Vec<String> {
        self.fitted_on
            .as_ref()
            .map_or_else(Vec::new, |then| then.differences(now))
    }
}

impl FittedOn {
    /// Each field recorded on both sides that differs, as "field: fitted on A, applied to B"
    /// (`self` the fit's setting, `now` the setting in use); a field not recorded is not
    /// compared.
    pub fn differences(&self, now: &FittedOn) -> Vec<String> {
        let then = self;
        let mut out = Vec::new();
        let pairs: [(&str, Option<Value>, Option<Value>); 5] = [
            (
                "scorer",
                then.scorer.clone().map(Value::from),
                now.scorer.clone().map(Value::from),
            ),
            (
                "nli_model",
                then.nli_model.clone().map(Value::from),
                now.nli_model.clone().map(Value::from),
            ),
            (
                "precision",
                then.precision.clone().map(Value::from),
                now.precision.clone().map(Value::from),
            ),
            ("premise", then.premise.clone(), now.premise.clone()),
            (
                "num_samples",
                then.num_samples.map(Value::from),
                now.num_samples.map(Value::from),
            ),
        ];
        for (field, a, b) in pairs {
            if let (Some(a), Some(b)) = (a, b) {
                if a != b {
                    out.push(format!("{field}: fitted on {a}, applied to {b}"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
