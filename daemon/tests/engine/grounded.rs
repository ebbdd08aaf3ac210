//! Grounded checking in the daemon with the real NLI model: a `score` request against given
//! sources (evidence, spans, the fallback to samples), and jobs whose sources come from a
//! column or from an FTS5 table of the same database (a source row deleted mid-job), with
//! `sample_when_open` generating samples (fake OpenAI server) only for rows the sources leave
//! open.

use crate::common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::{run_to_end, tmpdir, user_message, Daemon, FakeOpenAi, ENGINE};
use rusqlite::Connection;
use serde_json::{json, Value};
use uq_core::protocol::ScoreResult;
use uqd::jobs::run::run_job;

const SOURCE: &str = "Marie Curie was a Polish and naturalised-French physicist and chemist. \
She was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.";

fn score(d: &Daemon, response: &str, samples: Value, options: Value) -> ScoreResult {
    serde_json::from_value(
        d.ok(&json!({"op": "score", "response": response, "samples": samples, "options": options})),
    )
    .unwrap()
}

#[test]
fn units_are_checked_against_sources_with_their_evidence() {
    let d = Daemon::new(&tmpdir("grounded-score"), "/nonexistent.gguf".into());
    let r = score(
        &d,
        "Marie Curie was born in Warsaw. She was born in 1901 in Lyon. She liked tea.",
        json!([]),
        json!({"scorers": ["grounded_entailment", "grounded_noncontradiction"], "sources": [{"id": "doc-1", "text": SOURCE}]}),
    );
    let e = r.unit_scores("grounded_entailment");
    let n = r.unit_scores("grounded_noncontradiction");
    assert_eq!(e.len(), 3);
    assert!(e[0] > 0.7, "stated by the source: {e:?}");
    assert!(
        e[1] < 0.3 && n[1] < n[0],
        "contradicted by the source: {e:?} {n:?}"
    );
    let ev = r.scores[0].evidence.as_ref().unwrap();
    assert_eq!(
        (ev.decided_by.as_str(), ev.verdict.as_str()),
        ("source", "supported")
    );
    assert_eq!(ev.passage, Some(0));
    assert_eq!(ev.passage_id.as_deref(), Some("doc-1"));
    let span: String = SOURCE
        .chars()
        .skip(ev.start.unwrap())
        .take(ev.end.unwrap() - ev.start.unwrap())
        .collect();
    assert!(span.contains("born in Warsaw"), "{span}");
    // Short sources (at most K sentences) are their own premise: the whole passage.
    assert_eq!(ev.start, Some(0));
    // The other scorers carry no evidence; the response score aggregates.
    assert!(r.response_scores["grounded_entailment"].is_some());
}

/// A unit the source states, then one only the samples state.
const FALLBACK_RESPONSE: &str = "Marie Curie was born in Warsaw. She had a cat called Pierre.";

fn cat_samples() -> Value {
    json!([
        "Marie Curie owned a cat called Pierre.",
        "Curie had a cat named Pierre."
    ])
}

fn decided_by(r: &ScoreResult, scorer: &str) -> Vec<String> {
    r.scores
        .iter()
        .filter(|s| s.scorer == scorer)
        .map(|s| s.evidence.as_ref().unwrap().decided_by.clone())
        .collect()
}

fn verdicts(r: &ScoreResult, scorer: &str) -> Vec<String> {
    r.scores
        .iter()
        .filter(|s| s.scorer == scorer)
        .map(|s| s.evidence.as_ref().unwrap().verdict.clone())
        .collect()
}

