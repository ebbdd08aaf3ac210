//! The claim pipeline, generation and UAD against a fake OpenAI-compatible server on 127.0.0.1
//! that answers from canned decompositions and judge replies, so every result is deterministic:
//! claims, matched-claim scores, verbalized confidence (with uqlm's retries), UAD filtering and
//! reconstruction, the completion cache, and the errors a client sees.

use crate::common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use common::{tmpdir, user_message, Daemon, FakeOpenAi};
use serde_json::{json, Value};

const QUESTION: &str = "What is the capital of France?";
const RESPONSE: &str =
    "Paris is the capital of France and lies on the Seine. Lyon is the capital of France.";
const SAMPLE_A: &str = "The capital of France is Paris.";
const SAMPLE_B: &str = "Paris, on the Seine, is the French capital.";
const NO_FACTS: &str = "Hi there!";
const FAILING: &str = "A passage the server refuses.";

fn claims_of(text: &str) -> Option<&'static [&'static str]> {
    Some(match text {
        RESPONSE => &[
            "Paris is the capital of France.",
            "Paris lies on the Seine.",
            "Lyon is the capital of France.",
        ],
        SAMPLE_A => &["Paris is the capital of France."],
        SAMPLE_B => &[
            "Paris is the capital of France.",
            "Paris lies on the Seine.",
        ],
        "Garble is a claim. Paris is the capital of France." => {
            &["Garble is a claim.", "Paris is the capital of France."]
        }
        _ => return None,
    })
}

/// Judge replies by claim (the appendix prompt's answers), some in free form.
fn judge_reply(claim: &str) -> &'static str {
    match claim {
        "Paris is the capital of France." => "Almost certain",
        "Paris lies on the Seine." => "Very good chance (80%)",
        "Lyon is the capital of France." => "No chance.",
        _ => "I am not sure what to say.",
    }
}

/// The passage of a decomposition prompt.
fn passage(user: &str) -> String {
    let start =
        user.find("Here is the passage: \n\n    ").unwrap() + "Here is the passage: \n\n    ".len();
    let end = user
        .rfind("\n\n    You should only return the final answer.")
        .unwrap();
    user[start..end].to_string()
}

