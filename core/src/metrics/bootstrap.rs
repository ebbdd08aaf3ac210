//! Bootstrap confidence intervals over answers (beyond the paper; Efron & Tibshirani 1993,
//! ch. 13, the percentile interval). A figure of units (AUROC of claims, ECE of sentences, …)
//! is recomputed on resamples of the *answers* drawn with replacement, each answer bringing all
//! its units: units of one answer share its LLM, prompt and subject, so resampling units would
//! treat them as independent and give intervals too narrow (the cluster bootstrap, Field &
//! Welsh 2007). The 95 % interval is the 2.5th and 97.5th percentile (numpy's linear method) of
//! the resampled figures.
//!
//! A paired difference ([`paired`]) draws the same answers for both figures, so what the two
//! runs share (the data's own noise) cancels: the interval of A − B is far narrower than the
//! two intervals side by side when A and B score the same units.

use crate::aggregate::uad::percentile;

/// Resamples of a figure's interval unless told otherwise.
pub const RESAMPLES: usize = 1000;
/// Seed of the resamples unless told otherwise (any fixed value: the intervals are repeatable).
pub const SEED: u64 = 20_240_601;
/// Coverage of the intervals.
pub const LEVEL: f64 = 0.95;

/// SplitMix64 (Steele, Lea & Flood 2014): small, seeded, the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw from 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// Units grouped by the answer they belong to: what a resample draws.
#[derive(Debug, Clone)]
pub struct Clusters {
    groups: Vec<Vec<usize>>,
}

impl Clusters {
    /// From each unit's answer id (units of one answer need not be adjacent; answers keep the
    /// order of their first unit).
    pub fn of(answers: &[usize]) -> Clusters {
        let mut index = std::collections::HashMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (unit, &a) in answers.iter().enumerate() {
            let g = *index.entry(a).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(unit);
        }
        Clusters { groups }
    }

    /// Every unit its own answer (a figure of independent items, e.g. one label per answer).
    pub fn singletons(n: usize) -> Clusters {
        Clusters {
            groups: (0..n).map(|i| vec![i]).collect(),
        }
    }

    /// Each answer's units.
    pub fn groups(&self) -> &[Vec<usize>] {
        &self.groups
    }

    pub fn answers(&self) -> usize {
        self.groups.len()
    }

    /// Every unit, answer by answer: the sample itself.
    pub fn all(&self) -> Vec<usize> {
        self.groups.iter().flatten().copied().collect()
    }

    /// One resample: as many answers as there are, drawn with replacement, with their units.
    pub fn resample(&self, rng: &mut Rng) -> Vec<usize> {
        let mut out = Vec::new();
        for _ in 0..self.groups.len() {
            out.extend_from_slice(&self.groups[rng.below(self.groups.len())]);
        }
        out
    }
}

/// A figure with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The figure on the sample itself.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Resamples on which the figure was defined (an AUROC needs both classes).
    pub resamples: usize,
}

impl Interval {
    /// The percentile interval at [`LEVEL`] of `values` around `estimate`; `None` without values.
    pub fn percentile(estimate: f64, values: &[f64]) -> Option<Interval> {
        let tail = (1.0 - LEVEL) / 2.0 * 100.0;
        Some(Interval {
            estimate,
            low: percentile(values, tail)?,
            high: percentile(values, 100.0 - tail)?,
            resamples: values.iter().filter(|v| !v.is_nan()).count(),
        })
    }

    /// Whether the interval lies wholly above (1) or below (−1) zero, or holds it (0).
    pub fn sign(&self) -> i8 {
        if self.low > 0.0 {
            1
        } else if self.high < 0.0 {
            -1
        } else {
            0
        }
    }
}

/// The interval of `figure` (computed on a list of unit indices; `None` where undefined) over
/// `resamples` resamples of `clusters`, seeded. `None` when the figure is undefined on the
/// sample itself or on every resample.
pub fn bootstrap(
    clusters: &Clusters,
    resamples: usize,
    seed: u64,
    figure: impl Fn(&[usize]) -> Option<f64>,
) -> Option<Interval> {
    let estimate = figure(&clusters.all())?;
    let mut rng = Rng(seed);
    let values: Vec<f64> = (0..resamples)
        .filter_map(|_| figure(&clusters.resample(&mut rng)))
        .collect();
    Interval::percentile(estimate, &values)
}

/// The interval of the paired difference `a − b`, both computed on the same resamples.
/// Resamples where either is undefined are left out.
pub fn paired(
    clusters: &Clusters,
    resamples: usize,
    seed: u64,
    a: impl Fn(&[usize]) -> Option<f64>,
    b: impl Fn(&[usize]) -> Option<f64>,
) -> Option<Interval> {
    bootstrap(clusters, resamples, seed, |idx| Some(a(idx)? - b(idx)?))
}

/// `values` at `idx` (a resample's units).
pub fn pick<T: Copy>(values: &[T], idx: &[usize]) -> Vec<T> {
    idx.iter().map(|&i| values[i]).collect()
}

#[cfg(test)]
mod tests;
