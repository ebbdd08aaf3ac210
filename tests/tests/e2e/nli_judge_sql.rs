//! The NLI judge (option `nli_llm`, docs/reference.md "NLI judge") in SQL, one case per scorer
//! family, through the real extension in /usr/bin/sqlite3 and the real daemon, with the fake
//! OpenAI server as the judge (and as the question, answer and reconstruction LLM).
//!
//! The judge's replies are scripted per (premise, hypothesis): p_e ≥ 0.5 → "Yes" with
//! log-probability ln p_e, else "No" with ln(1 − p_e), so the judge's p_e is the scripted one
//! (binary: p_c = 1 − p_e). Each case checks that its scores are what those p_e imply, that the
//! judge was called (the fake server's requests), and at the end that the NLI model never scored
//! a pair (`nli cache entries: 0` in `uq_debug()`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use uq_fake_openai::{message, user_message, FakeOpenAi, Reply, Request};
use uq_integration::*;

/// Scripted p_e per (premise, hypothesis); NaN: a reply with no label.
type Script = Arc<Mutex<HashMap<(String, String), f64>>>;

fn is_judge(body: &Value) -> bool {
    message(body, "system").starts_with("You check whether a text supports a statement")
}

/// (premise, hypothesis) of a judge prompt ("Text: …\n\nStatement: …\n\n…").
fn pair_of(user: &str) -> (String, String) {
    let premise = user
        .strip_prefix("Text: ")
        .and_then(|r| r.split("\n\nStatement: ").next())
        .unwrap_or_default();
    let hypothesis = user
        .split("\n\nStatement: ")
        .nth(1)
        .and_then(|r| r.split("\n\n").next())
        .unwrap_or_default();
    (premise.to_string(), hypothesis.to_string())
}

