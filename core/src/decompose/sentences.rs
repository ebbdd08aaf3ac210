//! Rule-based sentence segmentation, δ_sent of paper §3.1 ("rule-based or model-based
//! sentence segmentation").
//!
//! Built on the `sentencex` segmenter (English rules: abbreviations, initials, decimals,
//! quotes, paragraph breaks), with three additions:
//!
//! * **Line blocks and list items.** sentencex makes each line-start list item one piece and
//!   lets the last item swallow the rest of its paragraph (`"- a.\n- b.\nMore. Text."` →
//!   `["- a.", "- b.\nMore. Text."]`). So the text is first cut into blocks at structural
//!   line breaks (`blocks`): before a list-marker line, after a line ending in terminal
//!   punctuation, after a list item or heading line, but never before a line that starts in
//!   lowercase (a soft wrap). The list marker of a block is set aside, the rest is segmented,
//!   and the marker is put back on its first sentence: a list item with two sentences gives
//!   two units.
//! * **Bounded windows.** sentencex is quadratic on some long paragraphs (many list items or
//!   quotes in one paragraph), so a block is fed to it in windows of at most
//!   [`WINDOW_BYTES`]; only the sentences that end at least [`LOOKAHEAD_BYTES`] before the
//!   window's end are kept, and the next window starts where the first unkept sentence
//!   starts. Total work is linear in the text length.
//! * **Inline list markers.** A piece that is only a list marker (`1.`, `b)`, `iv.`, `(2)`,
//!   `-`, `•`), as sentencex leaves in `"Steps: 1. Mix. 2. Bake."`, is merged with the piece
//!   after it, so a marker never becomes a unit by itself.

use sentencex::languages::Language;

/// Largest slice of text handed to sentencex at once.
pub const WINDOW_BYTES: usize = 8 * 1024;
/// Context kept after a sentence before its boundary is trusted.
pub const LOOKAHEAD_BYTES: usize = 1024;

/// Splits `text` into sentences: each trimmed, none empty or whitespace-only, in order.
///
/// Every sentence is a substring of `text`. Empty or whitespace-only text gives no
/// sentences; text without final punctuation gives one.
pub fn split_sentences(text: &str) -> Vec<String> {
    sentence_spans(text, WINDOW_BYTES)
        .into_iter()
        .filter_map(|(s, e)| text.get(s..e))
        .map(str::to_owned)
        .collect()
}

/// Byte spans `(start, end)` of the sentences [`split_sentences`] returns, in order: each
/// `text[start..end]` is one of them (the grounded scorers' evidence spans).
pub fn split_sentence_spans(text: &str) -> Vec<(usize, usize)> {
    sentence_spans(text, WINDOW_BYTES)
        .into_iter()
        .filter(|&(s, e)| text.get(s..e).is_some())
        .collect()
}

/// Byte spans of the sentences of `text`, using sentencex windows of `window` bytes.
fn sentence_spans(text: &str, window: usize) -> Vec<(usize, usize)> {
    let lang = sentencex::language_factory("en");
    let mut spans = Vec::new();
    for (bs, be) in blocks(text) {
        let Some(block) = text.get(bs..be) else {
            continue;
        };
        let lead = block.len() - block.trim_start().len();
        let start = bs + lead;
        let marker = marker_prefix_len(&text[start..be]);
        let before = spans.len();
        segment_range(text, start + marker, be, lang.as_ref(), window, &mut spans);
        if marker > 0 {
            if let Some(first) = spans.get_mut(before) {
                first.0 = start;
            } else {
                let m = text[start..start + marker].trim_end().len();
                spans.push((start, start + m));
            }
        }
    }
    merge_list_markers(text, &spans)
}

/// Cuts `text` into blocks of lines at structural line breaks (see the module docs): a
/// blank line; a line that starts with a list marker; after a line ending in terminal
/// punctuation; after a list-item or `#` heading line when the next line is not indented.
/// A line starting with a lowercase letter (not a list marker) continues its block.
fn blocks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut block: Option<(usize, usize)> = None; // (start, end) of the open block
    let mut prev_line = "";
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let (line_start, line_end) = (offset, offset + raw.len());
        offset = line_end;
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            if let Some(b) = block.take() {
                out.push(b);
            }
            prev_line = "";
            continue;
        }
        let cut = match block {
            None => false,
            Some(_) => is_break_between(prev_line, line),
        };
        block = match block {
            Some((s, _)) if !cut => Some((s, line_end)),
            Some(b) => {
                out.push(b);
                Some((line_start, line_end))
            }
            None => Some((line_start, line_end)),
        };
        prev_line = line;
    }
    if let Some(b) = block {
        out.push(b);
    }
    out
}

/// Whether the line break between non-blank lines `prev` and `next` ends a block.
fn is_break_between(prev: &str, next: &str) -> bool {
    let next_trim = next.trim_start();
    if marker_prefix_len(next_trim) > 0 || is_list_marker(next_trim) {
        return true;
    }
    if next_trim.chars().next().is_some_and(char::is_lowercase) {
        return false;
    }
    let prev_trim = prev.trim();
    let closers: &[char] = &['"', '\'', ')', ']', '}', '”', '’', '*', '_', '`'];
    let ends_terminal = prev_trim
        .trim_end_matches(closers)
        .ends_with(['.', '!', '?', ':', ';', '…']);
    let structural = marker_prefix_len(prev_trim) > 0 || prev_trim.starts_with('#');
    let indented = next.starts_with([' ', '\t']);
    ends_terminal || (structural && !indented)
}

