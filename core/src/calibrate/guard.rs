//! A guard on unlabelled adaptation: when some units of the new answers are labelled, even a
//! few, the prior-shift adaptation ([`super::adapt`]) is checked on them before it is used.
//!
//! The EM estimate of the new base rate assumes that only the base rate changed. Between two
//! LLMs' answers the scores' distributions per class change too (measured on GPT-4 and
//! GPT-3.5-turbo answers to PopQA prompts, EM moved the base rate the wrong way), so no
//! unlabelled estimate can be trusted on its own. With labels, the guard compares the model
//! unadapted and adapted on the labelled units by their mean log loss: with dᵢ the adapted minus
//! the unadapted log loss of unit i, it refuses when mean(d) > [`GUARD_SE`]·se(d), se(d) =
//! sd(d)/√k, i.e. when the labels show, beyond their noise, that adapting is worse. A refused
//! model keeps the estimate (`prior` with `"applied": false`) but maps scores unadapted, and
//! [`Prior::note`] says why. The ECE on the labelled units ([`GUARD_BINS`] equal bins) is
//! recorded beside it: a handful of labels makes it too noisy to decide on (the first design
//! decided on it and refused 40 % of the adaptations that helped on the shared files). Without
//! labels the adaptation is applied unchecked, its `prior` carrying the fitted base rate
//! (`train`) and the estimated one (`target`) side by side.

use super::model::Calibration;
pub use super::records::{Check, LogLossCheck, Prior};
use crate::metrics::ece;

/// Bins of the guard's ECE.
pub const GUARD_BINS: usize = 10;
/// Adapting is refused when it raises the mean log loss on the labelled units by more than this
/// many standard errors of the mean difference.
pub const GUARD_SE: f64 = 2.0;

/// Per-unit log loss −[y ln p + (1 − y) ln(1 − p)], p clamped to [1e-12, 1 − 1e-12].
fn log_loss(p: f64, label: bool) -> f64 {
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    -(if label { p.ln() } else { (1.0 - p).ln() })
}

/// The guard's comparison of `before` and `after` (probabilities of the same labelled units).
fn compare(before: &[f64], after: &[f64], labels: &[bool]) -> LogLossCheck {
    let k = labels.len() as f64;
    let (l0, l1): (Vec<f64>, Vec<f64>) = before
        .iter()
        .zip(after)
        .zip(labels)
        .map(|((&p0, &p1), &l)| (log_loss(p0, l), log_loss(p1, l)))
        .unzip();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / k;
    let d: Vec<f64> = l1.iter().zip(&l0).map(|(a, b)| a - b).collect();
    let md = mean(&d);
    let se = if labels.len() > 1 {
        (d.iter().map(|x| (x - md).powi(2)).sum::<f64>() / (k - 1.0) / k).sqrt()
    } else {
        0.0
    };
    LogLossCheck {
        unadapted: mean(&l0),
        adapted: mean(&l1),
        se,
    }
}

impl Prior {
    /// One line on the adaptation: the base rates, and with a check its figures and whether it
    /// was refused.
    pub fn note(&self) -> String {
        let rates = format!(
            "base rate {:.3} fitted, {:.3} estimated",
            self.train, self.target
        );
        let Some(c) = &self.check else {
            return format!("adapted without labels to check it ({rates})");
        };
        let figures = c.describe();
        if self.applied {
            format!(
                "adapted ({rates}): on the {} labelled units {figures}",
                c.labelled
            )
        } else {
            format!(
                "not adapted: on the {} labelled units adapting is worse: {figures} ({rates}; the \
                 change between these answers is not a change of base rate alone); the model \
                 maps scores unadapted; refit it on the labels with uq_refit_calibration",
                c.labelled
            )
        }
    }
}

impl Calibration {
    /// The model adapted to the target's raw `scores` ([`Calibration::adapt`]), checked on the
    /// target's labelled units (`labelled_scores`, `labels`; module doc) when there are any: the
    /// adaptation is refused (kept with `applied` false) when it raises their mean log loss by
    /// more than [`GUARD_SE`] standard errors. `what` names
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
        let loss = compare(&before, &after, labels);
        if let Some(p) = adapted.prior.as_mut() {
            // (1e-9: rounding, when the estimate equals the fitted base rate)
            p.applied = loss.adapted - loss.unadapted <= GUARD_SE * loss.se + 1e-9;
            p.check = Some(Check {
                labelled: labels.len(),
                ece_unadapted: e0,
                ece_adapted: e1,
                log_loss: Some(loss),
            });
        }
        Ok(adapted)
    }
}

#[cfg(test)]
mod tests;
