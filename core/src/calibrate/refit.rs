//! Refit from a few labels: a Platt model fitted on one LLM's answers, refitted on a handful of
//! labelled units of another LLM's answers with the old model as the prior.
//!
//! **MAP.** With θ = (a, b) as the model stores them (p(s) = σ(a·s + b)), θ₀ the old model's,
//! P the prior precision and tᵢ Platt's smoothed targets of the k target labels, the refit
//! minimises
//!
//! F(θ) = Σᵢ [ (1 − tᵢ)·zᵢ + ln(1 + e^(−zᵢ)) ] + ½·(θ − θ₀)ᵀ P (θ − θ₀),  zᵢ = a·sᵢ + b,
//!
//! the negative log-posterior under a Gaussian prior N(θ₀, P⁻¹) (maximum a posteriori). Its
//! gradient is Σᵢ (pᵢ − tᵢ)·(sᵢ, 1) + P(θ − θ₀) and its Hessian Σᵢ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ + P,
//! positive definite: Newton's method with backtracking finds the unique minimum. P → 0 is
//! Platt's fit on the k labels alone; P → ∞ keeps the old model.
//!
//! **The prior is what the old fit knew** ([`Precision::of_fit`], recorded as
//! `refit_precision` when the old model is fitted): P is the Fisher information of the old fit on
//! its own data, Σ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ at its (a, b), so N(θ₀, P⁻¹) is the Laplace
//! approximation of the old fit's posterior and the refit is Bayes' rule applied once more with
//! the new labels. The information is spread as the old data were: the slope, which the NLI
//! model's discrimination sets, moves little; the intercept, which the base rate sets, moves more.
//!
//! **How strong, the new labels decide** ([`scale`]). Bayes' rule once more assumes the new
//! answers are more of the old ones; between two LLMs (or domains) they are not, by an amount
//! only the new labels show. So the prior is c·P, the scale c chosen among [`scale::SCALES`]
//! (16 down to 1/256) by the held-out log loss of leave-one-answer-out over the K labelled
//! answers: c = 16 keeps the old model, c = 1/256 is close to Platt on the K answers alone, and
//! the labels pick between. Held-out answers, not units, because units of one answer are not
//! independent. (Before: c = 1, with the prior widened when the labels' Laplace evidence for a
//! drift τ² beat it by a log Bayes factor over [`WIDEN_LOG_BF`]; on other data of the same kinds
//! at 10 answers it stayed near the old model, ECE 0.118–0.123 where Platt on the 10 answers
//! reached 0.080–0.135 (docs/design.md). It remains as [`Calibration::refit_fixed`], the
//! contender `uqd bench calibration` prints beside the chosen one.)
//!
//! **From an adapted model.** A model adapted to the new answers' unlabelled scores
//! ([`super::adapt`], applied: not refused by the [`super::guard`]) maps a score to
//! σ(a·s + b + Δ), Δ = logit(π) − logit(π_t) (Bayes' re-weighting is a shift of the log-odds), so
//! its refit is centred on θ₀ = (a, b + Δ): what the old fit knew, moved to the base rate the
//! unlabelled scores suggest, then corrected by the labels. Measured on the shared files, this is
//! the refit that carries (docs/reference.md, Calibration).

pub mod scale;

use serde_json::Value;

use super::fit::check_training;
use super::map_platt::both_classes;
pub use super::map_platt::{map_platt, map_platt_widened, Precision, DRIFTS, WIDEN_LOG_BF};
use super::model::{Calibration, Model};
pub use super::records::Refit;

