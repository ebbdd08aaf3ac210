//! Unit-QA scorers, LLM claim merging for the graph scorers and the short-form baselines,
//! through the real daemon pipeline (real NLI / embedding engine) against a fake
//! OpenAI-compatible server with recorded replies. Expected values are the core maths on NLI
//! probabilities and embeddings fetched separately from the engine, plus hand-computed values.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{tmpdir, user_message, Daemon, FakeOpenAi, ENGINE};
use serde_json::{json, Value};
use uq_core::protocol::NliProbs;
use uq_core::score::black_box::{
    negentropy_pairs, noncontradiction_score, semantic_negentropy_of_answers, Clustering,
};
use uq_core::score::consistency::{bertscore_f1, normalized_cosine};
use uq_llm::prompts;

const QUESTION: &str = "Who was Marie Curie?";
const RESPONSE: &str = "Marie Curie was born in Warsaw. She won two Nobel Prizes.";
const UNIT_BORN: &str = "Marie Curie was born in Warsaw.";
const UNIT_NOBEL: &str = "Marie Curie won two Nobel Prizes.";
const SAMPLES: [&str; 3] = [
    "Marie Curie, a physicist, was born in Warsaw.",
    "Hello there!",
    "Born in Warsaw, Marie Curie was a physicist.",
];
const C_PHYSICIST: &str = "Marie Curie was a physicist.";
const C_PARIS: &str = "Marie Curie was born in Paris.";
const C_WARSAW: &str = "Marie Curie was born in Warsaw.";

/// The question the fake question LLM writes for a claim.
fn question_for(claim: &str) -> String {
    format!("Which fact does this state: {claim}?")
}

/// Recorded replies, a function of the request.
fn responder() -> Arc<common::Responder> {
    Arc::new(|body: &Value| {
        let u = user_message(body);
        if u.contains("Create a specific question that has this exact claim") {
            let claim = u
                .lines()
                .find_map(|l| l.trim().strip_prefix("Claim: "))
                .unwrap_or("?")
                .trim();
            return (200, format!("  {}\n", question_for(claim)));
        }
        if u.starts_with("Following this text:") {
            return (
                200,
                "Here are the questions:\n### Where was she born? ### What did she win?".into(),
            );
        }
        if u.contains("answer with as few words as possible") {
            // Questions about birth are answered consistently, the others differ per sample.
            return if u.contains("born") {
                (200, "Warsaw".into())
            } else {
                (200, "Answer {i}".into())
            };
        }
        if u.contains("Please breakdown") {
            let reply = if u.contains(SAMPLES[0]) {
                format!("### {C_PHYSICIST}\n### {C_WARSAW}")
            } else if u.contains(SAMPLES[2]) {
                format!("### {C_WARSAW}\n### {C_PHYSICIST}")
            } else {
                "### NONE".to_string()
            };
            return (200, reply);
        }
        if u.contains("Given two lists titled") {
            let new_list = u
                .split("**New Claim List:**\n")
                .nth(1)
                .and_then(|r| r.split("\nBegin with").next())
                .unwrap_or("");
            let mut reply = String::from(
                "**Verification Process:**\n- checked every claim\n**Compilation of Non-Entailed Claims:**\n",
            );
            for c in new_list.lines() {
                reply.push_str(&format!("- {c}\n"));
            }
            return (200, reply);
        }
        (400, format!("unexpected prompt: {u}"))
    })
}

fn setup(name: &str) -> (Daemon, FakeOpenAi) {
    let fake = FakeOpenAi::start(responder());
    let d = Daemon::new(&tmpdir(name), PathBuf::from("/nonexistent/SmolLM2.gguf"));
    (d, fake)
}

fn by_scorer(result: &Value, scorer: &str) -> Vec<f64> {
    result["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scorer"] == scorer)
        .map(|s| s["score"].as_f64().unwrap_or(f64::NAN))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The five whole-answer scores of one answer group `[y0, y1..]` from separately fetched
/// engine evidence: (noncontradiction, cosine, bert, exact, negentropy).
fn expected_group(g: &[String]) -> (f64, f64, f64, f64, f64) {
    let nli = |a: &str, b: &str| -> NliProbs {
        ENGINE.nli(&[(a.to_string(), b.to_string())]).unwrap()[0]
    };
    let cands = &g[1..];
    let fwd: Vec<NliProbs> = cands.iter().map(|y| nli(&g[0], y)).collect();
    let back: Vec<NliProbs> = cands.iter().map(|y| nli(y, &g[0])).collect();
    let nc = noncontradiction_score(&g[0], cands, &fwd, &back);
    let emb = ENGINE.embed(g).unwrap();
    let cos = (1..g.len())
        .map(|j| normalized_cosine(&emb[0], &emb[j]))
        .sum::<f64>()
        / cands.len() as f64;
    let tok = ENGINE.token_embeddings(g).unwrap();
    let bert = (1..g.len())
        .map(|j| bertscore_f1(&tok[0], &tok[j]))
        .sum::<f64>()
        / cands.len() as f64;
    let exact = cands.iter().filter(|c| **c == g[0]).count() as f64 / cands.len() as f64;
    let _ = negentropy_pairs(g);
    let ne = semantic_negentropy_of_answers(g, Clustering::Uqlm, |a, b| nli(&g[a], &g[b]));
    (nc, cos, bert, exact, ne)
}

