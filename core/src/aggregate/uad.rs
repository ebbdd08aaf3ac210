//! The claim filter of uncertainty-aware decoding (UAD, paper §3.4; uqlm's
//! `UncertaintyAwareDecoder`): a claim is kept when its score is at or above a threshold, fixed
//! or a percentile of the answer's own claim scores ([`uad_retained`] says why ≥, not uqlm's >).

/// The one default cut of uqlite: a unit scoring below it is doubtful. UAD and the sentence
/// filter drop it, `uq_highlight` marks it (option `doubtful`), the report and Datasette show it
/// so. 1/3 is uqlm's `response_refinement_threshold` default. When the scorer has a calibration
/// (option `calibration`) the cut is on the calibrated probability: P(true) < 1/3, odds of two
/// to one that the unit is false.
pub const DEFAULT_CUT: f64 = 1.0 / 3.0;

/// UAD's default claim filter threshold: [`DEFAULT_CUT`].
pub const DEFAULT_UAD_THRESHOLD: f64 = DEFAULT_CUT;

/// The threshold for an answer whose claims score `scores`: the `percentile_q`-th percentile of
/// the scores when given (`None` when no score is left to take it from), else `fixed`, else
/// [`DEFAULT_UAD_THRESHOLD`]. Options `threshold` and `threshold_percentile`.
pub fn uad_threshold(scores: &[f64], fixed: Option<f64>, percentile_q: Option<f64>) -> Option<f64> {
    match percentile_q {
        Some(q) => percentile(scores, q),
        None => Some(fixed.unwrap_or(DEFAULT_UAD_THRESHOLD)),
    }
}

/// The claims UAD keeps at `threshold` ([`uad_retained`]); none without a threshold (a
/// percentile of no scores).
pub fn uad_kept(scores: &[f64], threshold: Option<f64>) -> Vec<bool> {
    match threshold {
        Some(t) => uad_retained(scores, t),
        None => vec![false; scores.len()],
    }
}

/// UAD retained set (§3.4): `true` for each claim with c(s) ≥ τ; NaN is never retained. The
/// one rule of every entry point: the daemon's `uad` op (`uad_filter`, `uad_claims`), jobs,
/// `uqd report` and `uqd bench claims --uad` ([`uad_kept_accuracy`]).
///
/// Why ≥ and not uqlm's `>` (`UncertaintyAwareDecoder.reconstruct_responses` keeps
/// `score > threshold`, with a fixed threshold only): a percentile threshold is one of the
/// answer's own scores whenever scores tie, and graph scores tie a lot (every claim linked to all
/// responses has the same PageRank), so `>` dropped the whole tied top group at high q, keeping
/// the answer's least confident claims instead. With ≥ tied claims are kept or dropped together,
/// the top claim always stays, and q = 0 keeps every scored claim. With a fixed threshold the
/// two rules differ only for a score exactly equal to τ.
pub fn uad_retained(scores: &[f64], tau: f64) -> Vec<bool> {
    scores.iter().map(|&c| c >= tau).collect()
}

/// Option `min_kept`: `kept` (for `scores`) with at least `n` units kept, adding the best
/// scored of the dropped ones (the earlier on ties; a NaN score never) while fewer are kept.
pub fn keep_at_least(scores: &[f64], mut kept: Vec<bool>, n: usize) -> Vec<bool> {
    let have = kept.iter().filter(|&&k| k).count();
    let mut order: Vec<usize> = (0..scores.len())
        .filter(|&i| !kept[i] && !scores[i].is_nan())
        .collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    for i in order.into_iter().take(n.saturating_sub(have)) {
        kept[i] = true;
    }
    kept
}

