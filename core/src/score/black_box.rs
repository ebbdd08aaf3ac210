//! Whole-answer ("black-box", short-form) consistency between an original answer y_0 and m
//! sampled answers y_1..y_m, as uqlm 0.6.7's `BlackBoxUQ` defines it. Used twice:
//!
//! * by the **unit-QA** scorers (paper §3.3.3): for unit s, y_0^(s) is the answer to the unit's
//!   question γ(s) at `temperature` and y_j^(s) the m_qa answers at `sampling_temperature`;
//!   c(s) = (1/m) Σ_j η(y_0^(s), y_j^(s)), averaged over the unit's questions ([`unit_qa_score`]);
//! * by the **short-form baselines** (paper §4, "Response-Level Scoring"): the whole response
//!   against the whole samples.
//!
//! Definitions (uqlm 0.6.7 file and function named on each):
//!
//! * non-contradiction (`uqlm/black_box/consistency.py` `ConsistencyScorer`,
//!   `uqlm/nli/nli.py` `get_nli_results`): per pair, 1 when the texts are identical, else the
//!   mean of 1 − p_c over both directions, (1 − p_c(y_0 ⇒ y_j) + 1 − p_c(y_j ⇒ y_0)) / 2; then the
//!   mean over j ([`pair_noncontradiction`], [`noncontradiction_score`]).
//! * cosine (`uqlm/black_box/cosine.py`): mean over j of (cos + 1)/2 of sentence embeddings.
//! * BERTScore (`uqlm/black_box/bert.py`): mean over j of F1 (see `consistency::bertscore_f1`).
//! * exact match (`uqlm/black_box/match.py`): mean over j of 𝕀[y_0 = y_j].
//! * semantic negentropy (`uqlm/scorers/shortform/entropy.py`, `uqlm/nli/cluster.py`): cluster
//!   the m + 1 answers, SE over cluster frequencies, 1 − SE / ln(m + 1)
//!   ([`semantic_negentropy_of_answers`], clustering rules in [`super::semantic_entropy`]).
//! * normalised probability (`uqlm/white_box/baseclass/logprobs_scorer.py` `_norm_prob`):
//!   exp(mean of the answer's token log-probabilities): the length-normalised
//!   [`sequence_probability`](super::white_box::sequence_probability).
//!
//! Not reproduced: uqlm's `use_best` (on by default in `BlackBoxUQ` whenever semantic
//! negentropy is computed), which swaps the original answer for the "best" answer of the
//! largest cluster before the other scorers compare; here η always compares the given original.

use super::nli::NliProbs;
use crate::score::semantic_entropy::{
    cluster_by_equivalence, mutually_entail, semantic_negentropy, semantic_negentropy_of_clusters,
    uqlm_clusters, uqlm_equivalent,
};

/// How semantic negentropy clusters answers (option `semantic_clustering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Clustering {
    /// uqlm 0.6.7 (the default, since users compare against it): two answers are equivalent
    /// when the argmax NLI label is "entailment" in **either** direction, and an answer joins
    /// **every** cluster whose founding member it matches (clusters may overlap).
    #[default]
    Uqlm,
    /// The paper / Kuhn et al.: mutual (bidirectional) entailment, each answer in the first
    /// matching cluster only.
    Bidirectional,
}

impl Clustering {
    pub const NAMES: &'static [&'static str] = &["uqlm", "bidirectional"];

    pub fn as_str(self) -> &'static str {
        match self {
            Clustering::Uqlm => "uqlm",
            Clustering::Bidirectional => "bidirectional",
        }
    }

    /// `"uqlm"` or `"bidirectional"` (alias `"mutual"`), case-insensitive.
    pub fn parse(s: &str) -> Result<Clustering, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "uqlm" => Ok(Clustering::Uqlm),
            "bidirectional" | "mutual" => Ok(Clustering::Bidirectional),
            _ => Err(format!(
                "unknown semantic_clustering {s:?}: use \"uqlm\" (either-direction entailment, uqlm 0.6.7) or \"bidirectional\" (mutual entailment, the paper)"
            )),
        }
    }
}

/// Mean of `values`; NaN when empty (numpy's `mean([])`).
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// uqlm's black-box non-contradiction of one pair: 1 for identical texts (no NLI), else
/// (1 − p_c(a ⇒ b) + 1 − p_c(b ⇒ a)) / 2. `a_to_b` = NLI(premise a, hypothesis b).
pub fn pair_noncontradiction(identical: bool, a_to_b: &NliProbs, b_to_a: &NliProbs) -> f64 {
    if identical {
        1.0
    } else {
        ((1.0 - a_to_b.contradiction) + (1.0 - b_to_a.contradiction)) / 2.0
    }
}

