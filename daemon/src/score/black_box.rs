//! Whole-answer ("black-box") comparisons shared by the unit-QA scorers (answers to a unit's
//! question) and the short-form baselines (the original answer against its samples): the NLI
//! pairs and embeddings of all answer groups are fetched from the engine in one batch per kind;
//! the maths is `uq_core::score::black_box`.

use uq_core::protocol::NliProbs;
use uq_core::score::black_box::{
    exact_match_score, mean, negentropy_pairs, noncontradiction_score,
    semantic_negentropy_of_answers, Clustering,
};
use uq_core::score::consistency::{bertscore_f1, normalized_cosine};
use uq_core::scorers::{Consistency, Scorer};

use crate::judge::Nli;

/// Scores of `scorers` (each of consistency non-contradiction, cosine, BERTScore, exact match or
/// semantic negentropy) for each answer group `[y_0, y_1..y_m]`: `out[s][g]`. The evidence of all
/// groups is fetched from the engine in one batch per kind. A group with no sampled answer
/// scores NaN (semantic negentropy: 1 for a lone answer, as `semantic_entropy`).
pub fn black_box_scores(
    nli: &Nli,
    groups: &[Vec<String>],
    scorers: &[Scorer],
    clustering: Clustering,
) -> Result<Vec<Vec<f64>>, String> {
    let engine = nli.engine;
    let wants = |c: Consistency| scorers.iter().any(|s| s.consistency() == c);

    // NLI: non-contradiction needs (y0, yj) both ways; negentropy every pair of distinct texts.
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut want_pair = |a: &str, b: &str| {
        let key = (a.to_string(), b.to_string());
        if !index.contains_key(&key) {
            index.insert(key.clone(), pairs.len());
            pairs.push(key);
        }
    };
    for g in groups {
        if wants(Consistency::MeanNoncontradiction) {
            for y in g.iter().skip(1) {
                if *y != g[0] {
                    want_pair(&g[0], y);
                    want_pair(y, &g[0]);
                }
            }
        }
        if wants(Consistency::SemanticNegentropy) {
            for (a, b) in negentropy_pairs(g) {
                want_pair(&g[a], &g[b]);
            }
        }
    }
    let probs = if pairs.is_empty() {
        Vec::new()
    } else {
        nli.probs(&pairs)?
    };
    let neutral = NliProbs {
        entailment: 0.0,
        neutral: 1.0,
        contradiction: 0.0,
    };
    let p = |a: &str, b: &str| -> NliProbs {
        index
            .get(&(a.to_string(), b.to_string()))
            .and_then(|&i| probs.get(i).copied())
            .unwrap_or(neutral)
    };

    let texts: Vec<String> = groups.iter().flatten().cloned().collect();
    let offsets: Vec<usize> = groups
        .iter()
        .scan(0, |acc, g| {
            let o = *acc;
            *acc += g.len();
            Some(o)
        })
        .collect();
    let emb = if wants(Consistency::Cosine) && !texts.is_empty() {
        Some(engine.embed(&texts)?)
    } else {
        None
    };
    let tok = if wants(Consistency::BertScore) && !texts.is_empty() {
        Some(engine.token_embeddings(&texts)?)
    } else {
        None
    };

    let mut out = Vec::with_capacity(scorers.len());
    for s in scorers {
        let mut v = Vec::with_capacity(groups.len());
        for (gi, g) in groups.iter().enumerate() {
            let Some(y0) = g.first() else {
                v.push(f64::NAN);
                continue;
            };
            let cands = &g[1..];
            let o = offsets[gi];
            let x = match s.consistency() {
                Consistency::MeanNoncontradiction => {
                    let fwd: Vec<NliProbs> = cands.iter().map(|y| p(y0, y)).collect();
                    let back: Vec<NliProbs> = cands.iter().map(|y| p(y, y0)).collect();
                    noncontradiction_score(y0, cands, &fwd, &back)
                }
                Consistency::ExactMatch => exact_match_score(y0, cands),
                Consistency::SemanticNegentropy => {
                    semantic_negentropy_of_answers(g, clustering, |a, b| p(&g[a], &g[b]))
                }
                Consistency::Cosine => {
                    let e = emb.as_ref().ok_or("internal error: embeddings missing")?;
                    let sims: Vec<f64> = (1..g.len())
                        .map(|j| normalized_cosine(&e[o], &e[o + j]))
                        .collect();
                    mean(&sims)
                }
                Consistency::BertScore => {
                    let t = tok
                        .as_ref()
                        .ok_or("internal error: token embeddings missing")?;
                    let f: Vec<f64> = (1..g.len())
                        .map(|j| bertscore_f1(&t[o], &t[o + j]))
                        .collect();
                    mean(&f)
                }
                other => {
                    return Err(format!(
                        "internal error: {} ({}) is not a black-box consistency",
                        s.name(),
                        other.as_str()
                    ))
                }
            };
            v.push(x);
        }
        out.push(v);
    }
    Ok(out)
}