/// Length in bytes of a leading list marker and the whitespace after it (`"1. "`, `"- "`),
/// or 0 when `line` does not start with one followed by whitespace.
fn marker_prefix_len(line: &str) -> usize {
    let token_len = line.find(char::is_whitespace).unwrap_or(line.len());
    if token_len == line.len() || !is_list_marker(&line[..token_len]) {
        return 0;
    }
    let rest = &line[token_len..];
    token_len + (rest.len() - rest.trim_start().len())
}

/// Segments `text[start..end]` with sentencex in bounded windows, pushing trimmed,
/// non-empty spans (absolute byte offsets) to `out`.
fn segment_range(
    text: &str,
    start: usize,
    end: usize,
    lang: &dyn Language,
    window_bytes: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let Some(range) = text.get(start..end) else {
        return;
    };
    let mut pos = 0;
    while pos < range.len() {
        let rest = &range[pos..];
        let at_end = rest.len() <= window_bytes;
        let window = if at_end {
            rest
        } else {
            &rest[..floor_char_boundary(rest, window_bytes)]
        };
        let pieces = window_pieces(lang, window);

        let advance = if at_end {
            push_trimmed(text, start + pos, &pieces, out);
            window.len()
        } else {
            let limit = window
                .len()
                .saturating_sub(LOOKAHEAD_BYTES.min(window_bytes / 2));
            let kept = pieces.iter().take_while(|p| p.1 <= limit).count();
            let kept = if kept == 0 && pieces.len() >= 2 {
                1
            } else {
                kept
            };
            if kept > 0 {
                push_trimmed(text, start + pos, &pieces[..kept], out);
                pieces[kept - 1].1
            } else {
                // One run of text longer than the window with no boundary: cut it at the
                // last whitespace before the lookahead margin.
                let cut = forced_cut(window, limit);
                push_trimmed(text, start + pos, &[(0, cut)], out);
                cut
            }
        };
        // Always make progress, by at least one character, and stay on a char boundary.
        pos += advance.max(rest.chars().next().map_or(1, char::len_utf8));
        while pos < range.len() && !range.is_char_boundary(pos) {
            pos += 1;
        }
    }
}

/// sentencex's pieces of `window` as byte spans. A panic inside sentencex (none known) is
/// caught and the window becomes one piece, so no input can bring the caller down.
fn window_pieces(lang: &dyn Language, window: &str) -> Vec<(usize, usize)> {
    let run = std::panic::AssertUnwindSafe(|| {
        lang.get_sentence_boundaries(window)
            .iter()
            .filter(|b| {
                b.start_byte < b.end_byte
                    && b.end_byte <= window.len()
                    && window.is_char_boundary(b.start_byte)
                    && window.is_char_boundary(b.end_byte)
            })
            .map(|b| (b.start_byte, b.end_byte))
            .collect()
    });
    std::panic::catch_unwind(run).unwrap_or_else(|_| vec![(0, window.len())])
}

fn push_trimmed(text: &str, base: usize, pieces: &[(usize, usize)], out: &mut Vec<(usize, usize)>) {
    for &(s, e) in pieces {
        let Some(piece) = text.get(base + s..base + e) else {
            continue;
        };
        let lead = piece.len() - piece.trim_start().len();
        let trimmed = piece.trim();
        if !trimmed.is_empty() {
            let start = base + s + lead;
            out.push((start, start + trimmed.len()));
        }
    }
}

/// Largest char boundary of `s` that is <= `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where to cut a window with no sentence boundary: after the last whitespace at or before
/// `limit`, else at `limit` (on a char boundary); never 0 for a non-empty window.
fn forced_cut(window: &str, limit: usize) -> usize {
    let limit = floor_char_boundary(window, limit.max(1));
    let cut = window[..limit]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(limit, |(i, c)| i + c.len_utf8());
    if cut == 0 {
        window.chars().next().map_or(window.len(), char::len_utf8)
    } else {
        cut
    }
}

/// Merges each piece that is only a list marker with the piece after it (the span runs from
/// the marker to the end of the next piece, keeping the original text in between).
fn merge_list_markers(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    let mut pending: Option<usize> = None;
    for &(s, e) in spans {
        let start = pending.take().unwrap_or(s);
        if text.get(s..e).is_some_and(is_list_marker) {
            pending = Some(start);
            continue;
        }
        out.push((start, e));
    }
    if let (Some(start), Some(&(_, e))) = (pending, spans.last()) {
        // Trailing marker(s) with nothing after: keep them as they are.
        out.push((start, e));
    }
    out
}

/// True for a piece that is only a list marker: `1.`, `12)`, `a.`, `B)`, `iv.`, `(3)`, `(c)`,
/// or a bullet such as `-`, `*`, `•`.
fn is_list_marker(piece: &str) -> bool {
    const BULLETS: &[&str] = &[
        "-", "*", "+", "•", "◦", "▪", "–", "—", "‣", "●", "○", "■", "►",
    ];
    let p = piece.trim();
    if BULLETS.contains(&p) {
        return true;
    }
    let body = if let Some(inner) = p.strip_prefix('(').and_then(|q| q.strip_suffix(')')) {
        inner
    } else if let Some(b) = p
        .strip_suffix(".)")
        .or_else(|| p.strip_suffix('.'))
        .or_else(|| p.strip_suffix(')'))
    {
        b
    } else {
        return false;
    };
    let numeric = !body.is_empty() && body.len() <= 3 && body.bytes().all(|b| b.is_ascii_digit());
    let letter = body.len() == 1 && body.bytes().all(|b| b.is_ascii_alphabetic());
    let roman = !body.is_empty()
        && body.len() <= 6
        && (body.bytes().all(|b| b"ivxlc".contains(&b))
            || body.bytes().all(|b| b"IVXLC".contains(&b)));
    numeric || letter || roman
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fuzz;
