use serde_json::json;

use super::*;
use crate::calibrate::Method;
use crate::metrics::ece;
use crate::score::premise::Premise;
use crate::test_util::open_uniforms as uniforms;

/// `n` units, each true with probability `prior`, scored N(0.65, 0.12) when true and
/// N(0.45, 0.12) when false (Box–Muller): equal variances, so P(true | s) is logistic in s and a
/// Platt fit is well specified; only the base rate differs between two such sets.
fn shifted_set(seed: u64, n: usize, prior: f64) -> (Vec<f64>, Vec<bool>) {
    let u = uniforms(seed, 3 * n);
    let mut scores = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let label = u[3 * i] < prior;
        let z =
            (-2.0 * u[3 * i + 1].ln()).sqrt() * (2.0 * std::f64::consts::PI * u[3 * i + 2]).cos();
        scores.push(if label { 0.65 } else { 0.45 } + 0.12 * z);
        labels.push(label);
    }
    (scores, labels)
}

fn platt(a: f64, b: f64, n: usize, positives: usize) -> Calibration {
    Calibration::from_json(
        &json!({"method": "platt", "a": a, "b": b, "n": n, "positives": positives}),
        "model",
    )
    .unwrap()
}

#[test]
fn shift_is_bayes_rule_by_hand() {
    // p = 0.6 fitted under π_t = 0.5, moved to π = 0.25:
    // (0.25/0.5·0.6) / (0.25/0.5·0.6 + 0.75/0.5·0.4) = 0.3 / (0.3 + 0.6) = 1/3
    assert!((shift(0.6, 0.5, 0.25) - 1.0 / 3.0).abs() < 1e-15);
    // same prior: unchanged; the ends and NaN stay
    assert!((shift(0.37, 0.3, 0.3) - 0.37).abs() < 1e-15);
    assert_eq!(shift(0.0, 0.3, 0.9), 0.0);
    assert_eq!(shift(1.0, 0.3, 0.1), 1.0);
    assert!(shift(f64::NAN, 0.3, 0.1).is_nan());
}

#[test]
fn em_by_hand() {
    // Posteriors 0.8, 0.8, 0.2 under π_t = 1/2. Iteration 1: π = mean(p) = 0.6. Iteration 2:
    // 0.8 → 0.48/(0.48 + 0.4·0.2) = 6/7, 0.2 → 0.12/(0.12 + 0.4·0.8) = 3/11, π = (12/7 + 3/11)/3.
    let p = [0.8, 0.8, 0.2];
    let it2 = (12.0 / 7.0 + 3.0 / 11.0) / 3.0;
    let mean = |prior: f64| p.iter().map(|&x| shift(x, 0.5, prior)).sum::<f64>() / 3.0;
    assert!((mean(0.5) - 0.6).abs() < 1e-15);
    assert!((mean(0.6) - it2).abs() < 1e-15);
    // The fixed point: a unit of the first kind is 4 times as likely among true units as among
    // false ones (0.8/0.2 under π_t = 1/2), so P(kind 1) = 0.8π + 0.2(1 − π) = 2/3 gives π = 7/9,
    // the maximum-likelihood prior, where 0.8 → 14/15 and 0.2 → 7/15, whose mean is 7/9.
    let (prior, iterations) = em_prior(&p, 0.5);
    assert!((prior - 7.0 / 9.0).abs() < 1e-5, "{prior}");
    assert!((mean(7.0 / 9.0) - 7.0 / 9.0).abs() < 1e-15);
    assert!(
        iterations > 2 && iterations < MAX_ITERATIONS,
        "{iterations}"
    );
}

/// The same EM written in Python from the paper's equations, run by python3 on the same
/// posteriors; the prior and the iteration count must agree.
#[test]
fn em_matches_a_python_reference() {
    let script = r#"
import json, sys
d = json.load(sys.stdin)
post, train, tol, cap = d["posteriors"], d["train"], d["tol"], d["max"]
prior, it = train, 0
while it < cap:
    it += 1
    adj = []
    for p in post:
        if p <= 0.0 or p >= 1.0:
            adj.append(p)
            continue
        a = prior / train * p
        b = (1.0 - prior) / (1.0 - train) * (1.0 - p)
        adj.append(a / (a + b))
    nxt = sum(adj) / len(adj)
    moved = abs(nxt - prior)
    prior = nxt
    if moved < tol:
        break
print(json.dumps({"prior": prior, "iterations": it}))
"#;
    for (seed, train) in [(1u64, 0.76), (2, 0.3), (3, 0.5)] {
        let posteriors: Vec<f64> = uniforms(seed, 400)
            .iter()
            .map(|u| u * u * (1.0 - u) * 1.5 + u * u * u)
            .collect();
        let input = json!({"posteriors": posteriors, "train": train, "tol": TOLERANCE,
                           "max": MAX_ITERATIONS});
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let py: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (prior, iterations) = em_prior(&posteriors, train);
        assert!(
            (prior - py["prior"].as_f64().unwrap()).abs() < 1e-12,
            "seed {seed}: rust {prior}, python {}",
            py["prior"]
        );
        assert_eq!(iterations as u64, py["iterations"].as_u64().unwrap());
        assert!(prior > 0.0 && prior < 1.0);
    }
}