const QA_SCORERS: [&str; 5] = [
    "qa_noncontradiction",
    "qa_cosine_sim",
    "qa_bert_score",
    "qa_exact_match",
    "qa_semantic_negentropy",
];

#[test]
fn unit_qa_scores_equal_the_core_maths_and_rerun_from_cache() {
    let (d, fake) = setup("unit-qa");
    let options = json!({
        "units": [UNIT_BORN, UNIT_NOBEL], "scorers": QA_SCORERS, "qa_samples": 3,
        "prompt": QUESTION, "llm": fake.config(),
    });
    let req = json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": options});
    let r = d.ok(&req);
    assert_eq!(r["units"], json!([UNIT_BORN, UNIT_NOBEL]));

    // Q = 1: one question call per unit with uqlm's one-question prompt; per question one call
    // for y0 (temperature 0) and one with n = 3 for the samples (temperature 1).
    let seen = fake.seen();
    let users: Vec<String> = seen.iter().map(user_message).collect();
    for unit in [UNIT_BORN, UNIT_NOBEL] {
        assert!(
            users.contains(&prompts::unit_qa_single_question(unit)),
            "{users:?}"
        );
        let answer = prompts::unit_qa_answer(&question_for(unit), Some(QUESTION), None);
        let calls: Vec<&Value> = seen.iter().filter(|b| user_message(b) == answer).collect();
        assert_eq!(calls.len(), 2, "original + samples for {unit}");
        let mut temps: Vec<(f64, u64)> = calls
            .iter()
            .map(|b| {
                (
                    b["temperature"].as_f64().unwrap(),
                    b["n"].as_u64().unwrap_or(1),
                )
            })
            .collect();
        temps.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(temps, vec![(0.0, 1), (1.0, 3)]);
    }
    assert_eq!(fake.requests(), 2 + 4);

    // Unit 1: every answer "Warsaw"; unit 2: y0 "Answer 0", samples "Answer 0/1/2".
    let g1 = strings(&["Warsaw", "Warsaw", "Warsaw", "Warsaw"]);
    let g2 = strings(&["Answer 0", "Answer 0", "Answer 1", "Answer 2"]);
    let (e1, e2) = (expected_group(&g1), expected_group(&g2));
    let want = |i: usize| -> Vec<f64> {
        [e1, e2]
            .iter()
            .map(|e| [e.0, e.1, e.2, e.3, e.4][i])
            .collect()
    };
    for (i, scorer) in QA_SCORERS.iter().enumerate() {
        let got = by_scorer(&r, scorer);
        let exp = want(i);
        assert_eq!(got.len(), 2, "{scorer}: {r}");
        for k in 0..2 {
            assert!(
                close(got[k], exp[k]),
                "{scorer} unit {k}: {got:?} vs {exp:?}"
            );
        }
        let mean = (exp[0] + exp[1]) / 2.0;
        assert!(close(r["response_scores"][scorer].as_f64().unwrap(), mean));
    }
    // Hand-computed: identical answers agree fully; exact match 1/3 for unit 2.
    assert_eq!(by_scorer(&r, "qa_exact_match"), vec![1.0, 1.0 / 3.0]);
    assert_eq!(by_scorer(&r, "qa_noncontradiction")[0], 1.0);
    assert_eq!(by_scorer(&r, "qa_semantic_negentropy")[0], 1.0);

    // A rerun is served by the completion cache: no new call, same result.
    let again = d.ok(&req);
    assert_eq!(fake.requests(), 6);
    assert_eq!(again, r);
}

#[test]
fn several_questions_are_averaged() {
    let (d, fake) = setup("unit-qa-q2");
    let r = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
            "units": [UNIT_NOBEL], "scorers": ["qa_exact_match"], "num_questions": 2,
            "qa_samples": 3, "temperature": 1.0, "llm": fake.config(),
        }}),
    );
    // The paper's question prompt with the response as context; two `###` questions.
    let users: Vec<String> = fake.seen().iter().map(user_message).collect();
    assert!(
        users.contains(&prompts::unit_qa_questions(RESPONSE, UNIT_NOBEL, 2)),
        "{users:?}"
    );
    // Equal temperatures: one call with n = 4 per question (y0 = sample 0).
    let answer_calls: Vec<Value> = fake
        .seen()
        .into_iter()
        .filter(|b| user_message(b).contains("as few words as possible"))
        .collect();
    assert_eq!(answer_calls.len(), 2);
    assert!(answer_calls.iter().all(|b| b["n"] == 4));
    // "Where was she born?" → all "Warsaw" → 1; "What did she win?" → "Answer 0" vs
    // "Answer 1/2/3" → 0. Unit score = mean over questions = 1/2.
    assert_eq!(by_scorer(&r, "qa_exact_match"), vec![0.5]);
}

