use super::*;

fn split(s: &str) -> Vec<String> {
    split_sentences(s)
}

#[test]
fn empty_and_whitespace() {
    assert!(split("").is_empty());
    assert!(split("   ").is_empty());
    assert!(split(" \n\n\t \r\n ").is_empty());
}

#[test]
fn no_final_punctuation() {
    assert_eq!(split("No final punctuation"), vec!["No final punctuation"]);
    assert_eq!(split("  padded text  "), vec!["padded text"]);
}

#[test]
fn abbreviations() {
    assert_eq!(
        split("Dr. Smith went to Washington. He arrived at 5 p.m. on Monday."),
        vec![
            "Dr. Smith went to Washington.",
            "He arrived at 5 p.m. on Monday."
        ]
    );
    assert_eq!(
        split("Mr. and Mrs. Jones met Prof. Lee. It was late."),
        vec!["Mr. and Mrs. Jones met Prof. Lee.", "It was late."]
    );
}

#[test]
fn eg_ie_mid_sentence() {
    assert_eq!(
        split("Some fruits, e.g. apples, are red. Others, i.e. bananas, are yellow."),
        vec![
            "Some fruits, e.g. apples, are red.",
            "Others, i.e. bananas, are yellow."
        ]
    );
}

#[test]
fn decimals() {
    assert_eq!(
        split("It costs 3.5 dollars. Cheap."),
        vec!["It costs 3.5 dollars.", "Cheap."]
    );
    assert_eq!(
        split("Version 2.0 was released. It is fast."),
        vec!["Version 2.0 was released.", "It is fast."]
    );
}

#[test]
fn initials() {
    assert_eq!(
        split("J. R. R. Tolkien wrote books. He died in 1973."),
        vec!["J. R. R. Tolkien wrote books.", "He died in 1973."]
    );
}

#[test]
fn numbered_lists() {
    assert_eq!(
        split("1. First item.\n2. Second item."),
        vec!["1. First item.", "2. Second item."]
    );
    assert_eq!(
        split("Intro:\n1. First item.\n2. Second item."),
        vec!["Intro:", "1. First item.", "2. Second item."]
    );
    // sentencex leaves "1." alone here: merged with the next piece.
    assert_eq!(split("1.\nFirst item."), vec!["1.\nFirst item."]);
    assert_eq!(
        split("Answer:\n\n1.\n\nParis is the capital."),
        vec!["Answer:", "1.\n\nParis is the capital."]
    );
    assert_eq!(
        split("i. One thing. ii. Another thing."),
        vec!["i. One thing.", "ii. Another thing."]
    );
    assert_eq!(
        split("Sentence one. 2. Next"),
        vec!["Sentence one.", "2. Next"]
    );
    assert_eq!(
        split("- Item one.\n- Item two."),
        vec!["- Item one.", "- Item two."]
    );
    // a marker with nothing after it stays
    assert_eq!(split("1."), vec!["1."]);
    for s in split("Steps:\n1. Mix.\n2. Bake.\n3. Eat.") {
        assert!(!is_list_marker(&s), "{s:?}");
    }
}

#[test]
fn list_items_do_not_swallow_text() {
    assert_eq!(
        split("- A bullet.\n- Another bullet.\nHe said hi. Then left."),
        vec![
            "- A bullet.",
            "- Another bullet.",
            "He said hi.",
            "Then left."
        ]
    );
    assert_eq!(
        split("1. First item. It has two sentences.\n2. Second item."),
        vec!["1. First item.", "It has two sentences.", "2. Second item."]
    );
    assert_eq!(
        split("- Apples\n- Pears\nThe end."),
        vec!["- Apples", "- Pears", "The end."]
    );
    assert_eq!(
        split("## Title\nText here."),
        vec!["## Title", "Text here."]
    );
    assert_eq!(
        split("Intro:\n  - nested item.\n  - another one"),
        vec!["Intro:", "- nested item.", "- another one"]
    );
    // a list item continued on an indented line stays one unit
    assert_eq!(
        split("- A long item\n  that wraps.\n- Next."),
        vec!["- A long item\n  that wraps.", "- Next."]
    );
}

#[test]
fn soft_wraps_join() {
    assert_eq!(
        split("He went to\nthe store. Then he left."),
        vec!["He went to\nthe store.", "Then he left."]
    );
    assert_eq!(
        split("He arrived at 5 p.m.\non Monday."),
        vec!["He arrived at 5 p.m.\non Monday."]
    );
    assert_eq!(
        split("The value is 3.\nNext line."),
        vec!["The value is 3.", "Next line."]
    );
    assert_eq!(
        split("Line one\r\nLine two."),
        vec!["Line one\r\nLine two."]
    );
}