fn responder() -> Arc<common::Responder> {
    Arc::new(|body: &Value| {
        let user = user_message(body);
        if user.contains("Please breakdown the following passage into independent fact pieces") {
            let p = passage(&user);
            return match claims_of(&p) {
                Some(claims) => (
                    200,
                    format!(
                        "Here are the facts:\n{}",
                        claims
                            .iter()
                            .map(|c| format!("### {c}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    ),
                ),
                None if p == NO_FACTS => (200, "### NONE".to_string()),
                None if p == FAILING => (400, "this passage is refused".to_string()),
                None => (200, "I cannot do that in the requested format.".to_string()),
            };
        }
        if user.starts_with("We are writing an answer to this question:") {
            let claim = user
                .split("Here is the claim: ")
                .nth(1)
                .unwrap()
                .split('\n')
                .next()
                .unwrap();
            return (200, judge_reply(claim).to_string());
        }
        if user.contains("goal is to synthesize these facts into a coherent paragraph") {
            let facts: Vec<&str> = user
                .split("The facts:\n")
                .nth(1)
                .unwrap()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            if facts.iter().any(|f| f.contains("Rome")) {
                // A weak reconstruction: it drops every fact about the Colosseum and moves
                // Milan to the south of Spain (a change the NLI model reads as a
                // contradiction both ways; north → south alone it reads as entailed, p_e ≈ 0.5).
                let weak: Vec<String> = facts
                    .iter()
                    .filter(|f| !f.contains("Colosseum"))
                    .map(|f| f.replace("north of Italy", "south of Spain"))
                    .collect();
                return (200, weak.join(" "));
            }
            return (200, format!("  Refined: {}  \n", facts.join(" ")));
        }
        // Generation: the text names the temperature and the choice.
        (
            200,
            format!(
                "answer at {} choice {{i}} seed {}",
                body["temperature"], body["seed"]
            ),
        )
    })
}

fn setup(name: &str) -> (Daemon, FakeOpenAi) {
    let fake = FakeOpenAi::start(responder());
    let d = Daemon::new(&tmpdir(name), PathBuf::from("/nonexistent/SmolLM2.gguf"));
    (d, fake)
}

fn scores_by(result: &Value, scorer: &str) -> Vec<Value> {
    result["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scorer"] == scorer)
        .map(|s| s["score"].clone())
        .collect()
}

fn kinds(fake: &FakeOpenAi) -> HashMap<&'static str, usize> {
    let mut m = HashMap::new();
    for b in fake.seen() {
        let u = user_message(&b);
        let k = if u.contains("Please breakdown") {
            "decompose"
        } else if u.starts_with("We are writing") {
            "judge"
        } else if u.contains("synthesize these facts") {
            "reconstruct"
        } else {
            "generate"
        };
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

#[test]
fn claims_op_parses_canned_decompositions() {
    let (d, fake) = setup("claims");
    let opts = json!({"decomposition_llm": fake.config()});
    let r = d.ok(&json!({"op": "claims", "text": RESPONSE, "options": opts}));
    assert_eq!(r, json!({"claims": claims_of(RESPONSE).unwrap()}));
    // Temperature 0, the paper's prompt.
    let body = &fake.seen()[0];
    assert_eq!(body["temperature"], json!(0.0));
    assert!(user_message(body)
        .ends_with("You should only return the final answer. Now your answer is:"));
    // "### NONE" and unreadable answers give no claims (not an error, no retry loop).
    assert_eq!(
        d.ok(&json!({"op": "claims", "text": NO_FACTS, "options": opts})),
        json!({"claims": []})
    );
    assert_eq!(
        d.ok(&json!({"op": "claims", "text": "Something else.", "options": opts})),
        json!({"claims": []})
    );
    // A blank text needs no call.
    assert_eq!(
        d.ok(&json!({"op": "claims", "text": "  ", "options": opts})),
        json!({"claims": []})
    );
    assert_eq!(fake.requests(), 3);
    // Asked again: from the cache.
    d.ok(&json!({"op": "claims", "text": RESPONSE, "options": opts}));
    assert_eq!(fake.requests(), 3);
    // `llm` serves every role not set on its own.
    let r = d.ok(&json!({"op": "claims", "text": SAMPLE_A, "options": {"llm": fake.config()}}));
    assert_eq!(r["claims"], json!(claims_of(SAMPLE_A).unwrap()));
}

#[test]
fn claim_level_scores_decompose_response_and_samples_once() {
    let (d, fake) = setup("score");
    let options = json!({
        "granularity": "claim",
        "scorers": ["entailment", "matched_entailment", "verbalized_confidence"],
        "prompt": QUESTION,
        "llm": fake.config(),
        "coverage": "off",
    });
    // SAMPLE_A twice: each distinct text is decomposed once.
    let req = json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A, SAMPLE_B, SAMPLE_A], "options": options});
    let r = d.ok(&req);
    let claims = claims_of(RESPONSE).unwrap();
    assert_eq!(r["units"], json!(claims));
    assert_eq!(
        scores_by(&r, "verbalized_confidence"),
        vec![json!(1.0), json!(0.8), json!(0.0)]
    );
    let matched: Vec<f64> = scores_by(&r, "matched_entailment")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let unit_resp: Vec<f64> = scores_by(&r, "entailment")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for x in matched.iter().chain(&unit_resp) {
        assert!((0.0..=1.0).contains(x), "{r}");
    }
    // Every sample holds the claim "Paris is the capital of France." verbatim: its matched score is
    // the NLI entailment of a sentence by itself; Lyon's claim is matched by nothing.
    assert!(matched[0] > 0.8 && matched[2] < 0.5, "{matched:?}");
    // Seine: in SAMPLE_B only (1 of 3 samples).
    assert!(matched[1] < matched[0], "{matched:?}");
    let verbalized_mean = (1.0 + 0.8 + 0.0) / 3.0;
    assert!(
        (r["response_scores"]["verbalized_confidence"]
            .as_f64()
            .unwrap()
            - verbalized_mean)
            .abs()
            < 1e-12
    );
    assert_eq!(
        kinds(&fake),
        HashMap::from([("decompose", 3), ("judge", 3)])
    );
    // The same request again: every completion comes from the cache, the result is identical.
    assert_eq!(d.ok(&req), r);
    assert_eq!(fake.requests(), 6);
    // Claims given by the caller for the response; samples still decomposed (from the cache).
    let mut o = options.clone();
    o["units"] = json!(["Paris lies on the Seine."]);
    let r2 = d.ok(&json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A, SAMPLE_B, SAMPLE_A], "options": o}));
    assert_eq!(r2["units"], json!(["Paris lies on the Seine."]));
    assert_eq!(
        scores_by(&r2, "matched_entailment")[0].as_f64(),
        Some(matched[1])
    );
    assert_eq!(fake.requests(), 6);
    // sample_units given: no sample is decomposed.
    let mut o = options.clone();
    o["scorers"] = json!(["matched_entailment"]);
    o["sample_units"] = json!([["Paris lies on the Seine."]]);
    let r3 = d.ok(&json!({"op": "score", "response": RESPONSE, "samples": ["a sample never decomposed"], "options": o}));
    assert_eq!(r3["units"], json!(claims));
    assert_eq!(fake.requests(), 6);
}

