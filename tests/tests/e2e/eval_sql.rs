//! `uqd eval DB TABLE` on a small labelled table scored in the real `sqlite3` (a job with
//! `units_column` and `labels_column`, the real daemon and NLI model): its figures are the
//! extension's own metrics over the stored units (`uq_auroc`, `uq_ece`), the recommended scorer
//! is the one with the highest AUROC, its calibration and conformal fit are what
//! `uq_fit_calibration` and `uq_fit_conformal` return on the same units, and everything is
//! written to `uq_eval` / `uq_eval_figure`, which `uqd report` shows; bad input gets a clear
//! error.

use std::process::Command;

use uq_integration::*;

/// Twelve answers about Marie Curie, three claims each: two the samples support, one they
/// contradict or say nothing of; labels 1, 1, 0 (the fourth answer on has its true and false
/// claims swapped once, so that labels are not a pure function of position).
const SETUP: &str = r#"
CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT, claims TEXT, labels TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12)
INSERT INTO answers
SELECT i, 'Who was Marie Curie?',
       'Marie Curie was a physicist. She won the Nobel Prize in Physics in 1903. She was born in ' || (CASE i % 3 WHEN 0 THEN 'Vienna' WHEN 1 THEN 'Madrid' ELSE 'Oslo' END) || '.',
       json('SAMPLES'),
       json_array('Marie Curie was a physicist.',
                  CASE WHEN i % 4 = 0 THEN 'She won the Nobel Prize in Chemistry in 1850.' ELSE 'She won the Nobel Prize in Physics in 1903.' END,
                  'She was born in ' || (CASE i % 3 WHEN 0 THEN 'Vienna' WHEN 1 THEN 'Madrid' ELSE 'Oslo' END) || '.'),
       CASE WHEN i % 4 = 0 THEN '[1, 0, 0]' ELSE '[1, 1, 0]' END
FROM n;
SELECT uq_wait(uq_score_table('answers', '{"granularity":"claim","units_column":"claims","labels_column":"labels","scorers":["entailment","noncontradiction"]}'), 600);
"#;

fn uqd_eval(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(dist().join("uqd"));
    c.arg("eval").args(args);
    c.env("UQ_SOCKET", &sb.socket);
    c.output().expect("run uqd eval")
}

