//! White-box scores from the generation LLM's token log-probabilities (beyond the paper's
//! black-box families): uqlm 0.6.7's response-level `WhiteBoxUQ` set, each as uqlm computes
//! it (`uqlm/white_box/*.py`, `uqlm/nli/entropy_utils.py`), and the same quantities over the
//! tokens inside one unit's span (LM-Polygraph's claim-level estimators, Fadeeva et al. 2024).
//!
//! Notation: an answer's tokens t = 1..T with chosen log-probability ℓ_t and top-k
//! alternatives' log-probabilities a_t,1..k (most likely first).
//! * `min_probability` = min_t e^ℓ_t;
//! * `sequence_probability` = exp((1/T) Σ ℓ_t) (`length_normalize`, uqlm's default) or Π e^ℓ_t;
//! * token negentropy n_t = 1 − H(softmax-renormalised e^a_t) / ln k, NaN unless the position
//!   has exactly k alternatives (uqlm's `top_k_logprobs`); `mean_token_negentropy` = mean of
//!   the finite n_t, `min_token_negentropy` = their minimum;
//! * `probability_margin` = mean over positions with two or more alternatives of p_(1) − p_(2);
//! * `monte_carlo_probability` = mean sequence probability of the answer and its samples;
//! * `consistency_and_confidence` (CoCoA) = mean normalised cosine to the samples × sequence
//!   probability;
//! * `semantic_negentropy` (token-probability weighted) = 1 − SE / ln(m + 1), SE = −Σ_c P_c ln P_c
//!   with P_c ∝ Σ of the sequence probabilities of cluster c's answers;
//! * `semantic_density` = Σ_j w_j K_j / Σ_j w_j over the samples j, w_j their sequence
//!   probability, K_j = (1 − (p_c + p_n / 2)) · 𝕀[p_c + p_n·√2/2 ≤ 1] from NLI(prompt + answer,
//!   prompt + sample j) (Qiu & Miikkulainen 2024);
//! * `p_true` = P(first token "True") of an LLM asked whether the answer is true (Kadavath et
//!   al. 2022), 1 − P when it said "False".
//!
//! NaN means "cannot be had" (no tokens, no alternatives); the daemon turns it into NULL with a
//! note.

use crate::logprobs::TokenLogprob;
use crate::score::black_box::mean;
use crate::score::nli::NliProbs;

/// Minimum token probability.
pub fn min_probability(tokens: &[TokenLogprob]) -> f64 {
    if tokens.is_empty() {
        return f64::NAN;
    }
    tokens
        .iter()
        .map(|t| t.logprob.exp())
        .fold(f64::INFINITY, f64::min)
}

/// Sequence probability, length-normalised (geometric mean of the token probabilities) or not.
pub fn sequence_probability(tokens: &[TokenLogprob], length_normalize: bool) -> f64 {
    if tokens.is_empty() {
        return f64::NAN;
    }
    let sum: f64 = tokens.iter().map(|t| t.logprob).sum();
    if length_normalize {
        (sum / tokens.len() as f64).exp()
    } else {
        tokens.iter().map(|t| t.logprob.exp()).product()
    }
}

/// Entropy (natural log) of `logprobs` exponentiated and renormalised to sum to 1.
pub fn entropy_of_logprobs(logprobs: &[f64]) -> f64 {
    let p: Vec<f64> = logprobs.iter().map(|x| x.exp()).collect();
    let z: f64 = p.iter().sum();
    if z.is_nan() || z <= 0.0 {
        return f64::NAN;
    }
    -p.iter()
        .map(|x| x / z)
        .filter(|&q| q > 0.0)
        .map(|q| q * q.ln())
        .sum::<f64>()
}

/// Per position, 1 − H / ln k over its alternatives, NaN unless it has exactly `k` (> 1).
pub fn token_negentropies(tokens: &[TokenLogprob], k: usize) -> Vec<f64> {
    tokens
        .iter()
        .map(|t| {
            if k < 2 || t.top.len() != k {
                return f64::NAN;
            }
            let lps: Vec<f64> = t.top.iter().map(|a| a.logprob).collect();
            1.0 - entropy_of_logprobs(&lps) / (k as f64).ln()
        })
        .collect()
}

/// Mean of the finite token negentropies (NaN when none).
pub fn mean_token_negentropy(tokens: &[TokenLogprob], k: usize) -> f64 {
    let v: Vec<f64> = token_negentropies(tokens, k)
        .into_iter()
        .filter(|x| !x.is_nan())
        .collect();
    mean(&v)
}

/// Minimum of the finite token negentropies (NaN when none).
pub fn min_token_negentropy(tokens: &[TokenLogprob], k: usize) -> f64 {
    token_negentropies(tokens, k)
        .into_iter()
        .filter(|x| !x.is_nan())
        .fold(f64::NAN, f64::min)
}

