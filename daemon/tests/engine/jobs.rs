//! Jobs and grading in the daemon, with recorded LLM replies from a fake OpenAI-compatible
//! server (deterministic) and the embedded SmolLM2: FactScore and objectivity labels, a whole
//! job with grading, objectivity and UAD written into a database, usage and cost accounting,
//! row errors from a failing LLM call, and a second run that writes nothing twice.

use crate::common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::{local_model, message, run_to_end, tmpdir, user_message, Daemon, FakeOpenAi, ENGINE};
use rusqlite::Connection;
use serde_json::{json, Value};
use uqd::jobs::run::run_job;

const CONTEXT_FAIL: &str = "A reference the server refuses.";

/// Recorded replies: FactScore "Yes"/"No, …"/unreadable by claim, objectivity likewise,
/// decompositions and reconstructions for UAD.
fn fake() -> FakeOpenAi {
    FakeOpenAi::start(Arc::new(|body: &Value| {
        let system = message(body, "system");
        let user = user_message(body);
        if system.starts_with("You are a precise and objective fact-checking") {
            if user.contains(CONTEXT_FAIL) {
                return (500, "server error".into());
            }
            let claim = user
                .split("Claim: ")
                .nth(1)
                .and_then(|s| s.lines().next())
                .unwrap_or_default();
            let reply = if claim.contains("gold") {
                "No, the context says iron."
            } else if claim.contains("maybe") {
                "It is hard to tell."
            } else {
                "Yes."
            };
            return (200, reply.into());
        }
        if system.starts_with("You are an expert linguistic analyst") {
            let reply = if user.contains("beautiful") {
                "Subjective"
            } else {
                "Objective."
            };
            return (200, reply.into());
        }
        if user.contains("Here is the passage") {
            return (
                200,
                "### The Eiffel Tower is in Paris.\n### The Eiffel Tower is made of gold.".into(),
            );
        }
        if user.contains("synthesize these facts") {
            return (200, "The Eiffel Tower is in Paris.".into());
        }
        (400, format!("unexpected prompt: {user}"))
    }))
}

#[test]
fn grade_and_objectivity_read_recorded_replies() {
    let server = fake();
    let d = Daemon::new(&tmpdir("grade-recorded"), "/nonexistent.gguf".into());
    let opts = json!({"judge_llm": server.config()});
    let g = |unit: &str| {
        d.ok(&json!({"op": "grade", "unit": unit, "reference": "The Eiffel Tower is an iron tower in Paris.", "options": opts}))
    };
    let yes = g("The Eiffel Tower is in Paris.");
    assert_eq!(yes["label"], json!(true));
    assert_eq!(yes["raw"], json!("Yes."));
    assert!(
        yes["grader"].as_str().unwrap().starts_with("factscore:"),
        "{yes}"
    );
    assert_eq!(g("It is made of gold.")["label"], json!(false));
    let unread = g("It was maybe built in 1889.");
    assert_eq!(unread["label"], Value::Null);
    assert_eq!(unread["raw"], json!("It is hard to tell."));

    let o = |claim: &str| d.ok(&json!({"op": "objectivity", "claim": claim, "options": opts}));
    assert_eq!(o("Paris is beautiful.")["label"], json!(false));
    let obj = o("Paris is in France.");
    assert_eq!(obj["label"], json!(true));
    assert!(obj["grader"].as_str().unwrap().starts_with("objectivity:"));
    // The FactScore prompts went out with the system prompt and the reference as context.
    let seen = server.seen();
    assert!(seen
        .iter()
        .any(|b| user_message(b).starts_with("Context: The Eiffel Tower is an iron tower")));
    let e = d.err(&json!({"op": "grade", "unit": "x", "reference": CONTEXT_FAIL, "options": opts}));
    assert!(e.contains("judge_llm"), "{e}");
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// (source key, error) of every failed row, by key.
fn job_errors(conn: &Connection) -> Vec<(String, String)> {
    conn.prepare("SELECT source_key, error FROM uq_job_error ORDER BY source_key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn make_db(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE bios(id INTEGER PRIMARY KEY, question TEXT, response TEXT, samples TEXT, wiki TEXT);
         INSERT INTO bios VALUES
          (1, 'Tell me about the Eiffel Tower.', 'The Eiffel Tower is in Paris. It is made of gold.',
           json_array('The Eiffel Tower stands in Paris and is made of iron.', 'Paris has the iron Eiffel Tower.'),
           'The Eiffel Tower is a wrought-iron lattice tower in Paris.'),
          (2, 'Tell me about the Eiffel Tower again.', 'The Eiffel Tower is in Paris. Paris is beautiful.',
           json_array('The Eiffel Tower is in Paris.', 'Paris, home of the Eiffel Tower, is beautiful.'),
           'The Eiffel Tower is in Paris, France.'),
          (3, 'A failing one.', 'The Eiffel Tower is in Paris.', json_array('It is in Paris.'), '{CONTEXT_FAIL}'),
          (4, 'Bad samples.', 'The Eiffel Tower is in Paris.', 'not json', 'x');"
    ))
    .unwrap();
    conn
}

