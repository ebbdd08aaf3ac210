use serde_json::json;

use super::*;
use crate::calibrate::fit::{fit_platt, platt_targets, sigmoid};
use crate::calibrate::Method;
use crate::metrics::ece;
use crate::test_util::open_uniforms as uniforms;

fn near(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn platt_of(c: &Calibration) -> (f64, f64) {
    match c.model {
        Model::Platt { a, b } => (a, b),
        _ => panic!("not platt: {c:?}"),
    }
}

/// A Platt model with a recorded prior precision [aa, ab, bb].
fn old_model(a: f64, b: f64, precision: [f64; 3]) -> Calibration {
    Calibration::from_json(
        &json!({"method": "platt", "a": a, "b": b, "n": 1000, "positives": 700,
                "refit_precision": precision, "fitted_on": {"scorer": "entailment"}}),
        "model",
    )
    .unwrap()
}

fn iso(lambda: f64) -> Precision {
    Precision::isotropic(lambda)
}

const P: Precision = Precision {
    aa: 8.0,
    ab: 3.0,
    bb: 20.0,
};

#[test]
fn map_by_hand_intercept() {
    // Two units at s = 0, labelled 1 and 0: Platt targets 2/3 and 1/3. With θ₀ = (1, 2) the
    // a-equation is λ(a − 1) = 0 (every s is 0), so a = 1; the b-equation is
    // (σ(b) − 2/3) + (σ(b) − 1/3) + λ(b − 2) = 2σ(b) − 1 + λ(b − 2) = 0. For b = ln 3, σ(b) = 3/4
    // and 2·3/4 − 1 = 1/2, so λ = (1/2)/(2 − ln 3).
    let lambda = 0.5 / (2.0 - 3f64.ln());
    let (a, b) = map_platt(&[0.0, 0.0], &[true, false], (1.0, 2.0), iso(lambda)).unwrap();
    assert!(near(a, 1.0, 1e-10), "{a}");
    assert!(near(b, 3f64.ln(), 1e-10), "{b} vs {}", 3f64.ln());
}

#[test]
fn map_by_hand_full_precision() {
    // As in `map_by_hand_intercept` (two units at s = 0, targets 2/3 and 1/3, θ₀ = (1, 2)) with a
    // precision [[2, 1], [1, P_bb]]: the a-equation 2(a − 1) + (b − 2) = 0 gives
    // a = 1 − (b − 2)/2; the b-equation 2σ(b) − 1 + (a − 1) + P_bb(b − 2) = 0 becomes
    // 2σ(b) − 1 + (P_bb − 1/2)(b − 2) = 0 (the Schur complement), so b = ln 3 for
    // P_bb − 1/2 = (1/2)/(2 − ln 3).
    let bb = 0.5 + 0.5 / (2.0 - 3f64.ln());
    let p = Precision {
        aa: 2.0,
        ab: 1.0,
        bb,
    };
    let (a, b) = map_platt(&[0.0, 0.0], &[true, false], (1.0, 2.0), p).unwrap();
    assert!(near(b, 3f64.ln(), 1e-10), "{b} vs {}", 3f64.ln());
    assert!(near(a, 1.0 - (3f64.ln() - 2.0) / 2.0, 1e-10), "{a}");
}

#[test]
fn map_by_hand_slope() {
    // Units at s = 1 (label 1) and s = −1 (label 0), θ₀ = (0, 0): by symmetry b = 0, and the
    // a-equation (σ(a) − 2/3)·1 + (σ(−a) − 1/3)·(−1) + λa = 2σ(a) − 4/3 + λa = 0. For
    // a = ln 1.5, σ(a) = 0.6, so λ = (4/3 − 1.2)/ln 1.5 = (2/15)/ln 1.5.
    let lambda = (2.0 / 15.0) / 1.5f64.ln();
    let (a, b) = map_platt(&[1.0, -1.0], &[true, false], (0.0, 0.0), iso(lambda)).unwrap();
    assert!(near(a, 1.5f64.ln(), 1e-10), "{a}");
    assert!(near(b, 0.0, 1e-10), "{b}");
    // without the prior (λ → 0) the slope is Platt's: 2σ(a) = 4/3, a = ln 2
    let (a0, _) = map_platt(&[1.0, -1.0], &[true, false], (0.0, 0.0), iso(1e-9)).unwrap();
    assert!(near(a0, 2f64.ln(), 1e-6), "{a0}");
}

#[test]
fn map_is_stationary_and_spans_platt_to_prior() {
    let s = uniforms(3, 60);
    let u = uniforms(4, 60);
    let labels: Vec<bool> = s
        .iter()
        .zip(&u)
        .map(|(&s, &u)| u < sigmoid(5.0 * s - 2.0))
        .collect();
    let theta0 = (2.0, 0.5);
    let t = platt_targets(&labels);
    for p in [iso(0.1), iso(3.0), iso(50.0), P] {
        let (a, b) = map_platt(&s, &labels, theta0, p).unwrap();
        // the gradient of F, written out independently, vanishes at the MAP
        let (da, db) = (a - theta0.0, b - theta0.1);
        let (mut ga, mut gb) = (p.aa * da + p.ab * db, p.ab * da + p.bb * db);
        for i in 0..s.len() {
            let p = 1.0 / (1.0 + (-(a * s[i] + b)).exp());
            ga += (p - t[i]) * s[i];
            gb += p - t[i];
        }
        assert!(ga.abs() < 1e-8 && gb.abs() < 1e-8, "{p:?}: ({ga}, {gb})");
    }
    // λ → 0: Platt's fit on the labels alone; λ → ∞: the prior
    let platt = fit_platt(&s, &labels).unwrap();
    let weak = map_platt(&s, &labels, theta0, iso(1e-8)).unwrap();
    assert!(near(weak.0, platt.0, 1e-5) && near(weak.1, platt.1, 1e-5));
    let strong = map_platt(&s, &labels, theta0, iso(1e9)).unwrap();
    assert!(near(strong.0, theta0.0, 1e-5) && near(strong.1, theta0.1, 1e-5));
}

#[test]
fn refit_records_the_prior_and_round_trips() {
    let old = old_model(4.0, -2.0, [8.0, 3.0, 20.0]);
    let s = [0.9, 0.8, 0.7, 0.3, 0.95];
    let l = [true, true, false, false, true];
    let new = old.refit_fixed(&s, &l, "prior_model", "score").unwrap();
    assert_eq!((new.n, new.positives), (5, 3));
    assert_eq!(new.refit_precision, Some(P));
    assert_eq!(new.fitted_on, old.fitted_on);
    let r = new.refit.clone().unwrap();
    assert_eq!((r.a, r.b, r.n, r.positives), (4.0, -2.0, 1000, 700));
    assert_eq!((r.precision, r.target_labels), (P, 5));
    assert_eq!(r.fitted_on, Some(json!({"scorer": "entailment"})));
    assert_eq!(platt_of(&new), map_platt(&s, &l, (4.0, -2.0), P).unwrap());
    let back = Calibration::from_json(&new.to_json(), "m").unwrap();
    assert_eq!(back, new);
    // from an adapted model: centred on its adapted map, σ(a·s + b + logit(π) − logit(π_t))
    let mut adapted = old.clone();
    adapted.prior = Some(crate::calibrate::Prior {
        train: 0.7,
        target: 0.8,
        iterations: 3,
        applied: true,
        check: None,
    });
    let centre = -2.0 + (0.8f64 / 0.2).ln() - (0.7f64 / 0.3).ln();
    let from_adapted = adapted.refit_fixed(&s, &l, "prior_model", "score").unwrap();
    assert!((from_adapted.apply(0.6) - adapted.apply(0.6)).abs() > 0.0);
    let r = from_adapted.refit.clone().unwrap();
    assert!((r.b - centre).abs() < 1e-12, "{} vs {centre}", r.b);
    assert_eq!(r.adaptation, adapted.prior.as_ref().map(|p| p.to_json()));
    let (fa, fb) = platt_of(&from_adapted);
    let (ea, eb) = map_platt(&s, &l, (4.0, centre), P).unwrap();
    assert!(
        near(fa, ea, 1e-9) && near(fb, eb, 1e-9),
        "({fa}, {fb}) vs ({ea}, {eb})"
    );
    assert!(from_adapted.prior.is_none());
    // a refused adaptation is not part of the centre
    adapted.prior.as_mut().unwrap().applied = false;
    let from_refused = adapted.refit_fixed(&s, &l, "prior_model", "score").unwrap();
    assert_eq!(platt_of(&from_refused), platt_of(&new));
    // the adapted map is σ(a·s + b + Δ): the centre reproduces it
    adapted.prior.as_mut().unwrap().applied = true;
    assert!((adapted.apply(0.6) - sigmoid(4.0 * 0.6 + centre)).abs() < 1e-12);
}

#[test]
fn refit_refuses_bad_input() {
    let old = old_model(4.0, -2.0, [8.0, 3.0, 20.0]);
    let e = old
        .refit_fixed(&[], &[], "prior_model", "score")
        .unwrap_err();
    assert!(e.starts_with("no target labels to refit on"), "{e}");
    let e = old
        .refit_fixed(&[0.2, 0.9], &[true, true], "prior_model", "score")
        .unwrap_err();
    assert!(e.starts_with("all 2 target labels are 1"), "{e}");
    let e = old
        .refit_fixed(
            &[f64::INFINITY, 0.9],
            &[true, false],
            "prior_model",
            "score",
        )
        .unwrap_err();
    assert!(e.contains("score must be a finite number"), "{e}");
    let iso = Calibration::fit(&[0.1, 0.9], &[false, true], Method::Isotonic, "s").unwrap();
    let e = iso
        .refit_fixed(&[0.2, 0.9], &[false, true], "prior_model", "score")
        .unwrap_err();
    assert!(e.contains("isotonic model"), "{e}");
    let mut bare = old.clone();
    bare.refit_precision = None;
    let e = bare
        .refit_fixed(&[0.2, 0.9], &[false, true], "prior_model", "score")
        .unwrap_err();
    assert!(e.contains("has no \"refit_precision\""), "{e}");
}

/// `n` units in `groups` contiguous groups (answers), each true with probability `prior`,
/// scored N(μ₁ + g, 0.12) when true and N(μ₀ + g, 0.12) when false, g a per-group offset drawn
/// from N(0, `spread`): the answers differ by `spread`.
fn grouped_set(
    seed: u64,
    n: usize,
    groups: usize,
    prior: f64,
    (mu1, mu0): (f64, f64),
    spread: f64,
) -> (Vec<f64>, Vec<bool>) {
    let u = uniforms(seed, 3 * n + 2 * groups);
    let normal =
        |i: usize| (-2.0 * u[i].ln()).sqrt() * (2.0 * std::f64::consts::PI * u[i + 1]).cos();
    let offsets: Vec<f64> = (0..groups)
        .map(|g| spread * normal(3 * n + 2 * g))
        .collect();
    let mut scores = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let label = u[3 * i] < prior;
        let g = offsets[i * groups / n];
        scores.push(if label { mu1 } else { mu0 } + g + 0.12 * normal(3 * i + 1));
        labels.push(label);
    }
    (scores, labels)
}

