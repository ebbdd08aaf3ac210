//! Grounded checking from SQL (docs/reference.md, "Grounded checking"): the grounded scorers
//! check each unit of an answer against the user's sources (a text, a JSON array of passages,
//! or an FTS5 table of the caller's own database, searched by the extension on its connection)
//! instead of sampled answers. The real extension in the stock `/usr/bin/sqlite3` CLI and
//! `/usr/bin/python3`, against the real daemon and NLI model.

use serde_json::{json, Value};
use uq_integration::*;

/// The grounded scorers that need no samples.
const GROUNDED: [&str; 2] = ["grounded_entailment", "grounded_noncontradiction"];

/// A biography of four sentences: each unit below shares content words with the first only.
const BIO: &str = "Marie Curie was born in Warsaw in 1867. The weather in Poland is cold in winter. \
                   She moved to Paris in 1891 to study physics at the Sorbonne. Rivers freeze every January.";
const BIO_FIRST: &str = "Marie Curie was born in Warsaw in 1867.";
/// Supported by BIO_FIRST, then contradicted by it.
const SUPPORTED: &str = "Marie Curie was born in Warsaw.";
const CONTRADICTED: &str = "Marie Curie was born in Berlin.";

/// Passages about different people, for an FTS5 table (rowids 1, 2, 3). They share no
/// content word: the small NLI model reads "X was born in A" as contradicting "Y was born in B",
/// so a passage about someone else that shares the words of a unit may decide it (see
/// `uq_core::score::grounded::check`).
const PEOPLE: [&str; 3] = [
    "Marie Curie discovered polonium and radium. She won two Nobel Prizes.",
    "Albert Einstein was born in Ulm in 1879. He developed the theory of relativity.",
    "Isaac Newton formulated three laws of motion. He studied optics at Cambridge.",
];

/// `CREATE VIRTUAL TABLE docs USING fts5(body)` holding `passages` (rowids from 1).
fn fts_docs(passages: &[&str]) -> String {
    let values: Vec<String> = passages.iter().map(|p| format!("({})", lit(p))).collect();
    format!(
        "CREATE VIRTUAL TABLE docs USING fts5(body);\nINSERT INTO docs(body) VALUES {};\n",
        values.join(", ")
    )
}

/// The rows of `uq_unit_scores(response, samples, options)` as JSON objects (`unit_idx`,
/// `unit`, `scorer`, `score`, `evidence` parsed, and `premise`: the text `premise_sql` gives
/// for the row, where `s.evidence` is the row's evidence), in unit then scorer order, from
/// one statement after `setup`.
fn unit_rows(
    sb: &Sandbox,
    setup: &str,
    response: &str,
    samples: &str,
    options: &Value,
    premise_sql: &str,
) -> Vec<Value> {
    let sql = format!(
        "{setup}SELECT json_group_array(json_object('unit_idx', unit_idx, 'unit', unit, \
           'scorer', scorer, 'score', score, 'evidence', json(evidence), 'premise', {premise_sql})) \
         FROM (SELECT * FROM uq_unit_scores({}, {samples}, {}) ORDER BY unit_idx, scorer) s;",
        lit(response),
        lit(&options.to_string()),
    );
    let out = sb.sqlite_ok(&sql);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v.as_array().expect("an array").clone()
}

/// The premise text of a row whose passage is passage `i` of `passages` (its character span
/// `start..end`, read with SQLite's `substr`).
fn given_premise(passages: &[&str]) -> String {
    let arms: Vec<String> = passages
        .iter()
        .enumerate()
        .map(|(i, p)| format!("WHEN {i} THEN {}", lit(p)))
        .collect();
    format!(
        "substr(CASE json_extract(s.evidence, '$.passage') {} END, \
           json_extract(s.evidence, '$.start') + 1, \
           json_extract(s.evidence, '$.end') - json_extract(s.evidence, '$.start'))",
        arms.join(" ")
    )
}

/// The premise text of a row whose passage is a row of the FTS5 table `docs` (by rowid).
const FTS_PREMISE: &str = "(SELECT substr(body, json_extract(s.evidence, '$.start') + 1, \
      json_extract(s.evidence, '$.end') - json_extract(s.evidence, '$.start')) \
    FROM docs WHERE rowid = CAST(json_extract(s.evidence, '$.passage_id') AS INTEGER))";

/// The row of unit `unit_idx` and `scorer`.
fn row<'a>(rows: &'a [Value], unit_idx: u64, scorer: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["unit_idx"] == unit_idx && r["scorer"] == scorer)
        .unwrap_or_else(|| panic!("no row for unit {unit_idx} and {scorer}: {rows:#?}"))
}

fn score(r: &Value) -> f64 {
    r["score"]
        .as_f64()
        .unwrap_or_else(|| panic!("no score: {r}"))
}

/// The message of an error the CLI printed for a script (`Runtime error near line N: …`).
fn message(stderr: &str) -> String {
    let line = stderr.trim();
    match line.split_once(": ") {
        Some((head, rest)) if head.starts_with("Runtime error near line") => rest.to_string(),
        _ => line.to_string(),
    }
}