#[test]
fn job_writes_scores_labels_and_uad_once() {
    let server = fake();
    let dir = tmpdir("job-recorded");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("bios.db");
    let mut conn = make_db(&db);
    let options = json!({
        "scorers": ["entailment", "matched_noncontradiction"],
        "judge_llm": server.config(), "decomposition_llm": server.config(),
        "reconstruction_llm": server.config(),
        "reference_column": "wiki", "grade": true, "objectivity": true,
        "chunk_size": 2, "prices": {"prompt": 1.0, "completion": 2.0}
    });
    let job =
        uqd::jobs::create::create_job("test", &mut conn, "bios", options.as_object().unwrap())
            .unwrap();
    let mut seen = Vec::new();
    let status = run_job(
        &ENGINE,
        &d.llm,
        &db,
        job,
        &AtomicBool::new(false),
        &mut |p| seen.push((p.done, p.total)),
    )
    .unwrap();
    assert_eq!(status, "done");
    assert_eq!(seen.last(), Some(&(4, 4)), "{seen:?}");

    // Rows 1 and 2 scored; row 3's grading call failed, row 4's samples are not JSON.
    assert_eq!(count(&conn, "SELECT count(*) FROM uq_answer"), 2);
    let errors = job_errors(&conn);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].1.contains("judge_llm"), "{errors:?}");
    assert!(
        errors[1].1.contains("samples") && errors[1].1.contains("json_array"),
        "{errors:?}"
    );
    let (status, done, total, errs, calls, pt, ct, cost): (String, i64, i64, i64, i64, i64, i64, f64) = conn
        .query_row(
            "SELECT status, done, total, errors, llm_calls, prompt_tokens, completion_tokens, cost_usd FROM uq_jobs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), done, total, errs), ("done", 4, 4, 2));
    // Every successful fake call reports 10 prompt and 3 completion tokens.
    assert!(calls > 0, "llm calls counted");
    assert_eq!((pt, ct), (10 * calls, 3 * calls));
    assert!((cost - (pt as f64 * 1.0 + ct as f64 * 2.0) / 1e6).abs() < 1e-12);

    // Labels: FactScore and objectivity per unit, as recorded.
    let labels: Vec<(String, String, Option<i64>)> = conn
        .prepare(
            "SELECT u.text, l.kind, l.label FROM uq_label l JOIN uq_unit u USING (unit_id) ORDER BY u.unit_id, l.kind",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let find = |text: &str, kind: &str| {
        labels
            .iter()
            .find(|(t, k, _)| t == text && k == kind)
            .unwrap_or_else(|| panic!("no {kind} label for {text}: {labels:?}"))
            .2
    };
    assert_eq!(find("It is made of gold.", "factual"), Some(0));
    assert_eq!(find("The Eiffel Tower is in Paris.", "factual"), Some(1));
    assert_eq!(find("Paris is beautiful.", "objective"), Some(0));
    assert_eq!(find("It is made of gold.", "objective"), Some(1));
    // The views join scores with labels; the grade is the mean unit label.
    let grade: f64 = conn
        .query_row(
            "SELECT grade FROM uq_scored_answers WHERE source_key = '1' AND scorer = 'entailment'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(grade, 0.5);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM uq_scored_units WHERE label IS NOT NULL"
        ),
        2 * count(&conn, "SELECT count(*) FROM uq_unit")
    );

    // Resuming a finished job, or the same job again after its status is reset, writes nothing twice.
    let before = count(&conn, "SELECT count(*) FROM uq_unit_score");
    conn.execute("UPDATE uq_job SET status = 'running'", [])
        .unwrap();
    run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM uq_unit_score"), before);
    assert_eq!(count(&conn, "SELECT count(*) FROM uq_answer"), 2);
    assert_eq!(count(&conn, "SELECT count(*) FROM uq_job_error"), 2);
}

