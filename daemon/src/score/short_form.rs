//! Short-form baselines (paper §4 "Response-Level Scoring"): response-level scores that compare
//! the whole original answer with the whole sampled answers (uqlm 0.6.7 `BlackBoxUQ`:
//! `shortform_semantic_negentropy`, `shortform_noncontradiction`, `shortform_bert_score`,
//! `shortform_cosine_sim`; definitions in `uq_core::score::black_box`). The response-level
//! white-box scorers are `super::white_box`.
//!
//! They have no unit scores: they appear only in `ScoreResult.response_scores` (and so in
//! `response_confidence`), never as `uq_unit_scores` rows, and a request with only these scorers
//! does not decompose the response.

use uq_core::options::ScoreOptions;
use uq_core::scorers::Scorer;

use super::black_box::black_box_scores;
use crate::judge::Nli;

/// A short-form scorer's score of the response (`None`: it could not be had).
pub type ScorerScore = (Scorer, Option<f64>);

/// The short-form scores of `scorers` (those of family short_form, in order), and notes on the
/// NULL ones.
pub fn score(
    nli: &Nli,
    response: &str,
    samples: &[String],
    scorers: &[Scorer],
    opts: &ScoreOptions,
) -> Result<(Vec<ScorerScore>, Vec<String>), String> {
    let group: Vec<String> = std::iter::once(response.to_string())
        .chain(samples.iter().cloned())
        .collect();
    let bb = black_box_scores(nli, &[group], scorers, opts.scoring.semantic_clustering)?;
    let out = scorers
        .iter()
        .zip(bb)
        .map(|(&s, v)| (s, v.first().copied().filter(|x| x.is_finite())))
        .collect();
    Ok((out, Vec::new()))
}
