use super::*;
use crate::logprobs::{place, Alternative};
use crate::test_util::close;

fn tok(text: &str, lp: f64, top: &[f64]) -> TokenLogprob {
    TokenLogprob {
        token: text.to_string(),
        offset: None,
        logprob: lp,
        top: top
            .iter()
            .map(|&l| Alternative {
                token: String::new(),
                logprob: l,
            })
            .collect(),
    }
}

#[test]
fn no_tokens_is_nan_never_a_number() {
    assert!(min_probability(&[]).is_nan());
    assert!(sequence_probability(&[], true).is_nan());
    assert!(mean_token_negentropy(&[], 5).is_nan());
    assert!(probability_margin(&[tok("a", -0.1, &[-0.1])]).is_nan());
    assert!(semantic_density(&[], &[]).is_nan());
}

#[test]
fn normalized_sequence_probability_is_the_geometric_mean_of_token_probs() {
    let seq = |lps: &[f64]| {
        let t: Vec<TokenLogprob> = lps.iter().map(|&l| tok("t", l, &[])).collect();
        sequence_probability(&t, true)
    };
    // tokens with p = 0.5, 0.25, 1 → exp((ln .5 + ln .25 + 0)/3) = (0.125)^(1/3) = 0.5
    assert!(close(seq(&[0.5f64.ln(), 0.25f64.ln(), 0.0]), 0.5));
    assert!(close(seq(&[0.0]), 1.0));
    assert_eq!(seq(&[f64::NEG_INFINITY, 0.0]), 0.0);
    assert!(seq(&[]).is_nan());
    assert!(seq(&[f64::NAN]).is_nan());
}

#[test]
fn a_sure_token_has_negentropy_one_and_a_uniform_one_zero() {
    let sure = tok("a", 0.0, &[0.0, -60.0, -60.0]);
    let flat = tok("b", -(3f64).ln(), &[-(3f64).ln(); 3]);
    let n = token_negentropies(&[sure, flat.clone()], 3);
    assert!((n[0] - 1.0).abs() < 1e-9 && n[1].abs() < 1e-9);
    // A position with fewer alternatives than k is left out (uqlm's NaN).
    assert!(token_negentropies(&[tok("c", -0.1, &[-0.1, -3.0])], 3)[0].is_nan());
    assert!((min_token_negentropy(&[flat], 3)).abs() < 1e-9);
}

#[test]
fn p_true_reads_the_verdict_word() {
    assert!((p_true(Some(&tok(" True", (0.8f64).ln(), &[]))) - 0.8).abs() < 1e-12);
    assert!((p_true(Some(&tok("false", (0.8f64).ln(), &[]))) - 0.2).abs() < 1e-12);
    assert!(p_true(Some(&tok("Maybe", -0.1, &[]))).is_nan() && p_true(None).is_nan());
}

#[test]
fn a_claims_tokens_are_those_inside_its_span() {
    let mut t = vec![
        tok("Paris", -0.1, &[]),
        tok(" is", -0.2, &[]),
        tok(" big", -2.0, &[]),
        tok(".", -0.01, &[]),
        tok(" It", -0.3, &[]),
        tok(" rains", -1.0, &[]),
        tok(".", -0.05, &[]),
    ];
    place("Paris is big. It rains.", &mut t).unwrap();
    let first = tokens_in_span(&t, 0, 13);
    assert_eq!(first.len(), 4);
    let second = tokens_in_span(&t, 14, 23);
    assert_eq!(
        second.iter().map(|t| t.token.as_str()).collect::<Vec<_>>(),
        vec![" It", " rains", "."]
    );
    let s = claim_scores(&second, 5);
    assert!((s.probability - (-1.35f64).exp()).abs() < 1e-12);
    assert!((s.normalized_probability - (-0.45f64).exp()).abs() < 1e-12);
    assert!(s.min_token_negentropy.is_nan());
    // Tokens without offsets (they did not tile the answer) belong to no span.
    let bare = vec![tok("Paris", -0.1, &[])];
    assert!(tokens_in_span(&bare, 0, 5).is_empty());
}
