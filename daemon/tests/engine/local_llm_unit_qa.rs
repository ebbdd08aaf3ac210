//! Unit-QA and the short-form baselines end to end on the embedded SmolLM2 (CPU), kept small
//! (one unit, Q = 1, m_qa = 2): generation with token log-probabilities, then unit-QA scores,
//! `normalized_probability` from the answer's logprobs and a short-form score; then the same
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
        let lp: Vec<f64> = r["logprobs"]
            .as_array()
            .unwrap_or_else(|| panic!("no logprobs: {r}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(!lp.is_empty() && lp.iter().all(|&x| x <= 0.0), "{r}");
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

    // Again: every completion from the cache, the same scores (the times are figures only).
    let t = std::time::Instant::now();
    let again: Value = d.ok(&req);
    assert_eq!(again, r);
    eprintln!("cached rerun {:?} vs {first:?}", t.elapsed());
}