/// The `last score notes` line of `uq_debug()` in `out`.
fn notes_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("last score notes: "))
        .unwrap_or_else(|| panic!("no notes line in {out}"))
}

/// Checks the evidence of a unit the sources decide: its verdict, and that its span in the
/// passage covers the sentence `premise` (exactly that sentence with `"top_k": 1`: see
/// [`assert_premise`]).
fn assert_decided(r: &Value, verdict: &str, premise: &str) {
    let e = &r["evidence"];
    assert_eq!(e["decided_by"], "source", "{r}");
    assert_eq!(e["verdict"], verdict, "{r}");
    for key in ["passage", "start", "end", "entailment", "contradiction"] {
        assert!(e[key].is_number(), "evidence lacks {key}: {r}");
    }
    let span = r["premise"].as_str().unwrap_or_default();
    assert!(
        span.contains(premise),
        "the span start..end covers the premise: {r}"
    );
}

/// The span start..end of the row's passage is exactly `premise`.
fn assert_premise(r: &Value, premise: &str) {
    assert_eq!(
        r["premise"], premise,
        "the span start..end is the premise: {r}"
    );
}

#[test]
fn grounded_scorers_check_units_against_given_sources() {
    let sb = Sandbox::new("grounded-given");
    let response = format!("{SUPPORTED} {CONTRADICTED}");
    // Sources as one text, samples NULL.
    let options = json!({"scorers": GROUNDED, "sources": BIO});
    let rows = unit_rows(&sb, "", &response, "NULL", &options, &given_premise(&[BIO]));
    assert_eq!(rows.len(), 4, "2 units x 2 scorers: {rows:#?}");
    let (sup, con) = (row(&rows, 0, GROUNDED[0]), row(&rows, 1, GROUNDED[0]));
    assert_eq!(sup["unit"], SUPPORTED);
    assert!(score(sup) > 0.5, "the source states it: {sup}");
    assert!(score(con) < 0.5, "the source contradicts it: {con}");
    assert!(score(row(&rows, 0, GROUNDED[1])) > 0.5, "{rows:#?}");
    assert!(score(row(&rows, 1, GROUNDED[1])) < 0.5, "{rows:#?}");
    assert_decided(sup, "supported", BIO_FIRST);
    assert_decided(con, "contradicted", BIO_FIRST);
    assert_eq!(sup["evidence"]["passage"], 0);
    assert!(
        sup["evidence"].get("passage_id").is_none(),
        "a text has no id: {sup}"
    );

    // One premise sentence per unit (top_k 1): substr(source, start + 1, end - start) is the
    // sentence; a later one starts inside.
    let options = json!({"scorers": ["grounded_entailment"], "sources": BIO,
                         "source_premise": {"top_k": 1}});
    let rows = unit_rows(
        &sb,
        "",
        &format!("{response} Curie moved to Paris in 1891 to study physics."),
        "'[]'",
        &options,
        &given_premise(&[BIO]),
    );
    assert_premise(row(&rows, 0, "grounded_entailment"), BIO_FIRST);
    assert_premise(row(&rows, 1, "grounded_entailment"), BIO_FIRST);
    let r = row(&rows, 2, "grounded_entailment");
    assert_premise(
        r,
        "She moved to Paris in 1891 to study physics at the Sorbonne.",
    );
    assert_eq!(r["evidence"]["start"], 81, "{r}");

    // Sources as a JSON array of a text and an {"id","text"} object: the passage's index and id.
    let passages = ["Rivers freeze every January.", BIO];
    let options = json!({"scorers": GROUNDED,
                         "sources": [passages[0], {"id": "bio", "text": passages[1]}],
                         "source_premise": {"top_k": 1}});
    let rows = unit_rows(
        &sb,
        "",
        &response,
        "NULL",
        &options,
        &given_premise(&passages),
    );
    let (sup, con) = (row(&rows, 0, GROUNDED[0]), row(&rows, 1, GROUNDED[0]));
    assert!(score(sup) > 0.5 && score(con) < 0.5, "{rows:#?}");
    assert_decided(sup, "supported", BIO_FIRST);
    assert_decided(con, "contradicted", BIO_FIRST);
    assert_premise(sup, BIO_FIRST);
    assert_premise(con, BIO_FIRST);
    assert_eq!(sup["evidence"]["passage"], 1, "{sup}");
    assert_eq!(sup["evidence"]["passage_id"], "bio", "{sup}");

    // The other scorers have no evidence (NULL), and still need their samples.
    let out = sb.sqlite_ok(&format!(
        "SELECT count(*), count(evidence) FROM uq_unit_scores({}, {}, '{{\"scorers\":[\"entailment\"]}}');",
        lit(&response),
        json_lit(&[BIO])
    ));
    assert_eq!(out, "2|0");
    let e = message(&sb.sqlite_err(&format!(
        "SELECT * FROM uq_unit_scores({}, NULL, '{{\"scorers\":[\"entailment\",\"grounded_entailment\"],\"sources\":\"x\"}}');",
        lit(&response)
    )));
    assert_eq!(
        e,
        r#"uq_unit_scores: samples_json is NULL, but scorer entailment compares the answer with sampled answers: pass a JSON array of them, e.g. '["sampled answer 1","sampled answer 2"]'"#.to_string()
            + r#", or check the answer against sources without samples: "scorers":["grounded_entailment"] with option sources, e.g. "sources":{"fts":"docs","k":5}"#
    );
    // `evidence` is the 7th column, then the unit's span, before the hidden ones.
    let cols = sb.sqlite_ok(
        "SELECT group_concat(name, ',') FROM pragma_table_xinfo('uq_unit_scores') WHERE hidden = 0;",
    );
    assert_eq!(
        cols,
        "unit_idx,unit,scorer,score,origin,calibrated,evidence,start,end,alignment"
    );
}

