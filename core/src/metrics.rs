//! Evaluation metrics over (confidence score, correct?) pairs, used to assess scorers as
//! hallucination detectors (the paper's evaluation: AUROC, AUC-PR, calibration, Pearson).
//!
//! Every function returns `None` instead of a value when it is undefined: inputs of
//! different lengths, a NaN score, or too little data (stated per function). Their intervals over
//! resampled answers: [`bootstrap`]; the figures a suite prints with them: [`crate::evaluation`].

pub mod bootstrap;

/// Scores and labels paired up, or `None` when the lengths differ or a score is NaN.
fn pairs(scores: &[f64], labels: &[bool]) -> Option<Vec<(f64, bool)>> {
    if scores.len() != labels.len() || scores.iter().any(|s| s.is_nan()) {
        return None;
    }
    Some(scores.iter().copied().zip(labels.iter().copied()).collect())
}

/// The counts of predicting positive for score ≥ t: (threshold t, TP, FP).
type Counts = (f64, usize, usize);

/// The number of positives, and at each distinct score t in descending order (tied scores enter
/// together) the [`Counts`] at t. `None` as [`pairs`], or when there are no positives.
fn descending_counts(scores: &[f64], labels: &[bool]) -> Option<(usize, Vec<Counts>)> {
    let mut v = pairs(scores, labels)?;
    let n_pos = labels.iter().filter(|&&l| l).count();
    if n_pos == 0 {
        return None;
    }
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut counts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let t = v[i].0;
        while i < v.len() && v[i].0 == t {
            if v[i].1 {
                tp += 1;
            } else {
                fp += 1;
            }
            i += 1;
        }
        counts.push((t, tp, fp));
    }
    Some((n_pos, counts))
}

/// 1-based ranks of `values`, ties given the average of the ranks they span.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && values[order[j]] == values[order[i]] {
            j += 1;
        }
        // positions i..j (0-based) hold ranks i+1..=j: their mean is (i + 1 + j) / 2
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

/// Area under the ROC curve, as the Mann–Whitney statistic: the probability that a random
/// positive scores higher than a random negative, ties counting 1/2,
/// AUC = (Σ_{positives} rank − P(P+1)/2) / (P·N) with average ranks for ties.
/// `None` when only one class is present.
pub fn auroc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    pairs(scores, labels)?;
    let n_pos = labels.iter().filter(|&&l| l).count();
    let n_neg = labels.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return None;
    }
    let ranks = average_ranks(scores);
    let rank_sum: f64 = ranks
        .iter()
        .zip(labels)
        .filter(|(_, &l)| l)
        .map(|(r, _)| r)
        .sum();
    let (p, n) = (n_pos as f64, n_neg as f64);
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

/// Average precision as scikit-learn's `average_precision_score`:
/// AP = Σ_n (R_n − R_{n−1}) P_n over the distinct thresholds in descending score order
/// (tied scores enter together). `None` when there are no positives.
pub fn average_precision(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let (n_pos, counts) = descending_counts(scores, labels)?;
    let (mut prev_recall, mut ap) = (0.0f64, 0.0f64);
    for (_, tp, fp) in counts {
        let precision = tp as f64 / (tp + fp) as f64;
        let recall = tp as f64 / n_pos as f64;
        ap += (recall - prev_recall) * precision;
        prev_recall = recall;
    }
    Some(ap)
}

/// Pearson correlation coefficient. `None` for fewer than 2 points, different lengths,
/// a NaN, or zero variance in either variable.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// Spearman rank correlation: Pearson on average ranks (ties share their mean rank).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Brier score: mean of (score − label)² with label 1 for `true`. `None` for no pairs.
pub fn brier(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let v = pairs(scores, labels)?;
    if v.is_empty() {
        return None;
    }
    let sum: f64 = v
        .iter()
        .map(|&(s, l)| (s - if l { 1.0 } else { 0.0 }).powi(2))
        .sum();
    Some(sum / v.len() as f64)
}