#[test]
fn job_runs_uad_on_claims() {
    let server = fake();
    let dir = tmpdir("job-uad");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("bios.db");
    let mut conn = make_db(&db);
    conn.execute("DELETE FROM bios WHERE id > 1", []).unwrap();
    // Coverage off: this test is about UAD over the claims; coverage has its own (trust.rs).
    let options = json!({
        "granularity": "claim", "scorers": ["entailment"], "uad": true, "coverage": "off",
        "llm": server.config()
    });
    let job =
        uqd::jobs::create::create_job("test", &mut conn, "bios", options.as_object().unwrap())
            .unwrap();
    let status = run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(status, "done");
    let (n_units, n_kept, refined, scorer): (i64, i64, String, String) = conn
        .query_row(
            "SELECT n_units, n_kept, refined_response, scorer FROM uq_uad",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((n_units, scorer.as_str()), (2, "entailment"));
    // Kept = claims scoring at least 1/3, as the stored unit scores say.
    let above: i64 = count(
        &conn,
        "SELECT count(*) FROM uq_unit_score WHERE scorer = 'entailment' AND score >= 1.0/3",
    );
    assert_eq!(n_kept, above);
    if n_kept > 0 {
        assert_eq!(refined, "The Eiffel Tower is in Paris.");
    }
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM uq_unit WHERE granularity = 'claim'"
        ),
        2
    );
}

#[test]
fn grading_on_the_embedded_llm() {
    let Some(model) = local_model() else { return };
    let d = Daemon::new(&tmpdir("grade-local"), model);
    let r = d.ok(
        &json!({"op": "grade", "unit": "Paris is the capital of France.",
                         "reference": "Paris is the capital and largest city of France."}),
    );
    assert!(r["label"].is_boolean() || r["label"].is_null(), "{r}");
    assert!(!r["raw"].as_str().unwrap().is_empty(), "{r}");
    assert!(
        r["grader"].as_str().unwrap().starts_with("factscore:local"),
        "{r}"
    );
    let o = d.ok(&json!({"op": "objectivity", "claim": "Paris is the capital of France."}));
    assert!(o["label"].is_boolean() || o["label"].is_null(), "{o}");
    // The same question again is answered from the completion cache: the same reply.
    let again = d.ok(
        &json!({"op": "grade", "unit": "Paris is the capital of France.",
                             "reference": "Paris is the capital and largest city of France."}),
    );
    assert_eq!(again, r);
}

#[test]
fn big_tables_are_read_page_by_page_and_duplicate_ids_end() {
    let dir = tmpdir("job-pages");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("big.db");
    let mut conn = Connection::open(&db).unwrap();
    // 1,100 rows (more than two pages of 512) whose answers are NULL: each is a row error, fast.
    conn.execute_batch(
        "CREATE TABLE t(k INTEGER, answer TEXT, samples TEXT);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1100)
         INSERT INTO t SELECT i, NULL, '[\"s\"]' FROM n;
         INSERT INTO t VALUES (7, NULL, '[\"s\"]'), (7, NULL, '[\"s\"]');",
    )
    .unwrap();
    let options = json!({"id_column": "k", "chunk_size": 100, "scorers": ["entailment"]});
    let job = uqd::jobs::create::create_job("test", &mut conn, "t", options.as_object().unwrap())
        .unwrap();
    let status = run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(status, "done");
    // Key 7 appears three times: one error row for it, and the job still ends.
    assert_eq!(count(&conn, "SELECT count(*) FROM uq_job_error"), 1100);
    assert_eq!(count(&conn, "SELECT done FROM uq_job"), 1100);
    assert_eq!(count(&conn, "SELECT total FROM uq_job"), 1100);
}

