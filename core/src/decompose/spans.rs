//! Where each unit stands in the answer: a character span `start..end` of the response (Unicode
//! characters, as SQLite's `substr` counts them: `substr(response, start + 1, end - start)` is
//! the marked text), and the alignment's own score beside it.
//!
//! * **A unit found verbatim** (a sentence, which δ_sent cuts out of the answer, §3.1; an
//!   uncovered sentence; a given unit copied from the answer): its exact span, alignment 1. A
//!   text that occurs more than once takes the first occurrence after the previous verbatim
//!   unit, so repeated sentences keep their order.
//! * **A claim**, which the decomposition LLM rewrites, is aligned with no LLM call: within each
//!   sentence of the answer, the contiguous run of words with the highest sum of
//!   `w(c)` for each word matching one of the claim's content words `c`, less
//!   [`MISMATCH`]`·w̄` for each other content word inside the run (Kadane's maximum subarray;
//!   stopwords count 0). `w(c) = s(c) / df(c)`, `df(c)` the number of the answer's units
//!   holding `c`, `s(c)` [`SUBJECT`] for the claim's leading words before its first stopword
//!   (its subject) and 1 for the rest: the entity every claim names ("Marie Curie was …")
//!   weighs little, the words that tell claims apart weigh much. The best run over all
//!   sentences is the span; its alignment is the weighted share of the claim's content words
//!   inside it. Words match after lowercasing and a light suffix stripping (`won`/`winning` do
//!   not match, `awards`/`award` do).
//! * **No span, never a wrong one:** a claim whose best run holds less than
//!   [`MIN_ALIGNMENT`] of its weight (a loose paraphrase, a detail not in the answer) gets none
//!   (NULL `start`, `end`, `alignment`).
//!
//! Limits: one span per unit, inside one sentence (a claim joining two sentences gets the
//! better half); synonyms and paraphrases do not match; scripts without spaces between words
//! (Chinese, Japanese) match only verbatim.

use std::collections::{HashMap, HashSet};

use crate::decompose::sentences::split_sentence_spans;
use crate::words::is_stopword;

/// A unit's place in the response: characters `start..end`, and how well it matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    /// 1 for a verbatim match; for an aligned claim the weighted share of its content words
    /// inside the span, in [`MIN_ALIGNMENT`, 1].
    pub alignment: f64,
}

/// The least weighted share of a claim's content words a span must hold.
pub const MIN_ALIGNMENT: f64 = 0.5;
/// The weight of the claim's subject words (before `1/df`): the claim is about its subject, but
/// what it says is the rest.
pub const SUBJECT: f64 = 0.5;
/// What an answer's content word that is not the claim's costs inside a run, in units of the
/// claim's mean word weight.
pub const MISMATCH: f64 = 0.3;

/// The span of each of `units` in `response` (module docs), by index; `None` for a unit not
/// found. `units` are all the units of the answer (they set the word weights).
pub fn unit_spans(response: &str, units: &[String]) -> Vec<Option<Span>> {
    let words = words(response);
    let sentences = sentence_ranges(response, &words);
    let df = document_frequency(units);
    let chars = CharIndex::new(response);
    let mut after = 0; // byte offset: where the next verbatim search starts
    units
        .iter()
        .map(|unit| {
            if let Some((b, e)) = verbatim(response, unit, after) {
                after = e;
                return Some(Span {
                    start: chars.of(b),
                    end: chars.of(e),
                    alignment: 1.0,
                });
            }
            align(&chars, &words, &sentences, unit, &df)
        })
        .collect()
}

/// The byte range of `unit` (trimmed; also without its final full stop) in `response`, on word
/// boundaries: the first occurrence at or after byte `after`, else the first.
fn verbatim(response: &str, unit: &str, after: usize) -> Option<(usize, usize)> {
    let unit = unit.trim();
    let bare = unit.trim_end_matches(['.', '!', '?']).trim_end();
    for needle in [unit, bare] {
        if needle.chars().count() < 2 {
            continue;
        }
        let bounded = |&(b, _): &(usize, &str)| {
            let before = response[..b].chars().next_back();
            let next = response[b + needle.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !next.is_some_and(char::is_alphanumeric)
        };
        // From `after` first (units come in order: this keeps the whole search linear), then
        // from the start.
        let from = |start: usize| {
            response
                .get(start..)?
                .match_indices(needle)
                .map(|(i, m)| (i + start, m))
                .find(|hit| bounded(hit))
                .map(|(i, _)| i)
        };
        if let Some(b) = from(after).or_else(|| from(0)) {
            return Some((b, b + needle.len()));
        }
    }
    None
}

/// Byte offsets to character offsets in O(log n) each: the byte offset of every
/// [`CharIndex::STEP`]-th character, and a count of at most that many characters from there.
struct CharIndex<'a> {
    text: &'a str,
    checkpoints: Vec<usize>,
}

impl<'a> CharIndex<'a> {
    const STEP: usize = 64;

