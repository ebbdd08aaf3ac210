//! The happy path against the embedded SmolLM2 (CPU): generate → claims → claim-level scores →
//! UAD, then the same again from the completion cache. Structure and invariants are asserted,
//! not the tiny model's text.
//!
//! SmolLM2-135M seldom follows the paper's decomposition format (it tends to echo the passage or
//! answer `### NONE`), so its claims are often empty; the scoring and UAD steps therefore run
//! twice: on the decomposition's claims (whatever they are) and on given claims (`units`), so
//! that judge calls, NLI scores, filtering and reconstruction are exercised with the local model
//! every time.

use crate::common;

use common::{local_model, tmpdir, Daemon};
use serde_json::{json, Value};
use uq_core::protocol::UAD_BUNDLED_LLM_WARNING;

const QUESTION: &str = "What is the capital of France?";

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

#[test]
fn generate_claims_score_uad_with_smollm2() {
    let Some(model) = local_model() else { return };
    let dir = tmpdir("smollm2");
    let d = Daemon::new(&dir, model);
    let llm = json!({"backend": "local", "max_tokens": 40});
    let options = json!({
        "llm": llm,
        "decomposition_llm": {"backend": "local", "max_tokens": 96},
        "prompt": QUESTION,
    });
    let t = std::time::Instant::now();

    // Nothing is loaded before a request needs the LLM.
    assert!(!d.llm.local_loaded());

    // generate: row 0 the original (temperature 0), rows 1..2 samples (temperature 1).
    let gen = d.ok(&json!({"op": "generate", "prompt": QUESTION, "n": 2, "options": options}));
    let rows = gen["responses"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 3, "{gen}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["index"], json!(i));
        assert_eq!(f(&r["temperature"]), if i == 0 { 0.0 } else { 1.0 });
        assert!(
            r["model"]
                .as_str()
                .unwrap()
                .starts_with("SmolLM2-135M-Instruct.Q4_1:"),
            "{r}"
        );
        assert_eq!(r["cached"], json!(false));
        assert!(r["prompt_tokens"].as_u64().unwrap() > 0, "{r}");
        assert!(r["completion_tokens"].as_u64().unwrap() > 0, "{r}");
        assert!(!r["text"].as_str().unwrap().trim().is_empty(), "{r}");
    }
    assert!(d.llm.local_loaded());
    eprintln!("generate: {:.1}s {gen}", t.elapsed().as_secs_f64());
    let response = rows[0]["text"].as_str().unwrap().to_string();
    let samples: Vec<String> = rows[1..]
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect();

    // claims of the original answer.
    let claims = d.ok(&json!({"op": "claims", "text": response, "options": options}));
    let claims: Vec<String> = serde_json::from_value(claims["claims"].clone()).unwrap();
    eprintln!("claims: {:.1}s {claims:?}", t.elapsed().as_secs_f64());
    for c in &claims {
        assert!(!c.trim().is_empty() && !c.contains("###"), "{c:?}");
    }

    // Claim-level scores: the response is decomposed again (from the cache: same claims).
    let mut score_opts = options.clone();
    score_opts["granularity"] = json!("claim");
    score_opts["scorers"] = json!(["entailment", "verbalized_confidence"]);
    let score_req =
        json!({"op": "score", "response": response, "samples": samples, "options": score_opts});
    let scored = d.ok(&score_req);
    eprintln!("score: {:.1}s {scored}", t.elapsed().as_secs_f64());
    let units: Vec<String> = serde_json::from_value(scored["units"].clone()).unwrap();
    assert_eq!(units, claims, "a text's claims are the same for every op");
    check_scores(&scored, &units);

    // The same with given claims, so that every step has units.
    let given = vec![
        "Paris is the capital of France.".to_string(),
        "Paris is in Germany.".to_string(),
    ];
    let mut given_opts = score_opts.clone();
    given_opts["units"] = json!(given);
    let given_req =
        json!({"op": "score", "response": response, "samples": samples, "options": given_opts});
    let given_scored = d.ok(&given_req);
    eprintln!(
        "score (given claims): {:.1}s {given_scored}",
        t.elapsed().as_secs_f64()
    );
    check_scores(&given_scored, &given);

    // UAD on the decomposition's claims (asked for: with only the bundled SmolLM2 the default
    // is the sentence filter) and on the given claims.
    let mut uad_opts = options.clone();
    uad_opts["uad_scorer"] = json!("entailment");
    uad_opts["granularity"] = json!("claim");
    let uad_req =
        json!({"op": "uad", "response": response, "samples": samples, "options": uad_opts});
    let uad = d.ok(&uad_req);
    eprintln!("uad: {:.1}s {uad}", t.elapsed().as_secs_f64());
    check_uad(&uad, &claims, &scored, &response);
    // The bundled SmolLM2 wrote the claims: a warning says so (not for given claims, below).
    let bundled = |r: &Value| {
        r["warnings"]
            .as_array()
            .is_some_and(|w| w.contains(&json!(UAD_BUNDLED_LLM_WARNING)))
    };
    assert_eq!(bundled(&uad), !claims.is_empty(), "{uad}");
    uad_opts["units"] = json!(given);
    let given_uad_req =
        json!({"op": "uad", "response": response, "samples": samples, "options": uad_opts});
    let given_uad = d.ok(&given_uad_req);
    eprintln!(
        "uad (given claims): {:.1}s {given_uad}",
        t.elapsed().as_secs_f64()
    );
    check_uad(&given_uad, &given, &given_scored, &response);
    assert!(!bundled(&given_uad), "{given_uad}");

    // The same requests again: answered from the completion cache, identically.
    let t2 = std::time::Instant::now();
    let gen2 = d.ok(&json!({"op": "generate", "prompt": QUESTION, "n": 2, "options": options}));
    for (a, b) in gen2["responses"].as_array().unwrap().iter().zip(&rows) {
        assert_eq!(a["text"], b["text"]);
        assert_eq!(a["cached"], json!(true));
        assert_eq!(a["prompt_tokens"], b["prompt_tokens"]);
    }
    assert_eq!(d.ok(&score_req), scored);
    assert_eq!(d.ok(&given_req), given_scored);
    assert_eq!(d.ok(&uad_req), uad);
    assert_eq!(d.ok(&given_uad_req), given_uad);
    let again = t2.elapsed().as_secs_f64();
    eprintln!("cached repeat: {again:.2}s");

    // A new daemon on the same cache file answers without loading the model.
    let d2 = Daemon::new(&dir, d.llm.local_llm().to_path_buf());
    assert_eq!(d2.ok(&given_uad_req), given_uad);
    assert_eq!(d2.ok(&given_req), given_scored);
    assert!(
        !d2.llm.local_loaded(),
        "all answers were cached: the model stays unloaded"
    );
}