#[test]
fn fts_sources_retrieve_the_right_passage_in_sqlite3_and_python() {
    let sb = Sandbox::new("grounded-fts");
    let setup = fts_docs(&PEOPLE);
    let options = json!({"scorers": GROUNDED, "sources": {"fts": "docs", "k": 3}});
    let response = "Albert Einstein was born in Ulm. Marie Curie discovered radium.";
    let rows = unit_rows(&sb, &setup, response, "NULL", &options, FTS_PREMISE);
    assert_eq!(rows.len(), 4, "{rows:#?}");
    let (einstein, curie) = (row(&rows, 0, GROUNDED[0]), row(&rows, 1, GROUNDED[0]));
    assert_eq!(einstein["evidence"]["passage_id"], "2", "{einstein}");
    assert_eq!(curie["evidence"]["passage_id"], "1", "{curie}");
    assert!(score(einstein) > 0.5 && score(curie) > 0.5, "{rows:#?}");
    assert_decided(einstein, "supported", PEOPLE[1]);
    assert_decided(curie, "supported", PEOPLE[0]);
    let rows = unit_rows(
        &sb,
        &setup,
        "Marie Curie never won a Nobel Prize.",
        "NULL",
        &options,
        FTS_PREMISE,
    );
    let never = row(&rows, 0, GROUNDED[0]);
    assert_eq!(never["evidence"]["passage_id"], "1", "{never}");
    assert!(score(never) < 0.5, "{never}");
    assert!(score(row(&rows, 0, GROUNDED[1])) < 0.5, "{rows:#?}");
    assert_decided(never, "contradicted", PEOPLE[0]);
    // Other columns and per-unit queries: the same passages.
    let options = json!({"scorers": ["grounded_entailment"],
                         "sources": {"fts": "docs", "column": "BODY", "k": 1, "per": "unit"}});
    let rows = unit_rows(&sb, &setup, response, "'[]'", &options, FTS_PREMISE);
    assert_eq!(
        row(&rows, 0, "grounded_entailment")["evidence"]["passage_id"],
        "2"
    );
    assert_eq!(
        row(&rows, 1, "grounded_entailment")["evidence"]["passage_id"],
        "1"
    );

    // response_confidence retrieves too.
    let out = sb.sqlite_ok(&format!(
        "{setup}SELECT response_confidence('Marie Curie won two Nobel Prizes.', NULL, \
           '{{\"scorers\":[\"grounded_entailment\"],\"sources\":{{\"fts\":\"docs\"}}}}') > 0.5;"
    ));
    assert_eq!(out, "1");

    // The same from Python's sqlite3 module, on a file database with its own table.
    let db = sb.dir.join("docs.db").display().to_string();
    let out = sb.python_ok(&format!(
        r#"
db = sqlite3.connect({db:?})
db.enable_load_extension(True)
db.load_extension(EXT)
db.execute("CREATE VIRTUAL TABLE passages USING fts5(title, text)")
people = {people}
for i, p in enumerate(people):
    db.execute("INSERT INTO passages(rowid, title, text) VALUES (?, ?, ?)", (10 * (i + 1), "p%d" % i, p))
db.commit()
opts = json.dumps({{"scorers": ["grounded_entailment"], "sources": {{"fts": "passages", "column": "text", "k": 2}}}})
rows = db.execute("SELECT unit_idx, score, evidence FROM uq_unit_scores(?, ?, ?) ORDER BY unit_idx",
                  ("Isaac Newton studied optics at Cambridge. Marie Curie discovered radium.", None, opts)).fetchall()
print(json.dumps([[u, s, json.loads(e)] for u, s, e in rows]))
"#,
        people = serde_json::to_string(&PEOPLE).unwrap()
    ));
    let rows: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "{rows}");
    assert_eq!(rows[0][2]["passage_id"], "30", "Newton's row: {rows}");
    assert_eq!(rows[1][2]["passage_id"], "10", "Curie's row: {rows}");
    assert!(rows[0][1].as_f64().unwrap() > 0.5, "{rows}");
    assert!(rows[1][1].as_f64().unwrap() > 0.5, "{rows}");
}

