//! The premise of each (unit, whole text) comparison under option `premise`
//! (`uq_core::score::premise`; beyond the paper): the whole text, or its K sentences most
//! relevant to the unit, ranked by shared words or by the embedding model.

use std::collections::HashSet;
use std::sync::Arc;

use uq_core::decompose::split_sentences;
use uq_core::score::premise::{
    join_selected, lexical_relevance_of, lexical_selection, top_k, Premise, Rank,
};
use uq_core::words::content_words;

use crate::engine::Engine;

/// `out[h][t]`: the premise that hypothesis `hyps[h]` is checked against for `texts[t]`.
pub fn premises(
    engine: &Engine,
    premise: Premise,
    texts: &[&str],
    hyps: &[String],
) -> Result<Vec<Vec<String>>, String> {
    let (k, rank) = match premise {
        Premise::Whole => {
            return Ok(hyps
                .iter()
                .map(|_| texts.iter().map(|t| t.to_string()).collect())
                .collect())
        }
        Premise::TopK { k, rank } => (k, rank),
    };
    let sentences: Vec<Vec<String>> = texts.iter().map(|t| split_sentences(t)).collect();
    // Relevance of every sentence of every text to each hypothesis: `relevance(h, t)`.
    let embedded = match rank {
        Rank::Lexical => None,
        Rank::Embedding => embed_ranked(engine, &sentences, hyps, k)?,
    };
    let words = (rank == Rank::Lexical).then(|| ranked_words(&sentences, hyps, k));
    let mut out = Vec::with_capacity(hyps.len());
    for h in 0..hyps.len() {
        let mut row = Vec::with_capacity(texts.len());
        let mut offset = 0; // into the embedded sentences of the ranked texts
        for (t, text) in texts.iter().enumerate() {
            let sents = &sentences[t];
            if sents.len() <= k {
                row.push(text.to_string());
                continue;
            }
            let relevance: Vec<f64> = match &embedded {
                Some((hyp_emb, sent_emb)) => {
                    let v = sent_emb[offset..offset + sents.len()]
                        .iter()
                        .map(|s| dot(&hyp_emb[h], s))
                        .collect();
                    offset += sents.len();
                    v
                }
                None => match &words {
                    Some((sentence_words, hyp_words)) => {
                        lexical_relevance_of(&hyp_words[h], &sentence_words[t])
                    }
                    None => return Err("internal error: no content words to rank by".into()),
                },
            };
            let chosen = match rank {
                Rank::Lexical => lexical_selection(&relevance, k),
                Rank::Embedding => top_k(&relevance, k),
            };
            row.push(join_selected(text, sents, &chosen));
        }
        out.push(row);
    }
    Ok(out)
}

/// Texts' embeddings, in order (the embedding model's).
type Embeddings = Vec<Arc<Vec<f32>>>;

/// The embeddings of the hypotheses and of the sentences of the texts to rank (those with
/// more than `k` sentences), in order; `None` when no text needs ranking.
fn embed_ranked(
    engine: &Engine,
    sentences: &[Vec<String>],
    hyps: &[String],
    k: usize,
) -> Result<Option<(Embeddings, Embeddings)>, String> {
    // Only texts with more than K sentences need ranking.
    let ranked: Vec<String> = sentences
        .iter()
        .filter(|s| s.len() > k)
        .flatten()
        .cloned()
        .collect();
    if ranked.is_empty() {
        return Ok(None);
    }
    Ok(Some((engine.embed(hyps)?, engine.embed(&ranked)?)))
}

/// Lexical ranking: the content words of each sentence of a text to rank (none for a text of
/// at most `k` sentences), and of each hypothesis, found once (not once per hypothesis and
/// text).
fn ranked_words(
    sentences: &[Vec<String>],
    hyps: &[String],
    k: usize,
) -> (Vec<Vec<HashSet<String>>>, Vec<HashSet<String>>) {
    let sentence_words: Vec<Vec<HashSet<String>>> = sentences
        .iter()
        .map(|s| match s.len() > k {
            true => s.iter().map(|x| content_words(x)).collect(),
            false => Vec::new(),
        })
        .collect();
    let hyp_words: Vec<HashSet<String>> = hyps.iter().map(|h| content_words(h)).collect();
    (sentence_words, hyp_words)
}

/// Cosine of two L2-normalised embeddings.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
}
