//! A guard on unlabelled adaptation: when some units of the new answers are labelled, even a
//! few, the prior-shift adaptation ([`super::adapt`]) is checked on them before it is used.
//!
//! The EM estimate of the new base rate assumes that only the base rate changed. Between two
//! LLMs' answers the scores' distributions per class change too (measured on GPT-4 and
//! GPT-3.5-turbo answers to PopQA prompts, EM moved the base rate the wrong way), so no
//! unlabelled estimate can be trusted on its own. With labels, the guard computes the ECE
//! ([`GUARD_BINS`] equal bins, [`crate::metrics::ece`]) on the labelled units of the model
//! unadapted and adapted; when adapting gives the larger ECE, the adaptation is refused: the
//! model keeps the estimate (`prior` with `"applied": false`) but maps scores unadapted, and
//! [`Prior::note`] says why. Without labels the adaptation is applied unchecked, its `prior`
//! carrying the fitted base rate (`train`) and the estimated one (`target`) side by side.

use super::model::Calibration;
pub use super::records::{Check, Prior};
use crate::metrics::ece;

/// Bins of the guard's ECE.
pub const GUARD_BINS: usize = 10;
/// Adapting is refused when it raises the ECE by more than this (rounding aside: an estimate
/// equal to the fitted base rate changes the ECE by ~1e-12).
pub const GUARD_TOLERANCE: f64 = 1e-9;

impl Prior {
    /// One line on the adaptation: the base rates, and with a check its figures and whether it
    /// was refused.
    pub fn note(&self) -> String {
        let rates = format!(
            "base rate {:.3} fitted, {:.3} estimated",
            self.train, self.target
        );
        match (&self.check, self.applied) {
            (None, _) => format!("adapted without labels to check it ({rates})"),
            (Some(c), true) => format!(
                "adapted ({rates}): on the {} labelled units the ECE goes from {:.3} to {:.3}",
                c.labelled, c.ece_unadapted, c.ece_adapted
            ),
            (Some(c), false) => format!(
                "not adapted: on the {} labelled units adapting raises the ECE from {:.3} to \
                 {:.3} ({rates}; the change between these answers is not a change of base rate \
                 alone); the model maps scores unadapted; refit it on the labels with \
                 uq_refit_calibration",
                c.labelled, c.ece_unadapted, c.ece_adapted
            ),
        }
    }
}

impl Calibration {
    /// The model adapted to the target's raw `scores` ([`Calibration::adapt`]), checked on the
    /// target's labelled units (`labelled_scores`, `labels`; module doc) when there are any: the
    /// adaptation is refused (kept with `applied` false) when it raises their ECE. `what` names
    /// the model and `score` the scores in errors.
    pub fn adapt_guarded(
        &self,
        scores: &[f64],
        labelled_scores: &[f64],
        labels: &[bool],
        what: &str,
        score: &str,
    ) -> Result<Calibration, String> {
        let mut adapted = self.adapt(scores, what, score)?;
        if labels.is_empty() {
            return Ok(adapted);
        }
        if labelled_scores.len() != labels.len() {
            return Err(format!(
                "internal error: {} labelled scores but {} labels",
                labelled_scores.len(),
                labels.len()
            ));
        }
        if let Some(s) = labelled_scores.iter().find(|s| !s.is_finite()) {
            return Err(format!("{score} must be a finite number, got {s}"));
        }
        let before: Vec<f64> = labelled_scores
            .iter()
            .map(|&s| self.apply_fitted(s))
            .collect();
        let after: Vec<f64> = labelled_scores.iter().map(|&s| adapted.apply(s)).collect();
        let (Some(e0), Some(e1)) = (
            ece(&before, labels, GUARD_BINS),
            ece(&after, labels, GUARD_BINS),
        ) else {
            return Ok(adapted);
        };
        if let Some(p) = adapted.prior.as_mut() {
            p.applied = e1 <= e0 + GUARD_TOLERANCE;
            p.check = Some(Check {
                labelled: labels.len(),
                ece_unadapted: e0,
                ece_adapted: e1,
            });
        }
        Ok(adapted)
    }
}

#[cfg(test)]
mod tests;
