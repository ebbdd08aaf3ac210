//! Helpers shared by the unit tests of the scoring modules.

use crate::score::nli::NliProbs;

/// NLI probabilities, given in the order (entailment, neutral, contradiction): `nli(e, n, c)`.
pub fn nli(e: f64, n: f64, c: f64) -> NliProbs {
    NliProbs {
        entailment: e,
        neutral: n,
        contradiction: c,
    }
}

/// Equal to 1e-12 (hand-computed values).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Deterministic pseudo-random numbers in [0, 1) (a 64-bit LCG, Knuth's constants).
pub fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    lcg53(seed, n)
        .map(|b| b as f64 / (1u64 << 53) as f64)
        .collect()
}

/// The same draws moved to the middle of their step: in (0, 1), never 0 (for logarithms).
pub fn open_uniforms(seed: u64, n: usize) -> Vec<f64> {
    lcg53(seed, n)
        .map(|b| (b as f64 + 0.5) / (1u64 << 53) as f64)
        .collect()
}

/// `n` 53-bit draws of a 64-bit LCG started at `seed`.
fn lcg53(seed: u64, n: usize) -> impl Iterator<Item = u64> {
    let mut x = seed;
    (0..n).map(move |_| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 11
    })
}