#[test]
fn a_platt_fit_records_its_fisher_information() {
    let (s, l) = grouped_set(11, 400, 40, 0.7, (0.65, 0.45), 0.0);
    let c = Calibration::fit(&s, &l, Method::Platt, "score").unwrap();
    let (a, b) = platt_of(&c);
    // Σ p(1 − p)·(s, 1)(s, 1)ᵀ, written out
    let (mut aa, mut ab, mut bb) = (0.0, 0.0, 0.0);
    for &x in &s {
        let p = sigmoid(a * x + b);
        let w = p * (1.0 - p);
        aa += w * x * x;
        ab += w * x;
        bb += w;
    }
    let h = c.refit_precision.unwrap();
    assert!(near(h.aa, aa, 1e-9) && near(h.ab, ab, 1e-9) && near(h.bb, bb, 1e-9));
    assert_eq!(c.to_json()["refit_precision"], json!([h.aa, h.ab, h.bb]));
    // one distinct score: no information on the slope, none recorded
    let flat = Calibration::fit(&[0.5; 4], &[true, false, true, true], Method::Platt, "s");
    assert_eq!(flat.unwrap().refit_precision, None);
    // a hand-set refit_strength λ reads as λ·I; a precision that is not positive definite is refused
    let m = json!({"method": "platt", "a": 1, "b": 0, "refit_strength": 4});
    let c = Calibration::from_json(&m, "m").unwrap();
    assert_eq!(c.refit_precision, Some(iso(4.0)));
    let m = json!({"method": "platt", "a": 1, "b": 0, "refit_precision": [1, 2, 1]});
    let e = Calibration::from_json(&m, "m").unwrap_err();
    assert!(
        e.starts_with("m.refit_precision = [1,2,1] is not positive definite"),
        "{e}"
    );
}

