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
//! the new labels. No strength is tuned: a cross-validation on the old answers (the first design)
//! measures how a fit moves between sets of one LLM's answers, not between two LLMs', and chose
//! λ = 16 on one shared file and 4096 on the other, too weak and too strong (docs/design.md). The
//! information is spread as the old data were: the slope, which the NLI model's discrimination
//! sets, moves little; the intercept, which the base rate sets, moves more.
//!
//! **Unless the labels say the answers moved further.** The old fit's information treats the new
//! answers as more of the old ones. When the labels give decisive evidence that they are not,
//! the prior is widened to N(θ₀, P⁻¹ + τ²·I): of the drifts τ² in [`DRIFTS`], the one with the
//! largest Laplace evidence of the labels is used when it beats the unwidened prior's by a log
//! Bayes factor over [`WIDEN_LOG_BF`] (= 20), and the refit records it as `drift`. The bar is
//! high because the evidence counts units as independent while units of one answer are not: on
//! the shared files a bar of 5 widened the prior in 3–6 % of the draws of 10 answers, and those
//! refits were far off (the ECE over the draws rose from 0.057 to 0.069); at 20 it never
//! widens there, while a shift of the class distributions that breaks the old model (ECE 0.27)
//! is caught from a few hundred labels (the tests).
//!
//! **From an adapted model.** A model adapted to the new answers' unlabelled scores
//! ([`super::adapt`], applied: not refused by the [`super::guard`]) maps a score to
//! σ(a·s + b + Δ), Δ = logit(π) − logit(π_t) (Bayes' re-weighting is a shift of the log-odds), so
//! its refit is centred on θ₀ = (a, b + Δ): what the old fit knew, moved to the base rate the
//! unlabelled scores suggest, then corrected by the labels. Measured on the shared files, this is
//! the refit that carries (docs/reference.md, Calibration).

use super::fit::check_training;
use super::map_platt::both_classes;
pub use super::map_platt::{map_platt, map_platt_widened, Precision, DRIFTS, WIDEN_LOG_BF};
use super::model::{Calibration, Model};
pub use super::records::Refit;

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

impl Calibration {
    /// This Platt model refitted on the target's labelled units (`scores`, `labels`) by MAP with
    /// itself as the prior (module doc: centred on its adapted map when it carries an applied
    /// adaptation), with its recorded `refit_precision`. The new model's `n` and
    /// `positives` count the target labels, `refit` records what it started from, its
    /// `fitted_on` is this model's (the caller may replace it), it carries the same
    /// `refit_precision` and no prior-shift adaptation. `what` names this model and `score` the
    /// scores in errors. Errors: not Platt, no recorded λ, no target labels, one class, a
    /// non-finite score.
    pub fn refit(
        &self,
        scores: &[f64],
        labels: &[bool],
        what: &str,
        score: &str,
    ) -> Result<Calibration, String> {
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
        let ((na, nb), drift) = map_platt_widened(scores, labels, (a, b), precision)?;
        Ok(Calibration {
            model: Model::Platt { a: na, b: nb },
            n: scores.len(),
            positives,
            fitted_on: self.fitted_on.clone(),
            prior: None,
            refit_precision: Some(precision),
            refit: Some(Refit {
                a,
                b,
                n: self.n,
                positives: self.positives,
                fitted_on: self.fitted_on.as_ref().map(|f| f.to_json()),
                adaptation: adaptation.map(|p| p.to_json()),
                precision,
                drift,
                target_labels: scores.len(),
            }),
        })
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
