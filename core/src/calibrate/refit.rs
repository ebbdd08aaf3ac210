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

use super::fit::check_training;
use super::map_platt::both_classes;
pub use super::map_platt::{choose_strength, map_platt, FOLDS, STRENGTHS};
use super::model::{Calibration, Model};
pub use super::records::Refit;

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
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
        let positives = check_training(scores, labels, score)?;
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