#[test]
fn the_fallback_is_the_larger_of_source_and_samples_by_default() {
    let d = Daemon::new(&tmpdir("grounded-fallback-max"), "/nonexistent.gguf".into());
    let options = json!({"scorers": ["grounded_fallback"], "sources": SOURCE});
    // Without samples every unit is NULL, even the one the source states.
    let without = score(&d, FALLBACK_RESPONSE, json!([]), options.clone());
    let f = without.unit_scores("grounded_fallback");
    assert!(f.iter().all(|x| x.is_nan()), "{f:?}");
    assert_eq!(decided_by(&without, "grounded_fallback"), ["none", "none"]);
    assert_eq!(
        without.notes,
        ["grounded_fallback: no samples were given, so its scores are NULL; pass samples (or set \
          source_entailment_threshold / source_contradiction_threshold to let the sources decide \
          alone where they are sure, or use grounded_entailment)"]
    );
    // With samples: each unit is max(grounded_entailment, the samples' entailment), in one
    // request and alone.
    let all = score(
        &d,
        FALLBACK_RESPONSE,
        cat_samples(),
        json!({"scorers": ["grounded_entailment", "entailment", "grounded_fallback"], "sources": SOURCE}),
    );
    let g = all.unit_scores("grounded_entailment");
    let e = all.unit_scores("entailment");
    let f = all.unit_scores("grounded_fallback");
    let alone =
        score(&d, FALLBACK_RESPONSE, cat_samples(), options).unit_scores("grounded_fallback");
    for i in 0..2 {
        assert!(
            (f[i] - g[i].max(e[i])).abs() < 1e-9,
            "unit {i}: {f:?} {g:?} {e:?}"
        );
        assert!((alone[i] - f[i]).abs() < 1e-9, "{alone:?} {f:?}");
    }
    // The source states the first unit, only the samples the second: each decides one.
    assert!(g[0] > e[0] && e[1] > g[1], "{g:?} {e:?}");
    assert_eq!(decided_by(&all, "grounded_fallback"), ["source", "samples"]);
    // The verdict is grounded_entailment's, at the default thresholds; the first unit, which
    // the band would score by its p_e (≥ 0.7) whatever the samples say, here takes the larger.
    assert_eq!(
        verdicts(&all, "grounded_fallback"),
        verdicts(&all, "grounded_entailment")
    );
    assert_eq!(verdicts(&all, "grounded_fallback"), ["supported", "silent"]);
    // An open unit the samples state scores what they give it, above the band's ceiling
    // (0.7: the band never puts an open unit there).
    assert!(f[1] > 0.7, "the samples state it: {f:?}");
}

#[test]
fn a_given_threshold_makes_the_fallback_a_band_with_samples_only_where_the_sources_are_silent() {
    let d = Daemon::new(
        &tmpdir("grounded-fallback-band"),
        "/nonexistent.gguf".into(),
    );
    let options = json!({"scorers": ["grounded_fallback"], "sources": SOURCE,
                         "source_entailment_threshold": 0.7, "source_contradiction_threshold": 0.9});
    let without = score(&d, FALLBACK_RESPONSE, json!([]), options.clone());
    let f = without.unit_scores("grounded_fallback");
    assert!(f[0] > 0.7, "{f:?}");
    assert!(f[1].is_nan(), "silent and no samples: NULL {f:?}");
    assert_eq!(
        without.notes,
        [
            "grounded_fallback: the sources leave 1 of 2 units open and no samples were given, so \
          their scores are NULL; pass samples to fall back on (or use grounded_entailment)"
        ]
    );
    let with = score(&d, FALLBACK_RESPONSE, cat_samples(), options);
    let g = with.unit_scores("grounded_fallback");
    assert_eq!(g[0], f[0], "the source decided: the samples change nothing");
    assert!(
        g[1] > 0.1 && g[1] <= 0.7 + 1e-9,
        "in the silent band: {g:?}"
    );
    assert_eq!(
        decided_by(&with, "grounded_fallback"),
        ["source", "samples"]
    );
    // One threshold alone is a band too (the other at its default): the same scores.
    let one = score(
        &d,
        FALLBACK_RESPONSE,
        cat_samples(),
        json!({"scorers": ["grounded_fallback"], "sources": SOURCE, "source_entailment_threshold": 0.7}),
    );
    assert_eq!(one.unit_scores("grounded_fallback"), g);
    // Entailment threshold 1 leaves the first unit open too: both are placed by the samples
    // in the band [1 − 0.9, 1].
    let strict = score(
        &d,
        FALLBACK_RESPONSE,
        cat_samples(),
        json!({"scorers": ["grounded_fallback"], "sources": SOURCE, "source_entailment_threshold": 1.0}),
    );
    let s = strict.unit_scores("grounded_fallback");
    assert_eq!(
        decided_by(&strict, "grounded_fallback"),
        ["samples", "samples"]
    );
    assert!(s.iter().all(|x| (0.1..=1.0).contains(x)), "{s:?}");
}

#[test]
fn long_unicode_and_html_sources_find_their_sentence() {
    let d = Daemon::new(&tmpdir("grounded-long"), "/nonexistent.gguf".into());
    let filler = "The committee met on a Tuesday and discussed the budget at length. ";
    let mut doc = filler.repeat(700); // ~47k characters
    doc.push_str("<p>Zoë Ångström, née 東京, was born in Malmö in 1950 🎉.</p> ");
    doc.push_str(&filler.repeat(800));
    assert!(doc.chars().count() > 100_000);
    let r = score(
        &d,
        "Zoë Ångström was born in Malmö.",
        json!([]),
        json!({"scorers": ["grounded_entailment"], "sources": [doc.clone()]}),
    );
    let ev = r.scores[0].evidence.as_ref().unwrap();
    let span: String = doc
        .chars()
        .skip(ev.start.unwrap())
        .take(ev.end.unwrap() - ev.start.unwrap())
        .collect();
    assert!(span.contains("born in Malmö in 1950"), "{span}");
    assert!(r.unit_scores("grounded_entailment")[0] > 0.5, "{r:?}");
}