#[test]
fn random_text_never_panics_and_stays_substrings() {
    const ALPHABET: &[&str] = &[
        "a", "B", " ", "  ", "\n", "\n\n", "\r\n", ".", "!", "?", "...", "1.", "2)", "(a)", "- ",
        "• ", "\"", "“", "”", "(", ")", "é", "日本", "😀", "\t", "Dr.", "e.g.", ":", "#", "i.",
        "3.5", "\u{2028}", "\u{a0}", "…", "'", "»",
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        let mut text = String::new();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (x % 120) as usize;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            text.push_str(ALPHABET[(x % ALPHABET.len() as u64) as usize]);
        }
        let got = split(&text);
        for s in &got {
            assert!(!s.trim().is_empty() && s.trim() == s, "{text:?} → {got:?}");
            assert!(text.contains(s.as_str()), "{text:?} → {got:?}");
        }
        // small windows exercise the forced cuts on the same text
        for window in [WINDOW_BYTES, 16] {
            let spans = sentence_spans(&text, window);
            assert!(
                spans
                    .iter()
                    .all(|&(a, b)| a < b && text.get(a..b).is_some()),
                "{text:?}"
            );
            // in order, not overlapping
            assert!(
                spans.windows(2).all(|w| w[0].1 <= w[1].0),
                "{text:?} {spans:?}"
            );
        }
    }
}

#[test]
fn marker_detection() {
    for m in [
        "1.", "12)", "a.", "B)", "iv.", "(3)", "(c)", "-", "•", "2.)", "XII.",
    ] {
        assert!(is_list_marker(m), "{m}");
    }
    for m in ["1234.", "ab.", "Hello.", "1", "", ".", "()", "Dr."] {
        assert!(!is_list_marker(m), "{m}");
    }
}

#[test]
fn paragraphs_and_lines() {
    assert_eq!(
        split("First paragraph here.\n\nSecond paragraph here.\nThird line here"),
        vec![
            "First paragraph here.",
            "Second paragraph here.",
            "Third line here"
        ]
    );
    assert_eq!(
        split("Hello world!How are you? Fine."),
        vec!["Hello world!", "How are you?", "Fine."]
    );
}

#[test]
fn sentences_are_substrings() {
    let text = "Alpha beta. Gamma “delta.” Épsilon ünïcödé 😀 text!\n\n- x\n1.\nDone";
    for s in split(text) {
        assert!(text.contains(&s), "{s:?}");
        assert_eq!(s.trim(), s);
    }
}

#[test]
fn window_boundaries_do_not_change_result() {
    // Many sentences across several windows: the same as splitting each one alone.
    let unit = "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday. ";
    let text = unit.repeat(600); // ~37 KB, > 4 windows
    let got = split(&text);
    assert_eq!(got.len(), 1200);
    for pair in got.chunks(2) {
        assert_eq!(
            pair,
            [
                "Dr. Smith went to Washington.",
                "He arrived at 5 p.m. on Monday."
            ]
        );
    }
}

#[test]
fn long_run_without_boundary_is_cut_at_whitespace() {
    let text = "word ".repeat(5000); // 25 KB, no terminator
    let got = split(&text);
    assert!(got.len() > 1);
    assert_eq!(got.concat().replace("word", "").trim(), "");
    assert!(got.iter().all(|s| s.split(' ').all(|w| w == "word")));
    let total: usize = got.iter().map(|s| s.split(' ').count()).sum();
    assert_eq!(total, 5000);
    // no whitespace at all, multibyte: still cut on char boundaries, nothing lost
    let text = "é".repeat(20_000);
    let got = split(&text);
    assert_eq!(got.concat(), text);
}

/// Deterministic mixed text from `snippets`.
fn mixed_text(snippets: &[&str], bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 64);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(snippets[(x % snippets.len() as u64) as usize]);
    }
    out
}

const PROSE: &[&str] = &[
    "Dr. Smith went to Washington. ",
    "He arrived at 5 p.m. on Monday. ",
    "It costs 3.5 dollars. ",
    "J. R. R. Tolkien wrote books. ",
    "He said \"stop (now. ok) there\" and left. ",
    "Steps: 1. Mix. 2. Bake. ",
    "Some fruits, e.g. apples, are red! ",
    "Is it true? ",
    "Ünïcödé text “quoted.” ",
    "A long clause without an end ",
];

const STRUCTURED: &[&str] = &[
    "Dr. Smith went to Washington. ",
    "He said \"stop (now. ok) there\" and left. ",
    "\n1. First item here.\n2. Second item here.\n",
    "\n\n",
    "\n- A bullet.\n- Another bullet.\n",
    "\n## Heading\n",
    "Ünïcödé text “quoted.” ",
];

#[test]
fn windows_match_whole_text_segmentation() {
    // One 60 KB line: spans from bounded windows equal those of one sentencex call.
    let text = mixed_text(PROSE, 60_000);
    let windowed = sentence_spans(&text, WINDOW_BYTES);
    let whole = sentence_spans(&text, usize::MAX);
    assert!(windowed.len() > 1000);
    assert_eq!(windowed, whole);
    // small windows too (lookahead shrinks to half the window)
    assert_eq!(sentence_spans(&text, 1024), whole);
}

#[test]
fn five_megabytes_is_fast() {
    // Windowing keeps this linear: one sentencex call on megabytes of quoted prose in
    // one paragraph is quadratic (minutes); here it takes ~1 s in release, ~10 s in debug.
    // Half one long line of prose, half short structured lines.
    let mut text = mixed_text(PROSE, 2_500_000);
    text.push_str(&mixed_text(STRUCTURED, 2_500_000));
    let t0 = std::time::Instant::now();
    let got = split(&text);
    let dt = t0.elapsed();
    assert!(got.len() > 100_000, "{}", got.len());
    eprintln!("5 MB split into {} sentences in {dt:?}", got.len());
}
