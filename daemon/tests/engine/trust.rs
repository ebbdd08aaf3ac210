//! What uqlite adds beyond the paper so that a user can trust its output: verified
//! reconstruction (UAD's rewrite may not add facts its kept claims do not state) and
//! decomposition coverage (a sentence its claims do not entail is scored on its own). Checked on
//! hand-written cases with the real NLI model, pinned to `nli-minilm-l6-v2` (the default) because
//! the cases read its probabilities, and through the daemon's ops with recorded LLM replies.

use crate::common;

use std::sync::Arc;

use common::{tmpdir, user_message, FakeOpenAi};
use once_cell::sync::Lazy;
use serde_json::{json, Value};
use uqd::aggregate::verify::verify;
use uqd::decompose::coverage::coverage;
use uqd::engine::Engine;
use uqd::judge::Nli;
use uqd::role_llms::LlmService;
use uqd::server::Server;

/// The test engine with the v2 NLI model from `../shared/models`.
static V2: Lazy<Arc<Engine>> = Lazy::new(|| {
    let model = crate::common::repo_root().join("../shared/models/nli-minilm-l6-v2");
    assert!(
        model.join("model.onnx").exists(),
        "{} is missing",
        model.display()
    );
    let mut config = common::test_config();
    config.nli_model = model;
    Arc::new(Engine::load(&config).unwrap_or_else(|e| panic!("Engine::load: {e}")))
});

const KEPT: [&str; 2] = [
    "Marie Curie was a physicist.",
    "Marie Curie won the Nobel Prize in Physics in 1903.",
];
const INVENTED: &str = "She was born in Paris to two dentists.";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn verification_removes_what_the_kept_claims_do_not_state() {
    let kept = strings(&KEPT);
    let supported = "Marie Curie was a physicist who won the Nobel Prize in Physics in 1903.";
    // One supported sentence and one invented: the invented one goes.
    let v = verify(
        &Nli::model(&V2),
        &kept,
        &format!("{supported} {INVENTED}"),
        0.5,
    )
    .unwrap();
    assert_eq!(v.text, supported);
    assert_eq!(v.removed, vec![INVENTED.to_string()]);
    // Everything supported: the reply stays as written.
    let reply = format!("{}\n{}", KEPT[0], KEPT[1]);
    let v = verify(&Nli::model(&V2), &kept, &reply, 0.5).unwrap();
    assert_eq!((v.text.as_str(), v.removed.len()), (reply.as_str(), 0));
    // Nothing supported: the kept claims joined in order.
    let v = verify(&Nli::model(&V2), &kept, INVENTED, 0.5).unwrap();
    assert_eq!(v.text, KEPT.join(" "));
    assert_eq!(v.removed, vec![INVENTED.to_string()]);
    // The threshold is a p_e: at 1 nothing passes.
    let v = verify(&Nli::model(&V2), &kept, supported, 1.0).unwrap();
    assert_eq!(v.text, KEPT.join(" "));
}

#[test]
fn coverage_finds_the_sentence_whose_detail_the_claims_dropped() {
    let response = "Marie Curie was a physicist. She was born in Vienna in 1867.";
    let claims = strings(&[
        "Marie Curie was a physicist.",
        "Marie Curie was born in 1867.",
    ]);
    let c = coverage(&Nli::model(&V2), response, &claims, 0.5).unwrap();
    let covered: Vec<(usize, &str, bool)> = c
        .iter()
        .map(|s| (s.idx, s.sentence.as_str(), s.covered))
        .collect();
    assert_eq!(
        covered,
        vec![
            (0, "Marie Curie was a physicist.", true),
            (1, "She was born in Vienna in 1867.", false)
        ]
    );
    assert!(c[0].entailment >= 0.5 && c[1].entailment < 0.5, "{c:?}");
    // Without claims nothing is covered.
    let none = coverage(&Nli::model(&V2), response, &[], 0.5).unwrap();
    assert!(none.iter().all(|s| !s.covered && s.entailment == 0.0));
}

