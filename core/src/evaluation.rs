//! The figures of scored, labelled units with their intervals over resampled answers
//! ([`crate::metrics::bootstrap`]): what `uqd bench suite`, its `--compare` and `uqd eval` print.
//!
//! * Of one set ([`Figure`]): AUROC (positive = true, score = confidence), AUC-PR of the true
//!   units, and NonFact AUC-PR (positive = false, score = 1 − confidence: SelfCheckGPT's
//!   headline). On WikiBio the AUC-PR of the true units is SelfCheckGPT's *Factual* (accurate
//!   sentences positive, the hallucination score negated), and with the major-inaccurate labels
//!   (`Labelled::major`) *NonFact\**: major-inaccurate sentences positive, score 1 − confidence,
//!   over the passages that are not wholly major-inaccurate (Manakul et al. 2023, §7).
//! * Carried from one set to another ([`Transfer`]): ECE (10 bins) of the raw scores and of the
//!   Platt model fitted on the other set (the default of `uq_fit_calibration`); the conformal
//!   threshold (Mohri & Hashimoto 2024) fitted on the other set at α: coverage (share of
//!   answers whose kept claims are all true) and the share of units kept.
//!
//! Units with a NaN score are left out of every figure (counted by the callers).

pub mod align;

use crate::calibrate::conformal::Conformal;
use crate::calibrate::{Calibration, Method};
use crate::metrics::bootstrap::{bootstrap, paired, Clusters, Interval};
use crate::metrics::{auroc, average_precision, ece};

/// ECE bins.
pub const ECE_BINS: usize = 10;

/// Labelled units of one set: score, label and answer id of each.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Labelled {
    pub scores: Vec<f64>,
    pub labels: Vec<bool>,
    pub answers: Vec<usize>,
    /// Per unit, whether it is major-inaccurate (WikiBio's three classes); empty where the data
    /// has two classes only. Only [`Figure::NonfactStarAucPr`] reads it.
    pub major: Vec<bool>,
}

impl Labelled {
    pub fn clusters(&self) -> Clusters {
        Clusters::of(&self.answers)
    }

    /// The units at `idx` with a finite score: (scores, labels).
    fn finite(&self, idx: &[usize]) -> (Vec<f64>, Vec<bool>) {
        idx.iter()
            .filter(|&&i| self.scores[i].is_finite())
            .map(|&i| (self.scores[i], self.labels[i]))
            .unzip()
    }

    /// Units with a NaN score.
    pub fn unscored(&self) -> usize {
        self.scores.iter().filter(|s| !s.is_finite()).count()
    }

    /// The Platt model of the units with a finite score (as `uq_fit_calibration(score, label,
    /// 'platt')`); the error says why there is none (e.g. one class).
    pub fn fit_platt(&self) -> Result<Calibration, String> {
        let (s, l) = self.finite(&(0..self.scores.len()).collect::<Vec<_>>());
        Calibration::fit(&s, &l, Method::Platt, "score")
    }

    /// The conformal threshold at `alpha` over the answers' units with a finite score (as
    /// `uq_fit_conformal(score, label, answer, alpha)`); the error says why there is none (e.g.
    /// too few answers).
    pub fn fit_conformal(&self, alpha: f64) -> Result<Conformal, String> {
        let answers: Vec<Vec<(f64, bool)>> = self
            .by_answer()
            .into_iter()
            .map(|a| a.into_iter().filter(|c| c.0.is_finite()).collect())
            .collect();
        Conformal::fit(&answers, alpha, None, 0)
    }

    /// Each answer's (score, label) pairs, answers in the order of their first unit.
    pub fn by_answer(&self) -> Vec<Vec<(f64, bool)>> {
        let c = self.clusters();
        let mut out: Vec<Vec<(f64, bool)>> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for i in c.all() {
            let g = *seen.entry(self.answers[i]).or_insert_with(|| {
                out.push(Vec::new());
                out.len() - 1
            });
            out[g].push((self.scores[i], self.labels[i]));
        }
        out
    }
}