/// Non-contradiction of `original` against `candidates`: mean over j of
/// [`pair_noncontradiction`]; `forward[j]` = NLI(original ⇒ candidate j), `backward[j]` the
/// reverse. Pairs the NLI judge could not read (NaN) are left out. No candidates → NaN.
pub fn noncontradiction_score(
    original: &str,
    candidates: &[String],
    forward: &[NliProbs],
    backward: &[NliProbs],
) -> f64 {
    let v: Vec<f64> = candidates
        .iter()
        .zip(forward.iter().zip(backward))
        .map(|(c, (f, b))| pair_noncontradiction(c == original, f, b))
        .filter(|v| !v.is_nan())
        .collect();
    mean(&v)
}

/// Exact match of `original` against `candidates`: the share of candidates equal to it.
pub fn exact_match_score(original: &str, candidates: &[String]) -> f64 {
    let v: Vec<f64> = candidates
        .iter()
        .map(|c| crate::score::consistency::exact_match(original, c))
        .collect();
    mean(&v)
}

/// The ordered pairs (a, b), a ≠ b, of distinct texts among `answers` whose NLI semantic
/// negentropy may need: every pair of indices i < j with different texts, both directions
/// (identical texts are equivalent without NLI, as uqlm).
pub fn negentropy_pairs(answers: &[String]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..answers.len() {
        for j in i + 1..answers.len() {
            if answers[i] != answers[j] {
                out.push((i, j));
                out.push((j, i));
            }
        }
    }
    out
}

/// Semantic negentropy of `answers` (the original first, then the samples): clusters by
/// `clustering`, where `nli(a, b)` gives NLI(premise answers[a], hypothesis answers[b]) and is
/// only asked for pairs of different texts (see [`negentropy_pairs`]); 1 − SE / ln(n).
/// One answer → 1; none → NaN.
pub fn semantic_negentropy_of_answers(
    answers: &[String],
    clustering: Clustering,
    nli: impl Fn(usize, usize) -> NliProbs,
) -> f64 {
    let n = answers.len();
    let equivalent = equivalence(answers, clustering, nli);
    match clustering {
        Clustering::Uqlm => semantic_negentropy_of_clusters(&uqlm_clusters(n, equivalent), n),
        Clustering::Bidirectional => semantic_negentropy(&cluster_by_equivalence(n, equivalent)),
    }
}

/// The member lists of the semantic clusters of `answers` by `clustering` (uqlm's overlapping
/// ones, or the partition by mutual entailment), `nli` as in [`semantic_negentropy_of_answers`].
pub fn answer_clusters(
    answers: &[String],
    clustering: Clustering,
    nli: impl Fn(usize, usize) -> NliProbs,
) -> Vec<Vec<usize>> {
    let n = answers.len();
    let equivalent = equivalence(answers, clustering, nli);
    match clustering {
        Clustering::Uqlm => uqlm_clusters(n, equivalent),
        Clustering::Bidirectional => {
            let ids = cluster_by_equivalence(n, equivalent);
            let mut seen: Vec<usize> = Vec::new();
            let mut lists: Vec<Vec<usize>> = Vec::new();
            for (i, id) in ids.iter().enumerate() {
                match seen.iter().position(|s| s == id) {
                    Some(k) => lists[k].push(i),
                    None => {
                        seen.push(*id);
                        lists.push(vec![i]);
                    }
                }
            }
            lists
        }
    }
}

/// Whether answers r and i mean the same under `clustering` (identical texts always do).
fn equivalence<'a>(
    answers: &'a [String],
    clustering: Clustering,
    nli: impl Fn(usize, usize) -> NliProbs + 'a,
) -> impl Fn(usize, usize) -> bool + 'a {
    move |r: usize, i: usize| -> bool {
        if answers[r] == answers[i] {
            return true;
        }
        let (a, b) = (nli(r, i), nli(i, r));
        match clustering {
            Clustering::Uqlm => uqlm_equivalent(&a, &b),
            Clustering::Bidirectional => mutually_entail(&a, &b),
        }
    }
}

