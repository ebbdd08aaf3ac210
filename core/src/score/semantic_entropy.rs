//! Discrete semantic entropy (Kuhn et al. 2023; Farquhar et al. 2024) and its [0, 1]
//! confidence form, semantic negentropy (Bouchard & Chauhan 2025), used by the unit-QA scorers
//! (paper §3.3.3, footnote on semantic entropy: "clustering mutually entailing responses,
//! calculating cluster probabilities from response frequencies, and computing entropy across
//! these clusters … we convert this to semantic negentropy").
//!
//! Reference implementation: uqlm 0.6.7, `uqlm/nli/cluster.py` (clustering),
//! `uqlm/nli/nli.py` (the pairwise entailment decision), `uqlm/nli/entropy_utils.py`
//! (entropy, normalisation) and `uqlm/scorers/shortform/entropy.py` /
//! `uqlm/scorers/shortform/black_box.py` (negentropy = 1 − SE / ln(n)).
//!
//! # Conventions taken from uqlm
//!
//! * Responses are clustered greedily in order; the first response founds cluster 0
//!   (`cluster.py:39`). Each later response is compared with every existing cluster's
//!   **representative, the cluster's first (founding, lowest-index) member** `cluster[0]`
//!   (`cluster.py:46-47, 61-62`; the clusters are re-sorted only after clustering, `:74`, for
//!   best-response selection). If none matches it founds a new cluster (`:69-71`).
//! * The pairwise decision is argmax-label based, not threshold based (`nli.py:190-195`): each
//!   direction's label is the argmax of [contradiction, neutral, entailment] (numpy's argmax
//!   keeps the first maximum, so ties go to contradiction, then neutral), and identical texts
//!   are equivalent without calling the model (`nli.py:174-175`).
//! * Cluster probabilities are response frequencies (uniform response probabilities
//!   `1/len(candidates)`, `entropy_utils.py:35`, summed per cluster and renormalised,
//!   `:40-45, 59-67`); SE = |Σ_k p_k ln p_k| with natural log, 0·ln 0 = 0
//!   (`entropy_utils.py:28-30`).
//! * Negentropy = 1 − SE / ln(num_responses + 1) (`entropy_utils.py:19-21`,
//!   `entropy.py:236`, `black_box.py:232`), where num_responses is the number of *sampled*
//!   responses and the clustered candidates are the original plus the samples
//!   (`entropy.py:223`); i.e. 1 − SE / ln(n) with n = number of clustered responses. Since
//!   SE ≤ ln(#clusters) ≤ ln(n), this lies in [0, 1]: 1 when all responses agree, 0 when all
//!   differ.
//!
//! # Where uqlm departs from the paper
//!
//! * uqlm's "entailment" between two responses is an **or**: either direction labelled
//!   entailment suffices (`nli.py:195`), although the paper (and Kuhn/Farquhar) cluster
//!   *mutually* (bidirectionally) entailing responses. [`mutually_entail`] is the paper's
//!   decision; [`uqlm_equivalent`] is uqlm's.
//! * uqlm does not stop at the first matching cluster (`cluster.py:61-67` has no `break`): a
//!   response matching several representatives is appended to all of them, and counts in each
//!   cluster's frequency before renormalisation. [`cluster_by_bidirectional_entailment`] and
//!   [`cluster_by_equivalence`] assign each response to the first matching cluster (Kuhn et
//!   al.'s algorithm, one cluster per response); [`uqlm_clusters`] with
//!   [`discrete_semantic_entropy_of_clusters`] reproduces uqlm including the overlap. The two
//!   agree whenever no response matches two representatives.

use super::nli::NliProbs;
use std::collections::HashMap;

/// Whether the argmax label of one direction's NLI probabilities is "entailment", with
/// numpy's tie rule (the first maximum in [contradiction, neutral, entailment] order wins,
/// `nli.py:97, 192`): entailment must strictly exceed both other probabilities. NaN never
/// entails.
pub fn entailment_is_argmax(p: &NliProbs) -> bool {
    p.entailment > p.contradiction && p.entailment > p.neutral
}

/// The paper's clustering decision (bidirectional entailment, Kuhn et al. 2023): a and b are
/// semantically equivalent iff the argmax label is "entailment" in both directions.
/// `a_to_b` = NLI(premise a, hypothesis b), `b_to_a` the reverse.
pub fn mutually_entail(a_to_b: &NliProbs, b_to_a: &NliProbs) -> bool {
    entailment_is_argmax(a_to_b) && entailment_is_argmax(b_to_a)
}