/// A figure of one set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Auroc,
    AucPr,
    NonfactAucPr,
    /// NonFact\*: needs [`Labelled::major`] (`None` without it).
    NonfactStarAucPr,
}

impl Figure {
    /// The figures every labelled set has.
    pub const ALL: [Figure; 3] = [Figure::Auroc, Figure::AucPr, Figure::NonfactAucPr];

    /// The figures of `set`: [`Figure::ALL`], and NonFact\* where it has the major labels.
    pub fn of_set(set: &Labelled) -> Vec<Figure> {
        let mut out = Figure::ALL.to_vec();
        if !set.major.is_empty() {
            out.push(Figure::NonfactStarAucPr);
        }
        out
    }

    pub fn name(self) -> &'static str {
        match self {
            Figure::Auroc => "auroc",
            Figure::AucPr => "auc_pr",
            Figure::NonfactAucPr => "nonfact_auc_pr",
            Figure::NonfactStarAucPr => "nonfact_star_auc_pr",
        }
    }

    pub fn parse(name: &str) -> Option<Figure> {
        [Figure::NonfactStarAucPr]
            .into_iter()
            .chain(Figure::ALL)
            .find(|f| f.name() == name)
    }

    /// Higher is better for every figure of one set.
    pub fn of(self, set: &Labelled, idx: &[usize]) -> Option<f64> {
        if self == Figure::NonfactStarAucPr {
            return nonfact_star(set, idx);
        }
        let (s, l) = set.finite(idx);
        match self {
            Figure::Auroc => auroc(&s, &l),
            Figure::AucPr => average_precision(&s, &l),
            Figure::NonfactAucPr | Figure::NonfactStarAucPr => {
                let h: Vec<f64> = s.iter().map(|x| 1.0 - x).collect();
                let f: Vec<bool> = l.iter().map(|x| !x).collect();
                average_precision(&h, &f)
            }
        }
    }

    /// The figure with its interval (`resamples` resamples of the answers, seeded).
    pub fn interval(self, set: &Labelled, resamples: usize, seed: u64) -> Option<Interval> {
        bootstrap(&set.clusters(), resamples, seed, |i| self.of(set, i))
    }

    /// The interval of the paired difference `b − a` of two scorings of the same units.
    /// Errors when they are not the same units (labels or answers differ).
    pub fn paired(
        self,
        a: &Labelled,
        b: &Labelled,
        resamples: usize,
        seed: u64,
    ) -> Result<Option<Interval>, String> {
        same_units(a, b)?;
        Ok(paired(
            &a.clusters(),
            resamples,
            seed,
            |i| self.of(b, i),
            |i| self.of(a, i),
        ))
    }
}

/// NonFact\* AUC-PR of the units at `idx` (module doc): the passages with a unit that is not
/// major-inaccurate, their major-inaccurate units positive, score 1 − confidence.
fn nonfact_star(set: &Labelled, idx: &[usize]) -> Option<f64> {
    if set.major.len() != set.labels.len() {
        return None;
    }
    let mixed: std::collections::HashSet<usize> = idx
        .iter()
        .filter(|&&i| !set.major[i])
        .map(|&i| set.answers[i])
        .collect();
    let (h, f): (Vec<f64>, Vec<bool>) = idx
        .iter()
        .filter(|&&i| mixed.contains(&set.answers[i]) && set.scores[i].is_finite())
        .map(|&i| (1.0 - set.scores[i], set.major[i]))
        .unzip();
    average_precision(&h, &f)
}

/// Whether `a` and `b` hold the same units (labels and answers), for a paired comparison.
pub fn same_units(a: &Labelled, b: &Labelled) -> Result<(), String> {
    if a.labels != b.labels || a.answers != b.answers || a.major != b.major {
        return Err(format!(
            "the two runs scored different units ({} and {}, or other labels or answers): \
             compare runs of the same data files with the same --limit",
            a.labels.len(),
            b.labels.len()
        ));
    }
    Ok(())
}