#[test]
fn claim_merging_builds_the_union_like_uqlm() {
    let (d, fake) = setup("merge");
    let options = json!({"granularity": "claim", "units": [C_PHYSICIST, C_PARIS],
                         "llm": fake.config()});
    let union = d.ok(
        &json!({"op": "claim_union", "response": RESPONSE, "samples": SAMPLES,
                             "options": options}),
    );
    assert_eq!(union["claims"], json!([C_PHYSICIST, C_PARIS, C_WARSAW]));
    // Merges: sample 1 adds the Warsaw claim (only its claims not yet in the master list are
    // sent); sample 2 has no claims and sample 3 only known ones: no call for them.
    let merges: Vec<String> = fake
        .seen()
        .iter()
        .map(user_message)
        .filter(|u| u.contains("Given two lists titled"))
        .collect();
    assert_eq!(
        merges,
        vec![prompts::claim_merging(&[C_PHYSICIST, C_PARIS], &[C_WARSAW])]
    );
    let decompositions = fake
        .seen()
        .iter()
        .filter(|b| user_message(b).contains("Please breakdown"))
        .count();
    assert_eq!(
        decompositions, 3,
        "each sample decomposed once (the response has units)"
    );

    // Graph scores with the merged union equal those with the same union given by the caller.
    let scorers = ["page_rank", "closeness_centrality", "harmonic_centrality"];
    let merged = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "granularity": "claim", "units": [C_PHYSICIST, C_PARIS], "scorers": scorers,
        "llm": fake.config()}}),
    );
    let n = fake.requests();
    let given = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "granularity": "claim", "units": [C_PHYSICIST, C_PARIS], "scorers": scorers,
        "claim_union": union["claims"], "llm": fake.config()}}),
    );
    assert_eq!(fake.requests(), n, "a given claim_union makes no LLM call");
    assert_eq!(merged, given);
}

#[test]
fn short_form_scorers_compare_whole_answers_without_decomposing() {
    let (d, fake) = setup("short-form");
    let lp = [0.5f64.ln(), 0.25f64.ln(), 0.0];
    let r = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "granularity": "claim", "llm": fake.config(), "response_logprobs": lp,
        "scorers": ["shortform_noncontradiction", "shortform_cosine_sim", "shortform_bert_score",
                    "shortform_semantic_negentropy", "normalized_probability"]}}),
    );
    assert_eq!(fake.requests(), 0, "no decomposition, no LLM call");
    assert_eq!(r["units"], json!([]));
    assert_eq!(r["scores"], json!([]));
    let g: Vec<String> = std::iter::once(RESPONSE)
        .chain(SAMPLES)
        .map(String::from)
        .collect();
    let (nc, cos, bert, _, ne) = expected_group(&g);
    let rs = &r["response_scores"];
    assert!(
        close(rs["shortform_noncontradiction"].as_f64().unwrap(), nc),
        "{r}"
    );
    assert!(
        close(rs["shortform_cosine_sim"].as_f64().unwrap(), cos),
        "{r}"
    );
    assert!(
        close(rs["shortform_bert_score"].as_f64().unwrap(), bert),
        "{r}"
    );
    assert!(
        close(rs["shortform_semantic_negentropy"].as_f64().unwrap(), ne),
        "{r}"
    );
    // exp(mean(ln .5, ln .25, 0)) = 0.125^(1/3) = 0.5
    assert!(
        close(rs["normalized_probability"].as_f64().unwrap(), 0.5),
        "{r}"
    );
    assert!(r.get("notes").is_none(), "{r}");

    // Without log-probabilities: NULL and a note that names the option.
    let r = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "scorers": ["normalized_probability"]}}),
    );
    assert_eq!(r["response_scores"]["normalized_probability"], Value::Null);
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("response_logprobs"),
        "{r}"
    );

    // Mixed with a unit scorer: unit rows only for the unit scorer.
    let r = d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "scorers": ["entailment", "shortform_cosine_sim"]}}),
    );
    assert_eq!(r["units"].as_array().unwrap().len(), 2);
    assert!(r["scores"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["scorer"] == "entailment"));
    assert!(close(
        r["response_scores"]["shortform_cosine_sim"]
            .as_f64()
            .unwrap(),
        cos
    ));

    // Options are validated with the option's name.
    let e = d.err(
        &json!({"op": "score", "response": RESPONSE, "samples": SAMPLES,
                          "options": {"scorers": ["qa_exact_match"], "qa_samples": 0}}),
    );
    assert!(e.contains("qa_samples"), "{e}");
}