/// Scores of `units` for entailment and verbalized confidence: in [0, 1] (verbalized: a multiple
/// of 0.2, or null when the judge named no phrase, as uqlm's NaN).
fn check_scores(scored: &Value, units: &[String]) {
    assert_eq!(scored["units"], json!(units));
    let scores = scored["scores"].as_array().unwrap();
    assert_eq!(scores.len(), 2 * units.len());
    for s in scores {
        let x = &s["score"];
        if s["scorer"] == "verbalized_confidence" {
            if !x.is_null() {
                let v = f(x) * 5.0;
                assert!(
                    (v - v.round()).abs() < 1e-9 && (0.0..=5.0).contains(&v),
                    "{s}"
                );
            }
        } else {
            assert_eq!(s["scorer"], "entailment");
            assert!((0.0..=1.0).contains(&f(x)), "{s}");
        }
    }
    for name in ["entailment", "verbalized_confidence"] {
        let r = &scored["response_scores"][name];
        assert!(r.is_null() || (0.0..=1.0).contains(&f(r)), "{scored}");
    }
}

/// UAD invariants: the claims and scores are the score op's (entailment), kept ⇔ score ≥ 1/3,
/// pre = mean of all, post = mean of kept (null when none), refined = original when none kept.
fn check_uad(uad: &Value, claims: &[String], scored: &Value, response: &str) {
    assert_eq!(uad["scorer"], "entailment");
    assert!((f(&uad["threshold"]) - 1.0 / 3.0).abs() < 1e-12);
    let uclaims = uad["claims"].as_array().unwrap();
    assert_eq!(uclaims.len(), claims.len());
    let entail: Vec<f64> = scored["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scorer"] == "entailment")
        .map(|s| f(&s["score"]))
        .collect();
    let mut kept = Vec::new();
    for (i, c) in uclaims.iter().enumerate() {
        assert_eq!(c["idx"], json!(i));
        assert_eq!(c["claim"].as_str().unwrap(), claims[i]);
        let s = f(&c["score"]);
        assert!(
            (s - entail[i]).abs() < 1e-12,
            "uad scores are the score op's: {c}"
        );
        assert_eq!(c["kept"].as_bool().unwrap(), s >= 1.0 / 3.0, "{c}");
        if s >= 1.0 / 3.0 {
            kept.push(s);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    if claims.is_empty() {
        assert!(uad["pre_confidence"].is_null());
    } else {
        assert!((f(&uad["pre_confidence"]) - mean(&entail)).abs() < 1e-12);
    }
    if kept.is_empty() {
        assert!(uad["post_confidence"].is_null());
        assert_eq!(
            uad["refined_response"].as_str().unwrap(),
            response,
            "nothing kept: the original"
        );
    } else {
        assert!((f(&uad["post_confidence"]) - mean(&kept)).abs() < 1e-12);
        assert!(!uad["refined_response"].as_str().unwrap().trim().is_empty());
    }
}
