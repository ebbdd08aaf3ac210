//! Premise selection (beyond the paper; docs/reference.md, "Premise selection"). The paper's
//! unit-response and graph scorers (§3.3.1, §3.3.4) compare a unit s with a whole answer y:
//! NLI(premise = y, hypothesis = s). Most of y is unrelated to s, yet every token of it is
//! paid for. Option `premise` may instead keep the K sentences of y most relevant to s, joined
//! in their original order: the same evidence, ranked first, at a fraction of the tokens.
//!
//! * `"whole"`: y itself (the paper, uqlm).
//! * `{"top_k": K, "rank": "lexical"}`: the K sentences sharing the most content words with s
//!   ([`lexical_relevance`]), less those that share none ([`lexical_selection`]).
//! * `{"top_k": K, "rank": "embedding"}`: the K sentences whose sentence embedding is closest to
//!   s's (cosine; the daemon computes it with its embedding model).
//!
//! A text of at most K sentences is its own premise, unchanged, so short answers score exactly
//! as with `"whole"`.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::scorers::Granularity;
use crate::words::content_words;

/// How a sentence's relevance to the unit is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// Shared content words ([`lexical_relevance`]).
    Lexical,
    /// Cosine similarity of sentence embeddings.
    Embedding,
}

impl Rank {
    pub fn as_str(self) -> &'static str {
        match self {
            Rank::Lexical => "lexical",
            Rank::Embedding => "embedding",
        }
    }
}

/// Option `premise`: what a unit is compared with when the paper compares it with a whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Premise {
    /// The whole text (the paper, uqlm).
    Whole,
    /// The `k` most relevant sentences, in their original order.
    TopK { k: usize, rank: Rank },
}

/// The default of option `premise` for sentences: the 3 most relevant sentences, lexical.
pub const DEFAULT_SENTENCE_PREMISE: Premise = Premise::TopK {
    k: 3,
    rank: Rank::Lexical,
};

/// The default of option `premise` at granularity `g`, chosen with `uqd bench selfcheck` /
/// `bench claims` (docs/reference.md, "Premise selection"): sentences are checked against
/// [`DEFAULT_SENTENCE_PREMISE`] (on WikiBio as good as the whole sample or better, at 2.2× fewer
/// tokens); claims against the whole answer (on one FActScore file the 3 most relevant sentences
/// lost 0.010–0.017 AUROC of page_rank and noncontradiction).
pub fn default_premise(g: Granularity) -> Premise {
    match g {
        Granularity::Sentence => DEFAULT_SENTENCE_PREMISE,
        Granularity::Claim => Premise::Whole,
    }
}

/// Largest `top_k` accepted.
pub const MAX_TOP_K: usize = 1000;

/// The valid forms of option `premise`, for its errors.
const PREMISE_EXAMPLE: &str =
    "\"premise\":\"whole\" or \"premise\":{\"top_k\":3,\"rank\":\"lexical\"}";

/// Key `top_k` of option `premise`: the sentences kept, 1 to [`MAX_TOP_K`].
fn parse_top_k(v: Option<&Value>) -> Result<usize, String> {
    match v.map(|k| (k, k.as_u64())) {
        Some((_, Some(k))) if (1..=MAX_TOP_K as u64).contains(&k) => Ok(k as usize),
        Some((k, _)) => Err(format!(
            "option premise.top_k must be an integer from 1 to {MAX_TOP_K} (sentences \
             kept per premise), e.g. {PREMISE_EXAMPLE}; got {k}"
        )),
        None => Err(format!(
            "option premise needs top_k, the number of sentences kept, e.g. {PREMISE_EXAMPLE}"
        )),
    }
}

/// Key `rank` of option `premise` (absent or null: lexical).
fn parse_rank(v: Option<&Value>) -> Result<Rank, String> {
    match v {
        None | Some(Value::Null) => Ok(Rank::Lexical),
        Some(Value::String(r)) if r == "lexical" => Ok(Rank::Lexical),
        Some(Value::String(r)) if r == "embedding" => Ok(Rank::Embedding),
        Some(r) => Err(format!(
            "option premise.rank must be \"lexical\" (shared words) or \"embedding\" \
             (sentence embeddings); got {r}"
        )),
    }
}

