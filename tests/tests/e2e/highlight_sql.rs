//! Spans and highlighted answers (docs/reference.md, "Spans and highlighting"): each unit's
//! place in its answer from `uq_sentences`, `uq_unit_scores`, `uad_claims` and jobs, and
//! `uq_highlight` in both its forms; the report's highlighted answers opened in headless
//! Chromium. The real extension in the stock `/usr/bin/sqlite3`, the real daemon, NLI model and
//! embedded LLM.

use serde_json::Value;
use uq_core::highlight::colour;
use uq_integration::browser::{self, css_rgb};
use uq_integration::*;

/// Accents, CJK and an emoji (one character, four bytes) before the spans that count them.
const UNICODE: &str =
    "Zoë Brontë 🙂 lived in 東京 for years. She ran a café near the station. She was born in 1901.";
const UNICODE_SAMPLES: [&str; 2] = [
    "Zoë Brontë lived in 東京 for years and ran a café near the station. She was born in 1950.",
    "For years Zoë Brontë lived in 東京, where she ran a café near the station; she was born in 1950.",
];

/// An answer that holds HTML, which must stay text.
const HTML_ANSWER: &str =
    "The <b>tag</b> & the <script>alert(1)</script> stayed text. It was 1903.";

fn json_rows(out: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(out)
        .unwrap_or_else(|e| panic!("{e}: {out}"))
        .as_array()
        .unwrap()
        .clone()
}

/// The characters `start..end` of `text`, as SQLite's substr counts them.
fn chars(text: &str, start: i64, end: i64) -> String {
    text.chars()
        .skip(start as usize)
        .take((end - start) as usize)
        .collect()
}

#[test]
fn unit_scores_and_sentences_give_spans_in_characters() {
    let sb = Sandbox::new("hl-spans");
    let out = sb.sqlite_ok(&format!(
        "SELECT json_group_array(json_object('unit', unit, 'start', start, 'end', end, \
           'alignment', alignment, 'same', substr({r}, start + 1, end - start) = unit, \
           'score', score)) \
         FROM uq_unit_scores({r}, {s}, '{{\"scorers\":[\"entailment\"]}}');\n\
         SELECT json_group_array(json_object('sentence', sentence, 'start', start, 'end', end)) \
         FROM uq_sentences({r});",
        r = lit(UNICODE),
        s = json_lit(&UNICODE_SAMPLES),
    ));
    let mut lines = out.lines();
    let rows = json_rows(lines.next().unwrap());
    assert_eq!(rows.len(), 3, "{rows:?}");
    for r in &rows {
        assert_eq!(
            r["same"], 1,
            "substr(response, start + 1, end - start) = unit: {r}"
        );
        assert_eq!(r["alignment"], 1.0, "{r}");
        let (s, e) = (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap());
        assert_eq!(chars(UNICODE, s, e), r["unit"].as_str().unwrap());
    }
    // The second sentence starts after 36 characters (the emoji is one), at byte 45.
    assert_eq!(rows[1]["start"], 36, "{rows:?}");
    assert_eq!(UNICODE.find("She ran").unwrap(), 45);
    let sentences = json_rows(lines.next().unwrap());
    for (s, r) in sentences.iter().zip(&rows) {
        assert_eq!(s["start"], r["start"]);
        assert_eq!(s["end"], r["end"]);
    }
}