const RESPONSE: &str = "Marie Curie was a physicist. She was born in Vienna in 1867.";
const SAMPLES: [&str; 2] = [
    "Marie Curie was a physicist born in Warsaw in 1867.",
    "Born in Warsaw in 1867, Marie Curie became a physicist.",
];

/// Recorded replies: the decomposition drops "Vienna"; the reconstruction invents parents.
fn fake() -> FakeOpenAi {
    FakeOpenAi::start(Arc::new(|body: &Value| {
        let user = user_message(body);
        if user.contains("Here is the passage") {
            return (
                200,
                "### Marie Curie was a physicist.\n### Marie Curie was born in 1867.".into(),
            );
        }
        if user.contains("synthesize these facts") {
            return (200, format!("Marie Curie was a physicist. {INVENTED}"));
        }
        (400, format!("unexpected prompt: {user}"))
    }))
}

fn server(name: &str) -> Server {
    let dir = tmpdir(name);
    let llm = Arc::new(LlmService::new(dir.join("c.sqlite"), "/nonexistent.gguf".into()).unwrap());
    Server::new(Arc::clone(&V2), llm, dir.join("unused.sock"))
}

fn ok(s: &Server, request: Value) -> Value {
    let (reply, _) = s.handle_line(&request.to_string());
    let r: Value = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    assert_eq!(r["ok"], json!(true), "{request} failed: {r}");
    r["result"].clone()
}

fn err(s: &Server, request: Value) -> String {
    let (reply, _) = s.handle_line(&request.to_string());
    let r: Value = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    assert_eq!(r["ok"], json!(false), "{request} succeeded: {r}");
    r["error"].as_str().unwrap().to_string()
}

#[test]
fn uncovered_sentences_are_scored_reported_or_left_alone() {
    let (s, llm) = (server("coverage-op"), fake());
    let score = |coverage: &str| {
        ok(
            &s,
            json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
            "granularity": "claim", "scorers": ["entailment"], "llm": llm.config(), "coverage": coverage}}),
        )
    };
    let r = score("add_units");
    assert_eq!(
        r["units"],
        json!([
            "Marie Curie was a physicist.",
            "Marie Curie was born in 1867.",
            "She was born in Vienna in 1867."
        ])
    );
    assert_eq!(
        r["origins"],
        json!(["claim", "claim", "uncovered_sentence"])
    );
    assert_eq!(r["scores"].as_array().unwrap().len(), 3);
    let covered: Vec<Value> = r["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["covered"].clone())
        .collect();
    assert_eq!(covered, vec![json!(true), json!(false)]);
    // The false detail is now scored: the samples say Warsaw.
    let vienna = r["scores"][2]["score"].as_f64().unwrap();
    let physicist = r["scores"][0]["score"].as_f64().unwrap();
    assert!(vienna < physicist, "{r}");

    let r = score("report");
    assert_eq!(r["origins"], json!(["claim", "claim"]));
    assert_eq!(r["coverage"].as_array().unwrap().len(), 2);
    let r = score("off");
    assert_eq!(r["units"].as_array().unwrap().len(), 2);
    assert!(r.get("coverage").is_none(), "{r}");

    // Caller-given units are not checked.
    let r = ok(
        &s,
        json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": {
        "granularity": "claim", "units": ["Marie Curie was born in 1867."], "scorers": ["entailment"]}}),
    );
    assert_eq!(r["origins"], json!(["given"]));

    // The coverage op: the same check on its own, with the decomposition's claims or given ones.
    let c = ok(
        &s,
        json!({"op": "coverage", "response": RESPONSE, "options": {"llm": llm.config()}}),
    );
    assert_eq!(
        c["claims"],
        json!([
            "Marie Curie was a physicist.",
            "Marie Curie was born in 1867."
        ])
    );
    assert_eq!(c["sentences"][1]["covered"], json!(false));
    let c = ok(
        &s,
        json!({"op": "coverage", "response": RESPONSE,
                          "options": {"units": ["Marie Curie was a physicist.", "Marie Curie was born in Vienna in 1867."]}}),
    );
    assert_eq!(c["sentences"][1]["covered"], json!(true), "{c}");
}