/// What one set's fit carries to another.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub platt: Option<Calibration>,
    pub conformal: Option<Conformal>,
}

impl Fitted {
    /// The Platt model and the conformal threshold at `alpha` fitted on `fit`'s units with a
    /// finite score (`None` where the fit is impossible, e.g. one class or too few answers).
    pub fn on(fit: &Labelled, alpha: f64) -> Fitted {
        Fitted {
            platt: fit.fit_platt().ok(),
            conformal: fit.fit_conformal(alpha).ok(),
        }
    }
}

/// A figure of one set under what another set's fit carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// ECE of the raw scores (nothing carried; beside the calibrated one).
    EceRaw,
    /// ECE of the scores mapped by the Platt model of the other set.
    EcePlatt,
    /// Share of answers whose kept units (score ≥ the other set's conformal threshold) are all
    /// true.
    ConformalCoverage,
    /// Share of units kept at that threshold.
    ConformalKept,
}

impl Transfer {
    pub const ALL: [Transfer; 4] = [
        Transfer::EceRaw,
        Transfer::EcePlatt,
        Transfer::ConformalCoverage,
        Transfer::ConformalKept,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Transfer::EceRaw => "ece_raw",
            Transfer::EcePlatt => "ece_platt",
            Transfer::ConformalCoverage => "conformal_coverage",
            Transfer::ConformalKept => "conformal_kept",
        }
    }

    pub fn parse(name: &str) -> Option<Transfer> {
        Transfer::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether a higher value is better (ECE: lower; coverage: higher; kept share: higher).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Transfer::EceRaw | Transfer::EcePlatt)
    }

    /// The figure on `test`'s units at `idx`.
    pub fn of(self, fitted: &Fitted, test: &Labelled, idx: &[usize]) -> Option<f64> {
        let (s, l) = test.finite(idx);
        match self {
            Transfer::EceRaw => ece(&s, &l, ECE_BINS),
            Transfer::EcePlatt => {
                let p = fitted.platt.as_ref()?;
                let c: Vec<f64> = s.iter().map(|&x| p.apply(x)).collect();
                ece(&c, &l, ECE_BINS)
            }
            Transfer::ConformalKept => {
                let c = fitted.conformal.as_ref()?;
                let kept = idx
                    .iter()
                    .filter(|&&i| test.scores[i].is_finite() && test.scores[i] >= c.threshold)
                    .count();
                (!idx.is_empty()).then(|| kept as f64 / idx.len() as f64)
            }
            Transfer::ConformalCoverage => {
                let c = fitted.conformal.as_ref()?;
                // idx is whole answers one after another (a resample may draw one answer twice
                // in a row): an answer starts at its first unit; it is covered when none of its
                // kept units is false
                let first: std::collections::HashSet<usize> = test
                    .clusters()
                    .groups()
                    .iter()
                    .filter_map(|g| g.first().copied())
                    .collect();
                let (mut answers, mut covered, mut ok) = (0usize, 0usize, true);
                for &i in idx {
                    if first.contains(&i) {
                        if answers > 0 {
                            covered += usize::from(ok);
                        }
                        answers += 1;
                        ok = true;
                    }
                    let s = test.scores[i];
                    ok &= !(s.is_finite() && s >= c.threshold && !test.labels[i]);
                }
                covered += usize::from(answers > 0 && ok);
                (answers > 0).then(|| covered as f64 / answers as f64)
            }
        }
    }

    /// The figure on `test` with its interval over resampled answers of `test` (the fit held
    /// fixed).
    pub fn interval(
        self,
        fitted: &Fitted,
        test: &Labelled,
        resamples: usize,
        seed: u64,
    ) -> Option<Interval> {
        bootstrap(&test.clusters(), resamples, seed, |i| {
            self.of(fitted, test, i)
        })
    }
}

#[cfg(test)]
mod tests;