#[test]
fn stored_units_claim_unions_and_labels_come_from_columns() {
    let dir = tmpdir("job-columns");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("cols.db");
    let mut conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT, claims TEXT, uni TEXT, labels TEXT);
         INSERT INTO t VALUES
          (1, 'x', json_array('Paris is in France.'), json_array('Paris is in France.', 'Paris is in Peru.'),
           json_array('Paris is in France.', 'Paris is in Peru.', 'Paris is big.'), json_array(1, 0)),
          (2, 'x', json_array('Paris is in France.'), json_array('Paris is in France.'), json_array('Paris is in France.'), json_array(1, 0)),
          (3, 'x', json_array('Paris is in France.'), '[1, 2]', NULL, NULL),
          (4, 'x', json_array('Paris is in France.'), json_array('Paris is in France.'), json_array('Paris is in France.'), json_array(null));",
    )
    .unwrap();
    let options = json!({"granularity": "claim", "scorers": ["entailment", "page_rank"],
                         "units_column": "claims", "claim_union_column": "uni", "labels_column": "labels"});
    let job = uqd::jobs::create::create_job("test", &mut conn, "t", options.as_object().unwrap())
        .unwrap();
    run_to_end(&d.llm, &db, job).unwrap();
    let errors = job_errors(&conn);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].0 == "2" && errors[0].1.contains("2 labels for 1 units"),
        "{errors:?}"
    );
    assert!(
        errors[1].0 == "3" && errors[1].1.contains("JSON array of strings"),
        "{errors:?}"
    );
    // Row 1: the given claims are the units, labelled 1 and 0 by the column.
    let units: Vec<(String, Option<i64>)> = conn
        .prepare(
            "SELECT u.text, l.label FROM uq_unit u JOIN uq_answer a USING (answer_id) \
             LEFT JOIN uq_label l ON l.unit_id = u.unit_id AND l.grader = 'column:labels' \
             WHERE a.source_key = '1' ORDER BY u.position",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        units,
        vec![
            ("Paris is in France.".to_string(), Some(1)),
            ("Paris is in Peru.".to_string(), Some(0))
        ]
    );
    // Row 4's null label leaves its unit unlabelled.
    assert_eq!(
        count(&conn, "SELECT count(*) FROM uq_label l JOIN uq_unit u USING (unit_id) JOIN uq_answer a USING (answer_id) WHERE a.source_key = '4'"),
        0
    );
    // The graph over the given union has three claim nodes: page_rank scores differ from a
    // graph over the two units alone, and the France claim (entailed) ranks above Peru.
    let pr: Vec<f64> = conn
        .prepare(
            "SELECT s.score FROM uq_unit_score s JOIN uq_unit u USING (unit_id) JOIN uq_answer a USING (answer_id) \
             WHERE a.source_key = '1' AND s.scorer = 'page_rank' ORDER BY u.position",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(pr[0] > pr[1], "{pr:?}");
    // The job's scores are those of the same units scored with the column's union, and not
    // those of the same units without it (a graph of the two units alone).
    let direct = |union: Value| -> Vec<f64> {
        let r: uq_core::protocol::ScoreResult = serde_json::from_value(d.ok(&json!({
            "op": "score", "response": "x", "samples": ["Paris is in France."],
            "options": {"granularity": "claim", "scorers": ["page_rank"],
                        "units": ["Paris is in France.", "Paris is in Peru."], "claim_union": union}
        })))
        .unwrap();
        r.unit_scores("page_rank")
    };
    let with_union = direct(json!([
        "Paris is in France.",
        "Paris is in Peru.",
        "Paris is big."
    ]));
    let without = direct(json!(["Paris is in France.", "Paris is in Peru."]));
    assert_eq!(pr.len(), 2);
    for (j, w) in pr.iter().zip(&with_union) {
        assert!(
            (j - w).abs() < 1e-9,
            "job {pr:?} vs the same union scored directly {with_union:?}"
        );
    }
    assert!(
        pr.iter().zip(&without).any(|(j, w)| (j - w).abs() > 1e-6),
        "the union column changed nothing: job {pr:?}, without the union {without:?}"
    );
}