#[test]
fn eval_reports_every_scorer_with_intervals_and_writes_its_tables() {
    let sb = Sandbox::new("eval");
    let db = sb.dir.join("eval.db").display().to_string();
    let samples = serde_json::to_string(&SAMPLES).unwrap().replace('\'', "''");
    let out = sb.sqlite_on(&db, &SETUP.replace("SAMPLES", &samples));
    assert_eq!(stdout_ok(&out, "the job").trim(), "done");

    let out = uqd_eval(&sb, &[&db, "answers", "--resamples", "400"]);
    let text = stdout_ok(&out, "uqd eval");
    assert!(
        text.contains("claim level, table answers: 36 labelled units of 12 answers"),
        "{text}"
    );
    // the figures are the extension's metrics over the stored units
    let check = sb.sqlite_on(
        &db,
        "SELECT f.scorer, round(f.estimate, 9) = round((SELECT uq_auroc(score, label) FROM uq_scored_units s WHERE s.scorer = f.scorer), 9), f.low <= f.estimate AND f.estimate <= f.high
         FROM uq_eval_figure f WHERE f.figure = 'auroc' ORDER BY f.scorer;
         SELECT f.scorer, round(f.estimate, 9) = round((SELECT uq_ece(score, label) FROM uq_scored_units s WHERE s.scorer = f.scorer), 9)
         FROM uq_eval_figure f WHERE f.figure = 'ece' ORDER BY f.scorer;
         SELECT count(*) FROM uq_eval_figure;",
    );
    assert_eq!(
        stdout_ok(&check, "figures").trim(),
        "entailment|1|1\nnoncontradiction|1|1\nentailment|1\nnoncontradiction|1\n8"
    );
    // the recommended scorer has the highest AUROC; its models are the extension's own fits
    let check = sb.sqlite_on(
        &db,
        "SELECT e.recommended = (SELECT scorer FROM uq_eval_figure WHERE figure = 'auroc' ORDER BY estimate DESC LIMIT 1),
                abs(json_extract(e.calibration, '$.a') - json_extract(c.m, '$.a')) < 1e-9,
                abs(json_extract(e.calibration, '$.b') - json_extract(c.m, '$.b')) < 1e-9,
                json_extract(e.conformal, '$.threshold') = json_extract(k.m, '$.threshold'),
                e.units, e.answers, e.resamples
         FROM uq_eval e,
              (SELECT uq_fit_calibration(score, label, 'platt') AS m FROM uq_scored_units
                WHERE scorer = (SELECT recommended FROM uq_eval)) c,
              (SELECT uq_fit_conformal(score, label, answer_id, 0.1) AS m FROM uq_scored_units
                WHERE scorer = (SELECT recommended FROM uq_eval)) k;",
    );
    assert_eq!(stdout_ok(&check, "models").trim(), "1|1|1|1|36|12|400");
    let rec = sb.sqlite_on(&db, "SELECT recommended, notes FROM uq_eval;");
    let rec = stdout_ok(&rec, "recommended");
    assert!(
        text.contains(&format!("recommended: {}", rec.split('|').next().unwrap())),
        "{text}"
    );
    assert!(rec.contains("has the highest AUROC"), "{rec}");
    // the calibration applies in SQL as printed
    assert!(
        text.contains("calibration (uq_calibrate(score, model)): {"),
        "{text}"
    );
    assert!(
        text.contains("conformal: P(all kept claims true) ≥ 0.9"),
        "{text}"
    );

    // the report shows the evaluation
    let out_dir = sb.dir.join("report");
    let mut c = Command::new(dist().join("uqd"));
    let out = c
        .args(["report", &db, "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    stdout_ok(&out, "uqd report");
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.contains("<h2>Evaluations (uqd eval)</h2>"), "{html}");
    assert!(html.contains("(recommended)</td>"), "{html}");
    assert!(html.contains("36 labelled units of 12 answers"), "{html}");

    // --dry-run writes nothing more
    let out = uqd_eval(&sb, &[&db, "--dry-run", "--resamples", "50"]);
    stdout_ok(&out, "uqd eval --dry-run");
    let n = sb.sqlite_on(&db, "SELECT count(*) FROM uq_eval;");
    assert_eq!(stdout_ok(&n, "count").trim(), "1");

    // bad input
    let e = stderr_err(&uqd_eval(&sb, &[&db, "nosuch"]), "unknown table");
    assert!(
        e.contains("no labelled units in")
            && e.contains("for table nosuch")
            && e.contains("labels_column"),
        "{e}"
    );
    let e = stderr_err(&uqd_eval(&sb, &[&db, "--alpha", "1.5"]), "bad alpha");
    assert!(
        e.contains("--alpha must be strictly between 0 and 1"),
        "{e}"
    );
    let missing = sb.dir.join("missing.db").display().to_string();
    let e = stderr_err(&uqd_eval(&sb, &[&missing]), "missing db");
    assert!(e.contains("missing.db"), "{e}");
}

/// Ten answers scored at sentence level, three sentences each (the third contradicted by the
/// samples); answer 3's third sentence is longer.
const BIOS: &str = r#"
CREATE TABLE bios(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
INSERT INTO bios
SELECT i, 'Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in ' || (CASE i % 3 WHEN 0 THEN 'Vienna' WHEN 1 THEN 'Madrid' ELSE 'Oslo' END) || (CASE WHEN i = 3 THEN ', and she died in Paris.' ELSE '.' END),
       json('SAMPLES')
FROM n;
SELECT uq_wait(uq_score_table('bios', '{"granularity":"sentence","scorers":["entailment","noncontradiction"]}'), 600);
"#;

/// The annotators' labels: uqlite's split (`uq_sentences`) except in answer 3, where one
/// labelled sentence holds uqlite's first two and uqlite's third is two labelled sentences;
/// answer 6 lacks its third sentence's label, answer 5 has an extra sentence, key 99 no answer.
const LABELS: &str = r#"
CREATE TABLE labels(answer_id INTEGER, sent_idx INTEGER, sentence TEXT, label TEXT);
INSERT INTO labels SELECT b.id, s.idx, s.sentence,
       CASE WHEN s.idx = 2 THEN 'major_inaccurate' WHEN b.id = 2 AND s.idx = 1 THEN 'minor_inaccurate' ELSE 'accurate' END
FROM bios b, uq_sentences(b.answer) s WHERE b.id <> 3 AND NOT (b.id = 6 AND s.idx = 2);
INSERT INTO labels VALUES
  (3, 0, 'Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903.', 'accurate'),
  (3, 1, 'She was born in Vienna,', 'major_inaccurate'),
  (3, 2, 'and she died in Paris.', 'accurate'),
  (5, 3, 'She had two daughters.', 'accurate'),
  (99, 0, 'An answer nobody scored.', 'accurate');
"#;

const MAP: &str = r#"{"accurate":1,"minor_inaccurate":0,"major_inaccurate":0}"#;

#[test]
fn eval_aligns_a_labels_table_of_another_split_to_the_scored_sentences() {
    let sb = Sandbox::new("eval-labels");
    let db = sb.dir.join("bios.db").display().to_string();
    let samples = serde_json::to_string(&SAMPLES).unwrap().replace('\'', "''");
    let out = sb.sqlite_on(
        &db,
        &format!("{}{LABELS}", BIOS.replace("SAMPLES", &samples)),
    );
    assert_eq!(stdout_ok(&out, "the job").trim(), "done");

    let note = "labels from table labels by answer_id: 29 of 30 units matched (26 by text, 3 by \
                containment: 2 inside one labelled sentence, 1 spanning several); left unmatched \
                (left out): 1 of 30 labelled sentences, 1 unit; 1 labelled key not scored in this \
                run";
    let args = [&db, "bios", "--labels", "labels", "--label-map", MAP];
    let out = uqd_eval(&sb, &[&args[..], &["--resamples", "200"]].concat());
    let text = stdout_ok(&out, "uqd eval --labels");
    assert!(
        text.contains("sentence level, table bios: 29 labelled units of 10 answers"),
        "{text}"
    );
    assert!(text.contains(note), "{text}");
    // the figures are uq_auroc over the units with the labels as aligned: by text, and answer
    // 3's units true, true, false (the last spans a false and a true sentence)
    let check = sb.sqlite_on(
        &db,
        "SELECT f.scorer, round(f.estimate, 9) = (SELECT round(uq_auroc(s.score, CASE WHEN l.label IS NOT NULL THEN l.label = 'accurate' WHEN s.source_key = '3' THEN s.position < 2 END), 9)
                 FROM uq_scored_units s LEFT JOIN labels l ON l.answer_id = CAST(s.source_key AS INTEGER) AND l.sentence = s.unit
                 WHERE s.scorer = f.scorer)
         FROM uq_eval_figure f WHERE f.figure = 'auroc' ORDER BY f.scorer;
         SELECT count(*), count(estimate) FROM uq_eval_figure;
         SELECT e.units, e.answers, e.recommended IS NOT NULL, e.calibration IS NOT NULL, instr(e.notes, '29 of 30 units matched') > 0
         FROM uq_eval e;",
    );
    assert_eq!(
        stdout_ok(&check, "figures").trim(),
        "entailment|1\nnoncontradiction|1\n8|8\n29|10|1|1|1"
    );

    // --label-expr gives the same labels; --json the same figures, and writes nothing
    let out = uqd_eval(
        &sb,
        &[
            &db,
            "bios",
            "--labels",
            "labels",
            "--label-expr",
            "label = 'accurate'",
        ],
    );
    let _ = stdout_ok(&out, "--label-expr");
    let out = uqd_eval(
        &sb,
        &[&args[..], &["--resamples", "200", "--json", "--dry-run"]].concat(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout_ok(&out, "--json")).unwrap();
    let e = &v["evaluations"][0];
    assert_eq!(e["matching"]["by_text"], 26, "{e}");
    assert_eq!(e["matching"]["spanning"], 1, "{e}");
    assert_eq!(e["matching"]["units_unmatched"], 1, "{e}");
    assert_eq!(e["notes"][0], note, "{e}");
    assert!(e["scorers"][0]["figures"]["auroc"]["low"].is_f64(), "{e}");
    assert!(e["calibration"]["a"].is_f64(), "{e}");
    let n = sb.sqlite_on(&db, "SELECT count(*) FROM uq_eval;");
    assert_eq!(stdout_ok(&n, "count").trim(), "2");

    // labels that are not 0/1 without a map, a value the map lacks, a column that is not there
    let e = stderr_err(
        &uqd_eval(&sb, &[&db, "bios", "--labels", "labels"]),
        "no map",
    );
    assert!(
        e.contains("TEXT 'accurate', not 0/1") && e.contains("--label-map '{\"accurate\":1,"),
        "{e}"
    );
    let partial = [
        &db,
        "bios",
        "--labels",
        "labels",
        "--label-map",
        r#"{"accurate":1}"#,
    ];
    let e = stderr_err(&uqd_eval(&sb, &partial), "partial map");
    assert!(e.contains("no value for TEXT 'major_inaccurate'"), "{e}");
    let e = stderr_err(
        &uqd_eval(&sb, &[&args[..], &["--labels-key", "bio"]].concat()),
        "no column",
    );
    assert!(
        e.contains("--labels-key bio: table \"labels\" has no column \"bio\"")
            && e.contains("\"answer_id\", \"sent_idx\", \"sentence\", \"label\""),
        "{e}"
    );

    // uqlite.evaluate runs the same `uqd eval --json` (the source package against dist/)
    let py = format!(
        r#"
import uqlite
r = uqlite.evaluate({db:?}, "bios", labels="labels", label_map={MAP}, write=False)
m = r["evaluations"][0]["matching"]
print("MATCHED", m["matched"], m["by_text"], m["by_containment"], r["written"])
try:
    uqlite.evaluate({db:?}, "bios", labels="labels")
except ValueError as e:
    print("ERROR", e)
try:
    uqlite.evaluate("nosuch.db", "bios")
except FileNotFoundError as e:
    print("MISSING", e)
"#
    );
    let out = Command::new(PYTHON)
        .args(["-c", &py])
        .current_dir(&sb.dir)
        .env("PYTHONPATH", root().join("python"))
        .env("UQ_DAEMON", dist().join("uqd"))
        .output()
        .unwrap();
    let text = stdout_ok(&out, "uqlite.evaluate");
    assert!(text.contains("MATCHED 29 26 3 False"), "{text}");
    assert!(
        text.contains("ERROR --labels labels: column \"label\""),
        "{text}"
    );
    assert!(
        text.contains("MISSING no database file 'nosuch.db'"),
        "{text}"
    );
    assert!(!sb.dir.join("nosuch.db").exists());
}
