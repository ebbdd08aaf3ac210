//! Matched-unit scorers (paper §3.3.2): the sampled responses are decomposed too, and each
//! unit s is compared with its best-matching unit of every sample,
//!
//! c_g(s; y_cand) = (1/m) Σ_{j=1..m} max_{s' ∈ δ_g(y_j)} η(s', s),
//! η ∈ {p_e, 1 − p_c, p_e/(p_e + p_c), ĉos, BertF1},
//!
//! with NLI premise = s' and hypothesis = s. Contrasted entailment at g = sent is LUQ-pair.
//! Each η takes its own max (the best match under p_e need not be the best under 1 − p_c).

use super::consistency::nli_eta;
use super::nli::NliProbs;
use crate::scorers::Consistency;

/// Matched-unit scores from already evaluated consistencies:
/// `consistency[i][j][k]` = η(sample j's unit k, unit i). Returns, for each unit i, the mean
/// over the m samples j of max_k consistency[i][j][k].
///
/// A sample with no units contributes 0 (as uqlm). NaN values (pairs the NLI judge could not
/// read) are ignored by the max; a sample whose values are all NaN is left out of the mean, and
/// a unit with no sample left, or compared with no samples at all (m = 0), is NaN.
pub fn matched_unit_scores(consistency: &[Vec<Vec<f64>>]) -> Vec<f64> {
    consistency
        .iter()
        .map(|per_sample| {
            if per_sample.is_empty() {
                return f64::NAN;
            }
            let best: Vec<f64> = per_sample
                .iter()
                .filter_map(|units| {
                    if units.is_empty() {
                        return Some(0.0);
                    }
                    units
                        .iter()
                        .copied()
                        .filter(|v| !v.is_nan())
                        .fold(None, |acc: Option<f64>, v| {
                            Some(acc.map_or(v, |a| a.max(v)))
                        })
                })
                .collect();
            if best.is_empty() {
                f64::NAN
            } else {
                best.iter().sum::<f64>() / best.len() as f64
            }
        })
        .collect()
}

/// Maps NLI probabilities `probs[i][j][k]` = NLI(premise = sample j's unit k,
/// hypothesis = unit i) through the NLI-based η `c`, keeping the shape.
///
/// `c` must be one of the NLI consistencies (p_e, 1 − p_c, p_e/(p_e + p_c)); the embedding
/// ones (cosine, BERTScore) cannot be computed from probabilities and give NaN everywhere
/// (check [`Consistency::is_nli`] first).
pub fn nli_consistency(probs: &[Vec<Vec<NliProbs>>], c: Consistency) -> Vec<Vec<Vec<f64>>> {
    probs
        .iter()
        .map(|per_sample| {
            per_sample
                .iter()
                .map(|units| {
                    units
                        .iter()
                        .map(|p| nli_eta(c, p).unwrap_or(f64::NAN))
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{close, nli};

    #[test]
    fn hand_computed_means_of_maxima() {
        // unit 0: sample 0 units → max(0.2, 0.9, 0.4) = 0.9; sample 1 → max(0.5) = 0.5;
        //         sample 2 has no units → 0.   c = (0.9 + 0.5 + 0)/3 = 0.4666...
        // unit 1: (max(0.1,0.3,0.2)=0.3 + 0.7 + 0)/3 = 1.0/3
        let cons = vec![
            vec![vec![0.2, 0.9, 0.4], vec![0.5], vec![]],
            vec![vec![0.1, 0.3, 0.2], vec![0.7], vec![]],
        ];
        let s = matched_unit_scores(&cons);
        assert!(close(s[0], 1.4 / 3.0) && close(s[1], 1.0 / 3.0), "{s:?}");
    }

    #[test]
    fn edge_cases() {
        assert!(matched_unit_scores(&[]).is_empty());
        let s = matched_unit_scores(&[vec![]]);
        assert!(s[0].is_nan());
        // NaN ignored in the max; an all-NaN sample (unread judge pairs) is left out: 0.4/1
        let s = matched_unit_scores(&[vec![vec![f64::NAN, 0.4], vec![f64::NAN]]]);
        assert!(close(s[0], 0.4), "{s:?}");
        // every sample unread: NaN, never 0
        let s = matched_unit_scores(&[vec![vec![f64::NAN], vec![f64::NAN, f64::NAN]]]);
        assert!(s[0].is_nan(), "{s:?}");
        // a sample with no units still counts 0 (as uqlm): (0.4 + 0)/2
        let s = matched_unit_scores(&[vec![vec![0.4], vec![]]]);
        assert!(close(s[0], 0.2), "{s:?}");
        // negative values (BERTScore can be < 0) are kept as the max: (-0.2 + 0.6)/2 = 0.2
        let s = matched_unit_scores(&[vec![vec![-0.5, -0.2], vec![0.6]]]);
        assert!(close(s[0], 0.2), "{s:?}");
    }

    #[test]
    fn each_eta_takes_its_own_max() {
        // one unit, one sample with two units:
        //   k=0: p_e 0.6, p_c 0.4   → p_e 0.6, 1−p_c 0.6, contrasted 0.6
        //   k=1: p_e 0.3, p_c 0.0   → p_e 0.3, 1−p_c 1.0, contrasted 1.0
        let probs = vec![vec![vec![nli(0.6, 0.0, 0.4), nli(0.3, 0.7, 0.0)]]];
        let e = matched_unit_scores(&nli_consistency(&probs, Consistency::Entailment));
        let n = matched_unit_scores(&nli_consistency(&probs, Consistency::Noncontradiction));
        let c = matched_unit_scores(&nli_consistency(&probs, Consistency::ContrastedEntailment));
        assert!(
            close(e[0], 0.6) && close(n[0], 1.0) && close(c[0], 1.0),
            "{e:?} {n:?} {c:?}"
        );
    }

    #[test]
    fn nli_consistency_shape_and_non_nli() {
        let probs = vec![vec![vec![nli(0.2, 0.3, 0.5)], vec![]], vec![]];
        let c = nli_consistency(&probs, Consistency::Noncontradiction);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].len(), 2);
        assert!(close(c[0][0][0], 0.5));
        assert!(c[0][1].is_empty() && c[1].is_empty());
        let c = nli_consistency(&probs, Consistency::Cosine);
        assert!(c[0][0][0].is_nan());
    }
}
