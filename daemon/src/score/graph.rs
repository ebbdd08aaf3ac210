//! Graph scorers (paper §3.3.4; uqlm 0.6.7 `GraphScorer`): centralities of each claim in the
//! weighted bipartite graph of claims and answers. Claim nodes = `options.claim_union` (else the
//! LLM-merged union, [`crate::decompose::merge::claim_union`]) with any response claim missing
//! from it appended; answer nodes = the original response (when not blank) followed by the m
//! samples (uqlm's `[response] + sampled_responses`); edge weight = p_e(premise = answer,
//! hypothesis = claim) when ≥ `graph_threshold`, else no edge; option `premise` may keep only
//! the sentences of each answer most relevant to the claim ([`super::premise`]). The
//! centralities are `uq_core::score::graph`.

use uq_core::limits::check_text;
use uq_core::score::graph::{graph_scores_weighted, weighted_bipartite_from_probs};
use uq_core::scorers::Scorer;

use super::context::{reshape, Context};
use super::premise::premises;
use crate::decompose::merge;

/// One score per unit for each of `scorers` (all of family graph).
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let (weights, unit_nodes) = evidence(cx)?;
    scorers
        .iter()
        .map(|s| {
            let metric = s
                .graph_metric()
                .ok_or_else(|| format!("internal error: {} has no graph metric", s.name()))?;
            let all = graph_scores_weighted(&weights, metric, cx.opts.scoring.pagerank_damping)?;
            Ok(unit_nodes.iter().map(|&i| all[i]).collect())
        })
        .collect()
}

/// The graph's weights (`weights[claim][answer]`) and, per unit, the index of its claim node.
fn evidence(cx: &Context) -> Result<(Vec<Vec<f64>>, Vec<usize>), String> {
    let opts = cx.opts;
    opts.check_graph()?;
    let mut claims: Vec<String> = match &opts.scoring.claim_union {
        Some(union) => union.clone(),
        None => {
            // Sample claims already decomposed for a matched-unit scorer are reused.
            let sample_units = cx
                .sample_units
                .filter(|su| opts.scoring.has_matched_unit() && !su.is_empty());
            merge::claim_union(
                cx.llm,
                opts,
                cx.response,
                cx.samples,
                Some(cx.units),
                sample_units,
            )?
        }
    };
    for (i, c) in claims.iter().enumerate() {
        check_text(c, &format!("options.claim_union[{i}]"))?;
    }
    let mut unit_nodes = Vec::with_capacity(cx.units.len());
    for u in cx.units {
        let idx = match claims.iter().position(|c| c == u) {
            Some(i) => i,
            None => {
                claims.push(u.clone());
                claims.len() - 1
            }
        };
        unit_nodes.push(idx);
    }
    // A blank response (callers may pass '' with their own units) is no answer: samples only.
    let answers: Vec<&str> = std::iter::once(cx.response)
        .filter(|r| !r.trim().is_empty())
        .chain(cx.samples.iter().map(String::as_str))
        .collect();
    let premises = premises(cx.engine, opts.premise(), &answers, &claims)?;
    let pairs: Vec<(String, String)> = claims
        .iter()
        .zip(premises)
        .flat_map(|(c, row)| row.into_iter().map(move |r| (r, c.clone())))
        .collect();
    let p_e: Vec<Vec<f64>> = reshape(cx.nli()?.probs(&pairs)?, claims.len(), answers.len())
        .into_iter()
        .map(|row| row.iter().map(|p| p.entailment).collect())
        .collect();
    Ok((
        weighted_bipartite_from_probs(&p_e, opts.scoring.graph_threshold),
        unit_nodes,
    ))
}
