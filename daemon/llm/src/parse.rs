//! Parsers for what LLMs answer to the prompts of [`crate::prompts`].
//!
//! They are tolerant of what models really send (CRLF, blank lines, a preamble such as "Here are
//! the facts:", bullets, numbering, several `###` items on one line) and never fail: an answer
//! that cannot be read gives an empty list or `None`.

/// Claims of a decomposition answer: the `###` items, without the `###`, whitespace collapsed,
/// `### NONE` items dropped, exact duplicates removed (first kept, order kept). Lines without
/// `###` (a preamble, commentary) are ignored. A model that ignored the `###` format and answered
/// with a bulleted or numbered list gets its list items instead. Nothing usable → empty.
///
/// Unlike uqlm, which discards the whole answer as soon as `### NONE` appears anywhere, only the
/// `NONE` items themselves are dropped (the prompt asks for `### NONE` per fact-less sentence).
pub fn claims(text: &str) -> Vec<String> {
    let text = normalize_newlines(text);
    let mut out = Vec::new();
    if text.contains("###") {
        for line in text.lines() {
            let (rest, _) = strip_list_marker(line.trim());
            let rest = rest.trim_start_matches(['*', '_']).trim_start();
            if !rest.starts_with("###") {
                continue;
            }
            for piece in rest.split("###") {
                push_item(&mut out, piece);
            }
        }
    } else {
        for line in text.lines() {
            if let (rest, true) = strip_list_marker(line.trim()) {
                push_item(&mut out, rest);
            }
        }
    }
    dedupe(out)
}

/// Questions of a unit-QA answer: the `###`-separated items, several possibly on one line
/// (`### Q1? ### Q2?`), each item's first non-empty line. Text before the first `###` is a
/// preamble and is dropped. Without any `###`, list items and lines ending in `?` are taken.
pub fn questions(text: &str) -> Vec<String> {
    let text = normalize_newlines(text);
    let mut out = Vec::new();
    if text.contains("###") {
        for segment in text.split("###").skip(1) {
            if let Some(first) = segment.lines().map(str::trim).find(|l| !l.is_empty()) {
                push_item(&mut out, first);
            }
        }
    } else {
        for line in text.lines() {
            let line = line.trim();
            match strip_list_marker(line) {
                (rest, true) => push_item(&mut out, rest),
                (rest, false) if rest.ends_with('?') => push_item(&mut out, rest),
                _ => {}
            }
        }
    }
    dedupe(out)
}

/// New claims of a claim-merging answer: the lines starting with `-` (uqlm's `^\s*-\s*(.+)`;
/// `*` and `•` bullets too). When the answer has a heading for the compilation step (a line
/// naming "compilation", "non-entailed" or "new claims"), only the dash lines after the last such
/// heading count, so the verification step's own bullet points are not taken for new claims.
/// Items such as "None" or "No new claims" are dropped.
pub fn merged_claims(text: &str) -> Vec<String> {
    let text = normalize_newlines(text);
    let lines: Vec<&str> = text.lines().collect();
    let is_heading = |l: &str| {
        let low = l.to_lowercase();
        bullet_item(l).is_none()
            && (low.contains("compilation")
                || low.contains("non-entailed")
                || low.contains("new claims"))
    };
    let start = lines
        .iter()
        .rposition(|l| is_heading(l))
        .map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for line in &lines[start..] {
        if let Some(item) = bullet_item(line) {
            let item = item.trim_matches(|c| c == '*' || c == '_').trim();
            if !is_none_like(item) {
                push_item(&mut out, item);
            }
        }
    }
    dedupe(out)
}

/// The six confidence phrases of the verbalized-confidence prompt and their values.
pub const CONFIDENCE_PHRASES: [(&str, f64); 6] = [
    ("no chance", 0.0),
    ("little chance", 0.2),
    ("less than even", 0.4),
    ("fairly possible", 0.6),
    ("very good chance", 0.8),
    ("almost certain", 1.0),
];