#[test]
fn uad_verifies_its_reconstruction() {
    let (s, llm) = (server("verify-op"), fake());
    let uad = |extra: Value| {
        let mut o = json!({"scorers": ["entailment"], "threshold": 0.5, "llm": llm.config()});
        for (k, v) in extra.as_object().unwrap() {
            o[k] = v.clone();
        }
        ok(
            &s,
            json!({"op": "uad", "response": RESPONSE, "samples": SAMPLES, "options": o}),
        )
    };
    let r = uad(json!({}));
    let origins: Vec<Value> = r["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["origin"].clone())
        .collect();
    assert_eq!(
        origins,
        vec![json!("claim"), json!("claim"), json!("uncovered_sentence")]
    );
    assert!(r["claims"][0]["kept"].as_bool().unwrap(), "{r}");
    assert!(
        !r["claims"][2]["kept"].as_bool().unwrap(),
        "the Vienna sentence is dropped: {r}"
    );
    assert_eq!(r["verified"], json!(true));
    assert_eq!(r["removed_sentences"], json!([INVENTED]));
    assert!(
        !r["refined_response"].as_str().unwrap().contains("dentists"),
        "{r}"
    );
    // What verification left does not state the year: the fallback tells the kept claims by
    // the answer's sentences, without the dropped Vienna sentence (which holds the year).
    assert_eq!(
        r["refined_response"],
        json!("Marie Curie was a physicist. Marie Curie was born in 1867."),
        "{r}"
    );
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("lost 1 of the 2 kept claims"),
        "{r}"
    );
    // The reconstruction prompt got the kept units only.
    let recon: Vec<String> = llm
        .seen()
        .iter()
        .map(user_message)
        .filter(|u| u.contains("synthesize"))
        .collect();
    assert!(recon.iter().all(|u| !u.contains("Vienna")), "{recon:?}");

    // verify and reconstruction_fallback false are the paper's plain reconstruction: the
    // invented sentence stays (the warning about the lost year too).
    let r = uad(json!({"verify": false, "reconstruction_fallback": false}));
    assert_eq!(r["verified"], json!(false));
    assert_eq!(r["removed_sentences"], json!([]));
    assert!(r["refined_response"].as_str().unwrap().contains("dentists"));
    assert_eq!(r["warnings"].as_array().map(Vec::len), Some(1), "{r}");
}

#[test]
fn bad_trust_options_say_how_to_fix_them() {
    let s = server("trust-errors");
    let e = |o: Value| {
        err(
            &s,
            json!({"op": "score", "response": RESPONSE, "samples": SAMPLES, "options": o}),
        )
    };
    assert_eq!(
        e(json!({"coverage": "sometimes"})),
        "option coverage is \"sometimes\": use \"add_units\" (score uncovered sentences), \"report\" or \"off\""
    );
    assert_eq!(
        e(json!({"coverage": true})),
        "option coverage must be a string, e.g. \"coverage\":\"report\"; got a boolean"
    );
    assert_eq!(
        e(json!({"verify": "yes"})),
        "option verify must be true or false, e.g. \"verify\":false; got a string"
    );
    assert_eq!(
        e(json!({"verify_threshold": 1.5})),
        "option verify_threshold is 1.5, outside 0..=1 (an entailment probability): e.g. \"verify_threshold\":0.5"
    );
    assert_eq!(
        e(json!({"coverage_threshold": -0.1})),
        "option coverage_threshold is -0.1, outside 0..=1 (an entailment probability): e.g. \"coverage_threshold\":0.5"
    );
}
