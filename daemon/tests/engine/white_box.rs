//! White-box scores end to end against a fake OpenAI-compatible server on 127.0.0.1 whose
//! replies carry token log-probabilities chosen by the test: `generate` keeps each token with its
//! offset and alternatives, the response- and unit-level white-box scorers give the values
//! computed here by hand, a job with a generation LLM stores the tokens and scores white-box
//! and black-box units in one pass, and the faults a server can send (no `top_logprobs`, tokens
//! that do not tile the text, a positive log-probability) give NULL with a note or a clear
//! error, never a crash.

use crate::common;

use common::{run_to_end, tmpdir, Daemon, FakeOpenAi};
use rusqlite::Connection;
use serde_json::{json, Value};
use uq_fake_openai::Reply;

const QUESTION: &str = "Where is Paris?";
/// The answer's tokens: the first sentence sure (p = 0.9 a token), the second not (p = 0.4).
const TOKENS: [(&str, f64); 8] = [
    ("Paris", 0.9),
    (" is", 0.9),
    (" in", 0.9),
    (" France", 0.9),
    (".", 0.9),
    (" It", 0.4),
    (" rains", 0.4),
    (".", 0.4),
];
const S1: &str = "Paris is in France.";
const S2: &str = "It rains.";

fn answer() -> String {
    TOKENS.iter().map(|t| t.0).collect()
}

/// The reply's `logprobs.content` in a mode named by the config's model: `tiled` (the tokens
/// and two alternatives each), `no-top` (no alternatives), `untiled` (token texts that are not
/// the content), `positive` (a log-probability above 0).
fn content(mode: &str) -> Value {
    let tokens: Vec<Value> = TOKENS
        .iter()
        .map(|&(t, p)| {
            let token = if mode == "untiled" {
                t.trim().to_string()
            } else {
                t.to_string()
            };
            let mut v = json!({"token": token, "logprob": p.ln()});
            if mode != "no-top" {
                v["top_logprobs"] =
                    json!([{"token": t, "logprob": p.ln()}, {"token": "x", "logprob": (1.0 - p).ln()}]);
            }
            v
        })
        .collect();
    let mut tokens = tokens;
    if mode == "positive" {
        tokens[1]["logprob"] = json!(0.5);
    }
    Value::Array(tokens)
}

fn server() -> FakeOpenAi {
    FakeOpenAi::with_handler(|r| {
        let n = r.body["n"].as_u64().unwrap_or(1);
        let mode = r.model().to_string();
        // uqlm's P(true) judge: "True" at p = 0.7 for the answer, "Maybe" for anything else.
        if common::message(&r.body, "system").contains("\"True\" or \"False\"") {
            let user = common::user_message(&r.body);
            let (word, p) = if user.contains(&format!("Proposed Answer: {}", answer())) {
                ("True", 0.7f64)
            } else {
                ("Maybe", 0.9)
            };
            let body = json!({"id": "j", "object": "chat.completion", "model": mode,
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": word},
                    "logprobs": {"content": [{"token": word, "logprob": p.ln()}]}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}});
            return Reply::status(200, &body.to_string());
        }
        let choices: Vec<Value> = (0..n)
            .map(|i| {
                json!({"index": i, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": answer()},
                       "logprobs": {"content": content(&mode)}})
            })
            .collect();
        let body = json!({"id": "x", "object": "chat.completion", "model": mode,
                          "choices": choices,
                          "usage": {"prompt_tokens": 5, "completion_tokens": 8 * n, "total_tokens": 5 + 8 * n}});
        Reply::status(200, &body.to_string())
    })
}

fn llm(fake: &FakeOpenAi, mode: &str) -> Value {
    let mut c = fake.config();
    c["model"] = json!(mode);
    c["logprobs"] = json!(true);
    c["top_logprobs"] = json!(2);
    c
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// 1 − H / ln 2 of two alternatives p and 1 − p.
fn negentropy(p: f64) -> f64 {
    let h = -(p * p.ln() + (1.0 - p) * (1.0 - p).ln());
    1.0 - h / 2f64.ln()
}

fn unit_score(r: &Value, scorer: &str, position: usize) -> Value {
    r["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scorer"] == scorer && s["unit_idx"] == position)
        .map(|s| s["score"].clone())
        .unwrap_or_else(|| panic!("no {scorer} score of unit {position}: {r}"))
}

