use serde_json::json;

use super::*;
use crate::calibrate::Method;
use crate::test_util::open_uniforms as uniforms;

/// `n` units, each true with probability `prior`, scored N(0.65, 0.12) when true and
/// N(0.45, 0.12) when false: only the base rate differs between two such sets.
fn shifted_set(seed: u64, n: usize, prior: f64) -> (Vec<f64>, Vec<bool>) {
    let u = uniforms(seed, 3 * n);
    (0..n)
        .map(|i| {
            let label = u[3 * i] < prior;
            let z = (-2.0 * u[3 * i + 1].ln()).sqrt()
                * (2.0 * std::f64::consts::PI * u[3 * i + 2]).cos();
            (if label { 0.65 } else { 0.45 } + 0.12 * z, label)
        })
        .unzip()
}

#[test]
fn a_pure_base_rate_shift_passes_the_guard() {
    let (s, l) = shifted_set(1, 3000, 0.8);
    let old = Calibration::fit(&s, &l, Method::Platt, "score").unwrap();
    let (t, tl) = shifted_set(2, 3000, 0.4);
    // without labels: adapted, unchecked, both base rates recorded
    let a = old.adapt_guarded(&t, &[], &[], "m", "score").unwrap();
    let p = a.prior.clone().unwrap();
    assert!(p.applied && p.check.is_none());
    assert!(
        (p.train - 0.8).abs() < 0.03 && (p.target - 0.4).abs() < 0.05,
        "{p:?}"
    );
    assert!(
        p.note().starts_with("adapted without labels"),
        "{}",
        p.note()
    );
    // with 300 labels: checked, the ECE drops, applied
    let g = old
        .adapt_guarded(&t, &t[..300], &tl[..300], "m", "score")
        .unwrap();
    let p = g.prior.clone().unwrap();
    let c = p.check.clone().unwrap();
    assert!(p.applied, "{p:?}");
    assert!(c.ece_adapted < c.ece_unadapted, "{c:?}");
    assert_eq!(c.labelled, 300);
    assert_ne!(g.apply(0.5), old.apply(0.5));
    assert_eq!(g.apply(0.5), a.apply(0.5));
}

#[test]
fn a_refused_adaptation_round_trips_and_maps_unadapted() {
    let m = json!({"method": "platt", "a": 4.0, "b": -2.0, "n": 10, "positives": 7,
        "prior": {"train": 0.7, "target": 0.9, "iterations": 5, "applied": false,
                  "check": {"labelled": 12, "ece_unadapted": 0.05, "ece_adapted": 0.09}}});
    let c = Calibration::from_json(&m, "model_json").unwrap();
    assert_eq!(c.apply(0.5), c.apply_fitted(0.5));
    assert_eq!(c.to_json(), m);
    let note = c.prior.as_ref().unwrap().note();
    assert!(
        note.contains("adapting is worse: the ECE goes from 0.050 to 0.090"),
        "{note}"
    );
    let bad = json!({"method": "platt", "a": 4.0, "b": -2.0, "n": 10, "positives": 7,
        "prior": {"train": 0.7, "target": 0.9, "applied": "no"}});
    let e = Calibration::from_json(&bad, "model_json").unwrap_err();
    assert!(
        e.starts_with("model_json.prior.applied must be true or false"),
        "{e}"
    );
}

#[test]
fn labelled_scores_must_be_finite() {
    let (s, l) = shifted_set(1, 500, 0.8);
    let old = Calibration::fit(&s, &l, Method::Platt, "score").unwrap();
    let e = old
        .adapt_guarded(&s, &[f64::NAN], &[true], "m", "score")
        .unwrap_err();
    assert!(e.contains("score must be a finite number"), "{e}");
}
