use serde_json::json;

use super::fit::softplus;
use super::*;
use crate::test_util::uniforms;

const T: bool = true;
const F: bool = false;

fn near(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Logistic regression of the Platt targets on the scores, fitted here by a separate method:
/// plain Newton iterations (no line search, no centring) on the log-likelihood
/// ℓ(a, b) = Σ t log p + (1 − t) log(1 − p), written out from the derivatives
/// ∂ℓ/∂a = Σ (t − p) s, ∂ℓ/∂b = Σ (t − p), ∂²ℓ = −Σ p(1 − p) (s², s; s, 1).
fn newton_logistic(s: &[f64], labels: &[bool]) -> (f64, f64) {
    let np = labels.iter().filter(|&&l| l).count() as f64;
    let nn = labels.len() as f64 - np;
    let t: Vec<f64> = labels
        .iter()
        .map(|&l| {
            if l {
                (np + 1.0) / (np + 2.0)
            } else {
                1.0 / (nn + 2.0)
            }
        })
        .collect();
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let (mut g1, mut g2, mut h11, mut h12, mut h22) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for i in 0..s.len() {
            let p = 1.0 / (1.0 + (-(a * s[i] + b)).exp());
            g1 += (t[i] - p) * s[i];
            g2 += t[i] - p;
            h11 += p * (1.0 - p) * s[i] * s[i];
            h12 += p * (1.0 - p) * s[i];
            h22 += p * (1.0 - p);
        }
        // (a, b) += H⁻¹ g with H the negated Hessian (Cramer's rule)
        let det = h11 * h22 - h12 * h12;
        a += (h22 * g1 - h12 * g2) / det;
        b += (h11 * g2 - h12 * g1) / det;
    }
    (a, b)
}

fn platt(c: &Calibration) -> (f64, f64) {
    match c.model {
        Model::Platt { a, b } => (a, b),
        _ => panic!("not platt: {c:?}"),
    }
}

#[test]
fn platt_matches_an_independent_newton_fit() {
    // 300 scores in [0, 1], labels drawn with P(true) = σ(4s − 1.5).
    let s = uniforms(7, 300);
    let u = uniforms(99, 300);
    let labels: Vec<bool> = s
        .iter()
        .zip(&u)
        .map(|(&s, &u)| u < 1.0 / (1.0 + (-(4.0 * s - 1.5)).exp()))
        .collect();
    let c = Calibration::fit(&s, &labels, Method::Platt, "score").unwrap();
    let (a, b) = platt(&c);
    let (ea, eb) = newton_logistic(&s, &labels);
    assert!(
        near(a, ea, 1e-8) && near(b, eb, 1e-8),
        "({a}, {b}) vs ({ea}, {eb})"
    );
    // sanity: the data was drawn from slope 4, intercept -1.5
    assert!(a > 2.0 && a < 6.0 && b < 0.0, "({a}, {b})");
    assert_eq!(
        (c.n, c.positives),
        (300, labels.iter().filter(|&&l| l).count())
    );
    // scores on another scale (0..100) give the same probabilities
    let s100: Vec<f64> = s.iter().map(|x| 100.0 * x).collect();
    let c100 = Calibration::fit(&s100, &labels, Method::Platt, "score").unwrap();
    let (a100, b100) = platt(&c100);
    assert!(near(a100 * 100.0, a, 1e-7) && near(b100, b, 1e-7));
}

#[test]
fn platt_two_scores_is_the_saturated_fit() {
    // Scores 0 and 1, four units each; N+ = N- = 4 → targets 5/6 and 1/6.
    // At s = 0: labels 1,0,0,0 → mean target (5/6 + 3/6)/4 = 1/3; at s = 1: 1,1,1,0 → 2/3.
    // Two distinct scores: the fit reproduces both means, σ(b) = 1/3 and σ(a + b) = 2/3,
    // so b = ln(1/2) and a = 2 ln 2.
    let s = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
    let l = [T, F, F, F, T, T, T, F];
    let c = Calibration::fit(&s, &l, Method::Platt, "score").unwrap();
    let (a, b) = platt(&c);
    assert!(near(a, 2.0 * 2f64.ln(), 1e-9), "{a}");
    assert!(near(b, -(2f64.ln()), 1e-9), "{b}");
    assert!(near(c.apply(0.0), 1.0 / 3.0, 1e-9));
    assert!(near(c.apply(1.0), 2.0 / 3.0, 1e-9));
}

