use super::*;

fn units(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The marked text of a span, counted in characters as SQLite's substr.
fn marked(response: &str, s: &Span) -> String {
    response
        .chars()
        .skip(s.start)
        .take(s.end - s.start)
        .collect()
}

const CURIE: &str = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics \
                     in 1903. She was born in Vienna in 1867.";

#[test]
fn sentences_get_their_exact_spans_with_alignment_1() {
    let sents = crate::decompose::split_sentences(CURIE);
    let spans = unit_spans(CURIE, &sents);
    for (s, span) in sents.iter().zip(&spans) {
        let span = span.unwrap();
        assert_eq!(&marked(CURIE, &span), s);
        assert_eq!(span.alignment, 1.0);
    }
}

#[test]
fn the_demo_claims_are_aligned_to_the_words_that_state_them() {
    let claims = units(&[
        "Marie Curie was born in 1867.",
        "Marie Curie was a physicist and chemist.",
        "Marie Curie was a Nobel Prize in Physics.",
    ]);
    let spans = unit_spans(CURIE, &claims);
    let text: Vec<String> = spans.iter().map(|s| marked(CURIE, &s.unwrap())).collect();
    assert_eq!(text[0], "born in Vienna in 1867");
    assert_eq!(text[1], "Marie Curie was a physicist and chemist.");
    assert_eq!(spans[1].unwrap().alignment, 1.0);
    assert_eq!(text[2], "Nobel Prize in Physics");
    // born + 1867 carry all but the entity's small weight.
    let a = spans[0].unwrap().alignment;
    assert!(a > 0.7 && a < 1.0, "{a}");
}

#[test]
fn a_claim_that_matches_nothing_or_only_its_entity_gets_no_span() {
    let claims = units(&[
        "Marie Curie played the violin in an orchestra.",
        "Marie Curie was a physicist.",
        "Marie Curie was born in Vienna.",
    ]);
    let spans = unit_spans(CURIE, &claims);
    assert_eq!(spans[0], None, "{spans:?}");
    assert!(spans[1].is_some());
}

#[test]
fn repeated_sentences_keep_their_order() {
    let r = "It rained. It rained. Then the sun came out.";
    let sents = crate::decompose::split_sentences(r);
    let spans = unit_spans(r, &sents);
    assert_eq!(spans[0].unwrap().start, 0);
    assert_eq!(spans[1].unwrap().start, 11);
    assert_eq!(marked(r, &spans[2].unwrap()), "Then the sun came out.");
}

#[test]
fn spans_count_characters_not_bytes() {
    let r = "Zoë Brontë wrote poems 🙂. 東京に住んでいた。 She lived in Paris with her café owner friend.";
    let sents = crate::decompose::split_sentences(r);
    let spans = unit_spans(r, &sents);
    for (s, span) in sents.iter().zip(&spans) {
        assert_eq!(&marked(r, &span.unwrap()), s);
    }
    let claim = units(&["Zoë Brontë lived in Paris.", "Zoë Brontë wrote poems."]);
    let spans = unit_spans(r, &claim);
    assert_eq!(marked(r, &spans[0].unwrap()), "lived in Paris");
    assert_eq!(marked(r, &spans[1].unwrap()), "Zoë Brontë wrote poems");
    // The emoji is one character: the span of "lived in Paris" starts after it.
    let start = r.find("lived").unwrap();
    assert_eq!(spans[0].unwrap().start, r[..start].chars().count());
}

#[test]
fn words_match_after_suffix_stripping_not_across_synonyms() {
    assert_eq!(normalise("Awards"), "award");
    assert_eq!(normalise("studies"), "study");
    assert_eq!(normalise("played"), "play");
    assert_eq!(normalise("Curie's"), "curie");
    assert_eq!(normalise("class"), "class");
    assert_eq!(normalise("was"), "was");
    let r = "He received several awards for his studies of birds.";
    let spans = unit_spans(r, &units(&["He was awarded for studying birds."]));
    // award(ed)→"award", studying→"study": both match; birds→"bird".
    assert_eq!(
        marked(r, &spans[0].unwrap()),
        "awards for his studies of birds"
    );
}

#[test]
fn empty_units_and_responses_give_no_span() {
    assert_eq!(unit_spans("", &units(&["A claim."])), vec![None]);
    assert_eq!(
        unit_spans("Some text.", &units(&["", "the of"])),
        vec![None, None]
    );
}

#[test]
fn a_single_claim_is_placed_on_what_it_says_not_on_its_subject() {
    // With one unit every word has df 1: the subject's lower weight decides.
    let spans = unit_spans(CURIE, &units(&["Marie Curie was born in 1867."]));
    assert_eq!(marked(CURIE, &spans[0].unwrap()), "born in Vienna in 1867");
}

#[test]
fn verbatim_matches_stop_at_word_boundaries() {
    let r = "He wondered. He won.";
    let spans = unit_spans(r, &units(&["He won."]));
    assert_eq!(marked(r, &spans[0].unwrap()), "He won.");
    let spans = unit_spans("He wondered about it.", &units(&["He won"]));
    assert_ne!(spans[0].map(|s| s.alignment), Some(1.0), "{spans:?}");
}

#[test]
fn spans_of_a_long_text_take_linear_time() {
    // 40,000 sentences (0.9 MB, with multi-byte characters): each sentence found once, in order.
    let text: String = (0..40_000)
        .map(|i| format!("Zoë wrote poem {i}. "))
        .collect();
    let sents = crate::decompose::split_sentences(&text);
    let t = std::time::Instant::now();
    let spans = unit_spans(&text, &sents);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    let last = spans.last().unwrap().unwrap();
    assert_eq!(&marked(&text, &last), sents.last().unwrap());
    let at = text.find("Zoë wrote poem 12345.").unwrap();
    assert_eq!(spans[12_345].unwrap().start, text[..at].chars().count());
}