/// uqlm 0.6.7's clustering decision (`nli.py:192-195`): equivalent iff the argmax label is
/// "entailment" in **either** direction.
pub fn uqlm_equivalent(a_to_b: &NliProbs, b_to_a: &NliProbs) -> bool {
    entailment_is_argmax(a_to_b) || entailment_is_argmax(b_to_a)
}

/// Greedy clustering of responses `0..n` by bidirectional entailment, as uqlm orders it
/// (`cluster.py:39-71`): response 0 founds cluster 0; response i joins the first existing
/// cluster whose representative (its founding, lowest-index member, uqlm's `cluster[0]`) r
/// satisfies `entails(r, i) && entails(i, r)`, else founds a new cluster. `entails(a, b)`
/// means "response a entails response b" (premise a, hypothesis b); callers that already have
/// a symmetric decision (e.g. [`uqlm_equivalent`]) use [`cluster_by_equivalence`].
///
/// Returns the cluster id of every response; ids are 0, 1, 2, … in order of foundation.
pub fn cluster_by_bidirectional_entailment(
    n: usize,
    entails: impl Fn(usize, usize) -> bool,
) -> Vec<usize> {
    cluster_by_equivalence(n, |r, i| entails(r, i) && entails(i, r))
}

/// The same greedy clustering with a ready-made pairwise decision `equivalent(r, i)`
/// (representative r, newcomer i; r < i).
pub fn cluster_by_equivalence(n: usize, equivalent: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut ids = Vec::with_capacity(n);
    let mut reps: Vec<usize> = Vec::new();
    for i in 0..n {
        match reps.iter().position(|&r| equivalent(r, i)) {
            Some(k) => ids.push(k),
            None => {
                ids.push(reps.len());
                reps.push(i);
            }
        }
    }
    ids
}

/// uqlm's clustering verbatim (`cluster.py:39-71`): the member lists (`cluster_indices`) of
/// each cluster, where a response is appended to **every** cluster whose representative
/// (founding member) is equivalent to it, and founds a new cluster only if none is. Clusters
/// may therefore overlap.
pub fn uqlm_clusters(n: usize, equivalent: impl Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        let mut joined = false;
        for cluster in clusters.iter_mut() {
            if equivalent(cluster[0], i) {
                cluster.push(i);
                joined = true;
            }
        }
        if !joined {
            clusters.push(vec![i]);
        }
    }
    clusters
}

/// Entropy (natural log) of a discrete distribution given by non-negative counts,
/// |Σ p ln p| with p = count/total and 0 ln 0 = 0 (`entropy_utils.py:28-30`). Total 0 → 0.
fn entropy_of_counts(counts: impl Iterator<Item = usize> + Clone) -> f64 {
    let total: usize = counts.clone().sum();
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    counts
        .filter(|&c| c > 0)
        .map(|c| {
            let p = c as f64 / t;
            p * p.ln()
        })
        .sum::<f64>()
        .abs()
}

/// Discrete semantic entropy of a clustering: cluster probabilities are response frequencies,
/// SE = −Σ_k p_k ln p_k (natural log). Cluster ids need not be contiguous. Empty → 0.
pub fn discrete_semantic_entropy(cluster_ids: &[usize]) -> f64 {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &c in cluster_ids {
        *counts.entry(c).or_insert(0) += 1;
    }
    entropy_of_counts(counts.values().copied())
}

/// Discrete semantic entropy of possibly overlapping member lists, as uqlm computes it: each
/// cluster's probability is its size over the sum of sizes (`entropy_utils.py:40-45, 59-67`
/// with uniform response probabilities).
pub fn discrete_semantic_entropy_of_clusters(clusters: &[Vec<usize>]) -> f64 {
    entropy_of_counts(clusters.iter().map(Vec::len))
}

/// Semantic negentropy 1 − SE / ln(n), n = `cluster_ids.len()` (uqlm: ln(num_responses + 1),
/// `entropy_utils.py:21`, the original plus num_responses samples). 1 = all responses in one
/// cluster, 0 = every response its own cluster. n = 1 → 1.0 (a single response agrees with
/// itself; uqlm would divide by ln 1 = 0); n = 0 → NaN (no responses, no score). The result
/// is clamped to [0, 1] against rounding.
pub fn semantic_negentropy(cluster_ids: &[usize]) -> f64 {
    negentropy(discrete_semantic_entropy(cluster_ids), cluster_ids.len())
}

