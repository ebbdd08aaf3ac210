//! Matched-unit scorers (paper §3.3.2): each unit against each unit of each sample, the best
//! match per sample, averaged over samples (`uq_core::score::matched_unit`). Evidence: NLI
//! (premise = sample unit s', hypothesis = unit s), sentence embeddings (cosine), or token
//! embeddings (BERTScore F1).

use uq_core::protocol::NliProbs;
use uq_core::score::consistency::{bertscore_f1, normalized_cosine};
use uq_core::score::matched_unit::{matched_unit_scores, nli_consistency};
use uq_core::scorers::{Consistency, Scorer};

use super::context::Context;

/// One score per unit for each of `scorers` (all of family matched-unit).
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let sample_units = cx.sample_units.ok_or_else(|| {
        "internal error: sample units were not decomposed; please report it".to_string()
    })?;
    let wants = |c: Consistency| scorers.iter().any(|s| s.consistency() == c);
    let nli = if scorers.iter().any(|s| is_nli(s.consistency())) {
        Some(nli_probs(cx, sample_units)?)
    } else {
        None
    };
    let cosine = if wants(Consistency::Cosine) {
        let unit_emb = cx.engine.embed(cx.units)?;
        let sample_emb: Vec<_> = sample_units
            .iter()
            .map(|su| cx.engine.embed(su))
            .collect::<Result<_, _>>()?;
        Some(pairwise(&unit_emb, &sample_emb, |a, b| {
            normalized_cosine(a, b)
        }))
    } else {
        None
    };
    let bert = if wants(Consistency::BertScore) {
        let unit_tok = cx.engine.token_embeddings(cx.units)?;
        let sample_tok: Vec<_> = sample_units
            .iter()
            .map(|su| cx.engine.token_embeddings(su))
            .collect::<Result<_, _>>()?;
        Some(pairwise(&unit_tok, &sample_tok, |a, b| bertscore_f1(a, b)))
    } else {
        None
    };
    scorers
        .iter()
        .map(|s| {
            let values = match s.consistency() {
                Consistency::Cosine => cosine.as_deref().map(matched_unit_scores),
                Consistency::BertScore => bert.as_deref().map(matched_unit_scores),
                c => nli
                    .as_ref()
                    .map(|p| matched_unit_scores(&nli_consistency(p, c))),
            };
            values.ok_or_else(|| format!("internal error: no evidence for {}", s.name()))
        })
        .collect()
}

fn is_nli(c: Consistency) -> bool {
    matches!(
        c,
        Consistency::Entailment | Consistency::Noncontradiction | Consistency::ContrastedEntailment
    )
}

/// `probs[unit][sample][sample unit]`: NLI(premise = sample unit, hypothesis = unit), all pairs
/// in one engine call.
fn nli_probs(
    cx: &Context,
    sample_units: &[Vec<String>],
) -> Result<Vec<Vec<Vec<NliProbs>>>, String> {
    let pairs: Vec<(String, String)> = cx
        .units
        .iter()
        .flat_map(|u| {
            sample_units
                .iter()
                .flatten()
                .map(move |s| (s.clone(), u.clone()))
        })
        .collect();
    let mut it = cx.nli()?.probs(&pairs)?.into_iter();
    Ok(cx
        .units
        .iter()
        .map(|_| {
            sample_units
                .iter()
                .map(|su| it.by_ref().take(su.len()).collect())
                .collect()
        })
        .collect())
}

/// `out[i][j][k] = f(unit i, sample j's unit k)`.
fn pairwise<T>(units: &[T], samples: &[Vec<T>], f: impl Fn(&T, &T) -> f64) -> Vec<Vec<Vec<f64>>> {
    units
        .iter()
        .map(|u| {
            samples
                .iter()
                .map(|su| su.iter().map(|s| f(u, s)).collect())
                .collect()
        })
        .collect()
}