#[test]
fn recovers_a_shifted_prior() {
    let (fs, fl) = shifted_set(11, 6000, 0.76);
    for method in Method::ALL {
        let model = Calibration::fit(&fs, &fl, method, "score").unwrap();
        for (seed, prior) in [(12u64, 0.55), (13, 0.9), (14, 0.76), (15, 0.35)] {
            let (ts, tl) = shifted_set(seed, 6000, prior);
            let truth = tl.iter().filter(|&&l| l).count() as f64 / tl.len() as f64;
            let adapted = model.adapt(&ts, "model", "score").unwrap();
            let p = adapted.prior.as_ref().unwrap();
            assert!(
                (p.target - truth).abs() < 0.02,
                "{}: target prior {} vs true {truth}",
                method.as_str(),
                p.target
            );
            assert!((p.train - model.positives as f64 / model.n as f64).abs() < 1e-15);
            // the adapted probabilities are better calibrated where the prior moved
            if (prior - 0.76f64).abs() > 0.1 {
                let raw: Vec<f64> = ts.iter().map(|&s| model.apply(s)).collect();
                let new: Vec<f64> = ts.iter().map(|&s| adapted.apply(s)).collect();
                let (before, after) = (ece(&raw, &tl, 10).unwrap(), ece(&new, &tl, 10).unwrap());
                assert!(
                    after < before,
                    "{}: ECE {before} → {after}",
                    method.as_str()
                );
                assert!(after < 0.03, "{}: ECE after {after}", method.as_str());
            }
        }
    }
}

#[test]
fn adapted_model_round_trips_and_readapts_from_the_fit() {
    let m = platt(8.0, -4.0, 100, 70);
    let scores = [0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.9];
    let a = m.adapt(&scores, "model", "score").unwrap();
    let back = Calibration::from_json(&a.to_json(), "model").unwrap();
    assert_eq!(back, a);
    assert_eq!(a.to_json()["prior"]["train"], json!(0.7));
    // adapting the adapted model starts from the fitted map: the same result
    assert_eq!(a.adapt(&scores, "model", "score").unwrap(), a);
    // apply honours the prior
    let p = a.prior.clone().unwrap();
    assert!((a.apply(0.45) - shift(m.apply(0.45), p.train, p.target)).abs() < 1e-15);
    assert!(p.target < 0.7, "these scores are mostly low: {}", p.target);
}

#[test]
fn bad_adaptations_say_why() {
    let err = |m: &Calibration, s: &[f64]| m.adapt(s, "model_json", "score").unwrap_err();
    let m = platt(8.0, -4.0, 100, 70);
    assert!(err(&m, &[]).starts_with("no target scores to adapt to"));
    assert!(err(&m, &[0.5, f64::INFINITY]).contains("score must be a finite number"));
    let no_prior =
        Calibration::from_json(&json!({"method": "platt", "a": 1, "b": 0}), "m").unwrap();
    assert!(err(&no_prior, &[0.5]).starts_with("model_json has no training prior"));
    assert!(err(&platt(1.0, 0.0, 10, 10), &[0.5]).contains("one class only"));
    // every target score certain to be true: the prior runs to 1
    let sure = platt(60.0, -30.0, 100, 70);
    let e = err(&sure, &[0.9, 0.95, 1.0]);
    assert!(e.contains("all look like one class"), "{e}");
}

#[test]
fn prior_and_fitted_on_json_are_checked() {
    let base = json!({"method": "platt", "a": 1, "b": 0, "n": 10, "positives": 4});
    let with = |k: &str, v: serde_json::Value| {
        let mut m = base.clone();
        m[k] = v;
        Calibration::from_json(&m, "model_json")
    };
    assert!(with("prior", json!({"train": 0.4, "target": 1.2}))
        .unwrap_err()
        .contains("model_json.prior.target = 1.2 is not a base rate"));
    assert!(with("prior", json!({"train": 0.4, "target": 0.5, "x": 1}))
        .unwrap_err()
        .contains("model_json.prior has unknown key \"x\""));
    assert!(with("fitted_on", json!({"scorer": "nope"}))
        .unwrap_err()
        .starts_with("model_json.fitted_on.scorer:"));
    assert!(with("fitted_on", json!({"model": "x"}))
        .unwrap_err()
        .contains("its keys are scorer, nli_model, precision, premise, num_samples"));
    assert!(with("fitted_on", json!({"num_samples": 0}))
        .unwrap_err()
        .contains("num_samples must be a positive integer"));
    let m = with(
        "fitted_on",
        json!({"scorer": "entailment", "nli_model": "a", "precision": "int8",
               "premise": {"top_k": 3, "rank": "lexical"}, "num_samples": 5}),
    )
    .unwrap();
    assert_eq!(Calibration::from_json(&m.to_json(), "m").unwrap(), m);
    // the same setting: nothing to say
    let same = FittedOn::of_request(
        "entailment",
        "a",
        "int8",
        Premise::parse(&json!({"rank": "lexical", "top_k": 3})).unwrap(),
        Some(5),
    );
    assert!(m.mismatches(&same).is_empty());
    let other = FittedOn::of_request("entailment", "b", "fp32", Premise::Whole, Some(3));
    assert_eq!(
        m.mismatches(&other),
        vec![
            "nli_model: fitted on \"a\", applied to \"b\"",
            "precision: fitted on \"int8\", applied to \"fp32\"",
            "premise: fitted on {\"rank\":\"lexical\",\"top_k\":3}, applied to \"whole\"",
            "num_samples: fitted on 5, applied to 3",
        ]
    );
    // nothing recorded: nothing compared
    assert!(platt(1.0, 0.0, 10, 4).mismatches(&other).is_empty());
}
