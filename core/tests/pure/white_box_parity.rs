//! uqlite's white-box scores equal uqlm 0.6.7's on the fixed log-probability arrays of
//! tests/golden/white_box/uqlm_0.6.7.json, made once with uqlm's own modules by
//! scripts/uqlm/white_box_parity.py (its docstring says how). Tolerance 1e-12 (relative for
//! the unnormalised sequence probability, whose values reach 1e-7).

use serde_json::Value;
use uq_core::logprobs::TokenLogprob;
use uq_core::protocol::NliProbs;
use uq_core::score::white_box as wb;

const TOL: f64 = 1e-12;

fn tokens(v: &Value) -> Vec<TokenLogprob> {
    serde_json::from_value(v.clone()).expect("fixture tokens")
}

fn same(name: &str, case: usize, want: &Value, got: f64) {
    match want.as_f64() {
        None => assert!(got.is_nan(), "{name} case {case}: uqlm NaN, uqlite {got}"),
        Some(w) => {
            let tol = TOL
                * w.abs().max(1e-300).max(if name.contains("not_normalized") {
                    0.0
                } else {
                    1.0
                });
            assert!(
                (w - got).abs() <= tol,
                "{name} case {case}: uqlm {w}, uqlite {got}"
            );
        }
    }
}

#[test]
fn every_scorer_equals_uqlm_on_the_fixture() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/white_box/uqlm_0.6.7.json"
    );
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 16);
    for (i, c) in cases.iter().enumerate() {
        let t = tokens(&c["tokens"]);
        let samples: Vec<Vec<TokenLogprob>> = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(tokens)
            .collect();
        let k = c["k"].as_u64().unwrap() as usize;
        same(
            "min_probability",
            i,
            &c["min_probability"],
            wb::min_probability(&t),
        );
        same(
            "sequence_probability",
            i,
            &c["sequence_probability"],
            wb::sequence_probability(&t, true),
        );
        same(
            "sequence_probability_not_normalized",
            i,
            &c["sequence_probability_not_normalized"],
            wb::sequence_probability(&t, false),
        );
        same(
            "mean_token_negentropy",
            i,
            &c["mean_token_negentropy"],
            wb::mean_token_negentropy(&t, k),
        );
        same(
            "min_token_negentropy",
            i,
            &c["min_token_negentropy"],
            wb::min_token_negentropy(&t, k),
        );
        same(
            "probability_margin",
            i,
            &c["probability_margin"],
            wb::probability_margin(&t),
        );
        let all: Vec<&[TokenLogprob]> = std::iter::once(t.as_slice())
            .chain(samples.iter().map(Vec::as_slice))
            .collect();
        same(
            "monte_carlo_probability",
            i,
            &c["monte_carlo_probability"],
            wb::monte_carlo_probability(&all, true),
        );
        let clusters: Vec<Vec<usize>> = serde_json::from_value(c["clusters"].clone()).unwrap();
        let probs: Vec<f64> = all
            .iter()
            .map(|a| wb::sequence_probability(a, true))
            .collect();
        same(
            "semantic_negentropy",
            i,
            &c["semantic_negentropy"],
            wb::weighted_semantic_negentropy(&clusters, &probs),
        );
        // uqlm's label order in the fixture: [contradiction, neutral, entailment].
        let nli: Vec<NliProbs> = c["nli"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| NliProbs {
                contradiction: p[0].as_f64().unwrap(),
                neutral: p[1].as_f64().unwrap(),
                entailment: p[2].as_f64().unwrap(),
            })
            .collect();
        same(
            "semantic_density",
            i,
            &c["semantic_density"],
            wb::semantic_density(&nli, &probs[1..]),
        );
    }
}
