use super::*;

fn labels(a: &Aligned) -> Vec<Option<bool>> {
    a.units.iter().map(|u| u.map(|x| x.0)).collect()
}

fn rules(a: &Aligned) -> Vec<Option<Rule>> {
    a.units.iter().map(|u| u.map(|x| x.1)).collect()
}

#[test]
fn normalise_collapses_space_case_and_trailing_punctuation() {
    assert_eq!(
        normalise("  She  was\tborn in Vienna. "),
        "she was born in vienna"
    );
    assert_eq!(normalise("He said “yes”!”"), "he said “yes");
    assert_eq!(normalise("Dr. Smith, M.D."), "dr. smith, m.d");
    assert_eq!(normalise(" ... "), "");
    assert_eq!(
        words("Curie's 1903 Nobel-Prize."),
        ["curie", "s", "1903", "nobel", "prize"]
    );
}

#[test]
fn exact_text_matches_in_order_despite_case_space_and_punctuation() {
    let units = ["Marie Curie was a physicist.", "She won it.", "She won it."];
    let sentences = [
        ("marie curie  was a physicist", true),
        ("She won it!", false),
        ("She won it.", true),
    ];
    let a = by_text(&units, &sentences);
    assert_eq!(labels(&a), [Some(true), Some(false), Some(true)]);
    assert_eq!(rules(&a), [Some(Rule::Text); 3]);
    assert_eq!(a.unmatched_sentences, 0);
}

#[test]
fn units_inside_one_labelled_sentence_take_its_label() {
    // the annotator's one sentence is uqlite's two
    let units = [
        "She was born in Warsaw.",
        "She moved to Paris in 1891.",
        "She died.",
    ];
    let sentences = [
        ("She was born in Warsaw; she moved to Paris in 1891.", false),
        ("She died.", true),
    ];
    let a = by_text(&units, &sentences);
    assert_eq!(labels(&a), [Some(false), Some(false), Some(true)]);
    assert_eq!(
        rules(&a),
        [Some(Rule::Inside), Some(Rule::Inside), Some(Rule::Text)]
    );
    assert_eq!(a.unmatched_sentences, 0);
}

#[test]
fn a_unit_spanning_several_sentences_is_false_if_any_is() {
    // uqlite's one sentence is the annotator's two
    let units = [
        "She was born in Vienna, and she died in Paris.",
        "She won two Nobel Prizes; she taught at the Sorbonne.",
    ];
    let sentences = [
        ("She was born in Vienna,", false),
        ("and she died in Paris.", true),
        ("She won two Nobel Prizes;", true),
        ("she taught at the Sorbonne.", true),
    ];
    let a = by_text(&units, &sentences);
    assert_eq!(labels(&a), [Some(false), Some(true)]);
    assert_eq!(rules(&a), [Some(Rule::Spanning); 2]);
    assert_eq!(a.unmatched_sentences, 0);
}

#[test]
fn unmatched_units_and_sentences_are_counted() {
    let units = ["A first thing.", "Something else entirely.", "A third."];
    let sentences = [
        ("A first thing.", true),
        ("A third.", false),
        ("An extra sentence no unit has.", true),
    ];
    let a = by_text(&units, &sentences);
    assert_eq!(labels(&a), [Some(true), None, Some(false)]);
    assert_eq!(a.unmatched_sentences, 1);
    // a labelled sentence matched by text is not reused by containment
    let a = by_text(
        &["A first thing.", "first thing"],
        &[("A first thing.", true)],
    );
    assert_eq!(labels(&a), [Some(true), None]);
    let mut c = Counts::default();
    c.add(&by_text(&units, &sentences), 3);
    c.add(
        &by_text(
            &["One. Two.", "Three"],
            &[("One.", true), ("Two.", true), ("Three and four.", false)],
        ),
        3,
    );
    assert_eq!(
        (c.text, c.inside, c.spanning, c.index, c.units_unmatched),
        (2, 1, 1, 0, 1)
    );
    assert_eq!((c.matched(), c.units(), c.containment()), (4, 5, 2));
    assert_eq!((c.sentences, c.sentences_unmatched), (6, 1));
}

#[test]
fn index_fallback_matches_positions() {
    let a = by_index(
        &[0, 1, 2, 3],
        &[(0, true), (1, false), (3, true), (7, false)],
    );
    assert_eq!(labels(&a), [Some(true), Some(false), None, Some(true)]);
    assert_eq!(rules(&a)[0], Some(Rule::Index));
    assert_eq!(a.unmatched_sentences, 1);
    let mut c = Counts::default();
    c.add(&a, 4);
    assert_eq!(
        (c.index, c.units_unmatched, c.sentences_unmatched),
        (3, 1, 1)
    );
}

#[test]
fn a_sentence_a_unit_spans_is_not_reused_by_a_fragment() {
    // uqlite's last unit is a truncated fragment of a sentence the first unit spans
    let units = ["He was born in 1900. He was a poet.", "He was a"];
    let sentences = [("He was born in 1900.", true), ("He was a poet.", false)];
    let a = by_text(&units, &sentences);
    assert_eq!(rules(&a), [Some(Rule::Spanning), None]);
    assert_eq!(labels(&a), [Some(false), None]);
    assert_eq!(a.unmatched_sentences, 0);
}