#[test]
fn verbalized_confidence_retries_like_uqlm_then_gives_null() {
    let (d, fake) = setup("verbalized");
    let text = "Garble is a claim. Paris is the capital of France.";
    let options = json!({"granularity": "claim", "scorers": ["verbalized_confidence"], "prompt": QUESTION,
                         "llm": fake.config(), "coverage": "off"});
    // Verbalized confidence compares no samples: none are needed.
    let r = d.ok(&json!({"op": "score", "response": text, "samples": [], "options": options}));
    assert_eq!(
        scores_by(&r, "verbalized_confidence"),
        vec![Value::Null, json!(1.0)]
    );
    // NaN is skipped by the aggregation (uqlm's nanmean).
    assert_eq!(r["response_scores"]["verbalized_confidence"], json!(1.0));
    // 1 decomposition + 1 judge call for the readable claim + 1 + 5 retries for the other.
    assert_eq!(
        kinds(&fake),
        HashMap::from([("decompose", 1), ("judge", 7)])
    );
    let garble: Vec<Value> = fake
        .seen()
        .into_iter()
        .filter(|b| user_message(b).contains("Here is the claim: Garble"))
        .collect();
    assert_eq!(garble.len(), 6);
    assert!(garble.iter().all(|b| b["temperature"] == json!(0.0)));
    assert!(user_message(&garble[0]).starts_with(&format!(
        "We are writing an answer to this question: {QUESTION}\n"
    )));
    // The retries are distinct cache entries: asking again costs nothing.
    d.ok(&json!({"op": "score", "response": text, "samples": [], "options": options}));
    assert_eq!(fake.requests(), 8);
}

