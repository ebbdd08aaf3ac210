//! UAD at sentence granularity, the LLM-free filter: the answer's sentences (or given units)
//! whose score passes the threshold, in their original order and with their original text,
//! without a reconstruction call. Between two kept sentences stands the whitespace that followed
//! the first of them in the answer (a space, a line break, a blank line), or one space where
//! that is not known (a given unit not found in the answer).

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
    let mut out = String::new();
    let mut separator: Option<String> = None;
    for (i, unit) in units.iter().enumerate() {
        if !kept.get(i).copied().unwrap_or(false) {
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
