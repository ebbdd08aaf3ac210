//! Whole-answer ("black-box") comparisons shared by the unit-QA scorers (answers to a unit's
//! question) and the short-form baselines (the original answer against its samples): the NLI
//! pairs and embeddings of all answer groups are fetched from the engine in one batch per kind;
//! the maths is `uq_core::score::black_box`.

use std::collections::HashMap;
use std::sync::Arc;

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
    let evidence = Evidence::fetch(nli, groups, scorers)?;
    let mut out = Vec::with_capacity(scorers.len());
    for s in scorers {
        let mut v = Vec::with_capacity(groups.len());
        for (gi, g) in groups.iter().enumerate() {
            v.push(evidence.score(*s, g, evidence.offsets[gi], clustering)?);
        }
        out.push(v);
    }
    Ok(out)
}

/// Whether some of `scorers` uses consistency `c`.
fn wants(scorers: &[Scorer], c: Consistency) -> bool {
    scorers.iter().any(|s| s.consistency() == c)
}

/// An NLI pair: (premise, hypothesis).
type Pair = (String, String);

/// The NLI pairs of all groups, each once: non-contradiction needs (y0, yj) both ways;
/// negentropy every pair of distinct texts. With the index of each pair.
fn nli_pairs(groups: &[Vec<String>], scorers: &[Scorer]) -> (Vec<Pair>, HashMap<Pair, usize>) {
    let mut pairs: Vec<Pair> = Vec::new();
    let mut index = HashMap::new();
    let mut want_pair = |a: &str, b: &str| {
        let key = (a.to_string(), b.to_string());
        if !index.contains_key(&key) {
            index.insert(key.clone(), pairs.len());
            pairs.push(key);
        }
    };
    for g in groups {
        if wants(scorers, Consistency::MeanNoncontradiction) {
            for y in g.iter().skip(1) {
                if *y != g[0] {
                    want_pair(&g[0], y);
                    want_pair(y, &g[0]);
                }
            }
        }
        if wants(scorers, Consistency::SemanticNegentropy) {
            for (a, b) in negentropy_pairs(g) {
                want_pair(&g[a], &g[b]);
            }
        }
    }
    (pairs, index)
}

/// What the engine gave for all groups: the NLI probabilities of their pairs, and the sentence
/// and token embeddings of their texts (flattened in group order).
struct Evidence {
    index: HashMap<(String, String), usize>,
    probs: Vec<NliProbs>,
    /// Per group, the position of its first text among the embedded texts.
    offsets: Vec<usize>,
    emb: Option<Vec<Arc<Vec<f32>>>>,
    tok: Option<Vec<Arc<Vec<Vec<f32>>>>>,
}

impl Evidence {
    /// Fetches what `scorers` need, one batch per kind.
    fn fetch(nli: &Nli, groups: &[Vec<String>], scorers: &[Scorer]) -> Result<Evidence, String> {
        let engine = nli.engine;
        let (pairs, index) = nli_pairs(groups, scorers);
        let probs = if pairs.is_empty() {
            Vec::new()
        } else {
            nli.probs(&pairs)?
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
        let emb = if wants(scorers, Consistency::Cosine) && !texts.is_empty() {
            Some(engine.embed(&texts)?)
        } else {
            None
        };
        let tok = if wants(scorers, Consistency::BertScore) && !texts.is_empty() {
            Some(engine.token_embeddings(&texts)?)
        } else {
            None
        };
        Ok(Evidence {
            index,
            probs,
            offsets,
            emb,
            tok,
        })
    }

    /// NLI probabilities of (premise a, hypothesis b); neutral when not fetched.
    fn p(&self, a: &str, b: &str) -> NliProbs {
        let neutral = NliProbs {
            entailment: 0.0,
            neutral: 1.0,
            contradiction: 0.0,
        };
        self.index
            .get(&(a.to_string(), b.to_string()))
            .and_then(|&i| self.probs.get(i).copied())
            .unwrap_or(neutral)
    }

    /// Scorer `s` on group `g`, whose first text is embedded text `o`; NaN for an empty group.
    fn score(
        &self,
        s: Scorer,
        g: &[String],
        o: usize,
        clustering: Clustering,
    ) -> Result<f64, String> {
        let Some(y0) = g.first() else {
            return Ok(f64::NAN);
        };
        let cands = &g[1..];
        Ok(match s.consistency() {
            Consistency::MeanNoncontradiction => {
                let fwd: Vec<NliProbs> = cands.iter().map(|y| self.p(y0, y)).collect();
                let back: Vec<NliProbs> = cands.iter().map(|y| self.p(y, y0)).collect();
                noncontradiction_score(y0, cands, &fwd, &back)
            }
            Consistency::ExactMatch => exact_match_score(y0, cands),
            Consistency::SemanticNegentropy => {
                semantic_negentropy_of_answers(g, clustering, |a, b| self.p(&g[a], &g[b]))
            }
            Consistency::Cosine => {
                let e = self
                    .emb
                    .as_ref()
                    .ok_or("internal error: embeddings missing")?;
                let sims: Vec<f64> = (1..g.len())
                    .map(|j| normalized_cosine(&e[o], &e[o + j]))
                    .collect();
                mean(&sims)
            }
            Consistency::BertScore => {
                let t = self
                    .tok
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
        })
    }
}
