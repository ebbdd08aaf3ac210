use serde_json::json;

use super::*;

const R: &str = "Marie Curie was a physicist. She was born in Vienna in 1867.";

fn opts() -> Options {
    Options::default()
}

#[test]
fn spans_given_or_found_mark_the_text_with_the_colour_of_their_score() {
    let units = json!([
        {"unit": "Marie Curie was a physicist.", "score": 0.9, "scorer": "entailment"},
        {"start": 37, "end": 59, "score": 0.1, "scorer": "entailment"}
    ]);
    let m = marks(R, &units).unwrap();
    assert_eq!(m[0].span, Some((0, 28)));
    assert_eq!(m[1].span, Some((37, 59)));
    let html = render(R, &m, &opts());
    assert!(html.starts_with("<div class=\"uq-highlight\""), "{html}");
    let [r, g, b] = colour(0.1);
    assert!(
        html.contains(&format!(
            "class=\"uq-hl uq-unsupported\" data-score=\"0.100000\" data-units=\"1\" \
             style=\"background-color:rgb({r}, {g}, {b});text-decoration:underline double;"
        )),
        "{html}"
    );
    assert!(html.contains(">born in Vienna in 1867</span>."), "{html}");
    assert!(html.contains("class=\"uq-hl uq-supported\""), "{html}");
    assert_eq!(
        render(
            R,
            &m,
            &Options {
                format: Format::Text,
                ..opts()
            }
        ),
        "Marie Curie was a physicist. She was [!born in Vienna in 1867]."
    );
}

#[test]
fn overlapping_units_show_the_lowest_score_and_list_every_unit() {
    let units = json!([
        {"start": 29, "end": 60, "score": 0.8, "scorer": "a", "unit": "She was born in Vienna in 1867."},
        {"start": 37, "end": 59, "score": 0.3, "scorer": "b", "unit": "born in <Vienna> & 1867"}
    ]);
    let m = marks(R, &units).unwrap();
    let p = pieces(R.chars().count(), &m);
    let covered: Vec<&Vec<usize>> = p.iter().map(|(_, _, c)| c).collect();
    assert_eq!(covered, [&vec![], &vec![0], &vec![0, 1], &vec![0]]);
    let html = render(R, &m, &opts());
    // The overlap: the lowest score, both units in the tooltip (lowest first), escaped.
    assert!(
        html.contains("data-score=\"0.300000\" data-units=\"2\""),
        "{html}"
    );
    assert!(
        html.contains("title=\"0.300 b · born in &lt;Vienna&gt; &amp; 1867&#10;0.800 a · She was born in Vienna in 1867.\""),
        "{html}"
    );
    let text = render(
        R,
        &m,
        &Options {
            format: Format::Text,
            ..opts()
        },
    );
    assert_eq!(
        text,
        "Marie Curie was a physicist. She was [?born in Vienna in 1867]."
    ); // 0.8 is not marked
}