impl Premise {
    /// Reads option `premise`: `"whole"` or `{"top_k": K, "rank": "lexical" | "embedding"}`
    /// (`rank` defaults to lexical).
    pub fn parse(v: &Value) -> Result<Premise, String> {
        match v {
            Value::String(s) if s.trim().eq_ignore_ascii_case("whole") => Ok(Premise::Whole),
            Value::String(s) => Err(format!(
                "option premise: unknown value {s:?}; use {PREMISE_EXAMPLE}"
            )),
            Value::Object(o) => {
                if o.contains_key("join") {
                    return Err(format!(
                        "option premise: key join applies only to option source_premise (how the \
                         sources' sentences make premises); a sample is always one premise: drop \
                         join, e.g. {PREMISE_EXAMPLE}"
                    ));
                }
                if let Some(k) = o.keys().find(|k| !["top_k", "rank"].contains(&k.as_str())) {
                    return Err(format!(
                        "option premise: unknown key {k:?}; valid keys are top_k and rank, e.g. \
                         {PREMISE_EXAMPLE}"
                    ));
                }
                Ok(Premise::TopK {
                    k: parse_top_k(o.get("top_k"))?,
                    rank: parse_rank(o.get("rank"))?,
                })
            }
            other => Err(format!(
                "option premise must be \"whole\" or an object, e.g. {PREMISE_EXAMPLE}; got {}",
                crate::json::type_name(other)
            )),
        }
    }

    /// The option's value as JSON (what `parse` reads back).
    pub fn to_json(self) -> Value {
        match self {
            Premise::Whole => json!("whole"),
            Premise::TopK { k, rank } => json!({"top_k": k, "rank": rank.as_str()}),
        }
    }

    /// A short name for bench lines and notes: `whole`, `top3`, `top3_embedding`.
    pub fn label(self) -> String {
        match self {
            Premise::Whole => "whole".into(),
            Premise::TopK {
                k,
                rank: Rank::Lexical,
            } => format!("top{k}"),
            Premise::TopK {
                k,
                rank: Rank::Embedding,
            } => format!("top{k}_embedding"),
        }
    }

    /// Reads a [`label`](Premise::label) back (bench flags).
    pub fn from_label(s: &str) -> Result<Premise, String> {
        let s = s.trim();
        if s == "whole" {
            return Ok(Premise::Whole);
        }
        let bad = || {
            format!("premise {s:?}: use whole, topK or topK_embedding (K from 1 to {MAX_TOP_K}), e.g. top3")
        };
        let rest = s.strip_prefix("top").ok_or_else(bad)?;
        let (k, rank) = match rest.strip_suffix("_embedding") {
            Some(k) => (k, Rank::Embedding),
            None => (rest.strip_suffix("_lexical").unwrap_or(rest), Rank::Lexical),
        };
        match k.parse::<usize>() {
            Ok(k) if (1..=MAX_TOP_K).contains(&k) => Ok(Premise::TopK { k, rank }),
            _ => Err(bad()),
        }
    }
}

/// Per sentence, the number of the unit's distinct content words it contains.
pub fn lexical_relevance(unit: &str, sentences: &[String]) -> Vec<f64> {
    let sentence_words: Vec<HashSet<String>> = sentences.iter().map(|s| content_words(s)).collect();
    lexical_relevance_of(&content_words(unit), &sentence_words)
}

/// [`lexical_relevance`] from content words already found: per sentence, the number of
/// `unit_words` among its `sentence_words` (a caller ranking one text's sentences for many units
/// finds each sentence's words once).
pub fn lexical_relevance_of(
    unit_words: &HashSet<String>,
    sentence_words: &[HashSet<String>],
) -> Vec<f64> {
    sentence_words
        .iter()
        .map(|s| unit_words.iter().filter(|w| s.contains(*w)).count() as f64)
        .collect()
}

/// The indices of the `k` most relevant sentences (ties: the earlier sentence first), in
/// their original order. All of them when there are at most `k`.
pub fn top_k(relevance: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..relevance.len()).collect();
    if order.len() > k {
        order.sort_by(|&a, &b| relevance[b].total_cmp(&relevance[a]).then(a.cmp(&b)));
        order.truncate(k);
        order.sort_unstable();
    }
    order
}

/// The lexical selection of a text of more than `k` sentences: its `k` sentences sharing the
/// most content words with the unit ([`top_k`]), less those that share none (they cannot be
/// the evidence a lexical ranking is for, and cost tokens); the first sentence when none shares
/// a word.
pub fn lexical_selection(relevance: &[f64], k: usize) -> Vec<usize> {
    let chosen: Vec<usize> = top_k(relevance, k)
        .into_iter()
        .filter(|&i| relevance[i] > 0.0)
        .collect();
    if chosen.is_empty() && !relevance.is_empty() {
        vec![0]
    } else {
        chosen
    }
}