#[test]
fn refit_recovers_a_shift_of_the_class_distributions() {
    // Old answers: true units N(0.65, ·), false N(0.45, ·), 75 % true. New answers: false units
    // score much higher (N(0.57, ·)) and true ones a little (N(0.70, ·)), 55 % true: not a change
    // of base rate alone. The old model was fitted on 3,000 units (300 answers); 300 labelled new
    // units (30 answers) refit it. Under the old fit's information alone the refit would stay
    // near the old model; the labels' evidence widens the prior (module doc).
    let (s_old, l_old) = grouped_set(21, 3000, 300, 0.75, (0.65, 0.45), 0.03);
    let old = Calibration::fit(&s_old, &l_old, Method::Platt, "score").unwrap();
    let (s_new, l_new) = grouped_set(22, 3300, 330, 0.55, (0.70, 0.57), 0.03);
    let (ks, kl) = (&s_new[..300], &l_new[..300]);
    let (es, el) = (&s_new[300..], &l_new[300..]);
    let ece_of = |c: &Calibration| {
        let p: Vec<f64> = es.iter().map(|&x| c.apply(x)).collect();
        ece(&p, el, 10).unwrap()
    };
    let oracle = Calibration::fit(es, el, Method::Platt, "score").unwrap();
    let refit = old.refit_fixed(ks, kl, "old", "score").unwrap();
    let (e_old, e_refit, e_oracle) = (ece_of(&old), ece_of(&refit), ece_of(&oracle));
    assert!(e_old > 0.1, "the shift should hurt the old model: {e_old}");
    assert!(
        e_refit <= e_oracle + 0.03,
        "refit ECE {e_refit} vs {e_oracle} fitted on all the new labels (old {e_old})"
    );
    // the labels showed the drift: the prior was widened; unwidened, the refit stays far off
    assert!(
        refit.refit.as_ref().unwrap().drift.is_some(),
        "{:?}",
        refit.refit
    );
    let (a0, b0) = platt_of(&old);
    let (na, nb) = map_platt(ks, kl, (a0, b0), old.refit_precision.unwrap()).unwrap();
    let narrow =
        Calibration::from_json(&json!({"method": "platt", "a": na, "b": nb}), "m").unwrap();
    assert!(
        ece_of(&narrow) > e_oracle + 0.05,
        "unwidened {}",
        ece_of(&narrow)
    );
    // new answers like the old ones: no widening
    let (s_same, l_same) = grouped_set(23, 300, 30, 0.75, (0.65, 0.45), 0.03);
    let same = old.refit_fixed(&s_same, &l_same, "old", "score").unwrap();
    assert_eq!(same.refit.unwrap().drift, None);
    // the guard, given the same labels, refuses the unlabelled adaptation
    let g = old.adapt_guarded(&s_new, ks, kl, "old", "score").unwrap();
    let p = g.prior.clone().unwrap();
    let c = p.check.clone().unwrap();
    assert!(!p.applied, "{p:?}");
    let loss = c.log_loss.unwrap();
    assert!(loss.adapted - loss.unadapted > 2.0 * loss.se, "{c:?}");
    assert_eq!(c.labelled, 300);
    // refused: it maps scores as the unadapted model, and says so
    assert_eq!(g.apply(0.6), old.apply(0.6));
    assert!(
        p.note()
            .starts_with("not adapted: on the 300 labelled units"),
        "{}",
        p.note()
    );
    // EM moved the base rate the wrong way (up, for a new rate of 0.55 below the old 0.75)
    assert!(p.target > p.train, "{p:?}");
}

