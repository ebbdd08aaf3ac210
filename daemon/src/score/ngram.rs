//! The model-free n-gram scorers (family `ngram`; SelfCheckGPT's unigram variant, Manakul et
//! al. 2023, §5.3): a unigram model with add-one smoothing fitted on the response and the
//! samples in use, each unit scored by the mean or max −ln p of its tokens and mapped to
//! exp(−x). No model and no LLM; the maths is `uq_core::score::ngram`.

use uq_core::score::ngram::{unigram_confidences, UnigramStat};
use uq_core::scorers::Scorer;

use super::context::Context;

/// One confidence per unit for each of `scorers` (all of family ngram), from one model.
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let stats: Vec<UnigramStat> = scorers
        .iter()
        .map(|s| {
            UnigramStat::of(s.consistency())
                .ok_or_else(|| format!("internal error: {} is not an n-gram scorer", s.name()))
        })
        .collect::<Result<_, _>>()?;
    Ok(unigram_confidences(
        cx.response,
        cx.samples,
        cx.units,
        &stats,
    ))
}