#[test]
fn option_errors_name_the_option() {
    let d = Daemon::new(&tmpdir("grounded-errors"), "/nonexistent.gguf".into());
    let e = d.err(&json!({"op": "score", "response": "A.", "samples": [], "options": {"scorers": ["grounded_entailment"]}}));
    assert!(
        e.contains(
            "scorer grounded_entailment checks units against sources: pass them as option sources"
        ),
        "{e}"
    );
    let e = d.err(&json!({"op": "score", "response": "A.", "samples": [], "options": {"scorers": ["grounded_entailment"], "sources": {"fts": "docs"}}}));
    assert!(e.contains("only a SQL call"), "{e}");
    let e = d.err(
        &json!({"op": "score", "response": "A.", "samples": ["B."], "options": {"sources": "x"}}),
    );
    assert!(
        e.contains("option sources is given but no grounded scorer is used"),
        "{e}"
    );
}

/// (score, evidence) of each unit of the answer of the last run with source key `key`.
fn unit_scores(conn: &Connection, key: &str, scorer: &str) -> Vec<(Option<f64>, Option<String>)> {
    conn.prepare(
        "SELECT score, evidence FROM uq_scored_units WHERE source_key = ?1 AND scorer = ?2 \
         AND run_id = (SELECT max(run_id) FROM uq_answer) ORDER BY position",
    )
    .unwrap()
    .query_map([key, scorer], |r| Ok((r.get(0)?, r.get(1)?)))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn a_job_reads_sources_from_a_column_or_an_fts5_table_deleted_mid_job() {
    let dir = tmpdir("grounded-job");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("g.db");
    let mut conn = Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE rag(id INTEGER PRIMARY KEY, answer TEXT, context TEXT);
         INSERT INTO rag VALUES
          (1, 'Marie Curie was born in Warsaw.', json_array('{SOURCE}')),
          (2, 'Marie Curie was born in Lyon.', '{SOURCE}'),
          (3, 'Marie Curie was born in Warsaw.', NULL);
         CREATE VIRTUAL TABLE docs USING fts5(body);
         INSERT INTO docs(rowid, body) VALUES (10, '{SOURCE}'),
          (11, 'Albert Einstein was born in Ulm in 1879. He developed relativity.'),
          (12, 'Paris is the capital of France.');"
    ))
    .unwrap();
    let options = json!({"scorers": ["grounded_entailment"], "sources_column": "context"});
    let job = uqd::jobs::create::create_job("test", &mut conn, "rag", options.as_object().unwrap())
        .unwrap();
    let status = run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(status, "done");
    let s1 = unit_scores(&conn, "1", "grounded_entailment");
    let s2 = unit_scores(&conn, "2", "grounded_entailment");
    assert!(
        s1[0].0.unwrap() > 0.7 && s2[0].0.unwrap() < 0.3,
        "{s1:?} {s2:?}"
    );
    let ev: Value = serde_json::from_str(s1[0].1.as_deref().unwrap()).unwrap();
    assert_eq!(ev["decided_by"], "source");
    // A NULL context: no passage, a NULL score.
    assert_eq!(unit_scores(&conn, "3", "grounded_entailment")[0].0, None);

    // The same table retrieved from the FTS5 index, a row at a time; after the first row the
    // Einstein passage is deleted: the job goes on, and later rows never see it.
    conn.execute_batch(
        "CREATE TABLE qs(id INTEGER PRIMARY KEY, answer TEXT);
         INSERT INTO qs VALUES (1, 'Albert Einstein was born in Ulm.'), (2, 'Albert Einstein was born in Ulm.'),
                               (3, 'Zzyzx qwerty.');",
    )
    .unwrap();
    let options = json!({"scorers": ["grounded_entailment"], "sources": {"fts": "docs", "k": 2}, "chunk_size": 1, "concurrency": 1});
    let job = uqd::jobs::create::create_job("test", &mut conn, "qs", options.as_object().unwrap())
        .unwrap();
    let deleter = Connection::open(&db).unwrap();
    let mut chunks = 0;
    let status = run_job(
        &ENGINE,
        &d.llm,
        &db,
        job,
        &AtomicBool::new(false),
        &mut |_| {
            chunks += 1;
            if chunks == 2 {
                deleter
                    .execute("DELETE FROM docs WHERE rowid = 11", [])
                    .unwrap();
            }
        },
    )
    .unwrap();
    assert_eq!(status, "done");
    let q1 = unit_scores(&conn, "1", "grounded_entailment");
    let q2 = unit_scores(&conn, "2", "grounded_entailment");
    let ev1: Value = serde_json::from_str(q1[0].1.as_deref().unwrap()).unwrap();
    assert_eq!(ev1["passage_id"], "11", "{ev1}");
    assert!(q1[0].0.unwrap() > 0.7, "{q1:?}");
    let ev2: Value = serde_json::from_str(q2[0].1.as_deref().unwrap()).unwrap();
    assert_ne!(
        ev2["passage_id"], "11",
        "a deleted row is not retrieved: {ev2}"
    );
    assert!(q2[0].0.unwrap() < q1[0].0.unwrap(), "{q2:?}");
    // Row 3 matches nothing: scored (NULL), and the job's message says so.
    assert_eq!(unit_scores(&conn, "3", "grounded_entailment")[0].0, None);
    let message: String = conn
        .query_row("SELECT message FROM uq_job WHERE job_id = ?1", [job], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(
        message.contains("FTS5 queries found no passage"),
        "{message}"
    );
    let errors: i64 = conn
        .query_row("SELECT count(*) FROM uq_job_error", [], |r| r.get(0))
        .unwrap();
    assert_eq!(errors, 0);
}

