//! A BERT WordPiece tokenizer for plain ASCII text: the ids the `tokenizers` crate gives with
//! BERT's normalizer, pre-tokenizer and WordPiece model, without its per-character bookkeeping
//! (alignments, offsets, one string per token), which costs about 2 µs a token. On ASCII those
//! steps reduce to: lowercase (when the normalizer does), split at whitespace, every punctuation
//! character a word of its own, and each word's longest vocabulary pieces from the left ("##"
//! after the first), the whole word `[UNK]` when a piece is missing or the word is longer than
//! the model's limit. The text is cut at ASCII whitespace (the tokenizer splits there and drops
//! it, so the ids of the parts put together are the text's), and a part with any other byte
//! (non-ASCII, a control character) or a character that starts an added token (`[CLS]`, …) goes
//! to the `tokenizers` crate instead. Tests compare both on the SelfCheckGPT texts and on odd
//! strings (`engine/tests.rs`).

use std::collections::HashMap;

use tokenizers::{ModelWrapper, NormalizerWrapper, PreTokenizerWrapper, Tokenizer};

pub struct AsciiWordPiece {
    /// Vocabulary entries that start a word.
    first: HashMap<String, u32>,
    /// Vocabulary entries that continue a word, without their prefix ("##").
    next: HashMap<String, u32>,
    unk: u32,
    max_chars: usize,
    lowercase: bool,
    /// The first bytes (both cases) of the added tokens: a text holding one is not handled here.
    added_first: [bool; 128],
}

impl AsciiWordPiece {
    /// The fast path for `tok` when it is BERT's (BERT normalizer or none, BERT pre-tokenizer,
    /// WordPiece with an `[UNK]` in its vocabulary, added tokens without whitespace); `None` for
    /// any other tokenizer.
    pub fn of(tok: &Tokenizer) -> Option<AsciiWordPiece> {
        let lowercase = match tok.get_normalizer() {
            None => false,
            Some(NormalizerWrapper::BertNormalizer(n)) => n.lowercase,
            Some(_) => return None,
        };
        if !matches!(
            tok.get_pre_tokenizer(),
            Some(PreTokenizerWrapper::BertPreTokenizer(_))
        ) {
            return None;
        }
        let ModelWrapper::WordPiece(wp) = tok.get_model() else {
            return None;
        };
        let prefix = wp.continuing_subword_prefix.as_str();
        let vocab = tokenizers::Model::get_vocab(wp);
        let unk = *vocab.get(&wp.unk_token)?;
        let mut added_first = [false; 128];
        let added = tok.get_added_tokens_decoder();
        if added
            .values()
            .any(|t| t.content.is_empty() || t.content.chars().any(char::is_whitespace))
        {
            return None;
        }
        for t in added.values() {
            if let Some(&b) = t.content.as_bytes().first() {
                if b < 128 {
                    added_first[b.to_ascii_lowercase() as usize] = true;
                    added_first[b.to_ascii_uppercase() as usize] = true;
                }
            }
        }
        let mut next = HashMap::new();
        for (piece, &id) in &vocab {
            if let Some(rest) = piece.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
                next.insert(rest.to_string(), id);
            }
        }
        Some(AsciiWordPiece {
            first: vocab,
            next,
            unk,
            max_chars: wp.max_input_chars_per_word,
            lowercase,
            added_first,
        })
    }

    /// The ids of `text` (no special tokens). Cut at ASCII whitespace (exact: the tokenizer
    /// drops it and splits there), each part of printable ASCII without a character that may start
    /// an added token is tokenised here, any other part by `slow` (the `tokenizers` crate).
    pub fn ids(
        &self,
        text: &str,
        slow: &dyn Fn(&str) -> Result<Vec<u32>, String>,
    ) -> Result<Vec<u32>, String> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let mut word = String::with_capacity(32);
        let parts = text
            .split([' ', '\t', '\n', '\r'])
            .filter(|p| !p.is_empty());
        for part in parts {
            let plain = |b: u8| (b'!'..=b'~').contains(&b) && !self.added_first[b as usize];
            if !part.bytes().all(plain) {
                out.extend(slow(part)?);
                continue;
            }
            for b in part.bytes() {
                if b.is_ascii_alphanumeric() {
                    word.push(if self.lowercase {
                        b.to_ascii_lowercase()
                    } else {
                        b
                    } as char);
                    continue;
                }
                // Punctuation: a word of its own.
                self.word(&word, &mut out);
                word.clear();
                let one = [b];
                self.word(std::str::from_utf8(&one).unwrap_or_default(), &mut out);
            }
            self.word(&word, &mut out);
            word.clear();
        }
        Ok(out)
    }

    /// One word's pieces, longest first from the left (ASCII: one byte a character).
    fn word(&self, word: &str, out: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.len() > self.max_chars {
            out.push(self.unk);
            return;
        }
        let at = out.len();
        let mut start = 0;
        while start < word.len() {
            let vocab = if start == 0 { &self.first } else { &self.next };
            let found = (start + 1..=word.len())
                .rev()
                .find_map(|end| vocab.get(&word[start..end]).map(|&id| (id, end)));
            match found {
                Some((id, end)) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(at);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}
