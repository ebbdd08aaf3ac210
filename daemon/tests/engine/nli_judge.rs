//! The NLI judge (option `nli_llm`, daemon/src/judge.rs) against the fake OpenAI server:
//! probabilities from the first token's log-probability (the fake sends -0.25) or 1/0 from the
//! label, unreadable replies retried then NULL and counted in the notes (never a silent 0), the
//! completion cache on a rerun, and the errors of time-outs and refusals.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::{message, tmpdir, user_message, Daemon, FakeOpenAi};
use serde_json::{json, Value};
use uq_fake_openai::Reply;

const PARIS: &str = "Paris is the capital of France.";
const LYON: &str = "Lyon is the capital of France.";
const GARBLE: &str = "Garble is a claim.";
const SAMPLES: [&str; 2] = [
    "The capital of France is Paris.",
    "Paris, on the Seine, is the French capital.",
];

/// The hypothesis of a judge prompt.
fn hypothesis(user: &str) -> String {
    user.split("Statement: ")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .unwrap_or_default()
        .to_string()
}

fn is_judge(body: &Value) -> bool {
    message(body, "system").starts_with("You check whether a text supports a statement")
}

fn responder() -> Arc<common::Responder> {
    Arc::new(|body: &Value| {
        assert!(is_judge(body), "not a judge call: {body}");
        let user = user_message(body);
        let ternary = user.contains("entailment (the text shows");
        let reply = match (hypothesis(&user).as_str(), ternary) {
            (PARIS, true) => "Entailment",
            (LYON, true) => "contradiction.",
            (PARIS, false) => "Yes",
            (LYON, false) => "The answer is no",
            _ => "I cannot help with that.",
        };
        (200, reply.to_string())
    })
}

fn setup(name: &str) -> (Daemon, FakeOpenAi) {
    let fake = FakeOpenAi::start(responder());
    let d = Daemon::new(&tmpdir(name), PathBuf::from("/nonexistent/SmolLM2.gguf"));
    (d, fake)
}

fn scores_by(result: &Value, scorer: &str) -> Vec<Option<f64>> {
    result["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scorer"] == scorer)
        .map(|s| s["score"].as_f64())
        .collect()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn ternary_probabilities_from_logprobs_unparsed_pairs_null_and_cached() {
    let (d, fake) = setup("judge-ternary");
    let request = json!({"op": "score", "response": format!("{PARIS} {LYON} {GARBLE}"),
        "samples": SAMPLES,
        "options": {"units": [PARIS, LYON, GARBLE],
                    "scorers": ["entailment", "noncontradiction", "contrasted_entailment"],
                    "nli_llm": fake.config()}});
    let r = d.ok(&request);
    let p = (-0.25f64).exp();
    let e = scores_by(&r, "entailment");
    assert!(close(e[0], p), "{e:?}");
    assert!(close(e[1], (1.0 - p) / 2.0), "{e:?}");
    assert_eq!(e[2], None, "an unread unit is NULL, never 0: {r}");
    let nc = scores_by(&r, "noncontradiction");
    assert!(
        close(nc[0], 1.0 - (1.0 - p) / 2.0) && close(nc[1], 1.0 - p),
        "{nc:?}"
    );
    let ce = scores_by(&r, "contrasted_entailment");
    assert!(close(ce[0], p / (p + (1.0 - p) / 2.0)), "{ce:?}");
    // 2 units x 2 samples read at once; the unreadable unit asked 1 + 2 times per sample.
    assert_eq!(fake.requests(), 4 + 2 * 3);
    let seen = fake.seen();
    assert!(
        seen.iter().all(|b| b["logprobs"] == json!(true)),
        "the judge asks for logprobs"
    );
    assert!(
        seen.iter().all(|b| b["max_tokens"] == json!(8)),
        "{:?}",
        seen[0]
    );
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("judged 6 NLI pairs: 4 with probabilities from the answer word's log-probability, 0 as 1/0 from the parsed label, 2 unparsed after up to 2 retries"),
        "{notes}"
    );
    // The completion cache answers a rerun: no new call, same scores.
    let again = d.ok(&request);
    assert_eq!(fake.requests(), 10);
    assert_eq!(again["scores"], r["scores"]);
}