#[test]
fn fts_and_sources_errors_name_the_fix() {
    let sb = Sandbox::new("grounded-errors");
    let setup = format!("{}CREATE TABLE plain(body TEXT);\n", fts_docs(&PEOPLE));
    let call = |sources: &str| {
        format!(
            "{setup}SELECT * FROM uq_unit_scores('Albert Einstein was born in Ulm.', NULL, \
               '{{\"scorers\":[\"grounded_entailment\"],\"sources\":{sources}}}');"
        )
    };
    let cases: &[(&str, &str)] = &[
        (
            r#"{"fts":"nope"}"#,
            r#"uq_unit_scores: option sources.fts: there is no table "nope" in this database: create an FTS5 table of the passages, e.g. CREATE VIRTUAL TABLE "nope" USING fts5(body); INSERT INTO "nope" (body) VALUES ('…')"#,
        ),
        (
            r#"{"fts":"plain"}"#,
            r#"uq_unit_scores: option sources.fts: table "plain" is not an FTS5 table, so it has no full-text index: index it, e.g. CREATE VIRTUAL TABLE "plain_fts" USING fts5(body, content="plain"); INSERT INTO "plain_fts"("plain_fts") VALUES('rebuild'); and name that table"#,
        ),
        (
            r#"{"fts":"docs","column":"text"}"#,
            r#"uq_unit_scores: option sources.column: the FTS5 table "docs" has no column "text": its columns are body"#,
        ),
        (
            r#"{"fts":""}"#,
            r#"uq_unit_scores: option sources.fts must be a non-empty table or column name, e.g. "sources":{"fts":"docs","column":"body","k":5}; got a string"#,
        ),
        (
            r#"{"fts":"docs","k":0}"#,
            r#"uq_unit_scores: option sources.k must be an integer from 1 to 100 (passages retrieved), e.g. "sources":{"fts":"docs","column":"body","k":5}; got 0"#,
        ),
        (
            r#"{"fts":"docs","per":"doc"}"#,
            r#"uq_unit_scores: option sources.per must be "answer" (one query from the whole answer) or "unit" (one per unit); got "doc""#,
        ),
        (
            r#"{"fts":"docs","top":3}"#,
            r#"uq_unit_scores: option sources: unknown key "top"; valid keys are fts, column, k, per, rerank, e.g. "sources":{"fts":"docs","column":"body","k":5}"#,
        ),
        (
            "5",
            r#"uq_unit_scores: option sources must be a text, a JSON array of passages or {"fts": table}, e.g. "sources":["First passage.","Second passage."]; got a number"#,
        ),
        (
            r#"{"table":"docs"}"#,
            r#"uq_unit_scores: option sources: an object names an FTS5 table to retrieve from, e.g. "sources":{"fts":"docs","k":5}; to pass passages use a text or an array, e.g. "sources":["First passage.","Second passage."]"#,
        ),
        (
            r#"["a",2]"#,
            r#"uq_unit_scores: option sources[1] is a number: each passage must be a text or {"id":"doc-1","text":"…"}, e.g. "sources":["First passage.","Second passage."]"#,
        ),
        (
            r#"[{"id":"x"}]"#,
            r#"uq_unit_scores: option sources[0] is an object without a text: each passage must be a text or {"id":"doc-1","text":"…"}, e.g. "sources":["First passage.","Second passage."]"#,
        ),
    ];
    for (sources, want) in cases {
        let sql = call(sources);
        assert_eq!(&message(&sb.sqlite_err(&sql)), want, "sources = {sources}");
    }
    // The other functions name themselves.
    let e = message(&sb.sqlite_err(&format!(
        "{setup}SELECT response_confidence('A b.', NULL, '{{\"scorers\":[\"grounded_entailment\"],\"sources\":{{\"fts\":\"plain\"}}}}');"
    )));
    assert!(
        e.starts_with(
            "response_confidence: option sources.fts: table \"plain\" is not an FTS5 table"
        ),
        "{e}"
    );
    let e = message(&sb.sqlite_err(&format!(
        "{setup}SELECT uad_filter('A b.', NULL, '{{\"uad_scorer\":\"grounded_fallback\",\"units\":[\"A b.\"],\"sources\":{{\"fts\":\"nope\"}}}}');"
    )));
    assert!(
        e.starts_with("uad_filter: option sources.fts: there is no table \"nope\""),
        "{e}"
    );
    // A grounded scorer without sources, and sources without one.
    let e = message(&sb.sqlite_err(
        "SELECT * FROM uq_unit_scores('A b.', NULL, '{\"scorers\":[\"grounded_entailment\"]}');",
    ));
    assert_eq!(
        e,
        r#"uq_unit_scores: scorer grounded_entailment checks units against sources: pass them as option sources (a text, a JSON array of passages, or an FTS5 table), e.g. "sources":["First passage.","Second passage."] or "sources":{"fts":"docs","k":5} (in a job, a column of them: "sources_column":"context")"#
    );
    let e = message(&sb.sqlite_err(
        "SELECT * FROM uq_unit_scores('A b.', '[\"A b.\"]', '{\"sources\":\"A b.\"}');",
    ));
    assert_eq!(
        e,
        r#"uq_unit_scores: option sources is given but no grounded scorer is used: add one to scorers, e.g. "scorers":["grounded_entailment"], or drop sources"#
    );
    // uq_fts_query takes text.
    let e = message(&sb.sqlite_err("SELECT uq_fts_query(3);"));
    assert_eq!(
        e,
        "uq_fts_query: text must be TEXT, got INTEGER; pass text (or CAST(text AS TEXT))"
    );
}

