//! Unit-QA and the short-form baselines end to end on the embedded SmolLM2 (CPU), kept small
//! (one unit, Q = 1, m_qa = 2): generation with token log-probabilities, then unit-QA scores,
//! `normalized_probability` from the answer's logprobs and a short-form score, the white-box
//! scorers on the answer's tokens (their texts tile the answer, 5 alternatives each); then the same
//! request again from the completion cache. Structure and invariants are asserted, not the
//! tiny model's text.

use crate::common;

use common::{local_model, tmpdir, Daemon};
use serde_json::{json, Value};

const QUESTION: &str = "What is the capital of France?";

#[test]
fn unit_qa_and_normalized_probability_with_smollm2() {
    let Some(model) = local_model() else { return };
    let d = Daemon::new(&tmpdir("smollm2-unit-qa"), model);
    let t = std::time::Instant::now();
    let gen = d.ok(
        &json!({"op": "generate", "prompt": QUESTION, "n": 2, "options": {
        "generation_llm": {"backend": "local", "max_tokens": 24, "logprobs": true}}}),
    );
    let rows = gen["responses"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let tokens = r["logprobs"]
            .as_array()
            .unwrap_or_else(|| panic!("no logprobs: {r}"));
        let lp: Vec<f64> = tokens
            .iter()
            .map(|x| x["logprob"].as_f64().unwrap())
            .collect();
        assert!(!lp.is_empty() && lp.iter().all(|&x| x <= 0.0), "{r}");
        // The tokens' texts tile the answer, each with its offset and the 5 most likely
        // alternatives (the default top_logprobs), the most likely first.
        let text: String = tokens
            .iter()
            .map(|t| t["token"].as_str().unwrap())
            .collect();
        assert_eq!(text, r["text"].as_str().unwrap(), "{r}");
        let mut at = 0;
        for t in tokens {
            assert_eq!(t["offset"].as_u64(), Some(at as u64), "{t}");
            at += t["token"].as_str().unwrap().chars().count();
            let top = t["top_logprobs"].as_array().unwrap();
            assert_eq!(top.len(), 5, "{t}");
            let l: Vec<f64> = top.iter().map(|a| a["logprob"].as_f64().unwrap()).collect();
            assert!(l.windows(2).all(|w| w[0] >= w[1]), "{t}");
            assert!(t["logprob"].as_f64().unwrap() <= l[0] + 1e-9, "{t}");
        }
        let want = (lp.iter().sum::<f64>() / lp.len() as f64).exp();
        let got = r["normalized_probability"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9 && got > 0.0 && got <= 1.0, "{r}");
    }
    eprintln!("generate: {:.1}s", t.elapsed().as_secs_f64());
    let response = rows[0]["text"].as_str().unwrap().to_string();
    let samples: Vec<String> = rows[1..]
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect();

    let scorers = [
        "qa_noncontradiction",
        "qa_cosine_sim",
        "qa_bert_score",
        "qa_exact_match",
        "qa_semantic_negentropy",
        "normalized_probability",
        "shortform_cosine_sim",
    ];
    let req = json!({"op": "score", "response": response, "samples": samples, "options": {
        "llm": {"backend": "local", "max_tokens": 24},
        "units": ["Paris is the capital of France."],
        "scorers": scorers, "num_questions": 1, "qa_samples": 2, "prompt": QUESTION,
        "response_logprobs": rows[0]["logprobs"],
    }});
    let t = std::time::Instant::now();
    let r = d.ok(&req);
    eprintln!("unit-QA score: {:.1}s {r}", t.elapsed().as_secs_f64());
    let first = t.elapsed();
    let scores = r["scores"].as_array().unwrap();
    assert_eq!(scores.len(), 5, "one unit row per unit-QA scorer: {r}");
    for s in scores {
        assert!(s["scorer"].as_str().unwrap().starts_with("qa_"), "{r}");
        let x = s["score"]
            .as_f64()
            .unwrap_or_else(|| panic!("null score: {r}"));
        assert!((-1.0..=1.0 + 1e-9).contains(&x), "{r}");
    }
    let rs = &r["response_scores"];
    assert_eq!(
        rs["normalized_probability"],
        rows[0]["normalized_probability"]
    );
    let cos = rs["shortform_cosine_sim"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&cos), "{r}");
    for name in [
        "qa_exact_match",
        "qa_semantic_negentropy",
        "qa_noncontradiction",
    ] {
        let x = rs[name].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&x), "{name}: {r}");
    }

    // The white-box scorers on the same tokens, response and unit level, no LLM call.
    let wb = d.ok(
        &json!({"op": "score", "response": response, "samples": samples, "options": {
            "units": [response.clone()],
            "scorers": ["claim_probability", "claim_normalized_probability",
                        "claim_min_token_negentropy", "min_probability", "sequence_probability",
                        "mean_token_negentropy", "probability_margin", "monte_carlo_probability"],
            "response_logprobs": rows[0]["logprobs"],
            "sample_logprobs": [rows[1]["logprobs"], rows[2]["logprobs"]],
        }}),
    );
    let lp: Vec<f64> = rows[0]["logprobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["logprob"].as_f64().unwrap())
        .collect();
    let ws = &wb["response_scores"];
    let min_p = lp.iter().cloned().fold(f64::INFINITY, f64::min).exp();
    assert!(
        (ws["min_probability"].as_f64().unwrap() - min_p).abs() < 1e-9,
        "{wb}"
    );
    assert_eq!(
        ws["sequence_probability"],
        rows[0]["normalized_probability"]
    );
    for name in [
        "mean_token_negentropy",
        "probability_margin",
        "monte_carlo_probability",
    ] {
        let x = ws[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} NULL: {wb}"));
        assert!((0.0..=1.0).contains(&x), "{name}: {wb}");
    }
    // The one unit is the whole answer: its claim probability is the product of all tokens'.
    let unit = |name: &str| {
        wb["scores"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["scorer"] == name)
            .and_then(|s| s["score"].as_f64())
            .unwrap_or_else(|| panic!("{name}: {wb}"))
    };
    let sum: f64 = lp.iter().sum();
    assert!((unit("claim_probability") - sum.exp()).abs() < 1e-9, "{wb}");
    assert!(
        (unit("claim_normalized_probability") - (sum / lp.len() as f64).exp()).abs() < 1e-9,
        "{wb}"
    );
    assert!(
        (0.0..=1.0).contains(&unit("claim_min_token_negentropy")),
        "{wb}"
    );

    // Again: every completion from the cache, the same scores (the times are figures only).
    let t = std::time::Instant::now();
    let again: Value = d.ok(&req);
    assert_eq!(again, r);
    eprintln!("cached rerun {:?} vs {first:?}", t.elapsed());
}