/// A success whose only choice is `word`, its first token's log-probability `logprob`.
fn judge_reply(word: &str, logprob: f64) -> Reply {
    Reply::status(
        200,
        &json!({"id": "chatcmpl-judge", "object": "chat.completion", "model": "fake-model-0001",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": word, "refusal": null},
                "logprobs": {"content": [{"token": word, "logprob": logprob}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
        .to_string(),
    )
}

const QUESTION: &str = "Which city is the capital of France?";
const RECONSTRUCTED: &str = "Berlin is the capital of Germany. Berlin has ten moons.";
const GARBLED: &str = "Bonn is the capital of Germany. Bonn has nine moons.";

/// The fake server: judge calls answered from `script` (unscripted pairs are recorded in
/// `unknown` and answered p_e = 0.5), question and answer calls of unit-QA, and the
/// reconstruction of UAD.
fn server(script: Script, unknown: Arc<Mutex<Vec<(String, String)>>>) -> FakeOpenAi {
    FakeOpenAi::with_handler(move |r: &Request| {
        let body = &r.body;
        let user = user_message(body);
        if is_judge(body) {
            let pair = pair_of(&user);
            let p = script.lock().unwrap().get(&pair).copied();
            let p = p.unwrap_or_else(|| {
                unknown.lock().unwrap().push(pair);
                0.5
            });
            return if p.is_nan() {
                Reply::Text("I cannot tell.".into())
            } else if p >= 0.5 {
                judge_reply("Yes", p.ln())
            } else {
                judge_reply("No", (1.0 - p).ln())
            };
        }
        if user.contains("Create a specific question that has this exact claim") {
            return Reply::Text(QUESTION.into());
        }
        if user.contains("answer with as few words as possible") {
            // y0 at temperature 0: "City 0"; the samples: "City 0", "City 1".
            return Reply::Text("City {i}".into());
        }
        if user.contains("synthesize these facts") {
            return Reply::Text(if user.contains("Bonn") {
                GARBLED.into()
            } else {
                RECONSTRUCTED.into()
            });
        }
        Reply::Error(400, format!("unexpected prompt: {user}"))
    })
}

struct Judge {
    sb: Sandbox,
    fake: FakeOpenAi,
    script: Script,
    unknown: Arc<Mutex<Vec<(String, String)>>>,
    /// The judge's (and other roles') LLM config.
    cfg: Value,
}

impl Judge {
    fn new(name: &str) -> Judge {
        let sb = Sandbox::new(name);
        let cache = sb.dir.join("completions.sqlite").display().to_string();
        let sb = sb.with_env("UQ_CACHE_DB", &cache);
        let script: Script = Arc::default();
        let unknown = Arc::new(Mutex::new(Vec::new()));
        let fake = server(script.clone(), unknown.clone());
        let cfg = fake.config();
        Judge {
            sb,
            fake,
            script,
            unknown,
            cfg,
        }
    }

    fn set(&self, pairs: &[(&str, &str, f64)]) {
        let mut s = self.script.lock().unwrap();
        for (p, h, e) in pairs {
            s.insert((p.to_string(), h.to_string()), *e);
        }
    }

    /// Judge calls seen so far, as (premise, hypothesis).
    fn judged(&self) -> Vec<(String, String)> {
        self.fake
            .seen()
            .iter()
            .filter(|b| is_judge(b))
            .map(|b| pair_of(&user_message(b)))
            .collect()
    }

    /// `uq_unit_scores` rows of `scorer`, by unit_idx: the scores (None: NULL).
    fn unit_scores(&self, response: &str, samples: &[&str], options: &Value) -> Vec<Option<f64>> {
        let out = self.sb.sqlite_ok(&format!(
            "SELECT coalesce(score, 'NULL') FROM uq_unit_scores({}, {}, {}) ORDER BY unit_idx;",
            lit(response),
            json_lit(samples),
            lit(&options.to_string())
        ));
        out.lines().map(|l| l.parse().ok()).collect()
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn every_nli_scorer_family_uses_the_llm_judge() {
    let j = Judge::new("nli-judge-sql");
    let cfg = j.cfg.clone();

    // unit-response: entailment = mean over the samples of the scripted p_e.
    let (u1, u2) = (
        "Paris is the capital of France.",
        "Lyon is the capital of France.",
    );
    let (s0, s1) = (
        "The capital of France is Paris.",
        "Paris, on the Seine, is the French capital.",
    );
    j.set(&[(s0, u1, 0.9), (s1, u1, 0.7), (s0, u2, 0.2), (s1, u2, 0.4)]);
    let before = j.fake.requests();
    let got = j.unit_scores(
        &format!("{u1} {u2}"),
        &[s0, s1],
        &json!({"units": [u1, u2], "scorers": ["entailment"], "nli_llm": cfg, "nli_prompt": "binary"}),
    );
    assert!(
        close(got[0], 0.8) && close(got[1], 0.3),
        "unit-response: {got:?}"
    );
    assert_eq!(j.fake.requests() - before, 4, "one judge call per pair");

    // matched-unit: one unit per sample, so the match is that unit: mean of the p_e.
    let (m0, m1) = ("Paris is France's capital.", "Lyon is France's capital.");
    let (v1, v2) = (
        "Paris is the French capital.",
        "Lyon is the French capital.",
    );
    j.set(&[
        (m0, v1, 0.6),
        (m1, v1, 0.8),
        (m0, v2, 0.1),
        (m1, v2, 0.5),
        (v1, m0, 0.6),
        (v1, m1, 0.8),
        (v2, m0, 0.1),
        (v2, m1, 0.5),
    ]);
    let before = j.fake.requests();
    let got = j.unit_scores(
        &format!("{v1} {v2}"),
        &[m0, m1],
        &json!({"units": [v1, v2], "sample_units": [[m0], [m1]], "granularity": "claim",
                "scorers": ["matched_entailment"], "nli_llm": cfg, "nli_prompt": "binary"}),
    );
    assert!(
        close(got[0], 0.7) && close(got[1], 0.3),
        "matched-unit: {got:?}"
    );
    assert!(
        j.fake.requests() - before >= 4,
        "matched-unit: judge not called"
    );

    // graph (claim granularity, claim_union): the edges are the judge's p_e ≥ graph_threshold;
    // a claim no answer entails is isolated (PageRank's teleport share only), one every answer
    // entails is central.
    let (g1, g2) = ("Rome is in Italy.", "Rome is on the Moon.");
    let (gr, gs0, gs1) = (
        "Rome is in Italy, on the Tiber.",
        "Rome is an Italian city.",
        "Italy's capital is Rome.",
    );
    j.set(&[
        (gr, g1, 0.9),
        (gs0, g1, 0.8),
        (gs1, g1, 0.95),
        (gr, g2, 0.1),
        (gs0, g2, 0.05),
        (gs1, g2, 0.2),
    ]);
    let before = j.fake.requests();
    let got = j.unit_scores(
        gr,
        &[gs0, gs1],
        &json!({"units": [g1], "claim_union": [g1, g2], "sample_units": [[g1], [g1]],
                "granularity": "claim", "scorers": ["page_rank"], "nli_llm": cfg, "nli_prompt": "binary"}),
    );
    assert!(got[0].is_some_and(|x| x > 0.0), "graph: {got:?}");
    let graph_pairs: Vec<(String, String)> = j
        .judged()
        .into_iter()
        .filter(|(_, h)| h == g1 || h == g2)
        .collect();
    assert_eq!(
        j.fake.requests() - before,
        6,
        "claim union × (m + 1) judge calls: {graph_pairs:?}"
    );
    let mut with_g2 = j.unit_scores(
        gr,
        &[gs0, gs1],
        &json!({"units": [g1, g2], "claim_union": [g1, g2], "sample_units": [[g1], [g1]],
                "granularity": "claim", "scorers": ["page_rank"], "nli_llm": cfg, "nli_prompt": "binary"}),
    );
    assert_eq!(j.fake.requests() - before, 6, "the rerun is cached");
    let g2_score = with_g2.pop().flatten();
    assert!(
        g2_score.is_some_and(|x| x < 0.1)
            && with_g2[0].is_some_and(|x| x > 4.0 * g2_score.unwrap_or(1.0)),
        "graph: the claim no answer entails has no edge (only PageRank's teleport share): \
         {with_g2:?} {g2_score:?}"
    );

    // unit-QA's NLI: the fake LLM writes the question and the answers (y0 "City 0"; samples
    // "City 0", "City 1"); qa_noncontradiction = mean over the samples of
    // (1 − p_c(y0→y) + 1 − p_c(y→y0))/2, 1 for the identical answer.
    j.set(&[("City 0", "City 1", 0.3), ("City 1", "City 0", 0.5)]);
    let before = j.fake.requests();
    let got = j.unit_scores(
        "Paris is the capital.",
        &[s0, s1],
        &json!({"units": ["Paris is the capital."], "scorers": ["qa_noncontradiction"],
                "qa_samples": 2, "prompt": "Name the capital of France.", "llm": cfg,
                "nli_llm": cfg, "nli_prompt": "binary"}),
    );
    assert!(
        close(got[0], (1.0 + (0.3 + 0.5) / 2.0) / 2.0),
        "unit-QA: {got:?}"
    );
    let judged = j.judged();
    for pair in [("City 0", "City 1"), ("City 1", "City 0")] {
        assert!(
            judged.contains(&(pair.0.to_string(), pair.1.to_string())),
            "unit-QA: {pair:?} not judged: {judged:?}"
        );
    }
    assert!(
        j.fake.requests() - before >= 3 + 2,
        "question, answers, judge"
    );

    // Decomposition coverage: p_e(the claims joined, the sentence).
    let (c1, c2) = ("Oslo is in Norway.", "Oslo has a big zoo.");
    j.set(&[(c1, c1, 0.85), (c1, c2, 0.15)]);
    let before = j.fake.requests();
    let out = j.sb.sqlite_ok(&format!(
        "SELECT idx || '|' || entailment || '|' || covered FROM uq_coverage({}, {}) ORDER BY idx;",
        lit(&format!("{c1} {c2}")),
        lit(&json!({"units": [c1], "nli_llm": cfg, "nli_prompt": "binary"}).to_string())
    ));
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 2, "{out}");
    let e = |r: &[&str]| r[1].parse::<f64>().ok();
    assert!(
        close(e(&rows[0]), 0.85) && rows[0][2] == "1",
        "coverage: {out}"
    );
    assert!(
        close(e(&rows[1]), 0.15) && rows[1][2] == "0",
        "coverage: {out}"
    );
    assert_eq!(
        j.fake.requests() - before,
        2,
        "coverage: one call per sentence"
    );

    // Verified reconstruction: the claims scored by the judge (entailment), the kept one
    // rewritten by the fake LLM, each sentence of the rewrite checked by the judge.
    let (k1, k2) = ("Berlin is the capital of Germany.", "Berlin has ten moons.");
    let (t0, t1) = (
        "Germany's capital is Berlin.",
        "Berlin, Germany's capital, has no moon.",
    );
    j.set(&[
        (t0, k1, 0.9),
        (t1, k1, 0.8),
        (t0, k2, 0.1),
        (t1, k2, 0.2),
        (k1, k1, 0.95),
        (k1, k2, 0.05),
    ]);
    let before = j.fake.requests();
    let uad_opts =
        json!({"units": [k1, k2], "llm": cfg, "nli_llm": cfg, "nli_prompt": "binary"}).to_string();
    let out = j.sb.sqlite_ok(&format!(
        "SELECT json_group_array(json_object('idx', idx, 'score', score, 'kept', kept,
           'refined', refined_response)) FROM uad_claims({r}, {s}, {o});
         SELECT uad_filter({r}, {s}, {o});
         SELECT uq_debug();",
        r = lit(RECONSTRUCTED),
        s = json_lit(&[t0, t1]),
        o = lit(&uad_opts)
    ));
    let mut lines = out.lines();
    let rows: Value = serde_json::from_str(lines.next().unwrap_or_default()).expect("json rows");
    assert!(
        close(rows[0]["score"].as_f64(), 0.85) && close(rows[1]["score"].as_f64(), 0.15),
        "uad: {rows}"
    );
    assert_eq!(
        (rows[0]["kept"].as_i64(), rows[1]["kept"].as_i64()),
        (Some(1), Some(0)),
        "{rows}"
    );
    assert_eq!(
        rows[0]["refined"],
        json!(k1),
        "verification removed the invented sentence"
    );
    assert_eq!(lines.next(), Some(k1), "uad_filter: {out}");
    // 4 scoring pairs, 2 verification pairs and the lost-claim check's (k1, k1), which the
    // verification judged already.
    assert!(
        out.contains(&format!(
            "verification removed \"{k2}\" (not entailed by the kept claims)"
        )) && out.contains("judged 7 NLI pairs"),
        "uq_debug: {out}"
    );
    assert!(!out.contains("warning"), "k1 is kept and stated: {out}");
    assert_eq!(
        j.fake.requests() - before,
        4 + 1 + 2,
        "4 scoring calls, the reconstruction, 2 verification calls (the lost-claim check's pair \
         and uad_filter cached)"
    );

    // The NLI model never scored a pair: every pair above went to the judge.
    let debug = j.sb.sqlite_ok("SELECT uq_debug();");
    assert!(debug.contains("nli cache entries: 0"), "{debug}");
    let unknown = j.unknown.lock().unwrap().clone();
    assert!(
        unknown.iter().all(|(p, h)| p == h || h.starts_with("City")),
        "unscripted judge pairs: {unknown:?}"
    );
}

/// A judge reply that cannot be parsed while UAD verifies its reconstruction: the sentence is
/// removed (its p_e is NULL, never 0 read as a score) and `uq_debug()` names the unparsed pair.
#[test]
fn unparsed_verification_pairs_are_noted_in_uq_debug() {
    let j = Judge::new("nli-judge-uad-unparsed");
    let cfg = j.cfg.clone();
    let (k1, t0) = (
        "Bonn is the capital of Germany.",
        "Germany's capital is Bonn.",
    );
    j.set(&[
        (t0, k1, 0.9),
        (k1, k1, 0.95),
        (k1, "Bonn has nine moons.", f64::NAN),
    ]);
    let out = j.sb.sqlite_ok(&format!(
        "SELECT uad_filter({}, {}, {});
         SELECT uq_debug();",
        lit(GARBLED),
        json_lit(&[t0]),
        lit(
            &json!({"units": [k1], "llm": cfg, "nli_llm": cfg, "nli_prompt": "binary"}).to_string()
        )
    ));
    assert_eq!(out.lines().next(), Some(k1), "{out}");
    // 1 scoring pair, 2 verification pairs and the lost-claim check's (k1, k1), from the
    // cache.
    assert!(
        out.contains("judged 4 NLI pairs")
            && out.contains("1 unparsed after up to 2 retries")
            && out.contains("verification removed \"Bonn has nine moons.\""),
        "uq_debug: {out}"
    );
    // 1 scoring call, the reconstruction, 1 + (1 + 2 retries) verification calls.
    assert_eq!(j.fake.requests(), 1 + 1 + 1 + 3);
}