/// The answer id of each of `n` units in `groups` contiguous groups (as [`grouped_set`]).
fn answer_ids(n: usize, groups: usize) -> Vec<usize> {
    (0..n).map(|i| i * groups / n).collect()
}

/// ECE on (`es`, `el`) of the old model, of Platt on the K labels alone and of the chosen refit,
/// and the refit.
fn contenders(
    old: &Calibration,
    (ks, kl, ka): (&[f64], &[bool], &[usize]),
    (es, el): (&[f64], &[bool]),
) -> (f64, f64, f64, Calibration) {
    let ece_of = |c: &Calibration| {
        let p: Vec<f64> = es.iter().map(|&x| c.apply(x)).collect();
        ece(&p, el, 10).unwrap()
    };
    let platt_k = Calibration::fit(ks, kl, Method::Platt, "score").unwrap();
    let refit = old.refit(ks, kl, Some(ka), "old", "score").unwrap();
    (ece_of(old), ece_of(&platt_k), ece_of(&refit), refit)
}

#[test]
fn the_labels_choose_the_prior_strength() {
    // The old model: 3,000 units of 300 answers, true N(0.65, ·), false N(0.45, ·), 75 % true.
    let (s_old, l_old) = grouped_set(31, 3000, 300, 0.75, (0.65, 0.45), 0.03);
    let old = Calibration::fit(&s_old, &l_old, Method::Platt, "score").unwrap();
    let ka = answer_ids(100, 10); // 10 labelled answers of 10 units
    let scale_of = |c: &Calibration| c.refit.as_ref().unwrap().scale.clone().unwrap();

    // (1) No shift: the new answers are more of the old ones. The labels cannot beat the old
    // model, so the prior stays strong and the refit stays with it.
    let (s, l) = grouped_set(32, 2100, 210, 0.75, (0.65, 0.45), 0.03);
    let (e_old, e_k, e_refit, refit) =
        contenders(&old, (&s[..100], &l[..100], &ka), (&s[100..], &l[100..]));
    let c = scale_of(&refit);
    assert!(c.scale >= 1.0, "{c:?}");
    assert!(
        e_refit <= e_old + 0.01 && e_refit < e_k,
        "old {e_old} k {e_k} refit {e_refit}"
    );

    // (2) A base-rate shift: 45 % true, the same score distributions per class. The intercept
    // moves; the refit beats the old model and is no worse than Platt on the 10 answers.
    let (s, l) = grouped_set(33, 2100, 210, 0.45, (0.65, 0.45), 0.03);
    let (e_old, e_k, e_refit, _) =
        contenders(&old, (&s[..100], &l[..100], &ka), (&s[100..], &l[100..]));
    assert!(e_old > 0.1, "the shift should hurt the old model: {e_old}");
    assert!(
        e_refit < e_old && e_refit <= e_k + 0.01,
        "old {e_old} k {e_k} refit {e_refit}"
    );

    // (3) A change of slope: the classes' scores come close (true N(0.60, ·), false N(0.55, ·)),
    // which the old fit's information says cannot happen. The labels choose a weaker prior (1/16:
    // the one-standard-error rule stops short of the lowest loss, at 1/256) and the refit closes
    // 49 % of the gap from the old model (ECE 0.136) to Platt on the labels (0.042): 0.090.
    let (s, l) = grouped_set(34, 2100, 210, 0.75, (0.60, 0.55), 0.03);
    let (e_old, e_k, e_refit, refit) =
        contenders(&old, (&s[..100], &l[..100], &ka), (&s[100..], &l[100..]));
    let c = scale_of(&refit);
    assert!(c.scale <= 0.25, "{c:?}");
    assert!(
        e_refit < e_old - 0.4 * (e_old - e_k),
        "old {e_old} k {e_k} refit {e_refit}"
    );
    // the record: folds are the answers, one loss per scale; the chosen one is not the lowest
    // but every stronger prior's loss is higher than its own
    assert_eq!(
        (c.folds, c.by_answer, c.log_loss.len()),
        (10, true, scale::SCALES.len())
    );
    let loss = |x: f64| c.log_loss.iter().find(|l| l.0 == x).unwrap().1.unwrap();
    let best = c
        .log_loss
        .iter()
        .filter_map(|x| x.1)
        .fold(f64::INFINITY, f64::min);
    assert!(best < loss(c.scale));
    assert!(scale::SCALES
        .iter()
        .filter(|&&x| x > c.scale)
        .all(|&x| loss(x) > loss(c.scale)));
    let back = Calibration::from_json(&refit.to_json(), "m").unwrap();
    assert_eq!(back, refit);
    assert!(
        refit
            .refit
            .as_ref()
            .unwrap()
            .describe_prior()
            .starts_with(&format!(
                "prior scale {} (leave-one-answer-out over 10 answers) × prior precision [",
                c.scale
            )),
        "{}",
        refit.refit.as_ref().unwrap().describe_prior()
    );
    // the refit's model is the MAP at the chosen scale
    let (a0, b0) = platt_of(&old);
    let p = old.refit_precision.unwrap().scaled(c.scale);
    assert_eq!(
        platt_of(&refit),
        map_platt(&s[..100], &l[..100], (a0, b0), p).unwrap()
    );
}

#[test]
fn without_answer_ids_each_unit_is_held_out() {
    let old = old_model(4.0, -2.0, [8.0, 3.0, 20.0]);
    let s = [0.9, 0.8, 0.7, 0.3, 0.95];
    let l = [true, true, false, false, true];
    let r = old.refit(&s, &l, None, "prior_model", "score").unwrap();
    let c = r.refit.unwrap().scale.unwrap();
    assert_eq!((c.folds, c.by_answer), (5, false));
    // one answer: nothing to hold out, the prior at its full strength
    let r = old
        .refit(&s, &l, Some(&[3; 5]), "prior_model", "score")
        .unwrap();
    let c = r.refit.unwrap().scale.unwrap();
    assert_eq!((c.scale, c.folds, c.log_loss.len()), (1.0, 1, 0));
    assert!(
        c.describe().contains("nothing to hold out"),
        "{}",
        c.describe()
    );
    // the same errors as the fixed refit
    let e = old
        .refit(&[], &[], None, "prior_model", "score")
        .unwrap_err();
    assert!(e.starts_with("no target labels to refit on"), "{e}");
}