#[test]
fn platt_separable_and_inverted_data_stay_finite() {
    let s = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9];
    let c = Calibration::fit(&s, &[F, F, F, T, T, T], Method::Platt, "score").unwrap();
    let (a, b) = platt(&c);
    assert!(a.is_finite() && b.is_finite() && a > 0.0);
    assert!(c.apply(0.9) > 0.5 && c.apply(0.1) < 0.5);
    // a score that ranks the wrong way gets a negative slope
    let c = Calibration::fit(&s, &[T, T, T, F, F, F], Method::Platt, "score").unwrap();
    assert!(platt(&c).0 < 0.0);
    // one distinct score: p = the mean target; 2 of 3 true → (3/4 + 3/4 + 1/3)/3 = 11/18
    let c = Calibration::fit(&[0.4; 3], &[T, T, F], Method::Platt, "score").unwrap();
    assert_eq!(platt(&c).0, 0.0);
    assert!(near(c.apply(0.9), 11.0 / 18.0, 1e-12));
}

#[test]
fn isotonic_hand_worked_pav() {
    // Sorted scores .1 .2 .3 .4 .5 .6 with labels 0 1 0 1 1 0:
    //   [0] [1] → 0 < 1 fine; [0] [1] [0]: 1 ≥ 0 → pool {.2,.3} = 1/2
    //   [0] [1/2] [1] [1]: 1 ≥ 1 → pool {.4,.5} = 1; then [0]: 1 ≥ 0 → pool {.4,.5,.6} = 2/3;
    //   1/2 < 2/3: done. Blocks {.1}: 0, {.2,.3}: 1/2, {.4,.5,.6}: 2/3.
    // Points: x = .1 .2 .3 .4 .6, y = 0 1/2 1/2 2/3 2/3.
    let s = [0.4, 0.1, 0.6, 0.2, 0.5, 0.3];
    let l = [T, F, F, T, T, F];
    let c = Calibration::fit(&s, &l, Method::Isotonic, "score").unwrap();
    let Model::Isotonic { x, y } = &c.model else {
        panic!("{c:?}")
    };
    assert_eq!(x, &vec![0.1, 0.2, 0.3, 0.4, 0.6]);
    let want = [0.0, 0.5, 0.5, 2.0 / 3.0, 2.0 / 3.0];
    assert!(y.iter().zip(want).all(|(a, b)| near(*a, b, 1e-15)), "{y:?}");
    // below the range: clipped to 0; between .1 and .2: halfway → 1/4;
    // between .3 and .4: halfway from 1/2 to 2/3 → 7/12; inside a block: its value; above: 2/3
    assert_eq!(c.apply(0.0), 0.0);
    assert!(near(c.apply(0.15), 0.25, 1e-12));
    assert!(near(c.apply(0.35), 7.0 / 12.0, 1e-12));
    assert!(near(c.apply(0.25), 0.5, 1e-12));
    assert!(near(c.apply(0.55), 2.0 / 3.0, 1e-12));
    assert!(near(c.apply(5.0), 2.0 / 3.0, 1e-12));
    assert!(c.apply(f64::NAN).is_nan());
}

#[test]
fn isotonic_pools_ties_first() {
    // Ties at .5 pool to (1 + 0)/2 = 1/2 < 1 at .2: violation → one block {.2, .5} of 2/3.
    let c = Calibration::fit(&[0.5, 0.5, 0.2], &[T, F, T], Method::Isotonic, "s").unwrap();
    assert_eq!(
        c.model,
        Model::Isotonic {
            x: vec![0.2, 0.5],
            y: vec![2.0 / 3.0, 2.0 / 3.0]
        }
    );
    // Already increasing: each distinct score its own block (means 0, 1/2, 1).
    let c = Calibration::fit(&[0.1, 0.5, 0.5, 0.9], &[F, T, F, T], Method::Isotonic, "s").unwrap();
    assert_eq!(
        c.model,
        Model::Isotonic {
            x: vec![0.1, 0.5, 0.9],
            y: vec![0.0, 0.5, 1.0]
        }
    );
}

#[test]
fn isotonic_is_monotone_and_calibrated_in_sample() {
    let s = uniforms(3, 500);
    let u = uniforms(4, 500);
    let l: Vec<bool> = s.iter().zip(&u).map(|(s, u)| u < &(s * s)).collect();
    let c = Calibration::fit(&s, &l, Method::Isotonic, "score").unwrap();
    let p: Vec<f64> = s.iter().map(|&x| c.apply(x)).collect();
    let mut order: Vec<usize> = (0..s.len()).collect();
    order.sort_by(|&a, &b| s[a].total_cmp(&s[b]));
    assert!(order.windows(2).all(|w| p[w[0]] <= p[w[1]]));
    // On its training data an isotonic fit is calibrated on average: Σ p = Σ labels.
    let positives = l.iter().filter(|&&v| v).count() as f64;
    assert!(near(p.iter().sum::<f64>(), positives, 1e-9));
}

