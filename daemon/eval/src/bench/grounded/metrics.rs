//! `bench grounded`'s figures of unit confidences: AUROC (accurate = positive) and NonFact
//! AUC-PR, over every unit or over one half of the records; and the units' `grounded_fallback`
//! confidences under given thresholds, which the references compare.

use uq_core::metrics::{auroc, average_precision};
use uq_core::protocol::NliProbs;
use uq_core::score::grounded::{band_score, check, Thresholds};

use super::super::lines::{pct, round};

/// AUROC (accurate = positive) and NonFact AUC-PR of unit confidences, NaN left out.
pub(super) fn unit_metrics(conf: &[f64], accurate: &[bool]) -> (Option<f64>, Option<f64>, usize) {
    let (c, a): (Vec<f64>, Vec<bool>) = conf
        .iter()
        .zip(accurate)
        .filter(|(c, _)| c.is_finite())
        .map(|(&c, &a)| (c, a))
        .unzip();
    let hallu: Vec<f64> = c.iter().map(|x| 1.0 - x).collect();
    let nonfact: Vec<bool> = a.iter().map(|x| !x).collect();
    (
        auroc(&c, &a).map(round),
        average_precision(&hallu, &nonfact).map(pct),
        conf.len() - c.len(),
    )
}

/// The AUROC of the units of one half (`half[i]` = record index parity).
pub(super) fn half_auroc(conf: &[f64], accurate: &[bool], half: &[usize], h: usize) -> Option<f64> {
    let (c, a): (Vec<f64>, Vec<bool>) = conf
        .iter()
        .zip(accurate)
        .zip(half)
        .filter(|(_, &x)| x == h)
        .map(|((&c, &a), _)| (c, a))
        .unzip();
    unit_metrics(&c, &a).0
}

/// The labels of the units of every record: accurate or not, the record index of each unit and
/// its parity (the tune / check halves).
pub(super) struct Units {
    pub accurate: Vec<bool>,
    pub rec: Vec<usize>,
    pub half: Vec<usize>,
}

impl Units {
    /// The AUROC of `conf` over the units of half `h`.
    pub fn by_half(&self, conf: &[f64], h: usize) -> Option<f64> {
        half_auroc(conf, &self.accurate, &self.half, h)
    }
}

/// Each unit's `grounded_fallback` confidence at thresholds `t`, from its source NLI
/// probabilities and its samples' score `ce`.
pub(super) fn fallback_scores(probs: &[Vec<NliProbs>], ce: &[f64], t: Thresholds) -> Vec<f64> {
    probs
        .iter()
        .zip(ce)
        .map(|(p, &s)| band_score(&check(p, t), t, Some(s)))
        .collect()
}