#[test]
fn uad_filters_and_reconstructs() {
    let (d, fake) = setup("uad");
    // Coverage and verification have their own tests (trust.rs): off here, the paper's UAD.
    let base = json!({"scorers": ["verbalized_confidence", "entailment"], "prompt": QUESTION, "llm": fake.config(),
                      "coverage": "off", "verify": false});
    let uad = |extra: Value| {
        let mut o = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            o[k] = v.clone();
        }
        d.ok(&json!({"op": "uad", "response": RESPONSE, "samples": [SAMPLE_A], "options": o}))
    };
    // Default threshold 1/3 on the first scorer (verbalized: 1.0, 0.8, 0.0).
    let r = uad(json!({}));
    assert_eq!(r["scorer"], "verbalized_confidence");
    assert!((r["threshold"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-15);
    let claims = claims_of(RESPONSE).unwrap();
    assert_eq!(
        r["claims"],
        json!([
            {"idx": 0, "claim": claims[0], "score": 1.0, "kept": true, "origin": "claim"},
            {"idx": 1, "claim": claims[1], "score": 0.8, "kept": true, "origin": "claim"},
            {"idx": 2, "claim": claims[2], "score": 0.0, "kept": false, "origin": "claim"},
        ])
    );
    assert!((r["pre_confidence"].as_f64().unwrap() - 0.6).abs() < 1e-12);
    assert!((r["post_confidence"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    // The reconstruction prompt holds the kept claims only; the reply is trimmed.
    assert_eq!(
        r["refined_response"],
        json!(format!("Refined: {} {}", claims[0], claims[1]))
    );
    assert!(
        r.get("warnings").is_none(),
        "the rewrite keeps both claims: {r}"
    );
    let recon: Vec<Value> = fake
        .seen()
        .into_iter()
        .filter(|b| user_message(b).contains("synthesize"))
        .collect();
    assert_eq!(recon.len(), 1);
    assert!(!user_message(&recon[0]).contains("Lyon"));
    assert_eq!(recon[0]["temperature"], json!(0.0));
    // Only the UAD scorer is computed: no NLI-scorer work shows in the reply, and the decomposition
    // and judge calls are the score op's (3 judge calls).
    assert_eq!(
        kinds(&fake),
        HashMap::from([("decompose", 1), ("judge", 3), ("reconstruct", 1)])
    );

    let kept_of = |r: &Value| -> Vec<bool> {
        r["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["kept"].as_bool().unwrap())
            .collect()
    };
    // Percentile threshold: the median of (1, 0.8, 0) is 0.8; kept ⇔ score ≥ threshold, so the
    // claim at the threshold stays (ties are never split).
    let r = uad(json!({"threshold_percentile": 50}));
    assert_eq!(r["threshold"], json!(0.8));
    assert_eq!(kept_of(&r), vec![true, true, false]);
    assert!((r["post_confidence"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    assert_eq!(
        r["refined_response"],
        json!(format!("Refined: {} {}", claims[0], claims[1]))
    );
    // q = 90: 0.8 + 0.8 · (1 − 0.8) = 0.96 keeps the top claim only.
    let r = uad(json!({"threshold_percentile": 90}));
    assert!(
        (r["threshold"].as_f64().unwrap() - 0.96).abs() < 1e-12,
        "{r}"
    );
    assert_eq!(kept_of(&r), vec![true, false, false]);
    assert_eq!(r["post_confidence"], json!(1.0));
    assert_eq!(
        r["refined_response"],
        json!(format!("Refined: {}", claims[0]))
    );
    // A fixed threshold of 1 keeps the claims scoring 1.
    let r = uad(json!({"threshold": 1.0}));
    assert_eq!(kept_of(&r), vec![true, false, false]);

    // Nothing kept (the given claims score 0.8 and 0): no reconstruction call, the original
    // response (as uqlm), post null.
    let before = fake.requests();
    let r = uad(json!({"threshold": 1.0, "units": [claims[1], claims[2]]}));
    assert_eq!(kept_of(&r), vec![false, false]);
    assert_eq!(r["refined_response"], json!(RESPONSE));
    assert_eq!(r["post_confidence"], Value::Null);
    assert!((r["pre_confidence"].as_f64().unwrap() - 0.4).abs() < 1e-12);
    assert_eq!(
        fake.requests(),
        before,
        "all from the cache, and no reconstruction"
    );

    // uad_scorer picks another scorer (NLI entailment of each claim by SAMPLE_A).
    let r = uad(json!({"uad_scorer": "entailment", "aggregation": "min"}));
    assert_eq!(r["scorer"], "entailment");
    let s: Vec<f64> = r["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["score"].as_f64().unwrap())
        .collect();
    assert!(s[0] > 0.8 && s[2] < 1.0 / 3.0, "{s:?}");
    let min = s.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(r["pre_confidence"].as_f64(), Some(min));

    // No claims at all: empty list, null confidences, the original response.
    let r =
        d.ok(&json!({"op": "uad", "response": NO_FACTS, "samples": [SAMPLE_A], "options": base}));
    assert_eq!(r["claims"], json!([]));
    assert_eq!(
        (r["pre_confidence"].clone(), r["post_confidence"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(r["refined_response"], json!(NO_FACTS));
}

/// A reconstruction that drops one kept claim and changes another: a warning naming both, and
/// (option `reconstruction_fallback`, default on) the answer's sentences that hold the kept
/// claims, as written; without the fallback the (verified) reconstruction and the warning.
#[test]
fn uad_warns_when_the_reconstruction_loses_a_kept_claim_and_falls_back() {
    let (d, fake) = setup("uad-lost");
    let units = [
        "Rome is the capital of Italy.",
        "Rome has ten moons.",
        "Rome has the Colosseum.",
        "Milan is in the north of Italy.",
    ];
    let text = units.join(" ");
    let o = json!({"units": units, "scorers": ["entailment"], "llm": fake.config(),
                   "coverage": "off"});
    let samples = [
        "Rome, the capital of Italy, has the Colosseum; Milan lies in the north of Italy.",
        "Italy's capital Rome is home to the Colosseum, and Milan is in the north of Italy.",
    ];
    let uad =
        |o: &Value| d.ok(&json!({"op": "uad", "response": text, "samples": samples, "options": o}));
    let r = uad(&o);
    let kept: Vec<bool> = r["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kept"].as_bool().unwrap())
        .collect();
    assert_eq!(kept, [true, false, true, true], "{r}");
    // Verification removed the changed sentence; the check the other way finds both claims
    // missing from what is left.
    assert_eq!(
        r["removed_sentences"],
        json!(["Milan is in the south of Spain."]),
        "{r}"
    );
    assert_eq!(
        r["warnings"],
        json!([
            "the reconstruction lost 2 of the 3 kept claims (the reconstructed text does not \
             entail them with p_e ≥ verify_threshold 0.5): \"Rome has the Colosseum.\", \"Milan \
             is in the north of Italy.\"; refined_response is the answer's sentences that hold \
             the kept claims instead (option reconstruction_fallback); a more capable \
             reconstruction_llm avoids this"
        ]),
        "{r}"
    );
    assert_eq!(
        r["refined_response"],
        json!(
            "Rome is the capital of Italy. Rome has the Colosseum. Milan is in the north of Italy."
        ),
        "the answer's own sentences of the kept claims, without the dropped one"
    );
    // Without the fallback: the verified reconstruction, and the warning says so.
    let mut plain = o.clone();
    plain["reconstruction_fallback"] = json!(false);
    let r = uad(&plain);
    assert_eq!(
        r["refined_response"],
        json!("Rome is the capital of Italy.")
    );
    let w = r["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("lost 2 of the 3 kept claims")
            && w.ends_with(
                "refined_response is the reconstruction as written (reconstruction_fallback \
                 is false); a more capable reconstruction_llm avoids this"
            ),
        "{r}"
    );
    // Nor verification: the changed claim stays in the text, and is still found lost.
    plain["verify"] = json!(false);
    let r = uad(&plain);
    assert_eq!(
        r["refined_response"],
        json!("Rome is the capital of Italy. Milan is in the south of Spain.")
    );
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains(r#"lost 2 of the 3 kept claims"#),
        "{r}"
    );
    // A reconstruction that keeps every kept claim: no warning (the fake LLM wrote the claims
    // of the other tests, no bundled model).
    let faithful = json!({"units": ["Rome is the capital of Italy."], "scorers": ["entailment"],
                          "llm": fake.config()});
    let r = uad(&faithful);
    assert_eq!(
        r["refined_response"],
        json!("Rome is the capital of Italy.")
    );
    assert!(r.get("warnings").is_none(), "{r}");
    assert_eq!(
        kinds(&fake).get("reconstruct"),
        Some(&2),
        "one reconstruction per kept set, from the cache after"
    );
}

/// UAD at an explicit sentence granularity: the LLM-free filter keeps the sentences that pass
/// the threshold, as written and in order, with no decomposition or reconstruction call.
#[test]
fn uad_at_sentence_granularity_filters_sentences_without_a_rewrite() {
    let (d, fake) = setup("uad-sentences");
    let text =
        "Paris is the capital of France.\nLyon is the capital of France. Paris lies on the Seine.";
    let o = json!({"granularity": "sentence", "scorers": ["verbalized_confidence"], "prompt": QUESTION,
                   "llm": fake.config(), "threshold": 0.5});
    let r = d.ok(&json!({"op": "uad", "response": text, "samples": [], "options": o}));
    let kept: Vec<(&str, bool, &str)> = r["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let (claim, origin) = (c["claim"].as_str().unwrap(), c["origin"].as_str().unwrap());
            (claim, c["kept"].as_bool().unwrap(), origin)
        })
        .collect();
    assert_eq!(
        kept,
        [
            ("Paris is the capital of France.", true, "sentence"),
            ("Lyon is the capital of France.", false, "sentence"),
            ("Paris lies on the Seine.", true, "sentence"),
        ]
    );
    assert_eq!(
        r["refined_response"],
        json!("Paris is the capital of France.\nParis lies on the Seine.")
    );
    assert_eq!(
        (r["verified"].clone(), r["removed_sentences"].clone()),
        (json!(false), json!(["Lyon is the capital of France."])),
        "the sentence filter lists what it removed"
    );
    let asked: Vec<String> = fake.seen().iter().map(user_message).collect();
    assert!(
        asked
            .iter()
            .all(|u| !u.contains("synthesize") && !u.contains("breakdown")),
        "only the judge is asked: {asked:?}"
    );
    // Nothing passes: an empty text, not the answer.
    let mut strict = o.clone();
    strict["threshold"] = json!(1.0);
    strict["units"] = json!(["Lyon is the capital of France."]);
    let r = d.ok(&json!({"op": "uad", "response": text, "samples": [], "options": strict}));
    assert_eq!(r["refined_response"], json!(""));
}

#[test]
fn generate_rows_are_distinct_and_cached() {
    let (d, fake) = setup("generate");
    let req = json!({"op": "generate", "prompt": QUESTION, "n": 3,
                     "options": {"generation_llm": fake.config()}});
    let r = d.ok(&req);
    let rows = r["responses"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let texts: Vec<&str> = rows.iter().map(|x| x["text"].as_str().unwrap()).collect();
    assert_eq!(texts[0], "answer at 0.0 choice 0 seed null");
    assert_eq!(
        &texts[1..],
        &[
            "answer at 1.0 choice 0 seed null",
            "answer at 1.0 choice 1 seed null",
            "answer at 1.0 choice 2 seed null"
        ]
    );
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["index"], json!(i));
        assert_eq!(row["temperature"], json!(if i == 0 { 0.0 } else { 1.0 }));
        assert_eq!(row["model"], "fake-model-0001");
        assert_eq!(row["cached"], json!(false));
    }
    // The original is one call, the samples one call with n = 3 (its usage on its first sample).
    assert_eq!(fake.requests(), 2);
    assert_eq!(
        (
            rows[0]["prompt_tokens"].clone(),
            rows[0]["completion_tokens"].clone()
        ),
        (json!(10), json!(3))
    );
    assert_eq!(
        (
            rows[1]["prompt_tokens"].clone(),
            rows[1]["completion_tokens"].clone()
        ),
        (json!(10), json!(9))
    );
    assert_eq!(rows[2]["completion_tokens"], json!(0));
    // Again: the same rows, from the cache.
    let r2 = d.ok(&req);
    assert_eq!(fake.requests(), 2);
    for (a, b) in r2["responses"].as_array().unwrap().iter().zip(rows) {
        assert_eq!(
            (a["text"].clone(), a["cached"].clone()),
            (b["text"].clone(), json!(true))
        );
    }
    // Equal temperatures: the original is sample 0 of the sampling request, rows stay distinct.
    let r = d.ok(&json!({"op": "generate", "prompt": QUESTION, "n": 2,
                         "options": {"llm": fake.config(), "temperature": 0.7, "sampling_temperature": 0.7}}));
    let texts: Vec<&str> = r["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec![
            "answer at 0.7 choice 0 seed null",
            "answer at 0.7 choice 1 seed null",
            "answer at 0.7 choice 2 seed null"
        ]
    );
    // n = 0: only the original; seeds go to the server as seed + index without n.
    let r = d.ok(
        &json!({"op": "generate", "prompt": QUESTION, "n": 0, "options": {"llm": fake.config()}}),
    );
    assert_eq!(r["responses"].as_array().unwrap().len(), 1);
    let mut cfg = fake.config();
    cfg["seed"] = json!(40);
    cfg["n_supported"] = json!(false);
    let r = d.ok(
        &json!({"op": "generate", "prompt": "Another question?", "n": 2, "options": {"llm": cfg}}),
    );
    let texts: Vec<&str> = r["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec![
            "answer at 0.0 choice 0 seed 40",
            "answer at 1.0 choice 0 seed 40",
            "answer at 1.0 choice 0 seed 41"
        ]
    );
    // Bad requests.
    let e =
        d.err(&json!({"op": "generate", "prompt": " ", "n": 1, "options": {"llm": fake.config()}}));
    assert!(e.contains("prompt is empty"), "{e}");
    let e = d.err(
        &json!({"op": "generate", "prompt": "Q", "n": 5000, "options": {"llm": fake.config()}}),
    );
    assert!(e.contains("5000"), "{e}");
}

#[test]
fn errors_name_the_role_and_the_llm() {
    let fake = FakeOpenAi::start(Arc::new(|_: &Value| {
        (401, "Incorrect API key provided".to_string())
    }));
    let d = Daemon::new(
        &tmpdir("errors"),
        PathBuf::from("/nonexistent/SmolLM2.gguf"),
    );
    let e = d.err(
        &json!({"op": "claims", "text": RESPONSE, "options": {"decomposition_llm": fake.config()}}),
    );
    eprintln!("401: {e}");
    let label = format!(
        "decomposition_llm (openai fake-model at {}): ",
        fake.base_url
    );
    assert!(e.starts_with(&label), "{e}");
    assert!(e.contains("401") || e.contains("Incorrect API key"), "{e}");
    let e = d.err(
        &json!({"op": "generate", "prompt": QUESTION, "n": 1, "options": {"llm": fake.config()}}),
    );
    assert!(
        e.starts_with("generation_llm (openai fake-model at "),
        "{e}"
    );
    let e = d.err(&json!({"op": "score", "response": "Paris is big.", "samples": [],
                          "options": {"scorers": ["verbalized_confidence"], "prompt": QUESTION, "judge_llm": fake.config()}}));
    assert!(e.starts_with("judge_llm (openai fake-model at "), "{e}");

    // An LLM given by name never reached the registry.
    let e = d.err(&json!({"op": "claims", "text": RESPONSE, "options": {"llm": "gpt"}}));
    assert!(e.contains("temp.uq_llms") && e.contains("\"gpt\""), "{e}");
    eprintln!("by name: {e}");
    // A missing API key variable.
    let e = d.err(&json!({"op": "claims", "text": RESPONSE,
                          "options": {"llm": {"backend": "openai", "api_key_env": "UQD_TEST_NO_SUCH_KEY_VAR"}}}));
    assert!(
        e.starts_with("decomposition_llm (openai gpt-4o-mini at https://api.openai.com/v1): "),
        "{e}"
    );
    assert!(e.contains("UQD_TEST_NO_SUCH_KEY_VAR"), "{e}");
    eprintln!("no key: {e}");
    // Verbalized confidence without the question: an error naming `prompt`, before any call.
    let before = fake.requests();
    let e = d.err(
        &json!({"op": "score", "response": "Paris is big.", "samples": ["x"],
                          "options": {"scorers": ["verbalized_confidence"], "llm": fake.config()}}),
    );
    assert!(
        e.contains("prompt") && e.contains("verbalized_confidence"),
        "{e}"
    );
    eprintln!("no prompt: {e}");
    let e = d.err(&json!({"op": "uad", "response": "Paris is big.", "samples": ["x"],
                          "options": {"uad_scorer": "verbalized_confidence", "llm": fake.config()}}));
    assert!(e.contains("prompt"), "{e}");
    assert_eq!(fake.requests(), before);
    // NLI scorers still need samples.
    let e =
        d.err(&json!({"op": "score", "response": "Paris is big.", "samples": [], "options": {}}));
    assert!(e.contains("samples_json"), "{e}");
}

#[test]
fn no_llm_work_without_need_and_a_clear_missing_model_error() {
    let dir = tmpdir("lazy");
    let d = Daemon::new(
        &dir,
        PathBuf::from("/nonexistent/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
    );
    // Sentence-level scoring, and claim-level scoring with every unit given, touch no LLM: the
    // cache file is not even created.
    d.ok(&json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A], "options": {}}));
    d.ok(
        &json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A],
                 "options": {"granularity": "claim", "units": ["Paris is the capital of France."],
                             "sample_units": [["Paris is in France."]],
                             "scorers": ["entailment", "matched_entailment"]}}),
    );
    assert!(!d.cache_db.exists());
    assert!(!d.llm.local_loaded());
    let ping = d.ok(&json!({"op": "ping"}));
    assert_eq!(ping["local_llm_loaded"], json!(false));
    assert_eq!(ping["llm_cache"], json!(d.cache_db.display().to_string()));
    // The default LLM is the local model: its file is missing → the path and the fix.
    let e = d.err(&json!({"op": "claims", "text": RESPONSE}));
    assert!(
        e.contains("/nonexistent/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{e}"
    );
    assert!(
        e.contains("make setup")
            && e.contains("UQ_LOCAL_LLM")
            && e.starts_with("decomposition_llm"),
        "{e}"
    );
    eprintln!("missing model: {e}");
    let e = d.err(&json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A], "options": {"granularity": "claim"}}));
    assert!(e.contains("make setup"), "{e}");
}

