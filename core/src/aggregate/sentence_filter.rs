//! UAD at sentence granularity, the LLM-free filter: the answer's sentences (or given units)
//! whose score passes the threshold, in their original order and with their original text,
//! without a reconstruction call. Between two kept sentences stands the whitespace that followed
//! the first of them in the answer (a space, a line break, a blank line), or one space where
//! that is not known (a given unit not found in the answer); when sentences between them were
//! dropped, the gap with the most line breaks among theirs, so paragraphs stay paragraphs.
//!
//! [`kept_claims_sentences`] is claim-level UAD's fallback when the reconstruction loses a kept
//! claim (option `reconstruction_fallback`): the answer's own sentences that hold the kept
//! claims, without bringing back a unit that was not kept.

use crate::decompose::sentences::split_sentence_spans;
use crate::decompose::spans::unit_spans;

/// The kept units of `response` (`units`, in order; `kept[i]` for `units[i]`) as one text, each
/// unit's own text joined by the whitespace that followed it in the response. Nothing kept: an
/// empty text.
pub fn kept_text(response: &str, units: &[String], kept: &[bool]) -> String {
    let spans = unit_spans(response, units);
    let chars: Vec<char> = response.chars().collect();
    // The whitespace after unit i, up to the next unit's start (or the end of the response).
    let after = |i: usize| -> Option<String> {
        let end = spans.get(i).copied().flatten()?.end;
        let next = match spans.get(i + 1) {
            Some(s) => s.as_ref()?.start,
            None => chars.len(),
        };
        let gap: String = chars.get(end..next)?.iter().collect();
        (!gap.is_empty() && gap.chars().all(char::is_whitespace)).then_some(gap)
    };
    let breaks = |s: &str| s.matches('\n').count();
    let mut out = String::new();
    let mut separator: Option<String> = None;
    for (i, unit) in units.iter().enumerate() {
        if !kept.get(i).copied().unwrap_or(false) {
            // A paragraph break after a dropped unit stays between the kept units around it.
            if let (Some(sep), Some(gap)) = (separator.as_mut(), after(i)) {
                if breaks(&gap) > breaks(sep) {
                    *sep = gap;
                }
            }
            continue;
        }
        if let Some(sep) = separator.take() {
            out.push_str(&sep);
        }
        out.push_str(unit.trim());
        separator = Some(after(i).unwrap_or_else(|| " ".into()));
    }
    out
}

