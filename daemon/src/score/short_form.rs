//! Short-form baselines (paper §4 "Response-Level Scoring"): response-level scores that compare
//! the whole original answer with the whole sampled answers (uqlm 0.6.7 `BlackBoxUQ`:
//! `shortform_semantic_negentropy`, `shortform_noncontradiction`, `shortform_bert_score`,
//! `shortform_cosine_sim`; definitions in `uq_core::score::black_box`), and the white-box
//! `normalized_probability` (uqlm's `WhiteBoxUQ` "normalized_probability": exp of the mean token
//! log-probability of the original answer).
//!
//! They have no unit scores: they appear only in `ScoreResult.response_scores` (and so in
//! `response_confidence`), never as `uq_unit_scores` rows, and a request with only these scorers
//! does not decompose the response.
//!
//! `normalized_probability` reads the answer's token log-probabilities from
//! `options.response_logprobs` (e.g. `uq_generate`'s `logprobs` with a generation LLM whose
//! config sets `"logprobs": true`). Without them it is NULL and a note says why.

use uq_core::options::ScoreOptions;
use uq_core::score::black_box::normalized_probability;
use uq_core::scorers::{Consistency, Scorer};

use super::black_box::black_box_scores;
use crate::judge::Nli;

/// Note given when `normalized_probability` has no log-probabilities.
pub const NO_LOGPROBS_NOTE: &str = "normalized_probability is NULL: no token log-probabilities \
    for the response; pass them as option response_logprobs (e.g. the logprobs of uq_generate \
    with \"generation_llm\":{\"logprobs\":true})";

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
    let mut notes = Vec::new();
    let black: Vec<Scorer> = scorers
        .iter()
        .copied()
        .filter(|s| s.consistency() != Consistency::NormalizedProbability)
        .collect();
    let bb = if black.is_empty() {
        Vec::new()
    } else {
        let group: Vec<String> = std::iter::once(response.to_string())
            .chain(samples.iter().cloned())
            .collect();
        black_box_scores(nli, &[group], &black, opts.scoring.semantic_clustering)?
    };
    let mut out = Vec::with_capacity(scorers.len());
    for &s in scorers {
        let value = if s.consistency() == Consistency::NormalizedProbability {
            match &opts.scoring.response_logprobs {
                Some(lp) if !lp.is_empty() => Some(normalized_probability(lp)),
                Some(_) => {
                    notes.push(
                        "normalized_probability is NULL: option response_logprobs is empty"
                            .to_string(),
                    );
                    None
                }
                None => {
                    notes.push(NO_LOGPROBS_NOTE.to_string());
                    None
                }
            }
        } else {
            let i = black.iter().position(|b| *b == s).unwrap_or(0);
            bb.get(i).and_then(|v| v.first().copied())
        };
        out.push((s, value.filter(|x| x.is_finite())));
    }
    Ok((out, notes))
}
