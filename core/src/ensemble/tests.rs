use serde_json::json;

use super::*;
use crate::metrics::auroc;
use crate::test_util::uniforms;

fn training(columns: &[(&str, &[f64])], labels: &[bool]) -> Training {
    let mut t = Training::default();
    for (i, &l) in labels.iter().enumerate() {
        let row = columns
            .iter()
            .map(|(n, v)| (n.to_string(), Some(v[i])))
            .collect();
        t.push(row, l, "scores_json").unwrap();
    }
    t
}

fn weight(w: &Weights, name: &str) -> f64 {
    w.names
        .iter()
        .position(|n| n == name)
        .map(|i| w.values[i])
        .unwrap_or(f64::NAN)
}

#[test]
fn a_perfect_scorer_takes_all_the_weight_from_noise() {
    let n = 400;
    let labels: Vec<bool> = uniforms(1, n).iter().map(|&u| u < 0.6).collect();
    let u = uniforms(2, n);
    // perfect: every true unit in [0.6, 1), every false one in [0, 0.4); noise: uniform.
    let perfect: Vec<f64> = labels
        .iter()
        .zip(&u)
        .map(|(&l, &u)| if l { 0.6 + 0.4 * u } else { 0.4 * u })
        .collect();
    let noise = uniforms(3, n);
    let t = training(&[("perfect", &perfect), ("noise", &noise)], &labels);
    for objective in [Objective::Auroc, Objective::LogLoss] {
        let w = t.fit(objective).unwrap();
        assert_eq!(w.names, vec!["noise", "perfect"]);
        assert_eq!(w.values, vec![0.0, 1.0], "{objective:?}");
    }
    // the noise alone is near chance, the perfect scorer perfect
    assert!((auroc(&noise, &labels).unwrap() - 0.5).abs() < 0.1);
    assert_eq!(auroc(&perfect, &labels), Some(1.0));
}

#[test]
fn two_equally_noisy_views_share_the_weight_and_beat_either() {
    let n = 600;
    let labels: Vec<bool> = uniforms(11, n).iter().map(|&u| u < 0.5).collect();
    let view = |seed| -> Vec<f64> {
        uniforms(seed, n)
            .iter()
            .zip(&labels)
            .map(|(&u, &l)| 0.5 * u + if l { 0.25 } else { 0.0 })
            .collect()
    };
    let (a, b) = (view(12), view(13));
    let t = training(&[("a", &a), ("b", &b)], &labels);
    let w = t.fit(Objective::Auroc).unwrap();
    let (wa, wb) = (weight(&w, "a"), weight(&w, "b"));
    assert!((0.3..=0.7).contains(&wa), "{w:?}");
    assert!((wa + wb - 1.0).abs() < 1e-12);
    let best_single = auroc(&a, &labels).unwrap().max(auroc(&b, &labels).unwrap());
    let ens: Vec<f64> = a.iter().zip(&b).map(|(x, y)| wa * x + wb * y).collect();
    assert!(auroc(&ens, &labels).unwrap() > best_single + 0.02);
}

#[test]
fn log_loss_weights_match_a_fine_grid_search() {
    // Two probability-like scorers of the same quality with independent noise (averaging them
    // lowers the log-loss); the log-loss is convex in the weight, so the optimum on a 1e-4 grid
    // (computed here, independently) is within the search's 1e-3.
    let n = 500;
    let labels: Vec<bool> = uniforms(21, n).iter().map(|&u| u < 0.4).collect();
    let sharp: Vec<f64> = uniforms(22, n)
        .iter()
        .zip(&labels)
        .map(|(&u, &l)| if l { 0.45 + 0.5 * u } else { 0.05 + 0.5 * u })
        .collect();
    let flat: Vec<f64> = uniforms(23, n)
        .iter()
        .zip(&labels)
        .map(|(&u, &l)| if l { 0.45 + 0.5 * u } else { 0.05 + 0.5 * u })
        .collect();
    let mean_loss = |w: f64| -> f64 {
        let mut s = 0.0;
        for i in 0..n {
            let p = w * flat[i] + (1.0 - w) * sharp[i];
            s -= if labels[i] { p.ln() } else { (1.0 - p).ln() };
        }
        s / n as f64
    };
    let (mut best_w, mut best) = (0.0, f64::INFINITY);
    for k in 0..=10_000 {
        let w = k as f64 / 10_000.0;
        let l = mean_loss(w);
        if l < best {
            (best_w, best) = (w, l);
        }
    }
    assert!(
        best_w > 0.01 && best_w < 0.99,
        "optimum should be inside: {best_w}"
    );
    let t = training(&[("flat", &flat), ("sharp", &sharp)], &labels);
    let w = t.fit(Objective::LogLoss).unwrap();
    assert!(
        (weight(&w, "flat") - best_w).abs() <= 0.0015,
        "{w:?} vs {best_w}"
    );
    let found = -t.objective_value(&w.values, Objective::LogLoss);
    assert!(found <= best + 1e-6, "{found} vs {best}");
}

#[test]
fn one_component_gets_weight_one() {
    let t = training(&[("only", &[0.2, 0.8])], &[false, true]);
    assert_eq!(t.fit(Objective::Auroc).unwrap().values, vec![1.0]);
}