/// Value of a verbalized-confidence answer: "No chance" → 0.0, "Little chance" → 0.2, "Less
/// than even" → 0.4, "Fairly possible" → 0.6, "Very good chance" → 0.8, "Almost certain" → 1.0
/// (case-insensitive, punctuation and the printed percentage tolerated). An answer that starts
/// with a phrase takes it; otherwise exactly one distinct phrase must appear, or, with no phrase,
/// exactly one of the printed percentages (0/20/40/60/80/100 %). Anything else → `None`.
pub fn verbalized_confidence(text: &str) -> Option<f64> {
    let norm = format!(" {} ", words(text).join(" "));
    for (phrase, value) in CONFIDENCE_PHRASES {
        if norm.starts_with(&format!(" {phrase} ")) {
            return Some(value);
        }
    }
    let found: Vec<f64> = CONFIDENCE_PHRASES
        .iter()
        .filter(|(p, _)| norm.contains(&format!(" {p} ")))
        .map(|(_, v)| *v)
        .collect();
    match found.as_slice() {
        [one] => return Some(*one),
        [] => {}
        _ => return None,
    }
    let mut percents = percentages(text);
    percents.dedup();
    match percents.as_slice() {
        [p] if [0, 20, 40, 60, 80, 100].contains(p) => Some(f64::from(*p) / 100.0),
        _ => None,
    }
}

/// A Yes/No grading answer: `Some(true)` for yes, `Some(false)` for no. The first word decides
/// ("Yes.", "No, because…"; "true"/"false" too); otherwise exactly one of the words "yes"/"no"
/// must appear. Anything else → `None`.
pub fn yes_no(text: &str) -> Option<bool> {
    let w = words(text);
    match w.first().map(String::as_str) {
        Some("yes") | Some("true") => return Some(true),
        Some("no") | Some("false") => return Some(false),
        _ => {}
    }
    one_of(&w, "yes", "no")
}

/// A label of the NLI judge ([`crate::prompts::nli_judge`]). Binary replies map yes →
/// `Entailment`, no → `Contradiction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NliLabel {
    Entailment,
    Neutral,
    Contradiction,
}

/// The label of an NLI-judge reply and whether it is the reply's first word (only then is the
/// first token's log-probability the label's). Binary (`ternary` false): "yes"/"true" or
/// "no"/"false"; ternary: a word starting with "entail", "neutral" or "contradict" ("Entails.",
/// "contradiction"). The first word decides; otherwise exactly one distinct label must appear
/// in the reply. Anything else (no label, two labels, a refusal) → `None`.
pub fn nli_label(text: &str, ternary: bool) -> Option<(NliLabel, bool)> {
    let label = |w: &str| -> Option<NliLabel> {
        if ternary {
            if w.starts_with("entail") {
                Some(NliLabel::Entailment)
            } else if w.starts_with("neutral") {
                Some(NliLabel::Neutral)
            } else if w.starts_with("contradict") {
                Some(NliLabel::Contradiction)
            } else {
                None
            }
        } else {
            match w {
                "yes" | "true" => Some(NliLabel::Entailment),
                "no" | "false" => Some(NliLabel::Contradiction),
                _ => None,
            }
        }
    };
    let w = words(text);
    if let Some(l) = w.first().and_then(|f| label(f)) {
        return Some((l, true));
    }
    let mut found: Vec<NliLabel> = w.iter().filter_map(|x| label(x)).collect();
    found.dedup();
    found.sort_by_key(|l| *l as u8);
    found.dedup();
    match found.as_slice() {
        [one] => Some((*one, false)),
        _ => None,
    }
}

/// An objectivity answer: `Some(true)` for objective, `Some(false)` for subjective (first word
/// decides, else exactly one of the two words must appear). Anything else → `None`.
pub fn objectivity(text: &str) -> Option<bool> {
    let w = words(text);
    match w.first().map(String::as_str) {
        Some("objective") => return Some(true),
        Some("subjective") => return Some(false),
        _ => {}
    }
    one_of(&w, "objective", "subjective")
}

fn one_of(words: &[String], yes: &str, no: &str) -> Option<bool> {
    let has_yes = words.iter().any(|w| w == yes);
    let has_no = words.iter().any(|w| w == no);
    match (has_yes, has_no) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// Lowercase alphanumeric words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Integers written directly before a `%`.
fn percentages(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c != '%' {
            continue;
        }
        let mut j = i;
        while j > 0 && chars[j - 1].is_ascii_digit() {
            j -= 1;
        }
        if j < i && i - j <= 3 {
            let digits: String = chars[j..i].iter().collect();
            if let Ok(v) = digits.parse() {
                out.push(v);
            }
        }
    }
    out
}

fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Strips one leading bullet (`-`, `*`, `•`, `–`, `—`, `+`) or number (`1.`, `1)`, `(1)`), with
/// the whitespace after it. Returns the rest and whether a marker was there.
fn strip_list_marker(s: &str) -> (&str, bool) {
    let s = s.trim_start();
    let mut chars = s.char_indices();
    let Some((_, first)) = chars.next() else {
        return (s, false);
    };
    if matches!(first, '-' | '*' | '•' | '–' | '—' | '+') {
        let rest = &s[first.len_utf8()..];
        if rest.starts_with(char::is_whitespace) {
            return (rest.trim_start(), true);
        }
        return (s, false);
    }
    let (open, body) = match s.strip_prefix('(') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 3 {
        return (s, false);
    }
    let after = &body[digits..];
    let closer = if open {
        after.strip_prefix(')')
    } else {
        after.strip_prefix('.').or_else(|| after.strip_prefix(')'))
    };
    match closer {
        Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => {
            (rest.trim_start(), true)
        }
        _ => (s, false),
    }
}

/// The text of a dash (or `*`/`•`) bullet line, if it is one. Markdown rules (`---`) and bold
/// text (`**x**`) are not bullets.
fn bullet_item(line: &str) -> Option<&str> {
    let l = line.trim_start();
    let first = l.chars().next()?;
    if !matches!(first, '-' | '*' | '•') {
        return None;
    }
    let rest = &l[first.len_utf8()..];
    if rest.starts_with(first) && first != '•' {
        return None;
    }
    let item = rest.trim();
    (!item.is_empty()).then_some(item)
}

fn is_none_like(item: &str) -> bool {
    let w = words(item).join(" ");
    w.is_empty()
        || w == "none"
        || w.starts_with("none ")
        || w == "n a"
        || w == "nothing"
        || w.starts_with("no new ")
        || w.starts_with("no non entailed")
        || w.starts_with("there are no new")
        || w.starts_with("all claims are ")
}

/// Cleans one item (numbering after `###`, whitespace) and keeps it unless empty or `NONE`.
fn push_item(out: &mut Vec<String>, raw: &str) {
    let (rest, _) = strip_list_marker(raw.trim());
    let item = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    if item.is_empty() {
        return;
    }
    let bare = item.trim_matches(|c: char| !c.is_alphanumeric());
    if bare.eq_ignore_ascii_case("none") {
        return;
    }
    out.push(item);
}