/// The premise made of `text`'s `sentences` at `chosen` (indices, ascending): `text` itself when
/// every sentence is chosen, else the chosen sentences joined by a space.
pub fn join_selected(text: &str, sentences: &[String], chosen: &[usize]) -> String {
    if chosen.len() == sentences.len() {
        return text.to_string();
    }
    chosen
        .iter()
        .map(|&i| sentences[i].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_labels() {
        assert_eq!(Premise::parse(&json!("whole")).unwrap(), Premise::Whole);
        assert_eq!(
            Premise::parse(&json!({"top_k": 2})).unwrap(),
            Premise::TopK {
                k: 2,
                rank: Rank::Lexical
            }
        );
        let e = Premise::parse(&json!({"top_k": 2, "rank": "embedding"})).unwrap();
        assert_eq!(e.label(), "top2_embedding");
        assert_eq!(Premise::from_label("top2_embedding").unwrap(), e);
        assert_eq!(Premise::parse(&e.to_json()).unwrap(), e);
        assert_eq!(
            Premise::from_label("top3").unwrap(),
            DEFAULT_SENTENCE_PREMISE
        );
        assert_eq!(
            default_premise(Granularity::Sentence),
            DEFAULT_SENTENCE_PREMISE
        );
        assert_eq!(default_premise(Granularity::Claim), Premise::Whole);
        for (bad, needle) in [
            (json!("all"), "unknown value \"all\""),
            (
                json!({"top_k": 0}),
                "premise.top_k must be an integer from 1",
            ),
            (json!({"top_k": "3"}), "premise.top_k"),
            (json!({"rank": "lexical"}), "needs top_k"),
            (json!({"top_k": 3, "rank": "bm25"}), "premise.rank"),
            (json!({"top_k": 3, "k": 1}), "unknown key \"k\""),
            (
                json!({"top_k": 3, "join": "sentence"}),
                "option premise: key join applies only to option source_premise",
            ),
            (json!(3), "must be \"whole\" or an object"),
        ] {
            let err = Premise::parse(&bad).unwrap_err();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        assert!(Premise::from_label("top0").is_err());
        assert!(Premise::from_label("three").is_err());
    }

    /// A hand-computed selection: the unit "Curie was born in Warsaw in 1867." has content
    /// words {curie, born, warsaw, 1867}.
    #[test]
    fn selects_the_most_relevant_sentences_in_order() {
        let text = "Marie Curie was a physicist. She won two Nobel Prizes. Curie was born in \
                    Warsaw. Her birth year was 1867. She died in 1934 in France.";
        let sentences: Vec<String> = crate::decompose::split_sentences(text);
        assert_eq!(sentences.len(), 5);
        let rel = lexical_relevance("Curie was born in Warsaw in 1867.", &sentences);
        // "Marie Curie was a physicist." shares curie; "She won two Nobel Prizes." nothing;
        // "Curie was born in Warsaw." curie, born, warsaw; "Her birth year was 1867." 1867;
        // "She died in 1934 in France." nothing.
        assert_eq!(rel, vec![1.0, 0.0, 3.0, 1.0, 0.0]);
        // Top 2: sentence 2 (3 words), then the earlier of the two ties (sentence 0).
        assert_eq!(top_k(&rel, 2), vec![0, 2]);
        assert_eq!(
            join_selected(text, &sentences, &top_k(&rel, 2)),
            "Marie Curie was a physicist. Curie was born in Warsaw."
        );
        assert_eq!(top_k(&rel, 3), vec![0, 2, 3]);
        // Lexical selection drops what shares no word: top 4 would add sentence 1 (score 0).
        assert_eq!(top_k(&rel, 4), vec![0, 1, 2, 3]);
        assert_eq!(lexical_selection(&rel, 4), vec![0, 2, 3]);
        assert_eq!(
            join_selected(text, &sentences, &lexical_selection(&rel, 4)),
            "Marie Curie was a physicist. Curie was born in Warsaw. Her birth year was 1867."
        );
        // A unit sharing no word with any sentence: the first sentence.
        let none = lexical_relevance("Tokyo is large.", &sentences);
        assert_eq!(lexical_selection(&none, 3), vec![0]);
        // K at least the sentence count: the text itself, unchanged.
        assert_eq!(top_k(&rel, 5), vec![0, 1, 2, 3, 4]);
        assert_eq!(join_selected(text, &sentences, &top_k(&rel, 9)), text);
    }
}