#[test]
fn a_query_that_finds_nothing_is_a_note_not_an_error() {
    let sb = Sandbox::new("grounded-silent");
    let setup = fts_docs(&PEOPLE);
    let out = sb.sqlite_ok(&format!(
        "{setup}SELECT unit_idx || '|' || scorer || '|' || json_extract(evidence, '$.verdict') \
           FROM uq_unit_scores('Zebras gallop across the savanna.', NULL, \
             '{{\"scorers\":[\"grounded_entailment\",\"grounded_noncontradiction\"],\"sources\":{{\"fts\":\"docs\"}}}}');
         SELECT uq_debug();"
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "0|grounded_entailment|silent", "{out}");
    assert_eq!(lines[1], "0|grounded_noncontradiction|silent", "{out}");
    // The retrieval's note follows the daemon's.
    let notes = notes_line(&out);
    assert!(
        notes.ends_with(
            r#"sources.fts: no row of "docs" matches the answer; the sources are silent on it"#
        ),
        "{out}"
    );
    // Per unit: the note names the unit; the other unit still finds its passage.
    let out = sb.sqlite_ok(&format!(
        "{setup}SELECT unit_idx || '|' || json_extract(evidence, '$.verdict') || '|' || json_extract(evidence, '$.passage_id') \
           FROM uq_unit_scores('Zebras gallop across the savanna. Einstein was born in Ulm.', '[]', \
             '{{\"scorers\":[\"grounded_entailment\"],\"sources\":{{\"fts\":\"docs\",\"per\":\"unit\"}}}}');
         SELECT uq_debug();"
    ));
    let lines: Vec<&str> = out.lines().collect();
    // (Unit 0 is checked against the passages retrieved for unit 1, which share no word with it.)
    assert!(lines[0].starts_with("0|"), "{out}");
    assert_eq!(lines[1], "1|supported|2", "{out}");
    assert!(
        notes_line(&out).ends_with(r#"sources.fts: no row of "docs" matches unit 0 ("Zebras gallop across the savanna."); the sources are silent on it"#),
        "{out}"
    );
    // An answer without a content word: nothing to search with.
    let out = sb.sqlite_ok(&format!(
        "{setup}SELECT count(*) FROM uq_unit_scores('It was, and it is.', NULL, \
             '{{\"scorers\":[\"grounded_entailment\"],\"sources\":{{\"fts\":\"docs\"}}}}');
         SELECT uq_debug();"
    ));
    assert!(out.starts_with("1\n"), "{out}");
    assert!(
        notes_line(&out).ends_with(
            "sources.fts: the answer has no content word to search \"docs\" with; no passage retrieved for it"
        ),
        "{out}"
    );
}

#[test]
fn html_unicode_and_long_sources_still_entail_the_right_sentence() {
    let sb = Sandbox::new("grounded-text");
    // HTML tags around the sentence, accents, CJK and an emoji beside it.
    let html = "<html><body><h1>Biographie</h1><p>Le café du coin vend des croissants.</p>\
                <p>Marie Skłodowska-Curie 🎉 was born in <b>Warsaw</b> in 1867.</p>\
                <p>東京は日本の首都です。 Rivers freeze every January.</p></body></html>";
    let options = json!({"scorers": ["grounded_entailment"], "sources": html});
    let rows = unit_rows(
        &sb,
        "",
        "Marie Skłodowska-Curie was born in Warsaw. Skłodowska-Curie was born in Madrid.",
        "NULL",
        &options,
        &given_premise(&[html]),
    );
    let (sup, con) = (
        row(&rows, 0, "grounded_entailment"),
        row(&rows, 1, "grounded_entailment"),
    );
    assert!(score(sup) > 0.5 && score(con) < 0.5, "{rows:#?}");
    for r in [sup, con] {
        let p = r["premise"].as_str().unwrap_or_default();
        assert!(
            p.contains("Skłodowska-Curie 🎉 was born in <b>Warsaw</b> in 1867."),
            "{r}"
        );
    }

    // ~100,000 characters of filler with one relevant sentence in the middle.
    let needle =
        "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine in 1843.";
    let mut filler: Vec<String> = Vec::new();
    let mut i = 0;
    while filler.iter().map(|s| s.len() + 1).sum::<usize>() < 100_000 {
        filler.push(format!(
            "Paragraph {i} describes the quiet harbour where fishing boats rest at dawn."
        ));
        i += 1;
    }
    filler.insert(filler.len() / 2, needle.to_string());
    let long = filler.join(" ");
    assert!(long.chars().count() > 100_000);
    let response = "Ada Lovelace wrote the first published algorithm in 1843. \
                    Ada Lovelace wrote the first published algorithm in 1943.";
    let options = json!({"scorers": ["grounded_entailment"], "sources": long});
    let rows = unit_rows(
        &sb,
        "",
        response,
        "NULL",
        &options,
        &given_premise(&[&long]),
    );
    let (sup, con) = (
        row(&rows, 0, "grounded_entailment"),
        row(&rows, 1, "grounded_entailment"),
    );
    assert!(score(sup) > 0.5 && score(con) < 0.5, "{rows:#?}");
    assert_eq!(sup["premise"], needle, "{sup}");

    // The same texts as rows of an FTS5 table, beside a CJK and a French passage.
    let setup = fts_docs(&[
        "東京は日本の首都です。 Tokyo is the capital of Japan.",
        &long,
        "Le café est à Montréal. Éloïse Dubé a fondé le café en 1998.",
        html,
    ]);
    let options = json!({"scorers": ["grounded_entailment"], "sources": {"fts": "docs", "k": 3}});
    let rows = unit_rows(&sb, &setup, response, "NULL", &options, FTS_PREMISE);
    let sup = row(&rows, 0, "grounded_entailment");
    assert_eq!(sup["evidence"]["passage_id"], "2", "{sup}");
    assert_eq!(sup["premise"], needle, "{sup}");
    assert!(score(sup) > 0.5, "{sup}");
    let rows = unit_rows(
        &sb,
        &setup,
        "Éloïse Dubé a fondé le café en 1998. 東京は日本の首都です。",
        "NULL",
        &options,
        FTS_PREMISE,
    );
    let (fr, ja) = (
        row(&rows, 0, "grounded_entailment"),
        row(&rows, 1, "grounded_entailment"),
    );
    assert_eq!(fr["evidence"]["passage_id"], "3", "{fr}");
    // Passages 1 and 4 both hold the Japanese sentence.
    let premise = ja["premise"].as_str().unwrap_or_default();
    assert!(premise.contains("東京は日本の首都です。"), "{ja}");
    assert!(score(fr) > 0.5 && score(ja) > 0.5, "{rows:#?}");
    let rows = unit_rows(
        &sb,
        &setup,
        "Marie Skłodowska-Curie was born in Warsaw.",
        "NULL",
        &options,
        FTS_PREMISE,
    );
    let r = row(&rows, 0, "grounded_entailment");
    assert_eq!(r["evidence"]["passage_id"], "4", "{r}");
    assert!(score(r) > 0.5, "{r}");
}

#[test]
fn uq_fts_query_quotes_every_word() {
    let sb = Sandbox::new("grounded-fts-query");
    let out = sb.sqlite_ok(&format!(
        "{}SELECT uq_fts_query('Marie \"Curie\" AND x*');
         SELECT group_concat(rowid) FROM docs WHERE docs MATCH uq_fts_query('Marie \"Curie\" AND x*');
         SELECT group_concat(rowid) FROM (SELECT rowid FROM docs WHERE docs MATCH uq_fts_query('NEAR(born: Ulm -') ORDER BY rank);
         SELECT coalesce(uq_fts_query('the and of it'), 'NULL'), coalesce(uq_fts_query(NULL), 'NULL'), coalesce(uq_fts_query('🎉'), 'NULL');
         SELECT uq_fts_query('Éloïse Dubé 東京');",
        fts_docs(&PEOPLE)
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], r#""marie" OR "curie" OR "x""#, "{out}");
    assert_eq!(lines[1], "1", "{out}");
    // FTS5 syntax in the text is plain words.
    assert_eq!(lines[2], "2", "{out}");
    assert_eq!(lines[3], "NULL|NULL|NULL", "{out}");
    assert_eq!(lines[4], r#""éloïse" OR "dubé" OR "東京""#, "{out}");
    // The raw text is FTS5 syntax, and an error there.
    let e = sb.sqlite_err(&format!(
        "{}SELECT rowid FROM docs WHERE docs MATCH 'NEAR(born: Ulm -';",
        fts_docs(&PEOPLE)
    ));
    assert!(e.contains("fts5: syntax error"), "{e}");
    // Deterministic and innocuous: usable in a generated column and a view.
    let out = sb.sqlite_ok(
        "CREATE TABLE q(text TEXT, query TEXT AS (uq_fts_query(text)));
         INSERT INTO q(text) VALUES ('Who discovered radium?');
         CREATE VIEW v AS SELECT uq_fts_query(text) AS f FROM q;
         SELECT query, (SELECT f FROM v) FROM q;",
    );
    assert_eq!(out, r#""discovered" OR "radium"|"discovered" OR "radium""#);
}

/// Sources silent on the second claim; the band given (the thresholds at their defaults), so
/// the sources decide the first alone.
const FALLBACK_OPTIONS: &str = r#"{"units":["Albert Einstein was born in Ulm.","Albert Einstein liked zebras."],"uad_scorer":"grounded_fallback","sources":"Albert Einstein was born in Ulm in 1879.","source_entailment_threshold":0.7,"source_contradiction_threshold":0.9}"#;
/// The same without thresholds: `grounded_fallback`'s default, max(source p_e, samples).
const FALLBACK_DEFAULT_OPTIONS: &str = r#"{"units":["Albert Einstein was born in Ulm.","Albert Einstein liked zebras."],"uad_scorer":"grounded_fallback","sources":"Albert Einstein was born in Ulm in 1879."}"#;
const FALLBACK_RESPONSE: &str = "Albert Einstein was born in Ulm. He liked zebras.";
const EINSTEIN: &str = "Albert Einstein was born in Ulm in 1879.";
/// `grounded_fallback`'s note without samples, by default.
const DEFAULT_NOTE: &str = "grounded_fallback: no samples were given, so its scores are NULL; pass samples (or set source_entailment_threshold / source_contradiction_threshold to let the sources decide alone where they are sure, or use grounded_entailment)";

fn einstein_samples() -> String {
    json_lit(&[
        "Albert Einstein was born in Ulm in Germany. He liked zebras.",
        "Einstein, born in Ulm, liked zebras and sailing.",
    ])
}

#[test]
fn grounded_fallback_is_null_without_samples_and_a_number_with_them() {
    let sb = Sandbox::new("grounded-fallback");
    let samples = einstein_samples();
    let rc = |unit: &str, samples: &str, band: &str| {
        format!(
            "SELECT coalesce(response_confidence({}, {samples}, \
               '{{\"scorers\":[\"grounded_fallback\"],\"sources\":\"{EINSTEIN}\"{band}}}'), 'NULL');",
            lit(unit),
        )
    };
    let band = r#","source_entailment_threshold":0.7,"source_contradiction_threshold":0.9"#;
    let zebras = "Albert Einstein liked zebras.";
    let ulm = "Albert Einstein was born in Ulm.";
    // By default: NULL without samples, even where the sources speak, and a note naming the
    // fix.
    let out = sb.sqlite_ok(&format!("{}\nSELECT uq_debug();", rc(zebras, "NULL", "")));
    assert!(out.starts_with("NULL\n"), "{out}");
    assert_eq!(
        notes_line(&out),
        format!("last score notes: {DEFAULT_NOTE}")
    );
    assert_eq!(sb.sqlite_ok(&rc(zebras, "'[]'", "")), "NULL");
    assert_eq!(sb.sqlite_ok(&rc(ulm, "NULL", "")), "NULL");
    let with: f64 = sb
        .sqlite_ok(&rc(zebras, &samples, ""))
        .parse()
        .expect("a number");
    assert!((0.0..=1.0).contains(&with), "{with}");
    // With the band: the open unit is NULL without samples (its own note), the sources decide
    // where they speak, samples or not.
    let out = sb.sqlite_ok(&format!("{}\nSELECT uq_debug();", rc(zebras, "NULL", band)));
    assert!(out.starts_with("NULL\n"), "{out}");
    assert_eq!(
        notes_line(&out),
        "last score notes: grounded_fallback: the sources leave 1 of 1 units open and no samples were given, so their scores are NULL; pass samples to fall back on (or use grounded_entailment)"
    );
    let decided: f64 = sb
        .sqlite_ok(&rc(ulm, "NULL", band))
        .parse()
        .expect("a number");
    assert!(decided > 0.7, "{decided}");
    let banded: f64 = sb
        .sqlite_ok(&rc(zebras, &samples, band))
        .parse()
        .expect("a number");
    assert!((0.1..=0.7 + 1e-9).contains(&banded), "{banded}");

    // UAD filters the claims by grounded_fallback. With the band the open one is NULL without
    // samples, the decided one kept.
    let claims = |samples: &str, options: &str| {
        sb.sqlite_ok(&format!(
            "SELECT idx || '|' || coalesce(score, 'NULL') || '|' || kept FROM uad_claims({}, {samples}, {}) ORDER BY idx;",
            lit(FALLBACK_RESPONSE),
            lit(options)
        ))
    };
    let out = claims("NULL", FALLBACK_OPTIONS);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].ends_with("|1"),
        "kept, decided by the source: {out}"
    );
    assert_eq!(lines[1], "1|NULL|0", "{out}");
    // By default both are NULL without samples.
    let out = claims("NULL", FALLBACK_DEFAULT_OPTIONS);
    assert_eq!(out, "0|NULL|0\n1|NULL|0", "{out}");
    for options in [FALLBACK_OPTIONS, FALLBACK_DEFAULT_OPTIONS] {
        let out = claims(&samples, options);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        for l in &lines {
            let x: f64 = l
                .split('|')
                .nth(1)
                .unwrap()
                .parse()
                .unwrap_or_else(|_| panic!("{out}"));
            assert!((0.0..=1.0).contains(&x), "{out}");
        }
    }
    for samples in ["NULL", &samples] {
        let refined = sb.sqlite_ok(&format!(
            "SELECT uad_filter({}, {samples}, {});",
            lit(FALLBACK_RESPONSE),
            lit(FALLBACK_OPTIONS)
        ));
        assert!(!refined.trim().is_empty(), "samples {samples}");
    }
    // A sample scorer for UAD still needs the samples.
    let e = message(&sb.sqlite_err(&format!(
        "SELECT uad_filter({}, NULL, '{{\"units\":[\"A b.\"],\"uad_scorer\":\"entailment\"}}');",
        lit(FALLBACK_RESPONSE)
    )));
    assert_eq!(
        e,
        r#"uad_filter: samples_json is NULL, but scorer entailment compares the answer with sampled answers: pass a JSON array of them, e.g. '["sampled answer 1","sampled answer 2"]'"#.to_string()
            + r#", or check the answer against sources without samples: "scorers":["grounded_entailment"] with option sources, e.g. "sources":{"fts":"docs","k":5}"#
    );
}

/// By default each unit's `grounded_fallback` is the larger of `grounded_entailment` and the
/// samples' `entailment`, whatever the sources' verdict; with the thresholds given, a unit
/// the sources decide keeps their score and an open one is placed in the band.
#[test]
fn grounded_fallback_is_the_larger_of_source_and_samples_unless_thresholds_are_given() {
    let sb = Sandbox::new("grounded-fallback-max");
    let response = "Albert Einstein was born in Ulm. Albert Einstein liked zebras. Albert Einstein was born in Paris.";
    let samples = einstein_samples();
    let scorers = ["grounded_entailment", "entailment", "grounded_fallback"];
    let rows = unit_rows(
        &sb,
        "",
        response,
        &samples,
        &json!({"scorers": scorers, "sources": EINSTEIN}),
        "NULL",
    );
    let mut by = Vec::new();
    for u in 0..3 {
        let (g, e) = (
            score(row(&rows, u, "grounded_entailment")),
            score(row(&rows, u, "entailment")),
        );
        let f = row(&rows, u, "grounded_fallback");
        assert!((score(f) - g.max(e)).abs() < 1e-9, "unit {u}: {g} {e} {f}");
        let ev = &f["evidence"];
        assert_eq!(
            ev["decided_by"],
            if g >= e { "source" } else { "samples" },
            "{f}"
        );
        // The verdict is the sources' at the default thresholds, as grounded_entailment's.
        assert_eq!(
            ev["verdict"],
            row(&rows, u, "grounded_entailment")["evidence"]["verdict"],
            "{f}"
        );
        by.push(ev["decided_by"].as_str().unwrap_or_default().to_string());
    }
    // The source states the first unit; only the samples the second.
    assert_eq!(by[..2], ["source", "samples"], "{rows:#?}");
    // The band at the same thresholds scores the decided units by the sources alone: the
    // contradicted one (Paris) at most 1 − 0.9, the supported one its p_e.
    let banded = unit_rows(
        &sb,
        "",
        response,
        &samples,
        &json!({"scorers": scorers, "sources": EINSTEIN,
                "source_entailment_threshold": 0.7, "source_contradiction_threshold": 0.9}),
        "NULL",
    );
    let verdict = |u: u64| row(&banded, u, "grounded_fallback")["evidence"]["verdict"].clone();
    for u in 0..3 {
        let f = score(row(&banded, u, "grounded_fallback"));
        let g = score(row(&banded, u, "grounded_entailment"));
        let e = score(row(&banded, u, "entailment"));
        match verdict(u).as_str() {
            Some("supported") => assert_eq!(f, g, "unit {u}"),
            Some("contradicted") => assert!(f <= 0.1 + 1e-9, "unit {u}: {f}"),
            _ => assert!(
                (f - (0.1 + 0.6 * g.max(e))).abs() < 1e-9,
                "unit {u}: {f} {g} {e}"
            ),
        }
    }
    assert_eq!(verdict(0), "supported", "{banded:#?}");
    assert_eq!(verdict(1), "silent", "{banded:#?}");
}

/// The note of `grounded_fallback`'s NULL scores reaches `uq_debug()` from UAD too.
#[test]
fn uad_without_samples_notes_the_open_claims() {
    let sb = Sandbox::new("grounded-uad-note");
    let out = sb.sqlite_ok(&format!(
        "SELECT count(*) FROM uad_claims({}, NULL, {});\nSELECT uq_debug();",
        lit(FALLBACK_RESPONSE),
        lit(FALLBACK_OPTIONS)
    ));
    assert!(out.starts_with("2\n"), "{out}");
    assert!(
        notes_line(&out).contains(
            "grounded_fallback: the sources leave 1 of 2 units open and no samples were given"
        ),
        "{out}"
    );
    let out = sb.sqlite_ok(&format!(
        "SELECT count(*) FROM uad_claims({}, NULL, {});\nSELECT uq_debug();",
        lit(FALLBACK_RESPONSE),
        lit(FALLBACK_DEFAULT_OPTIONS)
    ));
    assert!(out.starts_with("2\n"), "{out}");
    assert!(notes_line(&out).contains(DEFAULT_NOTE), "{out}");
}