fn dedupe(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nli_labels() {
        use NliLabel::*;
        assert_eq!(nli_label("Yes.", false), Some((Entailment, true)));
        assert_eq!(
            nli_label(" no, it does not", false),
            Some((Contradiction, true))
        );
        assert_eq!(
            nli_label("The answer is yes", false),
            Some((Entailment, false))
        );
        assert_eq!(nli_label("yes or no? no", false), Some((Entailment, true)));
        assert_eq!(nli_label("maybe yes, maybe no", false), None);
        assert_eq!(nli_label("I cannot help with that.", false), None);
        assert_eq!(nli_label("**Entailment**", true), Some((Entailment, true)));
        assert_eq!(nli_label("Contradicts", true), Some((Contradiction, true)));
        assert_eq!(nli_label("It is neutral.", true), Some((Neutral, false)));
        assert_eq!(
            nli_label("entailment or contradiction", true),
            Some((Entailment, true))
        );
        assert_eq!(nli_label("either entailment or contradiction", true), None);
        assert_eq!(nli_label("yes", true), None);
        assert_eq!(nli_label("", true), None);
    }

    #[test]
    fn claims_basic_and_none() {
        assert_eq!(
            claims("### A is B.\n### C is D."),
            vec!["A is B.", "C is D."]
        );
        assert!(claims("### NONE").is_empty());
        assert!(claims("### none.\n").is_empty());
        assert!(claims("").is_empty());
        assert!(claims("   \n\n").is_empty());
        assert_eq!(
            claims("###A.\r\n\r\n  ###   B   c.  \r\n### A."),
            vec!["A.", "B c."]
        );
        assert_eq!(claims("### A. ### B."), vec!["A.", "B."]);
        assert_eq!(claims("### 1. A.\n### 2) B."), vec!["A.", "B."]);
        assert_eq!(
            claims("1. ### A.\n- ### B.\n**### C.**"),
            vec!["A.", "B.", "C.**"]
        );
        assert_eq!(
            claims("Here are the facts:\n### A.\nHope this helps!"),
            vec!["A."]
        );
        assert_eq!(claims("### A.\n### NONE\n### B."), vec!["A.", "B."]);
    }

    #[test]
    fn claims_fallback_to_lists() {
        assert_eq!(
            claims("1. A.\n2. B.\n3) C.\n(4) D."),
            vec!["A.", "B.", "C.", "D."]
        );
        assert_eq!(claims("Facts:\n- A.\n* B.\n• C."), vec!["A.", "B.", "C."]);
        assert!(claims("I cannot help with that.").is_empty());
        assert!(claims("3.14 is pi.\n-5 degrees.").is_empty());
    }

    #[test]
    fn questions_forms() {
        assert_eq!(questions("### Q1? ### Q2?"), vec!["Q1?", "Q2?"]);
        assert_eq!(
            questions("Sure!\n### Q1?\n\n### Q2?\nThese are good."),
            vec!["Q1?", "Q2?"]
        );
        assert_eq!(questions("### 1. Q1?\r\n### 2. Q2?"), vec!["Q1?", "Q2?"]);
        assert_eq!(questions("1. Who?\n2. What?\nDone."), vec!["Who?", "What?"]);
        assert_eq!(
            questions("Where was she born?"),
            vec!["Where was she born?"]
        );
        assert!(questions("###").is_empty());
        assert!(questions("").is_empty());
    }

    #[test]
    fn merged_claims_forms() {
        assert_eq!(
            merged_claims("- A.\n  -B.\nnot this\n- A."),
            vec!["A.", "B."]
        );
        let full = "**Verification Process:**\n- Claim X: entailed by claim 1.\n\n**Compilation of Non-Entailed Claims:**\n- Paris has 2 million people.\n- None";
        assert_eq!(merged_claims(full), vec!["Paris has 2 million people."]);
        assert!(merged_claims("Compilation of Non-Entailed Claims:\n- None.").is_empty());
        assert!(merged_claims("---\n**bold**").is_empty());
        assert!(merged_claims("").is_empty());
    }

    #[test]
    fn confidence_phrases() {
        assert_eq!(verbalized_confidence("Almost certain"), Some(1.0));
        assert_eq!(verbalized_confidence("very good chance (80%)."), Some(0.8));
        assert_eq!(verbalized_confidence("**Fairly possible**"), Some(0.6));
        assert_eq!(verbalized_confidence("LESS THAN EVEN"), Some(0.4));
        assert_eq!(verbalized_confidence("\"Little chance\""), Some(0.2));
        assert_eq!(verbalized_confidence("No chance (0%)"), Some(0.0));
        assert_eq!(
            verbalized_confidence("My answer: Very good chance"),
            Some(0.8)
        );
        assert_eq!(
            verbalized_confidence("Very good chance. Not almost certain."),
            Some(0.8)
        );
        assert_eq!(verbalized_confidence("80%"), Some(0.8));
        assert_eq!(
            verbalized_confidence("It could be no chance or almost certain"),
            None
        );
        assert_eq!(verbalized_confidence("75%"), None);
        assert_eq!(verbalized_confidence("I think it is likely"), None);
        assert_eq!(verbalized_confidence(""), None);
    }

    #[test]
    fn yes_no_and_objectivity() {
        assert_eq!(yes_no("Yes"), Some(true));
        assert_eq!(yes_no(" no."), Some(false));
        assert_eq!(yes_no("**No**, the context says otherwise"), Some(false));
        assert_eq!(yes_no("Answer: Yes"), Some(true));
        assert_eq!(yes_no("Not supported"), None);
        assert_eq!(yes_no("Yes and no"), Some(true));
        assert_eq!(yes_no("Maybe yes, maybe no"), None);
        assert_eq!(yes_no(""), None);
        assert_eq!(objectivity("objective"), Some(true));
        assert_eq!(objectivity("Subjective."), Some(false));
        assert_eq!(objectivity("The input is objective"), Some(true));
        assert_eq!(objectivity("both objective and subjective"), None);
        assert_eq!(objectivity("unclear"), None);
    }
}