    fn new(text: &'a str) -> CharIndex<'a> {
        let checkpoints = text
            .char_indices()
            .step_by(Self::STEP)
            .map(|(b, _)| b)
            .collect();
        CharIndex { text, checkpoints }
    }

    /// The character offset of byte offset `byte` (a char boundary).
    fn of(&self, byte: usize) -> usize {
        let k = self
            .checkpoints
            .partition_point(|&b| b <= byte)
            .saturating_sub(1);
        let base = self.checkpoints.get(k).copied().unwrap_or(0);
        k * Self::STEP + self.text[base..byte].chars().count()
    }
}

/// A word of the response: its byte range and normalised form.
struct Word {
    start: usize,
    end: usize,
    norm: String,
}

/// The words of `text`: maximal runs of alphanumeric characters (an apostrophe between letters
/// continues a word), each normalised ([`normalise`]).
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let inner_apostrophe = matches!(c, '\'' | '’')
            && start.is_some()
            && chars.peek().is_some_and(|&(_, n)| n.is_alphanumeric());
        if c.is_alphanumeric() || inner_apostrophe {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            out.push(Word {
                start: s,
                end: i,
                norm: normalise(&text[s..i]),
            });
        }
    }
    if let Some(s) = start {
        out.push(Word {
            start: s,
            end: text.len(),
            norm: normalise(&text[s..]),
        });
    }
    out
}

/// Lowercase, without a possessive `'s`, with a light suffix stripping: `-ies` → `-y`, then
/// `-ing`, `-ed`, `-es`, `-s` off words long enough to keep a stem of four letters or more.
fn normalise(word: &str) -> String {
    let mut w = word.to_lowercase();
    for poss in ["'s", "’s"] {
        if let Some(s) = w.strip_suffix(poss) {
            w = s.to_string();
        }
    }
    let n = w.chars().count();
    if n > 4 {
        if let Some(s) = w.strip_suffix("ies") {
            return format!("{s}y");
        }
    }
    for (suffix, min_stem) in [("ing", 4), ("ed", 4), ("es", 4), ("s", 4)] {
        if let Some(s) = w.strip_suffix(suffix) {
            if s.chars().count() >= min_stem && !(suffix == "s" && s.ends_with('s')) {
                return s.to_string();
            }
        }
    }
    w
}

fn is_content(norm: &str) -> bool {
    !is_stopword(norm)
}

/// The claim's subject: its leading content words, up to the first stopword ("Marie Curie" of
/// "Marie Curie was born in 1867.").
fn subject_words(unit: &str) -> HashSet<String> {
    words(unit)
        .into_iter()
        .map(|w| w.norm)
        .take_while(|w| is_content(w))
        .collect()
}

/// The distinct content words of `text`, normalised.
fn content_words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    words(text)
        .into_iter()
        .map(|w| w.norm)
        .filter(|w| is_content(w) && seen.insert(w.clone()))
        .collect()
}

/// Per content word, the number of distinct units holding it.
fn document_frequency(units: &[String]) -> HashMap<String, usize> {
    let mut df = HashMap::new();
    let distinct: HashSet<&str> = units.iter().map(|u| u.trim()).collect();
    for u in distinct {
        for w in content_words(u) {
            *df.entry(w).or_insert(0) += 1;
        }
    }
    df
}

/// The word index ranges of the response's sentences ([`split_sentence_spans`]).
fn sentence_ranges(response: &str, words: &[Word]) -> Vec<(usize, usize)> {
    split_sentence_spans(response)
        .into_iter()
        .map(|(s, e)| {
            let a = words.partition_point(|w| w.start < s);
            let b = words.partition_point(|w| w.end <= e);
            (a, b.max(a))
        })
        .filter(|(a, b)| b > a)
        .collect()
}

/// The aligned span of a claim (module docs), if it holds at least [`MIN_ALIGNMENT`].
fn align(
    chars: &CharIndex<'_>,
    words: &[Word],
    sentences: &[(usize, usize)],
    unit: &str,
    df: &HashMap<String, usize>,
) -> Option<Span> {
    let subject = subject_words(unit);
    let weight: HashMap<String, f64> = content_words(unit)
        .into_iter()
        .map(|w| {
            let n = df.get(&w).copied().unwrap_or(1).max(1);
            let x = if subject.contains(&w) { SUBJECT } else { 1.0 };
            (w, x / n as f64)
        })
        .collect();
    let total: f64 = weight.values().sum();
    if total <= 0.0 {
        return None;
    }
    let penalty = MISMATCH * total / weight.len() as f64;
    let value = |w: &Word| -> f64 {
        match weight.get(&w.norm) {
            Some(&x) => x,
            None if is_content(&w.norm) => -penalty,
            None => 0.0,
        }
    };
    // (run score, first word, last word), the best over all sentences; ties: the earlier.
    let mut best: Option<(f64, usize, usize)> = None;
    for &(a, b) in sentences {
        let mut sum = 0.0;
        let mut from = a;
        for (i, w) in words.iter().enumerate().take(b).skip(a) {
            let v = value(w);
            if sum <= 0.0 {
                sum = 0.0;
                from = i;
            }
            sum += v;
            if v > 0.0 && best.is_none_or(|(s, _, _)| sum > s + 1e-12) {
                best = Some((sum, from, i));
            }
        }
    }
    let (_, mut first, last) = best?;
    // The run starts at its first matching word (a zero-valued stopword before it adds nothing).
    while first < last && value(&words[first]) <= 0.0 {
        first += 1;
    }
    let inside: HashSet<&str> = words[first..=last]
        .iter()
        .map(|w| w.norm.as_str())
        .collect();
    let held: f64 = weight
        .iter()
        .filter(|(w, _)| inside.contains(w.as_str()))
        .map(|(_, x)| x)
        .sum();
    let alignment = held / total;
    (alignment >= MIN_ALIGNMENT - 1e-12).then(|| Span {
        start: chars.of(words[first].start),
        end: chars.of(words[last].end),
        alignment,
    })
}

#[cfg(test)]
mod tests;