/// A unit-QA unit score from its questions' scores: the mean over questions (each question's
/// score is already the mean over its m_qa sampled answers, or its semantic negentropy), as
/// uqlm's `LongTextQA._process_bb_result` (`np.mean` over the unit's `num_questions` scores).
/// NaN questions (none could be had) are skipped; no question → NaN.
pub fn unit_qa_score(per_question: &[f64]) -> f64 {
    let v: Vec<f64> = per_question
        .iter()
        .copied()
        .filter(|x| !x.is_nan())
        .collect();
    mean(&v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{close, nli};

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn noncontradiction_averages_directions_then_samples() {
        // y0 = "Paris"; candidates "Lyon" (p_c 0.8 forward, 0.6 backward), "Paris" (identical),
        // "France's capital, Paris" (p_c 0.1, 0.3).
        let cands = s(&["Lyon", "Paris", "France's capital, Paris"]);
        let fwd = [nli(0.1, 0.1, 0.8), nli(0.1, 0.0, 0.9), nli(0.7, 0.2, 0.1)];
        let back = [nli(0.2, 0.2, 0.6), nli(0.1, 0.0, 0.9), nli(0.4, 0.3, 0.3)];
        // pair 1: (0.2 + 0.4)/2 = 0.3; pair 2: identical → 1 (the NLI is ignored);
        // pair 3: (0.9 + 0.7)/2 = 0.8; mean = (0.3 + 1 + 0.8)/3 = 0.7.
        assert!(close(
            noncontradiction_score("Paris", &cands, &fwd, &back),
            0.7
        ));
        assert!(noncontradiction_score("Paris", &[], &[], &[]).is_nan());
        assert!(close(
            pair_noncontradiction(false, &nli(0.0, 0.5, 0.5), &nli(0.0, 1.0, 0.0)),
            0.75
        ));
    }

    #[test]
    fn exact_match_share() {
        assert!(close(
            exact_match_score("Paris", &s(&["Paris", "paris", "Paris", "Lyon"])),
            0.5
        ));
        assert!(exact_match_score("x", &[]).is_nan());
    }

    #[test]
    fn negentropy_on_hand_built_nli() {
        // answers: 0 "Paris", 1 "Paris", 2 "The capital is Paris", 3 "Lyon".
        let answers = s(&["Paris", "Paris", "The capital is Paris", "Lyon"]);
        let ent = nli(0.8, 0.15, 0.05);
        let neu = nli(0.2, 0.7, 0.1);
        let con = nli(0.1, 0.1, 0.8);
        // 0 ⇒ 2 entailment, 2 ⇒ 0 neutral (one way only); 3 contradicts everything.
        let probs = |a: usize, b: usize| -> NliProbs {
            match (a, b) {
                (0, 2) | (1, 2) => ent,
                (2, 0) | (2, 1) => neu,
                _ => con,
            }
        };
        let pairs = negentropy_pairs(&answers);
        // identical 0/1 are skipped: (0,2),(2,0),(0,3),(3,0),(1,2),(2,1),(1,3),(3,1),(2,3),(3,2)
        assert_eq!(pairs.len(), 10);
        assert!(!pairs.contains(&(0, 1)));
        // uqlm: {0,1,2} (2 joins through the one-way entailment), {3} → p = (3/4, 1/4),
        // SE = ln 4 − (3/4) ln 3; negentropy = 1 − SE / ln 4.
        let se = 4f64.ln() - 0.75 * 3f64.ln();
        let got = semantic_negentropy_of_answers(&answers, Clustering::Uqlm, probs);
        assert!(close(got, 1.0 - se / 4f64.ln()), "{got}");
        // bidirectional: {0,1}, {2}, {3} → p = (1/2, 1/4, 1/4), SE = 1.5 ln 2 = 0.75 ln 4;
        // negentropy = 1 − 0.75 = 0.25.
        let got = semantic_negentropy_of_answers(&answers, Clustering::Bidirectional, probs);
        assert!(close(got, 0.25), "{got}");
        // all identical → 1; one answer → 1; none → NaN.
        let same = s(&["a", "a", "a"]);
        assert_eq!(
            semantic_negentropy_of_answers(&same, Clustering::Uqlm, |_, _| con),
            1.0
        );
        assert_eq!(
            semantic_negentropy_of_answers(&same[..1], Clustering::Uqlm, |_, _| con),
            1.0
        );
        assert!(semantic_negentropy_of_answers(&[], Clustering::Uqlm, |_, _| con).is_nan());
        // all different and contradicting → 0.
        let diff = s(&["a", "b", "c"]);
        assert!(close(
            semantic_negentropy_of_answers(&diff, Clustering::Bidirectional, |_, _| con),
            0.0
        ));
    }

    #[test]
    fn unit_qa_averages_over_j_then_questions() {
        // Unit with Q = 2 questions, m_qa = 2 answers each, exact match:
        // question 1: y0 "1867", y1 "1867", y2 "1868" → 1/2;
        // question 2: y0 "Warsaw", y1 "Warsaw", y2 "Warsaw" → 1.
        let q1 = exact_match_score("1867", &s(&["1867", "1868"]));
        let q2 = exact_match_score("Warsaw", &s(&["Warsaw", "Warsaw"]));
        assert!(close(unit_qa_score(&[q1, q2]), 0.75));
        // NaN questions are skipped; none left → NaN.
        assert!(close(unit_qa_score(&[f64::NAN, 0.4]), 0.4));
        assert!(unit_qa_score(&[]).is_nan());
        assert!(unit_qa_score(&[f64::NAN]).is_nan());
    }

    #[test]
    fn clustering_names() {
        assert_eq!(Clustering::parse("UQLM"), Ok(Clustering::Uqlm));
        assert_eq!(Clustering::parse("mutual"), Ok(Clustering::Bidirectional));
        assert_eq!(Clustering::default(), Clustering::Uqlm);
        let e = Clustering::parse("x").unwrap_err();
        assert!(e.contains("uqlm") && e.contains("bidirectional"), "{e}");
    }
}
