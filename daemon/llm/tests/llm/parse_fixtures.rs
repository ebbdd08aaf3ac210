//! The parsers on recorded, realistic model outputs (tests/fixtures/), messy ones included.

use uq_llm::parse;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/",
            $name
        ))
    };
}

#[test]
fn decomposition_clean() {
    let c = parse::claims(fixture!("decomposition_clean.txt"));
    assert_eq!(c.len(), 7);
    assert_eq!(c[0], "Marie Curie was a physicist.");
    assert_eq!(
        c[6],
        "Marie Curie was the first woman to win a Nobel Prize."
    );
    assert!(c.iter().all(|x| !x.contains('#')));
}

#[test]
fn decomposition_with_preamble_and_sign_off() {
    let c = parse::claims(fixture!("decomposition_preamble.txt"));
    assert_eq!(
        c,
        vec![
            "The Eiffel Tower is located in Paris.",
            "The Eiffel Tower was completed in 1889.",
            "The Eiffel Tower was designed by the company of Gustave Eiffel.",
        ],
        "preamble and sign-off dropped, the repeated claim deduplicated"
    );
}

#[test]
fn decomposition_numbered_list() {
    let c = parse::claims(fixture!("decomposition_numbered.txt"));
    assert_eq!(c.len(), 4);
    assert_eq!(c[0], "Alan Turing was a British mathematician.");
    assert_eq!(c[3], "Alan Turing died in 1954.");
}

#[test]
fn decomposition_numbered_list_without_hashes() {
    let c = parse::claims(fixture!("decomposition_numbered_plain.txt"));
    assert_eq!(
        c,
        vec![
            "The Amazon River is in South America.",
            "The Amazon River is the largest river by discharge volume.",
            "The Amazon River flows into the Atlantic Ocean.",
        ]
    );
}

#[test]
fn decomposition_bullets_indent_and_none_lines() {
    let c = parse::claims(fixture!("decomposition_bullets_mixed.txt"));
    assert_eq!(
        c,
        vec![
            "Python is a programming language.",
            "Python was created by Guido van Rossum.",
            "Python was first released in 1991.",
            "Python emphasizes code readability.",
        ]
    );
}

#[test]
fn decomposition_none_and_nothing() {
    assert!(parse::claims(fixture!("decomposition_none.txt")).is_empty());
    assert!(parse::claims(fixture!("decomposition_empty.txt")).is_empty());
    assert!(parse::claims("I'm sorry, but I can't help with that.").is_empty());
}

#[test]
fn decomposition_crlf() {
    let crlf = fixture!("decomposition_clean.txt").replace('\n', "\r\n");
    assert_eq!(
        parse::claims(&crlf),
        parse::claims(fixture!("decomposition_clean.txt"))
    );
    assert!(parse::claims(&crlf).iter().all(|c| !c.contains('\r')));
}

#[test]
fn questions_on_one_line_and_on_lines() {
    assert_eq!(
        parse::questions(fixture!("questions_inline.txt")),
        vec![
            "In what year was Marie Curie born?",
            "In which city was Marie Curie born?",
            "What was Marie Curie's profession?",
        ]
    );
    assert_eq!(
        parse::questions(fixture!("questions_lines.txt")),
        vec![
            "Who designed the Eiffel Tower?",
            "In which city is the Eiffel Tower located?",
            "When was the Eiffel Tower completed?",
        ]
    );
    assert!(parse::questions("").is_empty());
}

#[test]
fn merging_outputs() {
    assert_eq!(
        parse::merged_claims(fixture!("merging_full.txt")),
        vec![
            "Paris has a population of about 2 million.",
            "The Seine flows through Paris."
        ],
        "the verification step's bullets are not new claims"
    );
    assert_eq!(
        parse::merged_claims(fixture!("merging_plain.txt")),
        vec![
            "The Louvre is the world's most-visited museum.",
            "The Louvre is located in Paris."
        ]
    );
    assert!(parse::merged_claims(fixture!("merging_none.txt")).is_empty());
    assert!(parse::merged_claims("").is_empty());
}

#[test]
fn graders_on_recorded_answers() {
    let cases: &[(&str, Option<f64>)] = &[
        ("Very good chance", Some(0.8)),
        ("Very good chance (80%)", Some(0.8)),
        ("Almost certain.", Some(1.0)),
        ("almost certain (100%)\n", Some(1.0)),
        ("Confidence: Fairly possible", Some(0.6)),
        ("**Less than even**", Some(0.4)),
        ("Little chance (20%).", Some(0.2)),
        ("No chance", Some(0.0)),
        ("60%", Some(0.6)),
        ("I'm not sure.", None),
        ("", None),
        (
            "No chance (0%)\nLittle chance (20%)\nLess than even (40%)",
            Some(0.0),
        ),
        ("Here is my answer: little chance or less than even", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse::verbalized_confidence(text), *want, "{text:?}");
    }
    for (text, want) in [
        ("Yes", Some(true)),
        ("No.", Some(false)),
        ("yes\n", Some(true)),
        ("NO", Some(false)),
        ("Unsure", None),
    ] {
        assert_eq!(parse::yes_no(text), want, "{text:?}");
    }
    for (text, want) in [
        ("objective", Some(true)),
        ("Subjective", Some(false)),
        ("Objective.", Some(true)),
        ("", None),
    ] {
        assert_eq!(parse::objectivity(text), want, "{text:?}");
    }
}
