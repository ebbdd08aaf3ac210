//! The premises a unit is checked against: the sources' passages cut into sentences once per
//! request ([`SplitPassage`]), and per unit the passages whole or their sentences most relevant
//! to it, one premise per passage or per sentence ([`select_premises`]).

use std::collections::HashSet;

use super::selection::{Join, SourceSelection};
use crate::score::premise::{top_k, Premise, Rank};
use crate::words::content_words;

/// One source passage: its text and, when it came from a table, its id (the rowid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub id: Option<String>,
    pub text: String,
}

/// A passage cut into sentences once per request: byte spans into its text, and each
/// sentence's content words (for the lexical ranking of every unit).
#[derive(Debug, Clone)]
pub struct SplitPassage {
    pub spans: Vec<(usize, usize)>,
    words: Vec<HashSet<String>>,
}

impl SplitPassage {
    pub fn of(text: &str) -> SplitPassage {
        let spans = crate::decompose::split_sentence_spans(text);
        let words = spans
            .iter()
            .map(|&(s, e)| content_words(&text[s..e]))
            .collect();
        SplitPassage { spans, words }
    }

    /// Per sentence, the number of `unit_words` it contains
    /// ([`crate::score::premise::lexical_relevance`]'s measure).
    fn lexical_relevance(&self, unit_words: &HashSet<String>) -> Vec<f64> {
        self.words
            .iter()
            .map(|w| w.intersection(unit_words).count() as f64)
            .collect()
    }

    /// The passage's sentences.
    pub fn sentences<'t>(&self, text: &'t str) -> Vec<&'t str> {
        self.spans.iter().map(|&(s, e)| &text[s..e]).collect()
    }
}

/// The premise one passage gives a unit: its selected sentences joined in order (the whole
/// passage when it has at most K sentences or the premise is `whole`), with the span they cover.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcePremise {
    /// Index of the passage in the request's sources.
    pub passage: usize,
    /// Character offsets (not bytes) into the passage, end exclusive: from the first selected
    /// sentence's start to the last one's end.
    pub start: usize,
    pub end: usize,
    /// The NLI premise.
    pub text: String,
    /// Whether a selected sentence shares a content word with the unit (a lexical ranking);
    /// false for the fallback premise of a unit no sentence shares a word with ([`unmatched`]).
    pub matched: bool,
}

impl SourcePremise {
    /// Passage `p` whole, as its own premise.
    fn whole(p: usize, text: &str) -> SourcePremise {
        SourcePremise {
            passage: p,
            start: 0,
            end: text.chars().count(),
            text: text.to_string(),
            matched: true,
        }
    }
}

/// Character offset of byte offset `b` of `text`.
fn char_offset(text: &str, b: usize) -> usize {
    text[..b].chars().count()
}

/// The premise of `passage` (index `p`) made of its sentences `chosen` (ascending).
fn premise_of(
    p: usize,
    text: &str,
    split: &SplitPassage,
    chosen: &[usize],
    k: usize,
) -> SourcePremise {
    let n = split.spans.len();
    if n == 0 || n <= k || chosen.len() == n {
        return SourcePremise::whole(p, text);
    }
    let first = split.spans[chosen[0]].0;
    let last = split.spans[*chosen.last().unwrap_or(&chosen[0])].1;
    SourcePremise {
        passage: p,
        start: char_offset(text, first),
        end: char_offset(text, last),
        text: chosen
            .iter()
            .map(|&i| &text[split.spans[i].0..split.spans[i].1])
            .collect::<Vec<_>>()
            .join(" "),
        matched: true,
    }
}

/// Sentence `i` of `passage` (index `p`) alone, as its own premise.
fn sentence_premise(p: usize, text: &str, split: &SplitPassage, i: usize) -> SourcePremise {
    let (s, e) = split.spans[i];
    SourcePremise {
        passage: p,
        start: char_offset(text, s),
        end: char_offset(text, e),
        text: text[s..e].to_string(),
        matched: true,
    }
}

/// The premises unit `unit` is checked against: with `whole`, every passage whole; with
/// `{"top_k": K}`, the K sentences of all passages most relevant to the unit (`relevance[p][i]`
/// of sentence i of passage p: shared content words when `None`, as
/// [`crate::score::premise::lexical_relevance`]), grouped by passage with `join` `passage` (one
/// premise per passage that has a selected sentence, in passage order), or each alone with
/// `join` `sentence` (one premise per selected sentence, in passage and sentence order).
/// A lexical ranking drops sentences that share no content word with the unit; when none shares
/// one, the first passage's first K sentences are the premise (with `sentence`, each alone).
/// Only sources without a sentence give no premise (the sources are silent).
pub fn select_premises(
    unit: &str,
    passages: &[Passage],
    split: &[SplitPassage],
    selection: SourceSelection,
    relevance: Option<&[Vec<f64>]>,
) -> Vec<SourcePremise> {
    let alone = selection.join == Join::Sentence;
    let (k, rank) = match selection.premise {
        Premise::Whole => {
            return passages
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.text.trim().is_empty())
                .map(|(i, p)| SourcePremise::whole(i, &p.text))
                .collect()
        }
        Premise::TopK { k, rank } => (k, rank),
    };
    // Every (passage, sentence) with its relevance, flattened in passage order.
    let mut flat: Vec<(usize, usize)> = Vec::new();
    let mut score: Vec<f64> = Vec::new();
    let unit_words = content_words(unit);
    for (p, sp) in split.iter().enumerate() {
        let rel = match relevance {
            Some(r) => r[p].clone(),
            None => sp.lexical_relevance(&unit_words),
        };
        for (i, r) in rel.into_iter().enumerate() {
            flat.push((p, i));
            score.push(r);
        }
    }
    let mut chosen: Vec<(usize, usize)> = top_k(&score, k)
        .into_iter()
        .filter(|&i| rank == Rank::Embedding || score[i] > 0.0)
        .map(|i| flat[i])
        .collect();
    if chosen.is_empty() {
        // No sentence shares a word with the unit: the first passage's opening sentences, as
        // a lexical premise falls back to a text's first sentence; they may support the unit,
        // never contradict it ([`unmatched`]).
        if let Some(p) = split.iter().position(|s| !s.spans.is_empty()) {
            let sents: Vec<usize> = (0..split[p].spans.len().min(k)).collect();
            let text = &passages[p].text;
            let mut premises = if alone {
                sents
                    .iter()
                    .map(|&i| sentence_premise(p, text, &split[p], i))
                    .collect()
            } else {
                vec![premise_of(p, text, &split[p], &sents, k)]
            };
            for premise in &mut premises {
                premise.matched = false;
            }
            return premises;
        }
    }
    chosen.sort_unstable();
    if alone {
        return chosen
            .into_iter()
            .map(|(p, i)| sentence_premise(p, &passages[p].text, &split[p], i))
            .collect();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < chosen.len() {
        let p = chosen[i].0;
        let sents: Vec<usize> = chosen[i..]
            .iter()
            .take_while(|c| c.0 == p)
            .map(|c| c.1)
            .collect();
        i += sents.len();
        out.push(premise_of(p, &passages[p].text, &split[p], &sents, k));
    }
    out
}
