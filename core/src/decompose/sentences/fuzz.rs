//! Property tests of the splitter (proptest, fixed budget and seed; counts printed with
//! `--nocapture`). "Cover" is checked on the byte spans the splitter keeps internally and from
//! which `split_sentences` copies its pieces:
//!
//! 1. each span lies on char boundaries, is non-empty and is its own trim (`text[s..e]` has no
//!    leading or trailing whitespace);
//! 2. spans are in text order and do not overlap (`e_i <= s_{i+1}`);
//! 3. every non-whitespace character of the text lies inside a span (the gaps are whitespace);
//! 4. `split_sentences(text)` is exactly the texts of the spans.
//!
//! Checked with the production window and with small windows (so short inputs cross many window
//! boundaries), on arbitrary Unicode, on text built from the tokens the rules react to, and on
//! a 1.2 MB text.

use proptest::prelude::*;
#[path = "../../../tests/common/fuzz.rs"]
mod fuzz_runner;
use fuzz_runner::fuzz;

use super::*;

/// Checks properties 1-3 on the spans of `text` with window `window`.
fn check_cover(text: &str, window: usize) -> Result<(), String> {
    let spans = std::panic::catch_unwind(|| sentence_spans(text, window))
        .map_err(|_| format!("panicked (window {window})"))?;
    let mut covered_to = 0;
    for (i, &(s, e)) in spans.iter().enumerate() {
        if !(s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e)) {
            return Err(format!(
                "span {i} {s}..{e} is empty or off a char boundary (window {window})"
            ));
        }
        let piece = &text[s..e];
        if piece.trim() != piece {
            return Err(format!(
                "span {i} {piece:?} is not trimmed (window {window})"
            ));
        }
        if s < covered_to {
            return Err(format!(
                "span {i} {s}..{e} overlaps or precedes the previous one (window {window})"
            ));
        }
        if let Some(c) = text[covered_to..s].chars().find(|c| !c.is_whitespace()) {
            return Err(format!(
                "{c:?} before span {i} (byte {covered_to}..{s}) is in no span (window {window})"
            ));
        }
        covered_to = e;
    }
    if let Some(c) = text[covered_to..].chars().find(|c| !c.is_whitespace()) {
        return Err(format!(
            "{c:?} after the last span (byte {covered_to}..) is in no span (window {window})"
        ));
    }
    Ok(())
}

fn check_all(text: &str) -> Result<(), String> {
    for window in [WINDOW_BYTES, 257, 64] {
        check_cover(text, window)?;
    }
    let pieces: Vec<String> = sentence_spans(text, WINDOW_BYTES)
        .into_iter()
        .map(|(s, e)| text[s..e].to_string())
        .collect();
    if split_sentences(text) != pieces {
        return Err("split_sentences differs from its spans".into());
    }
    Ok(())
}

/// Tokens the rules react to: abbreviations, list markers, quotes, decimals, line breaks,
/// multi-byte letters and punctuation.
const TOKENS: &[&str] = &[
    "The sky is blue",
    ". ",
    "! ",
    "? ",
    "…",
    "Dr.",
    " Mr. ",
    "e.g.",
    " U.S. ",
    "3.14",
    " 1. ",
    "2)",
    "(a)",
    "iv.",
    "- ",
    "* ",
    "• ",
    "\n",
    "\n\n",
    "\r\n",
    "  ",
    "\t",
    "\"",
    "”",
    "'",
    ")",
    "#",
    "###",
    "word",
    "Écoute",
    "日本語の文です。",
    "Привет.",
    "😀",
    "\u{200b}",
    "\u{2028}",
    "\u{85}",
    "a",
    "B",
    "x.y.z",
    "...",
    ";",
    ":",
    "|",
    "```",
    "_",
    "\u{0}",
];

fn token_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..120).prop_map(|t| t.concat())
}

#[test]
fn splitter_covers_arbitrary_unicode() {
    fuzz("sentence_splitter/unicode", 10000, ".{0,300}", |t| {
        check_all(&t)
    });
}

#[test]
fn splitter_covers_token_soup() {
    fuzz("sentence_splitter/tokens", 10000, token_text(), |t| {
        check_all(&t)
    });
}

#[test]
fn splitter_covers_a_megabyte() {
    // 1.2 MB of the same tokens from a fixed linear congruential sequence.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut text = String::new();
    while text.len() < 1_200_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.push_str(TOKENS[(x >> 33) as usize % TOKENS.len()]);
    }
    check_cover(&text, WINDOW_BYTES).unwrap();
    let n = split_sentences(&text).len();
    println!(
        "fuzz sentence_splitter/megabyte: 1 case of {} bytes, {n} sentences",
        text.len()
    );
    assert!(n > 1000, "{n} sentences from 1.2 MB");
}