#[test]
fn binary_labels_without_logprobs_and_every_nli_family() {
    let (d, fake) = setup("judge-binary");
    let mut cfg = fake.config();
    cfg["logprobs"] = json!(false);
    let opts = |scorers: Value| {
        json!({"units": [PARIS, LYON], "scorers": scorers, "nli_llm": cfg, "nli_prompt": "binary",
               "sample_units": [[SAMPLES[0]], [SAMPLES[1]]], "granularity": "claim",
               "claim_union": [PARIS, LYON]})
    };
    let r = d.ok(&json!({"op": "score", "response": format!("{PARIS} {LYON}"), "samples": SAMPLES,
                         "options": opts(json!(["entailment", "noncontradiction", "matched_entailment",
                                                "page_rank"]))}));
    // Binary: yes -> p_e 1; "The answer is no" (label not first) -> p_e 0, p_c 1.
    assert_eq!(scores_by(&r, "entailment"), vec![Some(1.0), Some(0.0)]);
    assert_eq!(
        scores_by(&r, "noncontradiction"),
        vec![Some(1.0), Some(0.0)]
    );
    assert_eq!(
        scores_by(&r, "matched_entailment"),
        vec![Some(1.0), Some(0.0)]
    );
    let dc = scores_by(&r, "page_rank");
    assert!(dc[0].unwrap() > dc[1].unwrap(), "{dc:?}");
    assert!(fake
        .seen()
        .iter()
        .all(|b| b.get("logprobs").is_none() || b["logprobs"] == json!(false)));
    assert!(
        r["notes"]
            .to_string()
            .contains("as 1/0 from the parsed label"),
        "{r}"
    );
    // Coverage through the judge: the claims entail the sentence.
    let c = d.ok(&json!({"op": "coverage", "response": PARIS,
                         "options": {"units": [PARIS], "nli_llm": cfg, "nli_prompt": "binary"}}));
    assert_eq!(c["sentences"][0]["entailment"], json!(1.0), "{c}");
}

#[test]
fn refusals_and_time_outs_name_the_judge() {
    let d = Daemon::new(
        &tmpdir("judge-errors"),
        PathBuf::from("/nonexistent/SmolLM2.gguf"),
    );
    let refusing = FakeOpenAi::start(Arc::new(|_: &Value| {
        (
            400,
            "this request is refused by the content filter".to_string(),
        )
    }));
    let req = |cfg: Value| {
        json!({"op": "score", "response": PARIS, "samples": [SAMPLES[0]],
               "options": {"units": [PARIS], "scorers": ["entailment"], "nli_llm": cfg}})
    };
    let e = d.err(&req(refusing.config()));
    eprintln!("refused: {e}");
    let label = format!("nli_llm (openai fake-model at {}): ", refusing.base_url);
    assert!(e.starts_with(&label), "{e}");
    assert!(
        e.contains("400") && e.contains("refused by the content filter"),
        "{e}"
    );

    let slow =
        FakeOpenAi::with_handler(|_| Reply::status(200, "{}").after(Duration::from_millis(1500)));
    let mut cfg = slow.config();
    cfg["timeout_ms"] = json!(200);
    let e = d.err(&req(cfg));
    eprintln!("time-out: {e}");
    assert!(e.starts_with("nli_llm (openai fake-model at "), "{e}");
    assert!(
        e.contains("timed out") || e.contains("time-out") || e.contains("timeout"),
        "{e}"
    );

    // nli_prompt alone is refused before any call.
    let e = d.err(
        &json!({"op": "score", "response": PARIS, "samples": [SAMPLES[0]],
                          "options": {"nli_prompt": "ternary"}}),
    );
    assert!(e.contains("nli_prompt") && e.contains("nli_llm"), "{e}");
    let e = d.err(
        &json!({"op": "score", "response": PARIS, "samples": [SAMPLES[0]],
                          "options": {"nli_prompt": "maybe", "nli_llm": {"backend": "local"}}}),
    );
    assert!(e.contains("\"binary\"") && e.contains("\"maybe\""), "{e}");
}

/// The grounded scorers send their (premise, unit) pairs to the judge too: the source's
/// sentences as the text, the unit as the statement.
#[test]
fn grounded_scorers_ask_the_judge() {
    let (d, fake) = setup("judge-grounded");
    let r = d.ok(
        &json!({"op": "score", "response": format!("{PARIS} {LYON}"), "samples": [],
        "options": {"units": [PARIS, LYON],
                    "scorers": ["grounded_entailment", "grounded_noncontradiction"],
                    "sources": ["France's capital is Paris, on the Seine."],
                    "nli_llm": fake.config()}}),
    );
    let p = (-0.25f64).exp();
    let e = scores_by(&r, "grounded_entailment");
    assert!(close(e[0], p) && close(e[1], (1.0 - p) / 2.0), "{e:?}");
    let nc = scores_by(&r, "grounded_noncontradiction");
    assert!(close(nc[1], 1.0 - p), "{nc:?}");
    assert_eq!(fake.requests(), 2, "one pair per unit (one passage)");
    assert!(
        fake.seen()
            .iter()
            .all(|b| user_message(b).contains("France's capital is Paris")),
        "the source is the judge's text"
    );
    let verdicts: Vec<&str> = r["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scorer"] == "grounded_entailment")
        .map(|s| s["evidence"]["verdict"].as_str().unwrap())
        .collect();
    // p = 0.78: past the entailment threshold (0.7), short of the contradiction one (0.9).
    assert_eq!(verdicts, ["supported", "silent"]);
    assert!(r["notes"].to_string().contains("judged 2 NLI pairs"), "{r}");
}
