//! Semantic consistency functions η: 𝒯 × 𝒯 → [0, 1] (paper §3.2).
//!
//! The NLI-based η take the three-way probabilities of one (premise a, hypothesis b) pair;
//! the embedding-based η take the embeddings the daemon computed.

use super::nli::NliProbs;
use crate::scorers::Consistency;

/// Entailment probability p_e(a, b) (§3.2, first bullet).
pub fn entailment(p: &NliProbs) -> f64 {
    p.entailment
}

/// Non-contradiction probability 1 − p_c(a, b) (§3.2, second bullet).
pub fn noncontradiction(p: &NliProbs) -> f64 {
    1.0 - p.contradiction
}

/// Contrasted entailment p_e / (p_e + p_c) (§3.2, third bullet: the neutral class is
/// excluded). When p_e + p_c = 0 (only possible through underflow) it is 0.5: no evidence
/// either way.
pub fn contrasted_entailment(p: &NliProbs) -> f64 {
    let sum = p.entailment + p.contradiction;
    if sum == 0.0 {
        0.5
    } else {
        p.entailment / sum
    }
}

/// The NLI-based η selected by `c` applied to `p`; `None` when `c` is not computed from NLI
/// probabilities (cosine, BERTScore).
pub fn nli_eta(c: Consistency, p: &NliProbs) -> Option<f64> {
    match c {
        Consistency::Entailment => Some(entailment(p)),
        Consistency::Noncontradiction => Some(noncontradiction(p)),
        Consistency::ContrastedEntailment => Some(contrasted_entailment(p)),
        Consistency::Cosine
        | Consistency::BertScore
        | Consistency::Verbalized
        | Consistency::ExactMatch
        | Consistency::SemanticNegentropy
        | Consistency::MeanNoncontradiction
        | Consistency::NormalizedProbability
        | Consistency::UnigramAvg
        | Consistency::UnigramMax
        | Consistency::Weighted
        | Consistency::SourceElseSamples
        | Consistency::TokenProbability(_) => None,
    }
}

fn dot_norms(a: &[f32], b: &[f32]) -> (f64, f64, f64) {
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    (dot, na.sqrt(), nb.sqrt())
}

/// Cosine similarity in [−1, 1], computing the norms itself; 0 when either vector is zero
/// (or they have different lengths, which never happens with one embedding model).
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (dot, na, nb) = dot_norms(a, b);
    if na == 0.0 || nb == 0.0 || !na.is_finite() || !nb.is_finite() {
        return 0.0;
    }
    (dot / (na * nb)).clamp(-1.0, 1.0)
}

/// Normalised cosine similarity ĉos(a, b) = (cos(a, b) + 1) / 2 (§3.2, fourth bullet).
/// The vectors need not be normalised. A zero vector (or vectors of different lengths)
/// gives 0.5, the value of orthogonal vectors.
pub fn normalized_cosine(a: &[f32], b: &[f32]) -> f64 {
    (cosine(a, b) + 1.0) / 2.0
}

/// L2-normalised copy of each token vector (zero vectors stay zero).
fn normalize_rows(rows: &[Vec<f32>]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            let n = r
                .iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
                .sqrt();
            if n == 0.0 || !n.is_finite() {
                vec![0.0; r.len()]
            } else {
                r.iter().map(|&x| f64::from(x) / n).collect()
            }
        })
        .collect()
}