/// Semantic negentropy of uqlm's (possibly overlapping) clusters of `n_responses` responses.
pub fn semantic_negentropy_of_clusters(clusters: &[Vec<usize>], n_responses: usize) -> f64 {
    negentropy(discrete_semantic_entropy_of_clusters(clusters), n_responses)
}

fn negentropy(se: f64, n: usize) -> f64 {
    match n {
        0 => f64::NAN,
        1 => 1.0,
        _ => (1.0 - se / (n as f64).ln()).clamp(0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{close, nli};

    #[test]
    fn entropy_hand_computed() {
        // [0,0,1,1]: p = (1/2, 1/2) → −2·(1/2)ln(1/2) = ln 2; negentropy 1 − ln2/ln4 = 1/2.
        assert!(close(discrete_semantic_entropy(&[0, 0, 1, 1]), 2f64.ln()));
        assert!(close(semantic_negentropy(&[0, 0, 1, 1]), 0.5));
        // [0,0,0,0]: one cluster, p = 1 → 0; negentropy 1.
        assert_eq!(discrete_semantic_entropy(&[0, 0, 0, 0]), 0.0);
        assert_eq!(semantic_negentropy(&[0, 0, 0, 0]), 1.0);
        // [0,1,2,3]: uniform over 4 → ln 4; negentropy 0.
        assert!(close(discrete_semantic_entropy(&[0, 1, 2, 3]), 4f64.ln()));
        assert!(close(semantic_negentropy(&[0, 1, 2, 3]), 0.0));
        // [0,0,0,1] (3 + 1 of 4): −(3/4 ln 3/4 + 1/4 ln 1/4) = ln 4 − (3/4) ln 3 ≈ 0.562335.
        let se = 4f64.ln() - 0.75 * 3f64.ln();
        assert!(close(discrete_semantic_entropy(&[0, 0, 0, 1]), se));
        assert!((se - 0.562_335_144_618_9).abs() < 1e-12);
        assert!(close(
            semantic_negentropy(&[0, 0, 0, 1]),
            1.0 - se / 4f64.ln()
        ));
        // Ids need not be contiguous or sorted: [7,3,7] ~ [0,1,0]:
        // −(2/3 ln 2/3 + 1/3 ln 1/3) = ln 3 − (2/3) ln 2.
        let se3 = 3f64.ln() - 2.0 / 3.0 * 2f64.ln();
        assert!(close(discrete_semantic_entropy(&[7, 3, 7]), se3));
        assert!(close(discrete_semantic_entropy(&[0, 1, 0]), se3));
        // n = 1 and n = 0.
        assert_eq!(discrete_semantic_entropy(&[5]), 0.0);
        assert_eq!(semantic_negentropy(&[5]), 1.0);
        assert_eq!(discrete_semantic_entropy(&[]), 0.0);
        assert!(semantic_negentropy(&[]).is_nan());
    }

    #[test]
    fn greedy_clustering() {
        // Responses 0..5; "meanings" decide mutual entailment, with one one-way entailment:
        // 3 entails 0 but 0 does not entail 3, so they are not mutual.
        let meaning = [0, 1, 0, 2, 1];
        let entails = |a: usize, b: usize| meaning[a] == meaning[b] || (a == 3 && b == 0);
        assert_eq!(
            cluster_by_bidirectional_entailment(5, entails),
            vec![0, 1, 0, 2, 1]
        );
        // Compared only with representatives: 2 ~ 1 but 1 is not the representative of its
        // cluster (0 is) and 2 !~ 0, so 2 founds a cluster.
        let eq =
            |a: usize, b: usize| (a.min(b), a.max(b)) == (1, 2) || (a.min(b), a.max(b)) == (0, 1);
        assert_eq!(cluster_by_equivalence(3, eq), vec![0, 0, 1]);
        assert_eq!(cluster_by_equivalence(0, |_, _| true), Vec::<usize>::new());
        assert_eq!(cluster_by_equivalence(3, |_, _| true), vec![0, 0, 0]);
        assert_eq!(cluster_by_equivalence(3, |_, _| false), vec![0, 1, 2]);
    }

    #[test]
    fn uqlm_overlapping_clusters() {
        // 0 and 1 are not equivalent (two clusters); 2 is equivalent to both representatives.
        let eq = |a: usize, b: usize| a != b && (a.max(b) == 2);
        let clusters = uqlm_clusters(3, eq);
        assert_eq!(clusters, vec![vec![0, 2], vec![1, 2]]);
        // uqlm: sizes 2 and 2 of total membership 4 → p = (1/2, 1/2) → ln 2;
        // negentropy 1 − ln2/ln3.
        assert!(close(
            discrete_semantic_entropy_of_clusters(&clusters),
            2f64.ln()
        ));
        assert!(close(
            semantic_negentropy_of_clusters(&clusters, 3),
            1.0 - 2f64.ln() / 3f64.ln()
        ));
        // First-match assignment instead: [0, 1, 0] → ln 3 − (2/3) ln 2.
        assert_eq!(cluster_by_equivalence(3, eq), vec![0, 1, 0]);
        // Without overlaps the two agree.
        let meaning = [0, 1, 0, 1, 2];
        let same = |a: usize, b: usize| meaning[a] == meaning[b];
        let ids = cluster_by_equivalence(5, same);
        let cl = uqlm_clusters(5, same);
        assert_eq!(cl, vec![vec![0, 2], vec![1, 3], vec![4]]);
        assert!(close(
            discrete_semantic_entropy(&ids),
            discrete_semantic_entropy_of_clusters(&cl)
        ));
        assert!(close(
            semantic_negentropy(&ids),
            semantic_negentropy_of_clusters(&cl, 5)
        ));
    }

    #[test]
    fn entailment_decisions() {
        let ent = nli(0.7, 0.2, 0.1);
        let neu = nli(0.3, 0.6, 0.1);
        let con = nli(0.1, 0.1, 0.8);
        assert!(entailment_is_argmax(&ent));
        assert!(!entailment_is_argmax(&neu));
        assert!(!entailment_is_argmax(&con));
        // Ties go to the earlier label (numpy argmax): entailment = neutral → neutral.
        assert!(!entailment_is_argmax(&nli(0.4, 0.4, 0.2)));
        assert!(!entailment_is_argmax(&nli(0.4, 0.2, 0.4)));
        // Argmax, not a 0.5 threshold: 0.4 entailment can win.
        assert!(entailment_is_argmax(&nli(0.4, 0.3, 0.3)));
        assert!(!entailment_is_argmax(&nli(0.8, 0.1, f64::NAN)));
        assert!(!entailment_is_argmax(&nli(f64::NAN, 0.1, 0.1)));

        assert!(mutually_entail(&ent, &ent));
        assert!(!mutually_entail(&ent, &neu));
        assert!(!mutually_entail(&neu, &ent));
        assert!(uqlm_equivalent(&ent, &neu));
        assert!(uqlm_equivalent(&neu, &ent));
        assert!(!uqlm_equivalent(&neu, &con));
    }

    #[test]
    fn clustering_from_nli_matrix() {
        // probs[a][b] = NLI(premise a, hypothesis b) for 4 responses.
        let ent = nli(0.8, 0.15, 0.05);
        let neu = nli(0.2, 0.7, 0.1);
        // 0 ⇔ 1, 2 ⇒ 0 only (one way), 3 unrelated.
        let mut probs = vec![vec![neu; 4]; 4];
        for (a, b) in [(0, 1), (1, 0), (2, 0), (0, 0), (1, 1), (2, 2), (3, 3)] {
            probs[a][b] = ent;
        }
        let paper =
            cluster_by_bidirectional_entailment(4, |a, b| entailment_is_argmax(&probs[a][b]));
        assert_eq!(paper, vec![0, 0, 1, 2]);
        let paper2 = cluster_by_equivalence(4, |a, b| mutually_entail(&probs[a][b], &probs[b][a]));
        assert_eq!(paper2, paper);
        // uqlm's "or": 2 joins 0's cluster through the one-way entailment 2 ⇒ 0.
        let uq = uqlm_clusters(4, |a, b| uqlm_equivalent(&probs[a][b], &probs[b][a]));
        assert_eq!(uq, vec![vec![0, 1, 2], vec![3]]);
        // SE([0,0,1,2]) = −(1/2 ln 1/2 + 2·1/4 ln 1/4) = 1.5 ln 2.
        assert!(close(discrete_semantic_entropy(&paper), 1.5 * 2f64.ln()));
        // uqlm: (3/4, 1/4) → ln 4 − (3/4) ln 3.
        assert!(close(
            discrete_semantic_entropy_of_clusters(&uq),
            4f64.ln() - 0.75 * 3f64.ln()
        ));
    }
}
