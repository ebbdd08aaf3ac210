//! The NLI texts' token ids, sentence by sentence: a text is cut into its sentences (at the
//! whitespace after a sentence's end), each sentence's ids are cached across calls, and a text's
//! ids are its sentences' ids one after the other. A premise of the K sentences of a sample most
//! relevant to a unit (option `premise`, joined by a space) is a new text for every unit, but its
//! sentences are not: they are tokenised once, not once per pair.
//!
//! This is exact only for a tokenizer whose every step treats whitespace as a boundary that
//! leaves nothing behind: a normalizer that works character by character (BERT's: cleaning,
//! CJK spacing, accents, lowercasing), a pre-tokenizer that splits at whitespace and drops it
//! (BERT's, `Whitespace`, `WhitespaceSplit`), a model that tokenises each word alone (WordPiece,
//! WordLevel), and added tokens without whitespace. Then the ids of `A B` are those of `A`
//! followed by those of `B` ([`splits_at_whitespace`]); any other tokenizer gets each text
//! tokenised whole (still cached).

use std::collections::HashMap;
use std::sync::Arc;

use super::cache::{text_key, DedupCache};
use super::nli::NliText;
pub use super::tokenizer::splits_at_whitespace;

/// Token ids of the cached sentences kept at most (bytes) before that cache is emptied.
pub const TOKEN_IDS_CACHE_BYTES: usize = 32 << 20;

/// The cache of token ids by text (a sentence, or a text that is not cut).
pub fn ids_cache() -> DedupCache<Arc<Vec<u32>>> {
    DedupCache::new(Some(TOKEN_IDS_CACHE_BYTES), |v| v.len() * 4 + 64)
}

/// Whether a sentence ends with `c` (the last character before whitespace).
fn ends_sentence(c: char) -> bool {
    matches!(
        c,
        '.' | '!' | '?' | '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}'
    )
}

/// The sentences of `text` for tokenising: cut at each run of whitespace that follows
/// [`ends_sentence`], without the whitespace around them (none of it is a token). A text cut
/// elsewhere than where a sentence splitter would cut still gives the same ids, only fewer
/// cache hits.
pub fn sentence_pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut last: Option<char> = None;
    let mut space: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            space.get_or_insert(i);
            continue;
        }
        match (space.take(), start, last) {
            (Some(ws), Some(s), Some(l)) if ends_sentence(l) => {
                out.push(&text[s..ws]);
                start = Some(i);
            }
            (_, None, _) => start = Some(i),
            _ => {}
        }
        last = Some(c);
    }
    if let Some(s) = start {
        out.push(&text[s..space.unwrap_or(text.len())]);
    }
    out
}

/// Token ids (no special tokens) of each of `texts`, in order: sentence by sentence through
/// `cache` when the tokenizer allows it (`by_sentence`), else each text whole through `cache`.
pub fn token_ids(
    nli: &NliText,
    cache: &DedupCache<Arc<Vec<u32>>>,
    by_sentence: bool,
    texts: &[&str],
) -> Result<Vec<Arc<Vec<u32>>>, String> {
    // The distinct pieces of all texts, and each text's pieces as indices into them.
    let mut index: HashMap<u128, usize> = HashMap::new();
    let (mut keys, mut pieces): (Vec<u128>, Vec<&str>) = (Vec::new(), Vec::new());
    let mut layout: Vec<usize> = Vec::new();
    let mut bounds: Vec<usize> = Vec::with_capacity(texts.len() + 1);
    bounds.push(0);
    for text in texts {
        let cut = match by_sentence {
            true => sentence_pieces(text),
            false => vec![*text],
        };
        for piece in cut {
            let key = text_key(piece);
            let at = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                pieces.push(piece);
                keys.len() - 1
            });
            layout.push(at);
        }
        bounds.push(layout.len());
    }
    let ids = cache.get_or_compute(&keys, |owned| {
        owned
            .iter()
            .map(|&j| nli.tokenize(pieces[j]).map(Arc::new))
            .collect()
    })?;
    Ok(bounds
        .windows(2)
        .map(|b| match &layout[b[0]..b[1]] {
            [one] => ids[*one].clone(),
            many => {
                let n = many.iter().map(|&j| ids[j].len()).sum();
                let mut v = Vec::with_capacity(n);
                for &j in many {
                    v.extend_from_slice(&ids[j]);
                }
                Arc::new(v)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cut_after_sentence_ends_only() {
        assert_eq!(
            sentence_pieces("  He was born. She (b. 1900) left!  \"Why?\" he asked\n"),
            vec![
                "He was born.",
                "She (b.",
                "1900)",
                "left!",
                "\"Why?\"",
                "he asked"
            ]
        );
        assert_eq!(sentence_pieces("3.5 kg e.g.x"), vec!["3.5 kg e.g.x"]);
        assert!(sentence_pieces(" \n ").is_empty());
        assert_eq!(sentence_pieces("One."), vec!["One."]);
    }
}