#[test]
fn generated_tokens_give_the_white_box_scores_by_hand() {
    let fake = server();
    let d = Daemon::new(&tmpdir("white-box"), "/nonexistent.gguf".into());
    let gen = d.ok(&json!({"op": "generate", "prompt": QUESTION, "n": 2,
        "options": {"generation_llm": llm(&fake, "tiled")}}));
    let rows = gen["responses"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        fake.seen()[0]["top_logprobs"],
        json!(2),
        "top_logprobs asked for"
    );
    let offsets: Vec<u64> = rows[0]["logprobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, vec![0, 5, 8, 11, 18, 19, 22, 28]);

    let scorers = [
        "min_probability",
        "sequence_probability",
        "mean_token_negentropy",
        "min_token_negentropy",
        "probability_margin",
        "monte_carlo_probability",
        "claim_probability",
        "claim_normalized_probability",
        "claim_min_token_negentropy",
        "entailment",
    ];
    let samples: Vec<&Value> = rows[1..].iter().map(|r| &r["text"]).collect();
    let r = d.ok(
        &json!({"op": "score", "response": answer(), "samples": samples, "options": {
        "scorers": scorers, "units": [S1, S2],
        "response_logprobs": rows[0]["logprobs"],
        "sample_logprobs": [rows[1]["logprobs"], rows[2]["logprobs"]]}}),
    );
    let rs = &r["response_scores"];
    let f = |k: &str| rs[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}"));
    let geo = (0.9f64.powi(5) * 0.4f64.powi(3)).powf(1.0 / 8.0);
    assert!(close(f("min_probability"), 0.4), "{r}");
    assert!(close(f("sequence_probability"), geo), "{r}");
    assert!(
        close(f("monte_carlo_probability"), geo),
        "the samples are the same: {r}"
    );
    let (n9, n4) = (negentropy(0.9), negentropy(0.4));
    assert!(
        close(f("mean_token_negentropy"), (5.0 * n9 + 3.0 * n4) / 8.0),
        "{r}"
    );
    assert!(close(f("min_token_negentropy"), n9.min(n4)), "{r}");
    assert!(
        close(f("probability_margin"), (5.0 * 0.8 + 3.0 * 0.2) / 8.0),
        "{r}"
    );
    // Unit level: each sentence's own tokens.
    let u = |s: &str, i: usize| unit_score(&r, s, i).as_f64().unwrap();
    assert!(close(u("claim_probability", 0), 0.9f64.powi(5)), "{r}");
    assert!(close(u("claim_probability", 1), 0.4f64.powi(3)), "{r}");
    assert!(close(u("claim_normalized_probability", 0), 0.9), "{r}");
    assert!(close(u("claim_normalized_probability", 1), 0.4), "{r}");
    assert!(close(u("claim_min_token_negentropy", 1), n4), "{r}");
    assert!(
        u("entailment", 0) > 0.5,
        "the black-box scorer beside them: {r}"
    );
    assert!(r.get("notes").is_none(), "{r}");

    // As UAD's scorer: the unsure sentence (normalised probability 0.4) goes at the cut 0.5.
    let uad = d.ok(
        &json!({"op": "uad", "response": answer(), "samples": samples, "options": {
        "uad_scorer": "claim_normalized_probability", "units": [S1, S2], "granularity": "sentence",
        "threshold": 0.5, "response_logprobs": rows[0]["logprobs"]}}),
    );
    assert_eq!(uad["refined_response"], json!(S1), "{uad}");
    assert_eq!(uad["removed_sentences"], json!([S2]), "{uad}");
}

#[test]
fn faults_from_the_server_give_null_with_a_note_or_a_clear_error() {
    let fake = server();
    let d = Daemon::new(&tmpdir("white-box-faults"), "/nonexistent.gguf".into());
    let tokens = |mode: &str| {
        let g = d.ok(&json!({"op": "generate", "prompt": QUESTION, "n": 0,
            "options": {"generation_llm": llm(&fake, mode)}}));
        g["responses"][0]["logprobs"].clone()
    };
    let score = |lp: &Value| {
        d.ok(
            &json!({"op": "score", "response": answer(), "samples": [answer()], "options": {
            "scorers": ["mean_token_negentropy", "min_probability", "claim_probability",
                        "claim_min_token_negentropy"],
            "units": [S1, S2], "response_logprobs": lp}}),
        )
    };
    // No alternatives: the negentropies NULL, saying so; the probabilities are there.
    let r = score(&tokens("no-top"));
    assert_eq!(
        r["response_scores"]["mean_token_negentropy"],
        Value::Null,
        "{r}"
    );
    assert!(close(
        r["response_scores"]["min_probability"].as_f64().unwrap(),
        0.4
    ));
    assert_eq!(unit_score(&r, "claim_min_token_negentropy", 0), Value::Null);
    assert!(unit_score(&r, "claim_probability", 0).is_f64(), "{r}");
    let notes = r["notes"].to_string();
    assert!(notes.contains("top_logprobs"), "{notes}");

    // Tokens that are not the text: no offsets, the unit scores NULL saying why.
    let lp = tokens("untiled");
    assert!(lp[0].get("offset").is_none(), "{lp}");
    let r = score(&lp);
    assert_eq!(unit_score(&r, "claim_probability", 0), Value::Null, "{r}");
    assert!(r["notes"].to_string().contains("do not tile"), "{r}");
    assert!(r["response_scores"]["min_probability"].is_f64(), "{r}");

    // A positive log-probability: the generation fails, naming the fix.
    let e = d.err(&json!({"op": "generate", "prompt": QUESTION, "n": 0,
        "options": {"generation_llm": llm(&fake, "positive")}}));
    assert!(
        e.contains("must be <= 0") && e.contains("logprobs=false"),
        "{e}"
    );
    // And as an option: an error naming it.
    let e = d.err(
        &json!({"op": "score", "response": answer(), "samples": [answer()], "options": {
        "scorers": ["min_probability"], "response_logprobs": [-0.1, 0.5]}}),
    );
    assert!(e.contains("response_logprobs[1]"), "{e}");
    let e = d.err(
        &json!({"op": "score", "response": answer(), "samples": [answer(), answer()],
        "options": {"scorers": ["monte_carlo_probability"], "response_logprobs": [-0.1],
        "sample_logprobs": [[-0.1]]}}),
    );
    assert!(
        e.contains("sample_logprobs") && e.contains("1 token lists for 2 samples"),
        "{e}"
    );
    // More lists than samples in use (num_samples): the first m.
    let r = d.ok(
        &json!({"op": "score", "response": answer(), "samples": [answer(), answer()],
        "options": {"scorers": ["monte_carlo_probability"], "response_logprobs": [-0.1],
        "sample_logprobs": [[-0.3], [-5.0]], "num_samples": 1}}),
    );
    let mc = r["response_scores"]["monte_carlo_probability"]
        .as_f64()
        .unwrap();
    assert!(close(mc, ((-0.1f64).exp() + (-0.3f64).exp()) / 2.0), "{r}");

    // P(true): one judge call, asked for log-probabilities, with uqlm's prompt; it needs the
    // question, and a reply that is not True/False is NULL with a note.
    let judge = json!({"judge_llm": fake.config(), "prompt": QUESTION, "scorers": ["p_true"]});
    let mut o = judge.clone();
    let r =
        d.ok(&json!({"op": "score", "response": answer(), "samples": [answer()], "options": o}));
    assert!(
        close(r["response_scores"]["p_true"].as_f64().unwrap(), 0.7),
        "{r}"
    );
    let asked = fake.seen().last().unwrap().clone();
    assert_eq!(asked["logprobs"], json!(true), "{asked}");
    assert!(
        common::user_message(&asked).contains("True or False:"),
        "{asked}"
    );
    let r = d.ok(&json!({"op": "score", "response": "Lyon.", "samples": [answer()], "options": o}));
    assert_eq!(r["response_scores"]["p_true"], Value::Null, "{r}");
    assert!(r["notes"].to_string().contains("True or False"), "{r}");
    o.as_object_mut().unwrap().remove("prompt");
    let e =
        d.err(&json!({"op": "score", "response": answer(), "samples": [answer()], "options": o}));
    assert!(e.contains("p_true") && e.contains("option prompt"), "{e}");

    // An answer of the user's own (no tokens): NULL, with the note naming the option.
    let r = d.ok(
        &json!({"op": "score", "response": answer(), "samples": [answer()], "options": {
        "scorers": ["claim_probability", "sequence_probability"], "units": [S1, S2]}}),
    );
    assert_eq!(unit_score(&r, "claim_probability", 0), Value::Null);
    assert_eq!(r["response_scores"]["sequence_probability"], Value::Null);
    assert!(r["notes"].to_string().contains("response_logprobs"), "{r}");
}

#[test]
fn a_job_with_a_generation_llm_stores_the_tokens_and_scores_both_kinds_in_one_pass() {
    let fake = server();
    let dir = tmpdir("white-box-job");
    let d = Daemon::new(&dir, "/nonexistent.gguf".into());
    let db = dir.join("q.db");
    let mut conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE qs(id INTEGER PRIMARY KEY, question TEXT, answer TEXT);
         INSERT INTO qs VALUES (1, 'Where is Paris?', NULL), (2, 'Where is Paris, again?', NULL);",
    )
    .unwrap();
    let options = json!({"generate": 2, "generation_llm": llm(&fake, "tiled"),
        "scorers": ["entailment", "claim_probability", "monte_carlo_probability"]});
    let job = uqd::jobs::create::create_job("test", &mut conn, "qs", options.as_object().unwrap())
        .unwrap();
    let calls = fake.requests();
    let status = run_to_end(&d.llm, &db, job).unwrap();
    assert_eq!(status, "done");
    assert!(fake.requests() > calls);
    let stored: Vec<(String, Option<String>)> = conn
        .prepare("SELECT answer, logprobs FROM uq_answer ORDER BY source_key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored.len(), 2);
    for (text, lp) in &stored {
        assert_eq!(text, &answer());
        let lp: Value = serde_json::from_str(lp.as_deref().expect("logprobs stored")).unwrap();
        assert_eq!(lp.as_array().unwrap().len(), 8, "{lp}");
        assert_eq!(lp[7]["offset"], json!(28), "{lp}");
    }
    let sample_lps: i64 = conn
        .query_row(
            "SELECT count(*) FROM uq_sample WHERE json_array_length(logprobs) = 8",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sample_lps, 4, "2 samples per answer, each with its tokens");
    // White-box and black-box unit scores side by side, and the response-level white-box one.
    let by_scorer: Vec<(String, i64, i64)> = conn
        .prepare(
            "SELECT scorer, count(*), count(score) FROM uq_unit_score GROUP BY scorer ORDER BY scorer",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        by_scorer,
        vec![
            ("claim_probability".to_string(), 4, 4),
            ("entailment".to_string(), 4, 4)
        ]
    );
    let p: f64 = conn
        .query_row(
            "SELECT min(score) FROM uq_unit_score WHERE scorer = 'claim_probability'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(close(p, 0.4f64.powi(3)), "{p}");
    let mc: Vec<Option<f64>> = conn
        .prepare("SELECT score FROM uq_response_score WHERE scorer = 'monte_carlo_probability'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(mc.len(), 2, "{mc:?}");
    let geo = (0.9f64.powi(5) * 0.4f64.powi(3)).powf(1.0 / 8.0);
    assert!(
        mc.iter().all(|x| x.is_some_and(|x| close(x, geo))),
        "{mc:?}"
    );
}
