//! Unit-response scorers (paper §3.3.1): each unit against each whole sampled answer,
//! η from NLI(premise = sample y_j, hypothesis = unit s); the maths in
//! `uq_core::score::unit_response`. Option `premise` may keep only the sentences of y_j most
//! relevant to s ([`super::premise`]).

use uq_core::score::unit_response::unit_response_scores;
use uq_core::scorers::Scorer;

use super::context::{reshape, Context};
use super::premise::premises;

/// One score per unit for each of `scorers` (all of family unit-response).
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let samples: Vec<&str> = cx.samples.iter().map(String::as_str).collect();
    let premises = premises(cx.engine, cx.opts.premise(), &samples, cx.units)?;
    let pairs: Vec<(String, String)> = cx
        .units
        .iter()
        .zip(premises)
        .flat_map(|(u, row)| row.into_iter().map(move |y| (y, u.clone())))
        .collect();
    let probs = reshape(cx.nli()?.probs(&pairs)?, cx.units.len(), cx.samples.len());
    scorers
        .iter()
        .map(|&s| unit_response_scores(&probs, s))
        .collect()
}