#[test]
fn sample_when_open_generates_only_for_rows_the_sources_leave_open() {
    let server = FakeOpenAi::start(Arc::new(|body: &Value| {
        let _ = user_message(body);
        (200, "Marie Curie had a cat called Pierre.".into())
    }));
    let dir = tmpdir("grounded-sample-when-open");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("s.db");
    let mut conn = Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, context TEXT);
         INSERT INTO t VALUES
          (1, 'Who was Marie Curie?', 'Marie Curie was born in Warsaw.', '{SOURCE}'),
          (2, 'Who was Marie Curie?', 'Marie Curie was born in Warsaw. She had a cat called Pierre.', '{SOURCE}');"
    ))
    .unwrap();
    // The band (thresholds given): the sources decide where they are sure, so only the open
    // rows need samples.
    let options = json!({"scorers": ["grounded_fallback"], "sources_column": "context", "generate": 3,
                         "source_entailment_threshold": 0.7, "source_contradiction_threshold": 0.9,
                         "sample_when_open": true, "llm": server.config()});
    let job = uqd::jobs::create::create_job("test", &mut conn, "t", options.as_object().unwrap())
        .unwrap();
    let status = run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(status, "done");
    let samples: Vec<(String, i64)> = conn
        .prepare("SELECT a.source_key, (SELECT count(*) FROM uq_sample s WHERE s.answer_id = a.answer_id) FROM uq_answer a ORDER BY 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let message: String = conn
        .query_row("SELECT message FROM uq_job WHERE job_id = ?1", [job], |r| {
            r.get(0)
        })
        .unwrap();
    let units = unit_scores(&conn, "2", "grounded_fallback");
    assert_eq!(
        samples,
        vec![("1".to_string(), 0), ("2".to_string(), 3)],
        "{message} {units:?}"
    );
    assert!(
        message.contains("every unit of 1 of the 2 rows") && message.contains("3 LLM calls saved"),
        "{message}"
    );
    let s2 = unit_scores(&conn, "2", "grounded_fallback");
    assert!(
        s2[1].0.is_some(),
        "the open unit fell back to the generated samples: {s2:?}"
    );
}

#[test]
fn job_option_errors() {
    let dir = tmpdir("grounded-job-errors");
    let db = dir.join("e.db");
    let mut conn = Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, answer TEXT, context TEXT);")
        .unwrap();
    let mut e = |o: Value| {
        uqd::jobs::create::create_job("uq_score_table", &mut conn, "t", o.as_object().unwrap())
            .unwrap_err()
    };
    let got = e(json!({"scorers": ["grounded_entailment"], "sources_column": "ctx"}));
    assert!(
        got.contains("option sources_column: table \"t\" has no column \"ctx\""),
        "{got}"
    );
    let got =
        e(json!({"scorers": ["grounded_entailment"], "sources_column": "context", "sources": "x"}));
    assert!(
        got.contains("options sources and sources_column both give the sources"),
        "{got}"
    );
    let got = e(
        json!({"scorers": ["grounded_entailment"], "sources_column": "context", "sample_when_open": true}),
    );
    assert!(
        got.contains("option sample_when_open generates samples only for the rows"),
        "{got}"
    );
}
