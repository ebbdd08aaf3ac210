//! The NLI model's evidence for one pair, as the scorers read it (and as the protocol carries
//! it: `protocol` re-exports [`NliProbs`]).

use serde::{Deserialize, Serialize};

/// Three-way NLI probabilities for one (premise, hypothesis) pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NliProbs {
    pub entailment: f64,
    pub neutral: f64,
    pub contradiction: f64,
}
