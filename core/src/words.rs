//! Words as the lexical parts of uqlite see them: the tokenizer of the n-gram scorers, the
//! function words left out of lexical overlaps, and a text's content words (premise selection,
//! retrieval, grounded premises, claim spans).

use std::collections::HashSet;

/// True for characters that continue a word after a letter or digit: the combining diacritical
/// marks U+0300–U+036F (so a decomposed "é" stays one word).
fn is_combining_mark(c: char) -> bool {
    ('\u{300}'..='\u{36F}').contains(&c)
}

/// The lowercased tokens of `text`: each maximal run of alphanumeric characters
/// (`char::is_alphanumeric`: Unicode letters and digits, with combining marks U+0300–U+036F
/// continuing a run) is one token, and every other character that is not whitespace is a token
/// of its own ("Queen's" → `queen`, `'`, `s`; "1820–1876" → `1820`, `–`, `1876`; "3.5" → `3`,
/// `.`, `5`). Lowercasing is Unicode's (`str::to_lowercase`). Scripts written without spaces
/// (Chinese, Japanese, Thai) give one token per run of letters, not one per word.
pub fn tokenize(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in lower.chars() {
        if c.is_alphanumeric() || (!word.is_empty() && is_combining_mark(c)) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

/// Function words left out of the lexical overlap: they say nothing about which sentence
/// states a fact.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "by", "with",
    "from", "as", "is", "was", "are", "were", "be", "been", "being", "has", "have", "had", "he",
    "she", "it", "his", "her", "its", "they", "their", "them", "this", "that", "these", "those",
    "who", "which", "also", "after", "before", "into", "during", "s", "not", "no",
];

/// Whether `word` (lowercased) is one of the [`STOPWORDS`].
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// The distinct content words of `text`: lowercased alphanumeric tokens (the n-gram scorers'
/// tokenizer) that are not [`STOPWORDS`]. The words of [`tokenize`], found in place: one string
/// per distinct content word, none per other token (premise selection calls this once per
/// sentence of every sample).
pub fn content_words(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut out = HashSet::new();
    let mut add = |w: &str| {
        if !STOPWORDS.contains(&w) && !out.contains(w) {
            out.insert(w.to_string());
        }
    };
    let mut start: Option<usize> = None;
    for (i, c) in lower.char_indices() {
        let in_word = c.is_alphanumeric() || (start.is_some() && is_combining_mark(c));
        match (in_word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                add(&lower[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        add(&lower[s..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_are_tokenizes_content_tokens() {
        let texts = [
            "Marie Curie (1867–1934) was a Polish-born physicist; she won 2 Nobel Prizes.",
            "Queen's café e\u{301}te\u{301} ΣΟΦΟΣ 北京市 is \u{301}odd, 3.5 kg... THE The the",
            "",
            "  !!  ",
        ];
        for t in texts {
            let want: HashSet<String> = tokenize(t)
                .into_iter()
                .filter(|w| w.chars().any(char::is_alphanumeric) && !is_stopword(w))
                .collect();
            assert_eq!(content_words(t), want, "{t:?}");
        }
    }
}
