//! Unit-response scorers (paper §3.3.1): each unit s of the original response is compared
//! with every sampled response y_j,
//!
//! c_g(s; y_cand) = (1/m) Σ_{j=1..m} η(y_j, s),  η ∈ {p_e, 1 − p_c, p_e/(p_e + p_c)},
//!
//! with NLI premise = y_j and hypothesis = s. Contrasted entailment at g = sent is LUQ, at
//! g = claim LUQ-atomic (Zhang et al. 2024).

use super::consistency::nli_eta;
use super::nli::NliProbs;
use crate::scorers::{Family, Scorer};

/// Unit-response scores: `probs[i][j]` = NLI(premise = sample j, hypothesis = unit i);
/// returns c(unit i) = mean over j of η(probs[i][j]) for the scorer's η. NaN probabilities (a
/// pair the NLI judge could not read) are left out of the mean; a unit with none read is NaN.
///
/// Errors when `scorer` is not of the unit-response family, when a unit has no sample
/// probabilities (m = 0), or when the units do not all have the same number of samples.
pub fn unit_response_scores(probs: &[Vec<NliProbs>], scorer: Scorer) -> Result<Vec<f64>, String> {
    if scorer.family() != Family::UnitResponse {
        return Err(format!(
            "scorer {} is a {} scorer, not unit_response: use entailment, noncontradiction or \
             contrasted_entailment",
            scorer.name(),
            scorer.family().as_str()
        ));
    }
    let c = scorer.consistency();
    let m = probs.first().map_or(0, Vec::len);
    probs
        .iter()
        .enumerate()
        .map(|(i, row)| {
            if row.is_empty() {
                return Err(format!(
                    "unit {i} has no sampled responses to compare with (m = 0): pass at least \
                     one sample"
                ));
            }
            if row.len() != m {
                return Err(format!(
                    "unit {i} has {} NLI results but unit 0 has {m}: every unit must be \
                     compared with the same samples",
                    row.len()
                ));
            }
            // A pair the NLI judge could not read is NaN: the mean is over the pairs read.
            let read: Vec<f64> = row
                .iter()
                .filter_map(|p| nli_eta(c, p))
                .filter(|v| !v.is_nan())
                .collect();
            Ok(if read.is_empty() {
                f64::NAN
            } else {
                read.iter().sum::<f64>() / read.len() as f64
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{close, nli};

    #[test]
    fn hand_computed_two_units_three_samples() {
        let probs = vec![
            vec![nli(0.9, 0.05, 0.05), nli(0.6, 0.2, 0.2), nli(0.3, 0.3, 0.4)],
            vec![nli(0.1, 0.1, 0.8), nli(0.0, 1.0, 0.0), nli(0.5, 0.25, 0.25)],
        ];
        // entailment: unit0 (0.9+0.6+0.3)/3 = 0.6; unit1 (0.1+0+0.5)/3 = 0.2
        let e = unit_response_scores(&probs, Scorer::Entailment).unwrap_or_default();
        assert!(close(e[0], 0.6) && close(e[1], 0.2), "{e:?}");
        // noncontradiction: unit0 (0.95+0.8+0.6)/3 = 2.35/3; unit1 (0.2+1+0.75)/3 = 0.65
        let n = unit_response_scores(&probs, Scorer::Noncontradiction).unwrap_or_default();
        assert!(close(n[0], 2.35 / 3.0) && close(n[1], 0.65), "{n:?}");
        // contrasted: unit0 (0.9/0.95 + 0.6/0.8 + 0.3/0.7)/3
        //           = (0.947368421 + 0.75 + 0.428571429)/3 = 0.708646617
        // unit1 (0.1/0.9 + 0.5 [sum 0] + 0.5/0.75)/3 = (0.111111 + 0.5 + 0.666667)/3 = 0.425926
        let c = unit_response_scores(&probs, Scorer::ContrastedEntailment).unwrap_or_default();
        assert!(close(c[0], (0.9 / 0.95 + 0.75 + 0.3 / 0.7) / 3.0), "{c:?}");
        assert!(close(c[1], (1.0 / 9.0 + 0.5 + 2.0 / 3.0) / 3.0), "{c:?}");
        assert!((c[0] - 0.708646617).abs() < 1e-8);
        assert!((c[1] - 0.425925926).abs() < 1e-8);
    }

    #[test]
    fn unread_judge_pairs_are_left_out_never_zero() {
        let nan = nli(f64::NAN, f64::NAN, f64::NAN);
        let probs = vec![
            vec![nli(0.9, 0.05, 0.05), nan, nli(0.3, 0.3, 0.4)],
            vec![nan, nan, nan],
        ];
        let e = unit_response_scores(&probs, Scorer::Entailment).unwrap_or_default();
        assert!(close(e[0], (0.9 + 0.3) / 2.0), "{e:?}");
        assert!(e[1].is_nan(), "{e:?}");
    }

    #[test]
    fn no_units_is_empty() {
        assert_eq!(unit_response_scores(&[], Scorer::Entailment), Ok(vec![]));
    }

    #[test]
    fn errors() {
        let e = unit_response_scores(&[vec![]], Scorer::Entailment).unwrap_err();
        assert!(e.contains("m = 0"), "{e}");
        let e = unit_response_scores(&[vec![nli(1.0, 0.0, 0.0)]], Scorer::MatchedEntailment)
            .unwrap_err();
        assert!(
            e.contains("matched_entailment") && e.contains("unit_response"),
            "{e}"
        );
        let ragged = vec![vec![nli(1.0, 0.0, 0.0)], vec![nli(1.0, 0.0, 0.0); 2]];
        assert!(unit_response_scores(&ragged, Scorer::Entailment).is_err());
    }
}