/// Mean over positions with at least two alternatives of the top two probabilities' gap.
pub fn probability_margin(tokens: &[TokenLogprob]) -> f64 {
    let v: Vec<f64> = tokens
        .iter()
        .filter_map(|t| {
            let mut p: Vec<f64> = t.top.iter().map(|a| a.logprob.exp()).collect();
            p.sort_by(|a, b| b.total_cmp(a));
            (p.len() >= 2).then(|| p[0] - p[1])
        })
        .collect();
    mean(&v)
}

/// Mean sequence probability of the answer and its samples (NaN if any has no tokens, as
/// numpy's mean over a NaN).
pub fn monte_carlo_probability(answers: &[&[TokenLogprob]], length_normalize: bool) -> f64 {
    let v: Vec<f64> = answers
        .iter()
        .map(|t| sequence_probability(t, length_normalize))
        .collect();
    mean(&v)
}

/// CoCoA: the answer's mean normalised cosine to its samples times its sequence probability.
pub fn consistency_and_confidence(cosine: f64, sequence_probability: f64) -> f64 {
    cosine * sequence_probability
}

/// Token-probability-weighted semantic negentropy of the answers (original first) grouped in
/// `clusters` (member lists, possibly overlapping, as `uqlm_clusters`), `probs` each answer's
/// sequence probability: 1 − SE / ln(n), n = number of answers. NaN if a probability is NaN;
/// all zero → uniform over clusters (uqlm's fallback).
pub fn weighted_semantic_negentropy(clusters: &[Vec<usize>], probs: &[f64]) -> f64 {
    if probs.iter().any(|p| p.is_nan()) || clusters.is_empty() {
        return f64::NAN;
    }
    let n = probs.len();
    if n < 2 {
        return 1.0;
    }
    let mass: Vec<f64> = clusters
        .iter()
        .map(|c| c.iter().map(|&i| probs[i]).sum())
        .collect();
    let total: f64 = mass.iter().sum();
    let p: Vec<f64> = if total > 0.0 {
        mass.iter().map(|m| m / total).collect()
    } else {
        vec![1.0 / mass.len() as f64; mass.len()]
    };
    let se = p
        .iter()
        .filter(|&&q| q > 0.0)
        .map(|q| q * q.ln())
        .sum::<f64>()
        .abs();
    (1.0 - se / (n as f64).ln()).clamp(0.0, 1.0)
}

/// Semantic density: the samples' kernel values K_j from NLI(prompt + answer, prompt + sample j)
/// weighted by their sequence probabilities `weights`. NaN if the weights sum to 0.
pub fn semantic_density(nli: &[NliProbs], weights: &[f64]) -> f64 {
    let total: f64 = weights.iter().sum();
    if total.is_nan() || total <= 0.0 || nli.len() != weights.len() {
        return f64::NAN;
    }
    nli.iter()
        .zip(weights)
        .map(|(p, w)| {
            let distance = p.contradiction + p.neutral * std::f64::consts::FRAC_1_SQRT_2;
            let squared = p.contradiction + p.neutral / 2.0;
            let k = if distance <= 1.0 { 1.0 - squared } else { 0.0 };
            k * w
        })
        .sum::<f64>()
        / total
}

/// P(true) from the first token of the LLM's one-word verdict: e^ℓ for "true…", 1 − e^ℓ for
/// "false…" (case and blanks ignored), NaN for anything else.
pub fn p_true(first: Option<&TokenLogprob>) -> f64 {
    let Some(t) = first else { return f64::NAN };
    let word = t.token.trim().to_ascii_lowercase();
    let p = t.logprob.exp();
    if word.starts_with("true") {
        p
    } else if word.starts_with("false") {
        1.0 - p
    } else {
        f64::NAN
    }
}

/// The tokens of an answer that overlap characters `start..end` of it (tokens with offsets,
/// `crate::logprobs::place`); a token that straddles the span's edge counts when any of its
/// characters is inside.
pub fn tokens_in_span(tokens: &[TokenLogprob], start: usize, end: usize) -> Vec<TokenLogprob> {
    tokens
        .iter()
        .filter(|t| {
            let Some(o) = t.offset else { return false };
            let len = t.token.chars().count();
            let inside = o < end && o + len > start;
            inside && !t.token.trim().is_empty()
        })
        .cloned()
        .collect()
}

/// Claim-level scores (LM-Polygraph's estimators as confidences) over a unit's tokens:
/// * `claim_probability` = Π e^ℓ_t (maximum claim probability);
/// * `claim_normalized_probability` = exp(mean ℓ_t) = 1 / perplexity of the claim's tokens;
/// * `claim_min_token_negentropy` = min_t n_t (1 − the claim's maximum token entropy / ln k).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClaimScores {
    pub probability: f64,
    pub normalized_probability: f64,
    pub min_token_negentropy: f64,
}

/// [`ClaimScores`] of one unit's tokens (all NaN when it has none).
pub fn claim_scores(tokens: &[TokenLogprob], k: usize) -> ClaimScores {
    ClaimScores {
        probability: sequence_probability(tokens, false),
        normalized_probability: sequence_probability(tokens, true),
        min_token_negentropy: min_token_negentropy(tokens, k),
    }
}

#[cfg(test)]
mod tests;
