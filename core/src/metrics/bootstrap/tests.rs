use super::*;

fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn mean(v: &[f64], idx: &[usize]) -> Option<f64> {
    (!idx.is_empty()).then(|| idx.iter().map(|&i| v[i]).sum::<f64>() / idx.len() as f64)
}

#[test]
fn percentile_interval_by_hand() {
    // 1..=1000 sorted: the 2.5th percentile sits at position 0.025 · 999 = 24.975, between the
    // 25th and 26th values (25 and 26): 25.975; the 97.5th at 974.025: 975.025.
    let v: Vec<f64> = (1..=1000).map(f64::from).collect();
    let i = Interval::percentile(500.5, &v).unwrap();
    assert!((i.low - 25.975).abs() < 1e-9, "{i:?}");
    assert!((i.high - 975.025).abs() < 1e-9, "{i:?}");
    assert_eq!(i.resamples, 1000);
    assert_eq!(Interval::percentile(0.0, &[]), None);
}

#[test]
fn two_answers_by_hand() {
    // Two answers scoring 0 and 1 (two units each): a resample's mean is 0 (both draws the
    // first answer, p = 1/4), 1/2 (p = 1/2) or 1 (p = 1/4); the 2.5th and 97.5th percentiles
    // of 1,000 draws are 0 and 1, the estimate 1/2.
    let v = [0.0, 0.0, 1.0, 1.0];
    let c = Clusters::of(&[7, 7, 3, 3]);
    assert_eq!(c.answers(), 2);
    let i = bootstrap(&c, 1000, 1, |idx| mean(&v, idx)).unwrap();
    assert_eq!((i.estimate, i.low, i.high), (0.5, 0.0, 1.0));
    // the share of draws at each value is near 1/4, 1/2, 1/4
    let mut rng = Rng(1);
    let draws: Vec<f64> = (0..4000)
        .map(|_| mean(&v, &c.resample(&mut rng)).unwrap())
        .collect();
    let share = |x: f64| draws.iter().filter(|&&d| d == x).count() as f64 / 4000.0;
    assert!((share(0.0) - 0.25).abs() < 0.03);
    assert!((share(0.5) - 0.5).abs() < 0.03);
}

#[test]
fn matches_the_normal_approximation_for_a_mean() {
    // 400 independent U(0, 1) values: the mean's standard error is √(1/12/400) = 0.01443, so the
    // normal 95 % interval is ±1.96 · 0.01443 = ±0.0283 around the sample mean.
    let mut rng = Rng(42);
    let v: Vec<f64> = (0..400).map(|_| uniform(&mut rng)).collect();
    let c = Clusters::singletons(v.len());
    let i = bootstrap(&c, 2000, 9, |idx| mean(&v, idx)).unwrap();
    let sd = {
        let m = i.estimate;
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    let half = 1.959_964 * sd / (v.len() as f64).sqrt();
    let (lo, hi) = (i.estimate - i.low, i.high - i.estimate);
    for side in [lo, hi] {
        assert!((side / half - 1.0).abs() < 0.15, "{side} vs {half}");
    }
}

#[test]
fn clustered_units_widen_the_interval() {
    // 100 answers of 10 identical units: the sample holds 100 independent values, not 1,000.
    let mut rng = Rng(5);
    let per_answer: Vec<f64> = (0..100).map(|_| uniform(&mut rng)).collect();
    let v: Vec<f64> = per_answer.iter().flat_map(|&x| [x; 10]).collect();
    let answers: Vec<usize> = (0..1000).map(|i| i / 10).collect();
    let clustered = bootstrap(&Clusters::of(&answers), 1000, 3, |i| mean(&v, i)).unwrap();
    let naive = bootstrap(&Clusters::singletons(1000), 1000, 3, |i| mean(&v, i)).unwrap();
    let width = |i: Interval| i.high - i.low;
    // √10 ≈ 3.2 times wider
    assert!(
        width(clustered) > 2.5 * width(naive),
        "{clustered:?} {naive:?}"
    );
    // and about the normal width of 100 values: 2 · 1.96 · √(1/12/100) = 0.113
    assert!(
        (width(clustered) / 0.113 - 1.0).abs() < 0.25,
        "{clustered:?}"
    );
}

#[test]
fn a_paired_difference_cancels_the_shared_noise() {
    // B = A + 0.01 on every unit: side by side the intervals overlap almost wholly; the paired
    // difference is exactly −0.01 on every resample.
    let mut rng = Rng(11);
    let a: Vec<f64> = (0..300).map(|_| uniform(&mut rng)).collect();
    let b: Vec<f64> = a.iter().map(|x| x + 0.01).collect();
    let c = Clusters::singletons(300);
    let ia = bootstrap(&c, 500, 2, |i| mean(&a, i)).unwrap();
    let ib = bootstrap(&c, 500, 2, |i| mean(&b, i)).unwrap();
    assert!(ib.low < ia.high, "the intervals overlap");
    let d = paired(&c, 500, 2, |i| mean(&a, i), |i| mean(&b, i)).unwrap();
    assert!(
        (d.low + 0.01).abs() < 1e-9 && (d.high + 0.01).abs() < 1e-9,
        "{d:?}"
    );
    assert_eq!(d.sign(), -1);
}

#[test]
fn undefined_figures_are_left_out_and_seeds_repeat() {
    // AUROC needs both classes: resamples of one class are skipped, not counted as 0.
    let scores = [0.9, 0.8, 0.3];
    let labels = [true, true, false];
    let c = Clusters::singletons(3);
    let auc = |i: &[usize]| crate::metrics::auroc(&pick(&scores, i), &pick(&labels, i));
    let x = bootstrap(&c, 200, 4, auc).unwrap();
    assert!(x.resamples < 200 && x.resamples > 100, "{x:?}");
    assert_eq!((x.estimate, x.low, x.high), (1.0, 1.0, 1.0));
    assert_eq!(bootstrap(&c, 200, 4, auc), Some(x));
    // undefined on the sample itself: no interval
    assert_eq!(bootstrap(&c, 10, 4, |_| None), None);
}
