//! Helpers shared by the unit tests of the scoring modules.

use crate::protocol::NliProbs;

/// NLI probabilities in (contradiction, neutral, entailment) order.
pub fn nli(c: f64, n: f64, e: f64) -> NliProbs {
    NliProbs {
        contradiction: c,
        neutral: n,
        entailment: e,
    }
}

/// Equal to 1e-12 (hand-computed values).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}
