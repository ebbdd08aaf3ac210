use super::*;
use crate::metrics::bootstrap::Rng;

fn set(scores: &[f64], labels: &[u8], answers: &[usize]) -> Labelled {
    Labelled {
        scores: scores.to_vec(),
        labels: labels.iter().map(|&l| l == 1).collect(),
        answers: answers.to_vec(),
        major: Vec::new(),
    }
}

#[test]
fn nonfact_star_leaves_wholly_major_passages_out() {
    // answer 0: accurate, minor, major; answer 1: wholly major (left out); answer 2: accurate, major
    let mut s = set(
        &[0.9, 0.5, 0.3, 0.1, 0.2, 0.6, 0.4],
        &[1, 0, 0, 0, 0, 1, 0],
        &[0, 0, 0, 1, 1, 2, 2],
    );
    let all: Vec<usize> = (0..7).collect();
    assert_eq!(Figure::NonfactStarAucPr.of(&s, &all), None);
    assert_eq!(Figure::of_set(&s).len(), 3);
    s.major = vec![false, false, true, true, true, false, true];
    assert_eq!(Figure::of_set(&s).len(), 4);
    // units 0, 1, 2, 5, 6; positives 2 and 6; hallucination scores 0.1, 0.5, 0.7, 0.4, 0.6
    let want = average_precision(
        &[0.1, 0.5, 0.7, 0.4, 0.6],
        &[false, false, true, false, true],
    );
    assert_eq!(Figure::NonfactStarAucPr.of(&s, &all), want);
    // ranked 0.7 (+), 0.6 (+): AP 1
    assert_eq!(want, Some(1.0));
    assert_eq!(
        Figure::parse("nonfact_star_auc_pr"),
        Some(Figure::NonfactStarAucPr)
    );
    // a resample that draws only the wholly major answer has no positive to rank among others
    assert_eq!(Figure::NonfactStarAucPr.of(&s, &[3, 4]), None);
}

#[test]
fn figures_of_one_set_leave_nan_out() {
    let s = set(
        &[0.9, 0.8, f64::NAN, 0.4, 0.2],
        &[1, 0, 0, 1, 0],
        &[0, 0, 1, 1, 2],
    );
    let all: Vec<usize> = (0..5).collect();
    let (sc, lb) = ([0.9, 0.8, 0.4, 0.2], [true, false, true, false]);
    assert_eq!(Figure::Auroc.of(&s, &all), auroc(&sc, &lb));
    assert_eq!(Figure::AucPr.of(&s, &all), average_precision(&sc, &lb));
    // NonFact: the false units found by 1 − score
    let h = [0.1, 0.2, 0.6, 0.8];
    assert_eq!(
        Figure::NonfactAucPr.of(&s, &all),
        average_precision(&h, &[false, true, false, true])
    );
    assert_eq!(s.unscored(), 1);
    assert_eq!(Figure::parse("auc_pr"), Some(Figure::AucPr));
    // an interval brackets its estimate
    let i = Figure::Auroc.interval(&s, 200, 1).unwrap();
    assert!(i.low <= i.estimate && i.estimate <= i.high, "{i:?}");
}

#[test]
fn conformal_coverage_counts_answers_drawn_twice_in_a_row() {
    let fitted = Fitted {
        platt: None,
        conformal: Some(Conformal {
            threshold: 0.5,
            alpha: 0.1,
            beta: None,
            answers: 10,
            claims: 30,
            null_labels: 0,
            fitted_on: None,
        }),
    };
    // answer 0: kept claims true (covered); answer 1: a kept false claim (not covered);
    // answer 2: its false claim is dropped (covered)
    let t = set(
        &[0.9, 0.3, 0.8, 0.6, 0.7, 0.2],
        &[1, 0, 1, 0, 1, 0],
        &[0, 0, 1, 1, 2, 2],
    );
    let all: Vec<usize> = (0..6).collect();
    let cov = Transfer::ConformalCoverage.of(&fitted, &t, &all).unwrap();
    assert!((cov - 2.0 / 3.0).abs() < 1e-12);
    // kept: 0.9, 0.8, 0.6, 0.7 of 6
    let kept = Transfer::ConformalKept.of(&fitted, &t, &all).unwrap();
    assert!((kept - 4.0 / 6.0).abs() < 1e-12);
    // answer 1 drawn twice in a row, then answer 0: three answers, one covered
    let twice = [2, 3, 2, 3, 0, 1];
    let cov = Transfer::ConformalCoverage.of(&fitted, &t, &twice).unwrap();
    assert!((cov - 1.0 / 3.0).abs() < 1e-12, "{cov}");
    // nothing fitted: no figure
    let none = Fitted {
        platt: None,
        conformal: None,
    };
    assert_eq!(Transfer::ConformalKept.of(&none, &t, &all), None);
    assert_eq!(Transfer::EcePlatt.of(&none, &t, &all), None);
}

#[test]
fn platt_from_one_set_calibrates_another_like_it() {
    // two sets drawn alike: scores in [0.4, 0.6], P(true | s) = σ(20·(s − 0.5)) (a Platt model);
    // the raw scores are miscalibrated, the Platt model of the other set brings the ECE down.
    let mut rng = Rng(3);
    let mut draw = |n: usize| {
        let mut s = Labelled::default();
        for i in 0..n {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let score = 0.4 + 0.2 * v;
            let label = u < 1.0 / (1.0 + (-20.0 * (score - 0.5)).exp());
            s.scores.push(score);
            s.labels.push(label);
            s.answers.push(i / 5);
        }
        s
    };
    let (fit, test) = (draw(2000), draw(2000));
    let f = Fitted::on(&fit, 0.1);
    let all: Vec<usize> = (0..2000).collect();
    let raw = Transfer::EceRaw.of(&f, &test, &all).unwrap();
    let platt = Transfer::EcePlatt.of(&f, &test, &all).unwrap();
    assert!(raw > 0.1 && platt < 0.04, "raw {raw} platt {platt}");
    let i = Transfer::EcePlatt.interval(&f, &test, 200, 7).unwrap();
    assert!(i.low <= platt && platt <= i.high);
    assert!(f.conformal.is_some());
}

#[test]
fn paired_needs_the_same_units() {
    let a = set(&[0.9, 0.2, 0.7, 0.1], &[1, 0, 1, 0], &[0, 0, 1, 1]);
    let mut b = a.clone();
    b.scores = vec![0.1, 0.9, 0.7, 0.1];
    let d = Figure::Auroc.paired(&a, &b, 100, 1).unwrap().unwrap();
    // b − a: b ranks worse on the sample
    assert!(d.estimate < 0.0, "{d:?}");
    b.labels[0] = false;
    let e = Figure::Auroc.paired(&a, &b, 100, 1).unwrap_err();
    assert!(e.contains("scored different units"), "{e}");
}