/// What a refit starts from.
struct Start {
    theta0: (f64, f64),
    precision: Precision,
    positives: usize,
    /// The applied adaptation θ₀ includes (its JSON).
    adaptation: Option<Value>,
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

impl Calibration {
    /// This Platt model refitted on the target's labelled units (`scores`, `labels`) by MAP with
    /// itself as the prior (module doc: centred on its adapted map when it carries an applied
    /// adaptation), the prior's strength chosen on the labels by leave-one-answer-out
    /// ([`scale`]: `answers` gives each unit's answer; `None`, each unit alone). The new model's
    /// `n` and `positives` count the target labels, `refit` records what it started from and
    /// the scale, its `fitted_on` is this model's (the caller may replace it), it carries the
    /// same `refit_precision` and no prior-shift adaptation. `what` names this model and `score`
    /// the scores in errors. Errors: not Platt, no recorded precision, no target labels, one
    /// class, a non-finite score.
    pub fn refit(
        &self,
        scores: &[f64],
        labels: &[bool],
        answers: Option<&[usize]>,
        what: &str,
        score: &str,
    ) -> Result<Calibration, String> {
        let start = self.refit_start(scores, labels, what, score)?;
        let choice = scale::choose(scores, labels, answers, start.theta0, start.precision)?;
        let theta = map_platt(
            scores,
            labels,
            start.theta0,
            start.precision.scaled(choice.scale),
        )?;
        Ok(self.refitted(&start, scores.len(), theta, None, Some(choice)))
    }

    /// The refit at the prior's full strength (the old fit's information), widened by a drift
    /// when the labels' evidence calls for it (module doc): the fixed refit the chosen one
    /// ([`Calibration::refit`]) is compared with (`uqd bench calibration`).
    pub fn refit_fixed(
        &self,
        scores: &[f64],
        labels: &[bool],
        what: &str,
        score: &str,
    ) -> Result<Calibration, String> {
        let start = self.refit_start(scores, labels, what, score)?;
        let (theta, drift) = map_platt_widened(scores, labels, start.theta0, start.precision)?;
        Ok(self.refitted(&start, scores.len(), theta, drift, None))
    }

    /// The checked target labels and the prior: θ₀ (moved by an applied adaptation) and P.
    fn refit_start(
        &self,
        scores: &[f64],
        labels: &[bool],
        what: &str,
        score: &str,
    ) -> Result<Start, String> {
        let (a, b, precision) = self.refit_prior(what)?;
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
        let positives = check_training(scores, labels, score)?;
        let adaptation = self.prior.as_ref().filter(|p| p.applied);
        let b = match adaptation {
            Some(p) => b + logit(p.target) - logit(p.train),
            None => b,
        };
        Ok(Start {
            theta0: (a, b),
            precision,
            positives,
            adaptation: adaptation.map(|p| p.to_json()),
        })
    }

    /// The refitted model at `theta` and its record.
    fn refitted(
        &self,
        start: &Start,
        k: usize,
        (na, nb): (f64, f64),
        drift: Option<f64>,
        scale: Option<scale::Choice>,
    ) -> Calibration {
        Calibration {
            model: Model::Platt { a: na, b: nb },
            n: k,
            positives: start.positives,
            fitted_on: self.fitted_on.clone(),
            prior: None,
            refit_precision: Some(start.precision),
            refit: Some(Refit {
                a: start.theta0.0,
                b: start.theta0.1,
                n: self.n,
                positives: self.positives,
                fitted_on: self.fitted_on.as_ref().map(|f| f.to_json()),
                adaptation: start.adaptation.clone(),
                precision: start.precision,
                drift,
                scale,
                target_labels: k,
            }),
        }
    }

    /// (a, b, precision) of this model as a refit's prior; `what` names it. Errors: not Platt,
    /// no recorded precision.
    pub fn refit_prior(&self, what: &str) -> Result<(f64, f64, Precision), String> {
        let Model::Platt { a, b } = self.model else {
            return Err(format!(
                "{what} is an isotonic model: a refit with the old model as the prior is defined \
                 for platt models (a Gaussian prior on a and b); fit the old model with \
                 uq_fit_calibration(score, label, 'platt')"
            ));
        };
        let Some(precision) = self.refit_precision else {
            return Err(format!(
                "{what} has no \"refit_precision\" (the prior precision of a refit: the old \
                 fit's Fisher information, which uq_fit_calibration records when it fits a platt \
                 model on scores that are not all equal): fit the old model again with \
                 uq_fit_calibration on its labelled units, or add \"refit_strength\": λ (a \
                 prior N((a, b), I/λ)) to its JSON"
            ));
        };
        Ok((a, b, precision))
    }
}

#[cfg(test)]
mod tests;