#[test]
fn uq_highlight_marks_units_from_a_query_in_both_forms() {
    let sb = Sandbox::new("hl-sql");
    let q = format!(
        "SELECT unit_idx, unit, scorer, score, start, end FROM uq_unit_scores({r}, {s}, \
         '{{\"scorers\":[\"entailment\",\"noncontradiction\"]}}')",
        r = lit(RESPONSE),
        s = json_lit(&[
            "Marie Curie was a physicist and chemist born in Warsaw. She won the Nobel Prize in Physics in 1903.",
            "Born in Warsaw, Marie Curie, a chemist and physicist, won the 1903 Nobel Prize in Physics.",
        ]),
    );
    let out = sb.sqlite_ok(&format!(
        "CREATE TEMP TABLE u AS {q};\n\
         SELECT json_group_array(json_object('unit', unit, 'scorer', scorer, 'score', score)) FROM u;\n\
         SELECT uq_highlight({r}, (SELECT json_group_array(json_object('unit', unit, \
           'start', start, 'end', end, 'score', score, 'scorer', scorer)) FROM u));\n\
         SELECT uq_highlight({r}, unit, score, scorer) FROM u;\n\
         SELECT uq_highlight({r}, unit, score, scorer, '{{\"format\":\"text\",\"doubtful\":0.6}}') FROM u;\n\
         SELECT uq_highlight(NULL, '[]') IS NULL, uq_highlight({r}, unit, score, scorer) IS NULL FROM u WHERE 0;",
        r = lit(RESPONSE),
    ));
    let mut lines = out.lines();
    let units = json_rows(lines.next().unwrap());
    let (scalar, aggregate, text, nulls) = (
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap(),
    );
    // Three sentences, each under two scorers: one mark per sentence, its lowest score, both
    // scorers in its tooltip.
    assert_eq!(scalar.matches("class=\"uq-hl ").count(), 3, "{scalar}");
    assert_eq!(scalar.matches("data-units=\"2\"").count(), 3, "{scalar}");
    for unit in [
        "She was born in Vienna.",
        "Marie Curie was a physicist and chemist.",
    ] {
        let lowest = units
            .iter()
            .filter(|u| u["unit"] == unit)
            .map(|u| u["score"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        let [r, g, b] = colour(lowest);
        let mark = format!(
            "data-score=\"{lowest:.6}\" data-units=\"2\" style=\"background-color:rgb({r}, {g}, {b});"
        );
        assert!(scalar.contains(&mark), "{mark} in {scalar}");
    }
    assert!(scalar.contains("uq-unsupported") && scalar.contains("uq-supported"));
    assert!(
        scalar.contains(">She was born in Vienna.</span></div>"),
        "{scalar}"
    );
    // The aggregate finds the same spans from the unit texts.
    assert_eq!(aggregate, scalar);
    // Text: the contradicted sentence wrapped; the rest as it is.
    assert_eq!(
        text,
        "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. [!She was born in Vienna.]"
    );
    assert_eq!(
        nulls, "1|1",
        "a NULL response, and the aggregate over no rows: NULL"
    );
}

#[test]
fn html_in_an_answer_stays_text() {
    let sb = Sandbox::new("hl-html");
    let out = sb.sqlite_ok(&format!(
        "SELECT uq_highlight({r}, '[{{\"unit\":\"It was 1903.\",\"score\":0.1}},{{\"start\":0,\"end\":14,\"score\":0.9}}]');",
        r = lit(HTML_ANSWER)
    ));
    assert!(!out.contains("<b>") && !out.contains("<script>"), "{out}");
    assert!(
        out.contains("&lt;script&gt;alert(1)&lt;/script&gt; stayed text."),
        "{out}"
    );
    assert!(out.contains(">The &lt;b&gt;tag&lt;/b&gt;</span>"), "{out}");
    assert!(out.contains(">It was 1903.</span>"), "{out}");
}

/// The demo's three claims (examples/demo.sql: SmolLM2 decomposes the answer), their spans
/// against the ones marked by hand.
#[test]
fn demo_claims_are_placed_where_they_were_marked_by_hand() {
    let sb = Sandbox::new("hl-demo");
    let answer = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna in 1867.";
    let samples = json_lit(&[
        "Marie Curie was a physicist and chemist born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.",
        "Born in Warsaw, Marie Curie was a chemist and physicist. In 1903 she won the Nobel Prize in Physics.",
        "Marie Curie, a physicist and chemist from Warsaw, won the 1903 Nobel Prize in Physics.",
    ]);
    let out = sb.sqlite_ok(&format!(
        "SELECT json_group_array(json_object('claim', claim, 'origin', origin, 'start', start, \
           'end', end, 'alignment', alignment)) \
         FROM uad_claims({}, {samples}, '{{\"granularity\":\"claim\",\"scorers\":[\"luq_atomic\"],\"threshold\":0.5}}');",
        lit(answer)
    ));
    let rows = json_rows(&out);
    // Marked by hand: the words of the answer that state each claim.
    let hand = [
        ("Marie Curie was born in 1867.", "born in Vienna in 1867"),
        (
            "Marie Curie was a physicist and chemist.",
            "Marie Curie was a physicist and chemist.",
        ),
        (
            "Marie Curie was a Nobel Prize in Physics.",
            "won the Nobel Prize in Physics",
        ),
    ];
    let claims: Vec<&Value> = rows.iter().filter(|r| r["origin"] == "claim").collect();
    assert_eq!(claims.len(), 3, "the demo's claims changed: {rows:?}");
    for (claim, marked) in hand {
        let r = claims
            .iter()
            .find(|r| r["claim"] == claim)
            .unwrap_or_else(|| panic!("no claim {claim:?} in {rows:?}"));
        let (s, e) = (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap());
        let (hs, he) = {
            let b = answer.find(marked).unwrap();
            let hs = answer[..b].chars().count() as i64;
            (hs, hs + marked.chars().count() as i64)
        };
        let inter = (e.min(he) - s.max(hs)).max(0) as f64;
        let (p, rc) = (inter / (e - s) as f64, inter / (he - hs) as f64);
        let f1 = 2.0 * p * rc / (p + rc).max(1e-9);
        assert!(
            f1 >= 0.8,
            "{claim:?}: aligned {:?}, marked {marked:?}: F1 {f1:.2}",
            chars(answer, s, e)
        );
    }
    // The uncovered sentences are found verbatim.
    for r in rows.iter().filter(|r| r["origin"] == "uncovered_sentence") {
        let (s, e) = (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap());
        assert_eq!(chars(answer, s, e), r["claim"].as_str().unwrap());
    }
}

#[test]
fn a_job_stores_spans_and_the_report_shows_the_least_confident_answers_highlighted() {
    let sb = Sandbox::new("hl-job");
    let db = sb.dir.join("answers.db").display().to_string();
    let answers = [
        (RESPONSE.to_string(), json_lit(&[
            "Marie Curie was a physicist and chemist born in Warsaw. She won the Nobel Prize in Physics in 1903.",
            "Born in Warsaw, Marie Curie, a chemist and physicist, won the 1903 Nobel Prize in Physics.",
        ])),
        (UNICODE.to_string(), json_lit(&UNICODE_SAMPLES)),
        (HTML_ANSWER.to_string(), json_lit(&["The tag and the script stayed text. It was 1950."])),
    ];
    let inserts: Vec<String> = answers
        .iter()
        .enumerate()
        .map(|(i, (a, s))| format!("({}, {}, {s})", i + 1, lit(a)))
        .collect();
    let out = sb.sqlite_on(
        &db,
        &format!(
            "CREATE TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT);\n\
             INSERT INTO answers VALUES {};\n\
             SELECT uq_wait(uq_score_table('answers', '{{\"scorers\":[\"entailment\"]}}'));\n\
             SELECT json_group_array(json_object('unit', u.text, 'start', u.start, 'end', u.end, \
               'alignment', u.alignment, 'same', substr(a.answer, u.start + 1, u.end - u.start) = u.text)) \
             FROM uq_unit u JOIN uq_answer a USING (answer_id);\n\
             SELECT count(*) FROM uq_scored_units WHERE start IS NOT NULL AND end > start;",
            inserts.join(", ")
        ),
    );
    let out = stdout_ok(&out, "job");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("done"));
    let units = json_rows(lines.next().unwrap());
    assert_eq!(units.len(), 3 + 3 + 2, "{units:?}");
    assert!(
        units
            .iter()
            .all(|u| u["same"] == 1 && u["alignment"] == 1.0),
        "{units:?}"
    );
    assert_eq!(lines.next(), Some("8"));

    // The report, opened in Chromium through a same-origin frame: one mark per unit of the
    // highlighted answers, each coloured by its score.
    let report = sb.dir.join("report");
    let r = std::process::Command::new(dist().join("uqd"))
        .args(["report", &db, "--out", &report.display().to_string()])
        .output()
        .unwrap();
    stdout_ok(&r, "uqd report");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<h2>Least confident answers, highlighted</h2>"));
    std::fs::write(
        report.join("check.html"),
        browser::checker_page("index.html"),
    )
    .unwrap();
    let seen = browser::marks(
        &sb.dir.join("chromium-profile"),
        &format!("file://{}", report.join("check.html").display()),
        &["--allow-file-access-from-files"],
    );
    let marks: Vec<&Value> = seen["marks"].as_array().unwrap().iter().collect();
    assert_eq!(marks.len(), 8, "one mark per unit of the 3 answers: {seen}");
    for m in &marks {
        let score: f64 = m["score"].as_str().unwrap().parse().unwrap();
        assert_eq!(m["background"], css_rgb(colour(score)), "{m}");
        // The hue the browser shows: orange (red above blue) below 0.5, purple at or above.
        let rgb: Vec<u32> = m["background"]
            .as_str()
            .unwrap()
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(", ")
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(rgb[0] > rgb[2], score < 0.5, "{m}");
        let level = if score < 0.2 {
            ("uq-unsupported", "double")
        } else if score < 0.5 {
            ("uq-doubtful", "dotted")
        } else {
            ("uq-supported", "solid")
        };
        assert!(m["cls"].as_str().unwrap().ends_with(level.0), "{m}");
        if level.0 != "uq-supported" {
            assert_eq!(m["underline"], level.1, "{m}");
        }
        let text = m["text"].as_str().unwrap();
        assert!(
            units.iter().any(|u| u["unit"] == text),
            "a mark is a whole unit: {text:?}"
        );
    }
    // The contradicted year of the unicode answer is marked as unsupported.
    assert!(
        marks.iter().any(|m| m["text"] == "She was born in 1901."
            && m["cls"].as_str().unwrap().contains("uq-unsupported")),
        "{seen}"
    );
    // HTML in an answer stays text: no element but the marks' own inside a highlight.
    let blocks = seen["highlights"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "{seen}");
    for b in blocks {
        let tags: Vec<&str> = b["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(tags.iter().all(|t| ["SPAN", "DIV"].contains(t)), "{tags:?}");
    }
    assert!(
        blocks.iter().any(|b| b["text"]
            .as_str()
            .unwrap()
            .contains("The <b>tag</b> & the <script>alert(1)</script> stayed text.")),
        "{seen}"
    );
    assert!(
        blocks
            .iter()
            .any(|b| b["text"].as_str().unwrap().starts_with(UNICODE)),
        "{seen}"
    );
    // A screenshot of the report, kept on request (UQ_HIGHLIGHT_SCREENSHOT=FILE).
    if let Ok(keep) = std::env::var("UQ_HIGHLIGHT_SCREENSHOT") {
        browser::run(
            &sb.dir.join("chromium-profile"),
            &[
                format!("--screenshot={keep}"),
                "--window-size=1300,2400".to_string(),
            ],
            &format!("file://{}", report.join("index.html").display()),
        );
    }
}

#[test]
fn claim_alignment_agrees_with_hand_marked_spans_on_factscore() {
    // 219 claims of 20 GPT-4 answers, marked by reading (tests/golden/spans/); no model.
    let data = root().join("../shared/data/graph_uq_factscore_gpt-4.jsonl");
    let out = std::process::Command::new(dist().join("uqd"))
        .args(["bench", "spans", "--data"])
        .arg(&data)
        .arg("--marks")
        .arg(root().join("tests/golden/spans/factscore_gpt-4_20.jsonl"))
        .output()
        .unwrap();
    let line = stdout_ok(&out, "uqd bench spans");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["answers"], 20);
    assert_eq!(v["claims"], 219);
    // Floors under the measured figures (F1 0.87, overlap 0.99): a change that breaks the
    // alignment falls through them.
    assert!(v["char_f1"].as_f64().unwrap() >= 0.8, "{v}");
    assert!(v["overlap"].as_f64().unwrap() >= 0.95, "{v}");
    assert!(v["placed"].as_f64().unwrap() >= 0.95, "{v}");
}

/// Option `legend`: both forms put it under each answer that asks, so a `GROUP BY`'s answers
/// are the same whatever order SQLite computes the groups in (two calls in one query, a
/// correlated subquery, the groups in reverse, a prepared statement run again); the key alone
/// is the scalar form on an empty answer.
#[test]
fn the_legend_is_under_every_answer_that_asks_and_available_alone() {
    let sb = Sandbox::new("hl-legend");
    let rows = "CREATE TABLE u(aid, answer, unit, score, scorer); INSERT INTO u VALUES \
        (1, 'A b. C d.', 'A b.', 0.9, 'e'), (1, 'A b. C d.', 'C d.', 0.1, 'e'), \
        (2, 'E f.', 'E f.', 0.4, 'e'), (3, 'G h.', 'G h.', 0.6, 'e');";
    let legend = r#"'{"legend":true}'"#;
    let has = "(instr(h, 'uq-legend') > 0)";
    let grouped = |order: &str| {
        format!(
            "SELECT aid, uq_highlight(answer, unit, score, scorer, {legend}) AS h FROM u \
             GROUP BY aid ORDER BY aid {order}"
        )
    };
    let out = sb.sqlite_ok(&format!(
        "{rows}
         SELECT aid, {has} FROM ({});
         SELECT group_concat(aid || ':' || {has}, ' ') FROM (SELECT aid, uq_highlight(answer,
           json_group_array(json_object('unit', unit, 'score', score)), {legend}) AS h
           FROM u GROUP BY aid ORDER BY aid);
         SELECT group_concat(aid || ':' || {has} || (instr(k, 'uq-legend') > 0), ' ') FROM (SELECT aid,
           uq_highlight(answer, unit, score, scorer, {legend}) AS h,
           uq_highlight(answer, unit, score, scorer, '{{\"legend\":true,\"doubtful\":0.7}}') AS k
           FROM u GROUP BY aid ORDER BY aid);
         SELECT group_concat(aid || ':' || {has}, ' ') FROM (SELECT a.aid, (SELECT uq_highlight(
           answer, unit, score, scorer, {legend}) FROM u WHERE u.aid = a.aid) AS h
           FROM (SELECT DISTINCT aid FROM u ORDER BY aid) a);
         SELECT group_concat(aid || ':' || {has}, ' ') FROM (SELECT aid, uq_highlight(answer, unit,
           score, scorer) AS h FROM u GROUP BY aid ORDER BY aid);
         SELECT count(*) FROM ({}) x JOIN ({}) y USING (aid) WHERE x.h = y.h;
         SELECT (SELECT uq_highlight(answer, unit, score, scorer, {legend}) FROM u WHERE aid = 1)
           = uq_highlight('A b. C d.', '[{{\"unit\":\"A b.\",\"score\":0.9,\"scorer\":\"e\"}},
               {{\"unit\":\"C d.\",\"score\":0.1,\"scorer\":\"e\"}}]', {legend});
         SELECT uq_highlight('', '[]', {legend});",
        grouped(""),
        grouped(""),
        grouped("DESC")
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..8],
        [
            "1|1",
            "2|1",
            "3|1",
            "1:1 2:1 3:1",
            "1:11 2:11 3:11",
            "1:1 2:1 3:1",
            "1:0 2:0 3:0",
            "3",
        ],
        "aggregate; scalar; two aggregate calls; a correlated subquery; no legend; the groups in \
         either order alike"
    );
    assert_eq!(
        lines[8], "1",
        "the aggregate's answer as the scalar form writes it"
    );
    // The key alone: the levels' chips, no mark.
    let key = lines[9..].join("\n");
    assert!(
        key.starts_with("<div class=\"uq-highlight\"")
            && key.contains("class=\"uq-legend\"")
            && key.matches("class=\"uq-key ").count() == 3
            && !key.contains("uq-hl "),
        "{key}"
    );
    // A prepared statement run again: the same answers each time.
    let out = sb.python_ok(&format!(
        r#"
conn.executescript("""{rows}""")
q = "SELECT group_concat({has}, '') FROM (SELECT uq_highlight(answer, unit, score, scorer, ?) AS h FROM u GROUP BY aid ORDER BY aid)"
print([conn.execute(q, ('{{"legend":true}}',)).fetchone()[0] for _ in range(3)])
"#
    ));
    assert_eq!(out, "['111', '111', '111']");
}