#[test]
fn fit_refuses_bad_training_sets() {
    for m in Method::ALL {
        let e = Calibration::fit(&[], &[], m, "score").unwrap_err();
        assert!(e.starts_with("no labelled rows to fit on"), "{e}");
        let e = Calibration::fit(&[0.2, 0.9], &[T, T], m, "score").unwrap_err();
        assert!(
            e.contains("all 2 labelled rows have label 1") && e.contains("both classes"),
            "{e}"
        );
        let e = Calibration::fit(&[0.2, 0.9], &[F, F], m, "score").unwrap_err();
        assert!(e.contains("have label 0"), "{e}");
        let e = Calibration::fit(&[0.2, f64::INFINITY], &[F, T], m, "score").unwrap_err();
        assert!(e.starts_with("score must be a finite number"), "{e}");
    }
}

#[test]
fn models_round_trip_through_json() {
    let s = [0.1, 0.4, 0.35, 0.8, 0.6];
    let l = [F, F, T, T, T];
    for m in Method::ALL {
        let c = Calibration::fit(&s, &l, m, "score").unwrap();
        let j = c.to_json();
        assert_eq!(j["method"], m.as_str());
        assert_eq!(
            (j["n"].as_u64(), j["positives"].as_u64()),
            (Some(5), Some(3))
        );
        let back = Calibration::from_json(&j, "model_json").unwrap();
        assert_eq!(back, c);
    }
    let c = Calibration::from_json(&json!({"method": "Platt", "a": 2, "b": -1}), "m").unwrap();
    assert!(near(c.apply(0.5), 0.5, 1e-15));
    assert_eq!((c.n, c.positives), (0, 0));
}

#[test]
fn malformed_models_are_refused_with_the_fix() {
    let bad = |v: serde_json::Value, want: &str| {
        let e = Calibration::from_json(&v, "model_json").unwrap_err();
        assert!(e.contains(want), "{v}: {e}");
        assert!(e.starts_with("model_json"), "{e}");
    };
    bad(
        json!([1, 2]),
        "model_json must be a JSON object, got an array",
    );
    bad(
        json!({"a": 1, "b": 2}),
        "has no \"method\": pass the JSON that uq_fit_calibration returns",
    );
    bad(
        json!({"method": "beta"}),
        "unknown calibration method \"beta\"",
    );
    bad(json!({"method": 3}), "model_json.method must be a string");
    bad(
        json!({"method": "platt", "a": 1}),
        "model_json has no \"b\" (platt: p = 1/(1+exp(-(a*score+b))))",
    );
    bad(
        json!({"method": "platt", "a": "1", "b": 0}),
        "model_json.a must be a finite number",
    );
    bad(
        json!({"method": "platt", "a": 1, "b": 0, "x": []}),
        "unknown key \"x\" for method platt",
    );
    bad(json!({"method": "isotonic", "x": [0.1]}), "has no \"y\"");
    bad(
        json!({"method": "isotonic", "x": [0.1, 0.2], "y": [0.5]}),
        "same length",
    );
    bad(json!({"method": "isotonic", "x": [], "y": []}), "non-empty");
    bad(
        json!({"method": "isotonic", "x": [0.2, 0.1], "y": [0.1, 0.2]}),
        "strictly increasing",
    );
    bad(
        json!({"method": "isotonic", "x": [0.1, 0.2], "y": [0.3, 0.2]}),
        "non-decreasing",
    );
    bad(
        json!({"method": "isotonic", "x": [0.1, 0.2], "y": [0.3, 1.2]}),
        "not a probability",
    );
    bad(
        json!({"method": "isotonic", "x": [0.1, "a"], "y": [0.3, 0.4]}),
        "x[1] must be a finite number",
    );
    bad(
        json!({"method": "platt", "a": 1, "b": 0, "n": -1}),
        "model_json.n must be a non-negative integer",
    );
}

#[test]
fn methods_parse() {
    assert_eq!(Method::parse(" Isotonic "), Ok(Method::Isotonic));
    assert_eq!(Method::parse("platt"), Ok(Method::Platt));
    assert!(Method::parse("sigmoid")
        .unwrap_err()
        .contains("use \"platt\""));
}

#[test]
fn sigmoid_is_stable() {
    assert_eq!(sigmoid(0.0), 0.5);
    assert_eq!(sigmoid(1000.0), 1.0);
    assert_eq!(sigmoid(-1000.0), 0.0);
    assert!(near(sigmoid(2.0) + sigmoid(-2.0), 1.0, 1e-15));
    assert!(near(softplus(-800.0), 0.0, 1e-300) && near(softplus(800.0), 800.0, 1e-9));
}