#[test]
fn fit_refuses_bad_training_sets() {
    let e = Training::default().fit(Objective::Auroc).unwrap_err();
    assert!(e.starts_with("no labelled rows to fit on:"), "{e}");
    let t = training(&[("a", &[0.2, 0.3]), ("b", &[0.1, 0.9])], &[true, true]);
    let e = t.fit(Objective::Auroc).unwrap_err();
    assert!(
        e.contains("all 2 labelled rows have label 1") && e.contains("both classes"),
        "{e}"
    );
    let t = training(&[("a", &[0.2, 1.3]), ("b", &[0.1, 0.9])], &[false, true]);
    let e = t.fit(Objective::LogLoss).unwrap_err();
    assert!(
        e.contains("a has score 1.3 outside [0, 1]") && e.contains("use objective auroc"),
        "{e}"
    );
    assert!(t.fit(Objective::Auroc).is_ok());
    // incomplete rows are left out and counted
    let mut t = Training::default();
    t.push(vec![("a".into(), Some(0.2)), ("b".into(), None)], true, "s")
        .unwrap();
    t.push(
        vec![("b".into(), Some(0.2)), ("a".into(), Some(0.1))],
        false,
        "s",
    )
    .unwrap();
    assert_eq!((t.rows.len(), t.incomplete), (1, 1));
    let e = t.fit(Objective::Auroc).unwrap_err();
    assert!(
        e.contains("(1 rows were left out for a missing component score)"),
        "{e}"
    );
}

#[test]
fn rows_must_name_the_same_scorers() {
    let mut t = Training::default();
    t.push(
        vec![("a".into(), Some(0.2)), ("b".into(), Some(0.3))],
        true,
        "scores_json",
    )
    .unwrap();
    let e = t
        .push(vec![("a".into(), Some(0.2))], true, "scores_json")
        .unwrap_err();
    assert!(
        e.starts_with("scores_json must name the same scorers in every row"),
        "{e}"
    );
    assert!(e.contains("a row lacks \"b\""), "{e}");
    let e = t
        .push(
            vec![
                ("a".into(), Some(0.2)),
                ("b".into(), None),
                ("c".into(), Some(1.0)),
            ],
            true,
            "scores_json",
        )
        .unwrap_err();
    assert!(e.contains("has \"c\", which the first row lacks"), "{e}");
}

#[test]
fn combining_skips_missing_scores_and_rescales() {
    assert!((combine(&[0.2, 0.8], &[0.25, 0.75]).unwrap() - 0.65).abs() < 1e-15);
    // b missing → a alone
    assert_eq!(combine(&[0.2, f64::NAN], &[0.25, 0.75]), Some(0.2));
    assert_eq!(combine(&[f64::NAN, 0.8], &[1.0, 0.0]), None);
    let w = Weights::from_json(&json!({"x": 1, "y": 3}), "weights_json").unwrap();
    assert_eq!(w.values, vec![0.25, 0.75]);
    let s = |n: &str| match n {
        "x" => Some(0.2),
        "y" => Some(0.6),
        _ => None,
    };
    assert!((w.apply(s).unwrap() - 0.5).abs() < 1e-15);
    assert_eq!(w.used().collect::<Vec<_>>(), vec!["x", "y"]);
    assert_eq!(w.to_json(), json!({"x": 0.25, "y": 0.75}));
}

#[test]
fn malformed_weights_and_scores_are_refused() {
    let bad_w = |v: serde_json::Value, want: &str| {
        let e = Weights::from_json(&v, "weights_json").unwrap_err();
        assert!(
            e.starts_with("weights_json") && e.contains(want),
            "{v}: {e}"
        );
    };
    bad_w(
        json!([0.5, 0.5]),
        "must be a JSON object of scorer → weight",
    );
    bad_w(json!({}), "is empty");
    bad_w(
        json!({"a": -0.1, "b": 1}),
        "weights_json.a is -0.1: every weight must be a number >= 0",
    );
    bad_w(json!({"a": "0.5"}), "every weight must be a number");
    bad_w(json!({"a": 0, "b": 0}), "every weight is 0");
    let bad_s = |v: serde_json::Value, want: &str| {
        let e = scores_from_json(&v, "scores_json").unwrap_err();
        assert!(e.starts_with("scores_json") && e.contains(want), "{v}: {e}");
    };
    bad_s(json!(0.5), "must be a JSON object of scorer → score");
    bad_s(json!({}), "is empty");
    bad_s(
        json!({"a": "x"}),
        "scores_json.a is \"x\": every score must be a finite number",
    );
    assert_eq!(
        scores_from_json(&json!({"a": null, "b": 1}), "s").unwrap(),
        vec![("a".to_string(), None), ("b".to_string(), Some(1.0))]
    );
}

#[test]
fn objectives_parse() {
    assert_eq!(Objective::parse("roc_auc"), Ok(Objective::Auroc));
    assert_eq!(Objective::parse(" LOG_LOSS"), Ok(Objective::LogLoss));
    assert!(Objective::parse("brier")
        .unwrap_err()
        .contains("use \"auroc\""));
}

#[test]
fn log_loss_hand_computed() {
    // −(ln .8 + ln(1 − .4)) / 2
    let l = log_loss(&[0.8, 0.4], &[true, false]);
    assert!((l - (-(0.8f64.ln() + 0.6f64.ln()) / 2.0)).abs() < 1e-15);
    // clipped, finite
    assert!(log_loss(&[0.0], &[true]).is_finite());
}