#[test]
fn a_failed_call_loses_no_finished_work_and_no_claims_skip_the_samples() {
    let (d, fake) = setup("partial");
    let options = json!({"granularity": "claim", "scorers": ["matched_entailment"], "llm": fake.config(), "coverage": "off"});
    // One sample's decomposition is refused: the request fails, naming the role and the LLM ...
    let e = d.err(&json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A, FAILING], "options": options}));
    assert!(
        e.starts_with("decomposition_llm (openai fake-model at ") && e.contains("400"),
        "{e}"
    );
    assert_eq!(fake.requests(), 3);
    // ... but the finished decompositions were kept: only SAMPLE_B is new.
    let r = d.ok(&json!({"op": "score", "response": RESPONSE, "samples": [SAMPLE_A, SAMPLE_B], "options": options}));
    assert_eq!(r["units"], json!(claims_of(RESPONSE).unwrap()));
    assert_eq!(fake.requests(), 4);
    // A response without claims: no score, and the samples are not decomposed (as uqlm).
    let r = d.ok(&json!({"op": "score", "response": NO_FACTS, "samples": ["Some unseen sample."], "options": options}));
    assert_eq!(
        r,
        json!({"units": [], "origins": [], "scores": [], "response_scores": {"matched_entailment": null}})
    );
    assert_eq!(fake.requests(), 5);
}