/// Claim-level UAD's fallback text (module docs): the kept claims (`kept[i]` for `claims[i]`,
/// all of the answer's units) told by the answer's own sentences. In the answer's order:
///
/// * a sentence that holds a kept claim and no unit that was not kept, as written, each once,
///   followed by the whitespace that followed it in the answer (else one space);
/// * a kept claim whose sentence also holds a unit that was not kept, as the claim is written
///   (the sentence would bring the dropped unit back), in that sentence's place;
/// * a kept claim with no place in the answer, as written, at the end.
///
/// A unit's place is its span ([`unit_spans`]); a span touching two sentences holds both.
/// Nothing kept: an empty text. Linear in the response's length, plus a binary search per unit.
pub fn kept_claims_sentences(response: &str, claims: &[String], kept: &[bool]) -> String {
    let spans = unit_spans(response, claims);
    let is_kept = |i: usize| kept.get(i).copied().unwrap_or(false);
    // The sentences as byte ranges and as character ranges (the spans' unit), counted in one
    // pass.
    let (mut at_byte, mut at_char) = (0, 0);
    let mut char_of = |byte: usize| {
        if byte >= at_byte {
            at_char += response[at_byte..byte].chars().count();
        } else {
            at_char -= response[byte..at_byte].chars().count();
        }
        at_byte = byte;
        at_char
    };
    let bytes = split_sentence_spans(response);
    let chars: Vec<(usize, usize)> = bytes
        .iter()
        .map(|&(s, e)| (char_of(s), char_of(e)))
        .collect();
    // The sentences each unit touches.
    let touched = |i: usize| {
        let span = spans.get(i).copied().flatten()?;
        let first = chars.partition_point(|&(_, e)| e <= span.start);
        let last = chars.partition_point(|&(s, _)| s < span.end);
        (first < last).then_some(first..last)
    };
    let mut holds_kept = vec![false; bytes.len()];
    let mut holds_dropped = vec![false; bytes.len()];
    for i in 0..claims.len() {
        if let Some(r) = touched(i) {
            let marks = if is_kept(i) {
                &mut holds_kept
            } else {
                &mut holds_dropped
            };
            marks[r].iter_mut().for_each(|m| *m = true);
        }
    }
    // Kept claims told as written: in their first sentence's place, or at the end.
    let mut told: Vec<Vec<&str>> = vec![Vec::new(); bytes.len()];
    let mut unplaced = Vec::new();
    for (i, claim) in claims.iter().enumerate().filter(|&(i, _)| is_kept(i)) {
        match touched(i) {
            Some(r) if r.clone().any(|k| holds_dropped[k]) => told[r.start].push(claim.trim()),
            Some(_) => {}
            None => unplaced.push(claim.trim()),
        }
    }
    // The pieces in order, each with what follows it.
    let mut pieces: Vec<(&str, &str)> = Vec::new();
    for (k, &(s, e)) in bytes.iter().enumerate() {
        if holds_kept[k] && !holds_dropped[k] {
            let next = bytes.get(k + 1).map_or(response.len(), |&(n, _)| n);
            let gap = response.get(e..next).unwrap_or_default();
            let after = if !gap.is_empty() && gap.chars().all(char::is_whitespace) {
                gap
            } else {
                " "
            };
            pieces.push((&response[s..e], after));
        }
        pieces.extend(told[k].iter().map(|&c| (c, " ")));
    }
    pieces.extend(unplaced.into_iter().map(|c| (c, " ")));
    let mut out = String::new();
    for (n, (text, after)) in pieces.iter().enumerate() {
        out.push_str(text);
        if n + 1 < pieces.len() {
            out.push_str(after);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keeps_the_passing_sentences_in_order_with_their_text() {
        let r = "Paris is in France. It has 90 million people. The Seine flows through it.";
        let u = units(&[
            "Paris is in France.",
            "It has 90 million people.",
            "The Seine flows through it.",
        ]);
        assert_eq!(
            kept_text(r, &u, &[true, false, true]),
            "Paris is in France. The Seine flows through it."
        );
        assert_eq!(kept_text(r, &u, &[true, true, true]), r);
        assert_eq!(kept_text(r, &u, &[false, false, false]), "");
        assert_eq!(
            kept_text(r, &u, &[false, true, false]),
            "It has 90 million people."
        );
    }

    #[test]
    fn line_breaks_after_a_kept_sentence_stay() {
        let r = "First point.\n\nSecond point.\nThird point.";
        let u = units(&["First point.", "Second point.", "Third point."]);
        assert_eq!(
            kept_text(r, &u, &[true, true, true]),
            "First point.\n\nSecond point.\nThird point."
        );
        assert_eq!(
            kept_text(r, &u, &[true, false, true]),
            "First point.\n\nThird point."
        );
        // The paragraph break after a dropped sentence stays.
        let r = "One. Two.\n\nThree. Four.";
        let u = units(&["One.", "Two.", "Three.", "Four."]);
        assert_eq!(
            kept_text(r, &u, &[true, false, true, true]),
            "One.\n\nThree. Four."
        );
        assert_eq!(
            kept_text(r, &u, &[false, true, false, true]),
            "Two.\n\nFour."
        );
        assert_eq!(
            kept_text(r, &u, &[false, false, true, true]),
            "Three. Four."
        );
    }

    #[test]
    fn kept_claims_bring_their_sentences() {
        let r =
            "Marie Curie was born in Warsaw. She won the Nobel Prize in 1903 and climbed Everest.";
        let claims = units(&[
            "Marie Curie was born in Warsaw.",
            "Marie Curie won the Nobel Prize in 1903.",
            "Marie Curie climbed Everest.",
            "Marie Curie liked tea.",
        ]);
        assert_eq!(
            kept_claims_sentences(r, &claims, &[true, false, false, false]),
            "Marie Curie was born in Warsaw."
        );
        // A sentence whose claims are all kept comes whole, once.
        assert_eq!(
            kept_claims_sentences(r, &claims, &[false, true, true, false]),
            "She won the Nobel Prize in 1903 and climbed Everest."
        );
        // A sentence that also holds a dropped claim does not come: its kept claim comes as
        // written, in its place; a kept claim with no place in the answer comes last.
        assert_eq!(
            kept_claims_sentences(r, &claims, &[true, true, false, true]),
            "Marie Curie was born in Warsaw. Marie Curie won the Nobel Prize in 1903. \
             Marie Curie liked tea."
        );
        assert_eq!(
            kept_claims_sentences(r, &claims, &[false, false, true, false]),
            "Marie Curie climbed Everest."
        );
        assert_eq!(
            kept_claims_sentences(r, &claims, &[false, false, false, true]),
            "Marie Curie liked tea."
        );
        assert_eq!(kept_claims_sentences(r, &claims, &[false; 4]), "");
    }

    #[test]
    fn a_dropped_sentence_unit_never_comes_back() {
        // Decomposition coverage: the claims and the sentence they did not cover, dropped.
        let r = "Marie Curie was a physicist. She was born in Vienna in 1867.";
        let units = units(&[
            "Marie Curie was a physicist.",
            "Marie Curie was born in 1867.",
            "She was born in Vienna in 1867.",
        ]);
        assert_eq!(
            kept_claims_sentences(r, &units, &[true, true, false]),
            "Marie Curie was a physicist. Marie Curie was born in 1867."
        );
        assert_eq!(kept_claims_sentences(r, &units, &[true, true, true]), r);
    }

    #[test]
    fn kept_claims_sentences_keep_line_breaks_and_count_characters() {
        // Accents and an emoji before the claims: spans count characters, sentences bytes.
        let r = "Zoë 🙂 lived in Oslo.\n\nShe ran a café.\nShe was born in 1901.";
        let claims = units(&[
            "Zoë lived in Oslo.",
            "Zoë ran a café.",
            "Zoë was born in 1901.",
        ]);
        assert_eq!(
            kept_claims_sentences(r, &claims, &[true, false, true]),
            "Zoë 🙂 lived in Oslo.\n\nShe was born in 1901."
        );
        assert_eq!(
            kept_claims_sentences(r, &claims, &[false, true, true]),
            "She ran a café.\nShe was born in 1901."
        );
    }

    #[test]
    fn units_not_in_the_response_are_joined_by_a_space() {
        let u = units(&["Not in it.", "Neither."]);
        assert_eq!(
            kept_text("Something else.", &u, &[true, true]),
            "Not in it. Neither."
        );
    }
}