#[test]
fn html_in_the_answer_stays_text() {
    let r = "<script>alert(1)</script> is <b>bold</b> & \"quoted\".";
    let m = marks(r, &json!([{"start": 0, "end": 25, "score": 0.1}])).unwrap();
    let html = render(r, &m, &opts());
    assert!(
        !html.contains("<script>") && !html.contains("<b>"),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;</span> is &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;."), "{html}");
}

#[test]
fn unicode_spans_count_characters() {
    let r = "Zoë 🙂 lived in 東京. She liked café.";
    // "lived in 東京." starts at character 6 (the emoji is one character).
    let m = marks(r, &json!([{"start": 6, "end": 18, "score": 0.0}])).unwrap();
    let text = render(
        r,
        &m,
        &Options {
            format: Format::Text,
            ..opts()
        },
    );
    assert_eq!(text, "Zoë 🙂 [!lived in 東京.] She liked café.");
    let found = marks(r, &json!([{"unit": "She liked café.", "score": 0.4}])).unwrap();
    assert_eq!(found[0].span, Some((19, 34)));
}

#[test]
fn units_not_in_the_answer_follow_it() {
    let m = marks(
        R,
        &json!([{"unit": "She played the violin.", "score": 0.1}]),
    )
    .unwrap();
    assert_eq!(m[0].span, None);
    let text = render(
        R,
        &m,
        &Options {
            format: Format::Text,
            ..opts()
        },
    );
    assert_eq!(
        text,
        format!("{R}\n[!] not found in the answer: She played the violin. (0.100)")
    );
    let html = render(R, &m, &opts());
    assert!(html.contains("uq-unplaced") && html.contains(">She played the violin.</span>"));
    // Both null: stored as not placed, not searched again.
    let m = marks(R, &json!([{"unit": "Marie Curie was a physicist.", "start": null, "end": null, "score": 0.5}])).unwrap();
    assert_eq!(m[0].span, None);
}

#[test]
fn colours_run_from_orange_to_purple() {
    let half = Options {
        doubtful: 0.5,
        ..Options::default()
    };
    assert_eq!(colour_at(0.0, &half), [230, 97, 1]);
    assert_eq!(colour_at(0.25, &half), [242, 141, 50]);
    assert_eq!(colour_at(0.4999999, &half), [253, 184, 99]);
    assert_eq!(colour_at(0.5, &half), [178, 171, 210]);
    assert_eq!(colour_at(1.0, &half), [216, 218, 235]);
    // At the default cut (1/3) purple begins.
    assert_eq!(colour(crate::aggregate::DEFAULT_CUT), [178, 171, 210]);
    assert_eq!(colour(0.333), [253, 184, 99]);
    assert_eq!(colour(1.0), [216, 218, 235]);
}

#[test]
fn supported_scores_never_take_the_doubtful_hue() {
    // Orange (red above blue) below the doubtful threshold, purple (blue above red) at or
    // above it, at the default levels and at others.
    for doubtful in [0.5, 0.3, 0.7, 1.0] {
        let o = Options {
            doubtful,
            unsupported: doubtful.min(0.2),
            ..Options::default()
        };
        for i in 0..=1000 {
            let s = i as f64 / 1000.0;
            let [r, _, b] = colour_at(s, &o);
            if s < doubtful {
                assert!(r > b, "{s} at doubtful {doubtful}: {r} {b}");
            } else {
                assert!(b > r, "{s} at doubtful {doubtful}: {r} {b}");
            }
        }
    }
    // A supported sentence at 0.61 (issue 39) is purple, not the orange of 0.49.
    let [r, _, b] = colour(0.61);
    assert!(b > r);
    // The HTML takes the options' levels.
    let html = render(
        R,
        &marks(
            R,
            &json!([{"unit": "Marie Curie was a physicist.", "score": 0.61}]),
        )
        .unwrap(),
        &Options {
            doubtful: 0.7,
            ..Options::default()
        },
    );
    let [r, g, b] = colour_at(
        0.61,
        &Options {
            doubtful: 0.7,
            ..Options::default()
        },
    );
    assert!(
        html.contains(&format!("background-color:rgb({r}, {g}, {b})")),
        "{html}"
    );
    assert!(r > b);
}

#[test]
fn bad_units_and_options_name_the_fix() {
    let err = |v: serde_json::Value| marks(R, &v).unwrap_err();
    assert!(
        err(json!({"a": 1})).starts_with("units_json must be a JSON array of units, got an object")
    );
    assert!(err(json!([{"start": 0, "end": 99, "score": 0.5}]))
        .contains("span 0..99 is outside the response (60 characters)"));
    assert!(err(json!([{"start": 5, "end": 5, "score": 0.5}])).contains("span 5..5"));
    assert!(err(json!([{"start": 0, "end": 5, "score": 1.5}]))
        .contains("units_json[0].score must be a number from 0 to 1"));
    assert!(
        err(json!([{"start": 0, "score": 0.5}])).contains("units_json[0].end must be an integer")
    );
    assert!(err(json!([{"score": 0.5}])).contains("neither start and end nor unit"));
    assert!(err(json!([{"unit": "x"}])).contains("has no score"));
    let o = |v: serde_json::Value| Options::parse(v.as_object().unwrap());
    assert!(o(json!({"doubtful": 2}))
        .unwrap_err()
        .contains("options_json.doubtful must be a number from 0 to 1"));
    assert!(o(json!({"unsupported": 0.6}))
        .unwrap_err()
        .contains("must be at most doubtful"));
    assert!(o(json!({"format": "md"}))
        .unwrap_err()
        .contains("\"html\" or \"text\""));
    assert!(o(json!({"colour": 1}))
        .unwrap_err()
        .contains("unknown key \"colour\""));
    assert_eq!(
        o(json!({"format": "text", "legend": true})).unwrap().format,
        Format::Text
    );
}