/// Expected calibration error with `bins` equal-width bins on [0, 1]: bin i holds the scores
/// in [i/B, (i+1)/B), 1.0 (and anything above) in the last bin, anything below 0 in the
/// first. ECE = Σ_b (n_b/N)·|acc_b − conf_b|, acc_b the fraction of `true` labels and conf_b
/// the mean score of bin b. `None` for no pairs or `bins` = 0.
pub fn ece(scores: &[f64], labels: &[bool], bins: usize) -> Option<f64> {
    let v = pairs(scores, labels)?;
    if v.is_empty() || bins == 0 {
        return None;
    }
    // per bin: (count, sum of scores, count of positives)
    let mut acc = vec![(0usize, 0.0f64, 0usize); bins];
    for &(s, l) in &v {
        let b = ece_bin(s, bins);
        let slot = &mut acc[b];
        slot.0 += 1;
        slot.1 += s;
        slot.2 += usize::from(l);
    }
    let n = v.len() as f64;
    Some(
        acc.iter()
            .filter(|b| b.0 > 0)
            .map(|&(c, sum, pos)| {
                let c_f = c as f64;
                (c_f / n) * (pos as f64 / c_f - sum / c_f).abs()
            })
            .sum(),
    )
}

/// Bin of `s` among `bins` equal-width bins [i/B, (i+1)/B), 1.0 in the last. `floor(s·B)` can be
/// off by one at an edge (0.57 × 100 = 56.99…), so the guess is checked against the edges i/B.
pub fn ece_bin(s: f64, bins: usize) -> usize {
    if s <= 0.0 || bins == 0 {
        return 0;
    }
    let edge = |i: usize| i as f64 / bins as f64;
    let mut b = ((s * bins as f64).floor() as usize).min(bins - 1);
    if b + 1 < bins && s >= edge(b + 1) {
        b += 1;
    } else if b > 0 && s < edge(b) {
        b -= 1;
    }
    b
}