/// Greedy-matching precision: mean over `from`'s tokens of the max cosine to `to`'s tokens.
fn greedy_match(from: &[Vec<f64>], to: &[Vec<f64>]) -> f64 {
    let total: f64 = from
        .iter()
        .map(|x| {
            to.iter()
                .map(|y| {
                    if x.len() == y.len() {
                        x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>()
                    } else {
                        0.0
                    }
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .sum();
    total / from.len() as f64
}

/// BERTScore F1 (§3.2, fifth bullet; Zhang et al. 2020 without idf weighting or baseline
/// rescaling, as uqlm's defaults). `a` and `b` are token embeddings, one row per token, not
/// necessarily normalised: every row is L2-normalised here. P = mean over a's tokens of the
/// max cosine to b's tokens, R = mean over b's tokens of the max cosine to a's tokens,
/// F1 = 2PR / (P + R). Either side empty, or P + R = 0, gives 0.
pub fn bertscore_f1(a: &[Vec<f32>], b: &[Vec<f32>]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (a, b) = (normalize_rows(a), normalize_rows(b));
    let p = greedy_match(&a, &b);
    let r = greedy_match(&b, &a);
    if p + r == 0.0 || !(p + r).is_finite() {
        return 0.0;
    }
    2.0 * p * r / (p + r)
}

/// Exact match 𝕀[a = b] (§3.2, sixth bullet).
pub fn exact_match(a: &str, b: &str) -> f64 {
    if a == b {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::nli;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn nli_functions() {
        let q = nli(0.6, 0.3, 0.1);
        assert!(close(entailment(&q), 0.6));
        // 1 - 0.1 = 0.9
        assert!(close(noncontradiction(&q), 0.9));
        // 0.6 / (0.6 + 0.1) = 0.857142857...
        assert!(close(contrasted_entailment(&q), 6.0 / 7.0));
        // neutral only: p_e + p_c = 0 → 0.5
        assert_eq!(contrasted_entailment(&nli(0.0, 1.0, 0.0)), 0.5);
        // 0.2 / (0.2 + 0.2) = 0.5
        assert!(close(contrasted_entailment(&nli(0.2, 0.6, 0.2)), 0.5));
    }

    #[test]
    fn nli_eta_dispatch() {
        let q = nli(0.25, 0.25, 0.5);
        assert_eq!(nli_eta(Consistency::Entailment, &q), Some(0.25));
        assert_eq!(nli_eta(Consistency::Noncontradiction, &q), Some(0.5));
        // 0.25 / 0.75 = 1/3
        assert!(close(
            nli_eta(Consistency::ContrastedEntailment, &q).unwrap_or(0.0),
            1.0 / 3.0
        ));
        assert_eq!(nli_eta(Consistency::Cosine, &q), None);
        assert_eq!(nli_eta(Consistency::BertScore, &q), None);
    }

    #[test]
    fn cosine_values() {
        // identical direction, different norms: cos = 1 → 1
        assert!(close(normalized_cosine(&[1.0, 2.0], &[2.0, 4.0]), 1.0));
        // opposite: cos = -1 → 0
        assert!(close(normalized_cosine(&[1.0, 0.0], &[-3.0, 0.0]), 0.0));
        // orthogonal: cos = 0 → 0.5
        assert!(close(normalized_cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.5));
        // a=(1,0), b=(1,1): cos = 1/√2 = 0.70710678 → (1.70710678)/2 = 0.85355339
        assert!(close(
            normalized_cosine(&[1.0, 0.0], &[1.0, 1.0]),
            (1.0 + 0.5f64.sqrt()) / 2.0
        ));
        // a=(3,4), b=(4,3): dot 24, norms 5·5 → cos 0.96 → 0.98
        assert!(close(normalized_cosine(&[3.0, 4.0], &[4.0, 3.0]), 0.98));
        // zero vector / mismatched lengths / empty → 0.5
        assert_eq!(normalized_cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.5);
        assert_eq!(normalized_cosine(&[1.0], &[1.0, 1.0]), 0.5);
        assert_eq!(normalized_cosine(&[], &[]), 0.5);
    }

    #[test]
    fn bertscore_hand_computed() {
        // a = [(1,0), (0,1)], b = [(2,0)] (unnormalised; normalised → (1,0)).
        // P: a1 → max cos to b = 1; a2 → 0.  P = (1 + 0)/2 = 0.5
        // R: b1 → max(1, 0) = 1.              R = 1
        // F1 = 2·0.5·1 / 1.5 = 2/3
        let a = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let b = vec![vec![2.0, 0.0]];
        assert!(close(bertscore_f1(&a, &b), 2.0 / 3.0));
        // symmetric
        assert!(close(bertscore_f1(&b, &a), 2.0 / 3.0));
        // a = [(3,4)], b = [(4,3), (0,5)]: cosines 0.96 and 0.8
        // P = max(0.96, 0.8) = 0.96;  R = (0.96 + 0.8)/2 = 0.88
        // F1 = 2·0.96·0.88 / 1.84 = 1.6896/1.84 = 0.918260869...
        let a = vec![vec![3.0, 4.0]];
        let b = vec![vec![4.0, 3.0], vec![0.0, 5.0]];
        assert!(close(bertscore_f1(&a, &b), 1.6896 / 1.84));
        // identical → 1
        assert!(close(bertscore_f1(&b, &b), 1.0));
    }

    #[test]
    fn bertscore_degenerate() {
        let a = vec![vec![1.0f32, 0.0]];
        assert_eq!(bertscore_f1(&[], &a), 0.0);
        assert_eq!(bertscore_f1(&a, &[]), 0.0);
        // opposite tokens: P = R = -1, F1 = 2·1/(-2) = -1 (BERTScore is not clipped)
        assert!(close(bertscore_f1(&a, &[vec![-1.0, 0.0]]), -1.0));
        // zero token → cos 0 → P = R = 0 → P + R = 0 → 0
        assert_eq!(bertscore_f1(&a, &[vec![0.0, 0.0]]), 0.0);
    }

    #[test]
    fn exact() {
        assert_eq!(exact_match("Paris", "Paris"), 1.0);
        assert_eq!(exact_match("Paris", "paris"), 0.0);
    }
}