/// UAD's kept accuracy at percentile q, pooled over answers, each a list of (claim score,
/// label: `Some(true)` supported / factual, `None` unlabelled): per answer the claims kept at
/// the q-th percentile of that answer's scores ([`uad_threshold`], [`uad_kept`]; unlabelled
/// claims count in the percentile); returns (kept labelled claims, supported share of them,
/// `None` when none). q = 0 is the unfiltered baseline: every labelled claim, NaN scores
/// included (the paper's UAD figure). Used by `uqd bench claims --uad` and `uqd report`.
pub fn uad_kept_accuracy<'a>(
    answers: impl IntoIterator<Item = (&'a [f64], &'a [Option<bool>])>,
    q: f64,
) -> (usize, Option<f64>) {
    let (mut kept, mut supported) = (0usize, 0usize);
    for (scores, labels) in answers {
        let keep = if q == 0.0 {
            vec![true; scores.len()]
        } else {
            uad_kept(scores, uad_threshold(scores, None, Some(q)))
        };
        for (k, l) in keep.into_iter().zip(labels) {
            if let (true, Some(l)) = (k, l) {
                kept += 1;
                supported += usize::from(*l);
            }
        }
    }
    (kept, (kept > 0).then(|| supported as f64 / kept as f64))
}

/// The q-th percentile (q in [0, 100]) with linear interpolation between the closest ranks,
/// numpy's default (`method="linear"`). NaN scores are skipped (as `nanpercentile`); `None`
/// for no scores or q outside [0, 100].
pub fn percentile(scores: &[f64], q: f64) -> Option<f64> {
    if !(0.0..=100.0).contains(&q) {
        return None;
    }
    let mut v: Vec<f64> = scores.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let (a, b) = (*v.get(lo)?, *v.get(hi)?);
    Some(a + (b - a) * (pos - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn min_kept_adds_the_best_dropped_units_never_nan() {
        let s = [0.1, f64::NAN, 0.3, 0.3, 0.9];
        let none = vec![false; 5];
        assert_eq!(keep_at_least(&s, none.clone(), 0), none);
        assert_eq!(
            keep_at_least(&s, none.clone(), 1),
            [false, false, false, false, true]
        );
        // ties: the earlier first
        assert_eq!(
            keep_at_least(&s, none.clone(), 2),
            [false, false, true, false, true]
        );
        // at most the scored units; already enough kept: unchanged
        assert_eq!(keep_at_least(&s, none, 9), [true, false, true, true, true]);
        let one = vec![true, false, false, false, false];
        assert_eq!(keep_at_least(&s, one.clone(), 1), one);
    }

    /// (threshold, kept) at the q-th percentile, as the daemon's `uad` op.
    fn at_percentile(scores: &[f64], q: f64) -> (Option<f64>, Vec<bool>) {
        let t = uad_threshold(scores, None, Some(q));
        (t, uad_kept(scores, t))
    }

    #[test]
    fn uad_keeps_scores_at_or_above_the_threshold() {
        assert_eq!(
            uad_retained(&[0.2, 0.5, 0.8, f64::NAN], 0.5),
            vec![false, true, true, false]
        );
        assert!(uad_retained(&[], 0.5).is_empty());
        // Percentile: sorted 0.1, 0.4, 0.4, 0.9 → q = 50 at pos 1.5 → 0.4: both 0.4 stay.
        assert_eq!(
            at_percentile(&[0.4, 0.9, 0.1, 0.4], 50.0),
            (Some(0.4), vec![true, true, false, true])
        );
        // q = 100 keeps the top claim; q = 0 every scored claim; NaN never.
        assert_eq!(
            at_percentile(&[0.3, f64::NAN, 0.7], 100.0).1,
            vec![false, false, true]
        );
        assert_eq!(
            at_percentile(&[0.3, f64::NAN, 0.7], 0.0).1,
            vec![true, false, true]
        );
        // No score to take a percentile of: no threshold, nothing kept.
        assert_eq!(
            at_percentile(&[f64::NAN, f64::NAN], 50.0),
            (None, vec![false, false])
        );
    }

    #[test]
    fn uad_keeps_all_tied_claims_at_every_percentile() {
        // Every claim linked to all responses has the same PageRank: all tie.
        let tied = [0.125; 7];
        for q in (0..=100).step_by(5) {
            let (tau, kept) = at_percentile(&tied, f64::from(q));
            assert_eq!(tau, Some(0.125), "q = {q}");
            assert_eq!(kept, vec![true; 7], "q = {q}");
        }
        // A tied top group survives a high percentile as a whole.
        assert_eq!(
            at_percentile(&[0.3, 0.3, 0.3, 0.1, 0.2], 90.0).1,
            vec![true, true, true, false, false]
        );
    }

    #[test]
    fn uad_kept_accuracy_at_median_not_below_baseline_when_scores_rank() {
        // Three answers in the FActScore pattern: a tied top group (graph scores) mostly
        // supported, lower scores mostly not; one unlabelled claim and one NaN score.
        let (t, f) = (Some(true), Some(false));
        let answers: Vec<(Vec<f64>, Vec<Option<bool>>)> = vec![
            (vec![0.4, 0.4, 0.4, 0.4, 0.2, 0.1], vec![t, t, t, f, f, t]),
            (
                vec![0.25, 0.25, 0.25, 0.25, 0.25, 0.05],
                vec![t, t, None, t, f, f],
            ),
            (vec![0.5, 0.3, 0.3, f64::NAN, 0.1], vec![t, f, t, f, f]),
        ];
        let (mut conf, mut labels) = (Vec::new(), Vec::new());
        for (s, l) in &answers {
            for (&s, l) in s.iter().zip(l) {
                if let (false, Some(l)) = (s.is_nan(), l) {
                    conf.push(s);
                    labels.push(*l);
                }
            }
        }
        let auc = crate::metrics::auroc(&conf, &labels).unwrap();
        assert!(auc > 0.5, "the scores rank: AUROC {auc}");
        let pooled = || answers.iter().map(|(s, l)| (s.as_slice(), l.as_slice()));
        // Baseline: all 16 labelled claims (the NaN-scored one too), 9 supported.
        let (n0, acc0) = uad_kept_accuracy(pooled(), 0.0);
        assert_eq!((n0, acc0), (16, Some(9.0 / 16.0)));
        // q = 50: answer 1 keeps the tied 0.4 group (3 of 4 supported), answer 2 all five tied
        // (3 of 4 labelled supported), answer 3 (median 0.3) 0.5 and both 0.3 (2 of 3).
        let (n50, acc50) = uad_kept_accuracy(pooled(), 50.0);
        assert_eq!((n50, acc50), (11, Some(8.0 / 11.0)));
        assert!(acc50.unwrap() >= acc0.unwrap());
        // q = 90: the tied top groups of answers 1 and 2 stay whole; answer 3 (τ = 0.44) keeps 0.5.
        let (n90, acc90) = uad_kept_accuracy(pooled(), 90.0);
        assert_eq!((n90, acc90), (9, Some(7.0 / 9.0)));
    }

    #[test]
    fn percentiles_like_numpy() {
        let s = [1.0, 3.0, 2.0, 4.0];
        // sorted 1,2,3,4: q=50 → pos 1.5 → 2.5; q=25 → pos 0.75 → 1.75; q=90 → pos 2.7 → 3.7
        assert!(close(percentile(&s, 50.0), 2.5));
        assert!(close(percentile(&s, 25.0), 1.75));
        assert!(close(percentile(&s, 90.0), 3.7));
        assert!(close(percentile(&s, 0.0), 1.0));
        assert!(close(percentile(&s, 100.0), 4.0));
        assert!(close(percentile(&[7.0], 33.0), 7.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&s, 101.0), None);
        assert_eq!(percentile(&s, f64::NAN), None);
        assert!(close(percentile(&[f64::NAN, 2.0, 4.0], 50.0), 3.0));
    }

    #[test]
    fn thresholds() {
        let s = [0.1, 0.9, f64::NAN];
        assert!(close(uad_threshold(&s, None, None), 1.0 / 3.0));
        assert_eq!(uad_threshold(&s, Some(0.5), None), Some(0.5));
        assert!(close(uad_threshold(&s, None, Some(50.0)), 0.5));
        assert_eq!(uad_threshold(&[], None, Some(50.0)), None);
        assert_eq!(uad_threshold(&[], None, None), Some(DEFAULT_UAD_THRESHOLD));
        assert_eq!(uad_kept(&[0.2, 0.8], Some(0.5)), vec![false, true]);
        assert_eq!(uad_kept(&[0.2, 0.8], None), vec![false, false]);
    }
}