/// The threshold that maximises F1 when predicting positive for score ≥ threshold, trying
/// every distinct score; returns (threshold, F1) with F1 = 2TP / (2TP + FP + FN). Among equal
/// F1 the highest threshold wins. `None` when there are no positives.
pub fn best_f1_threshold(scores: &[f64], labels: &[bool]) -> Option<(f64, f64)> {
    let (n_pos, counts) = descending_counts(scores, labels)?;
    let mut best: Option<(f64, f64)> = None;
    for (t, tp, fp) in counts {
        let fneg = n_pos - tp;
        let f1 = 2.0 * tp as f64 / (2 * tp + fp + fneg) as f64;
        if best.is_none_or(|(_, b)| f1 > b) {
            best = Some((t, f1));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    #[test]
    fn ece_bins_follow_the_edges() {
        // 0.57 × 100 = 56.999…: the score sits on the edge 57/100, so bin 57.
        assert_eq!(super::ece_bin(0.57, 100), 57);
        assert_eq!(super::ece_bin(0.1, 10), 1);
        assert_eq!(super::ece_bin(0.0999, 10), 0);
        assert_eq!(super::ece_bin(1.0, 10), 9);
        assert_eq!(super::ece_bin(0.0, 10), 0);
        for k in 0..=100 {
            let s = k as f64 / 100.0;
            assert_eq!(super::ece_bin(s, 100), k.min(99), "score {s}");
        }
    }

    use super::*;

    const T: bool = true;
    const F: bool = false;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn auroc_sklearn_example() {
        // sklearn docs: y = [0,0,1,1], s = [0.1,0.4,0.35,0.8] → 0.75.
        // pairs (pos, neg): 0.35>0.1 ✓, 0.35>0.4 ✗, 0.8>0.1 ✓, 0.8>0.4 ✓ → 3/4
        let s = [0.1, 0.4, 0.35, 0.8];
        let l = [F, F, T, T];
        assert!(close(auroc(&s, &l), 0.75));
        // rank form: ranks 1,3,2,4; positives 2+4 = 6; (6 − 3)/(2·2) = 0.75
    }

    #[test]
    fn auroc_ties_count_half() {
        // pos 0.5 vs neg 0.5 → 1/2, vs neg 0.2 → 1: (0.5 + 1)/2 = 0.75
        assert!(close(auroc(&[0.5, 0.5, 0.2], &[T, F, F]), 0.75));
        // all tied → 0.5
        assert!(close(auroc(&[0.3; 4], &[T, F, T, F]), 0.5));
        // perfect and inverted
        assert!(close(auroc(&[0.9, 0.1], &[T, F]), 1.0));
        assert!(close(auroc(&[0.1, 0.9], &[T, F]), 0.0));
    }

    #[test]
    fn auroc_undefined() {
        assert_eq!(auroc(&[0.1, 0.2], &[T, T]), None);
        assert_eq!(auroc(&[0.1, 0.2], &[F, F]), None);
        assert_eq!(auroc(&[], &[]), None);
        assert_eq!(auroc(&[0.1], &[T, F]), None);
        assert_eq!(auroc(&[f64::NAN, 0.2], &[T, F]), None);
    }

    #[test]
    fn average_precision_sklearn_example() {
        // sklearn docs: y = [0,0,1,1], s = [0.1,0.4,0.35,0.8] → 0.8333...
        // descending: 0.8 (T): P=1, R=.5 → +.5·1
        //             0.4 (F): P=.5, R=.5 → +0
        //             0.35(T): P=2/3, R=1 → +.5·2/3
        //             0.1 (F): R unchanged → +0      AP = 0.5 + 1/3 = 5/6
        assert!(close(
            average_precision(&[0.1, 0.4, 0.35, 0.8], &[F, F, T, T]),
            5.0 / 6.0
        ));
    }

    #[test]
    fn average_precision_ties_grouped() {
        // threshold 0.5 takes both tied items: TP 1, FP 1 → P = .5, R = 1 → AP = .5
        assert!(close(average_precision(&[0.5, 0.5, 0.2], &[T, F, F]), 0.5));
        // y = [1,0,1], s = [0.9,0.9,0.1]: t=.9: TP1 FP1 P=.5 R=.5 → .25;
        // t=.1: TP2 FP1 P=2/3 R=1 → +.5·2/3 = 1/3; AP = 0.25 + 0.3333 = 0.58333
        assert!(close(
            average_precision(&[0.9, 0.9, 0.1], &[T, F, T]),
            0.25 + 1.0 / 3.0
        ));
        assert!(close(average_precision(&[0.3, 0.2], &[T, T]), 1.0));
        assert_eq!(average_precision(&[0.3, 0.2], &[F, F]), None);
    }

    #[test]
    fn pearson_hand_computed() {
        // x̄ = 2.5, ȳ = 5; dx = (−1.5,−.5,.5,1.5), dy = (−3,−1,0,4)
        // Σdxdy = 4.5+.5+0+6 = 11; Σdx² = 5; Σdy² = 26 → r = 11/√130 = 0.964763821
        let r = pearson(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 5.0, 9.0]);
        assert!(close(r, 11.0 / 130f64.sqrt()));
        assert!((r.unwrap_or(0.0) - 0.964763821).abs() < 1e-8);
        assert!(close(pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0));
        assert_eq!(pearson(&[1.0], &[2.0]), None);
        assert_eq!(pearson(&[1.0, 1.0], &[2.0, 3.0]), None);
        assert_eq!(pearson(&[1.0, 2.0], &[2.0]), None);
        assert_eq!(pearson(&[1.0, f64::NAN], &[2.0, 3.0]), None);
    }

    #[test]
    fn spearman_hand_computed() {
        // ranks y = [10,30,20,20] → [1, 4, 2.5, 2.5]; ranks x = [1,2,3,4]
        // dx = (−1.5,−.5,.5,1.5), dy = (−1.5,1.5,0,0): Σ = 2.25 − .75 = 1.5
        // Σdx² = 5, Σdy² = 4.5 → r = 1.5/√22.5 = 1/√10 = 0.316227766
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 30.0, 20.0, 20.0]);
        assert!(close(r, 0.1f64.sqrt()));
        // monotone but non-linear → 1
        assert!(close(spearman(&[1.0, 2.0, 3.0], &[1.0, 8.0, 27.0]), 1.0));
        assert_eq!(spearman(&[1.0, 2.0], &[5.0, 5.0]), None);
    }

    #[test]
    fn average_ranks_ties() {
        assert_eq!(
            average_ranks(&[3.0, 1.0, 3.0, 2.0]),
            vec![3.5, 1.0, 3.5, 2.0]
        );
        assert!(average_ranks(&[]).is_empty());
    }

    #[test]
    fn brier_hand_computed() {
        // (0.9−1)² + (0.2−0)² + (0.6−0)² = .01 + .04 + .36 = .41 → /3 = 0.136666...
        assert!(close(brier(&[0.9, 0.2, 0.6], &[T, F, F]), 0.41 / 3.0));
        assert_eq!(brier(&[], &[]), None);
    }

    #[test]
    fn ece_hand_computed() {
        // B = 2. bin 0 [0,.5): 0.1(F), 0.4(T): conf .25, acc .5 → |.25|, weight 2/5
        //        bin 1 [.5,1]: 0.6(T), 0.9(T), 1.0(F): conf 2.5/3, acc 2/3 → 1/6, weight 3/5
        // ECE = .4·.25 + .6·(1/6) = 0.1 + 0.1 = 0.2
        let s = [0.1, 0.4, 0.6, 0.9, 1.0];
        let l = [F, T, T, T, F];
        assert!(close(ece(&s, &l, 2), 0.2));
        // B = 1: conf = 3.0/5 = .6, acc = 3/5 = .6 → 0
        assert!(close(ece(&s, &l, 1), 0.0));
        // perfectly calibrated extremes
        assert!(close(ece(&[1.0, 0.0], &[T, F], 10), 0.0));
        // 0.5 goes to bin 1 of 2 (left-closed bins): single item, |1 − .5| = .5
        assert!(close(ece(&[0.5], &[T], 2), 0.5));
        assert_eq!(ece(&s, &l, 0), None);
        assert_eq!(ece(&[], &[], 10), None);
    }

    #[test]
    fn best_f1_hand_computed() {
        // P = 3. t=.9: TP1 FP0 FN2 → 2/4 = .5;  t=.8: TP1 FP1 FN2 → 2/5 = .4
        // t=.7: TP2 FP1 FN1 → 4/6 = .667;       t=.3: TP3 FP1 FN0 → 6/7 = .857
        // t=.2: TP3 FP2 → 6/8 = .75.  Best: (0.3, 6/7)
        let s = [0.9, 0.8, 0.7, 0.3, 0.2];
        let l = [T, F, T, T, F];
        let (t, f) = best_f1_threshold(&s, &l).unwrap_or((0.0, 0.0));
        assert_eq!(t, 0.3);
        assert!((f - 6.0 / 7.0).abs() < 1e-12);
        // equal F1 → highest threshold: s=[.9,.1], l=[T,T]... t=.9: 2/3; t=.1: 1 → (0.1, 1)
        assert_eq!(best_f1_threshold(&[0.9, 0.1], &[T, T]), Some((0.1, 1.0)));
        // tie: s=[.8,.6], l=[T,F]: t=.8 → 1; t=.6 → 2/3 → (0.8, 1)
        assert_eq!(best_f1_threshold(&[0.8, 0.6], &[T, F]), Some((0.8, 1.0)));
        assert_eq!(best_f1_threshold(&[0.8, 0.6], &[F, F]), None);
    }
}
