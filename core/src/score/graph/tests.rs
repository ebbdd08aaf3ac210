use super::*;

const T: bool = true;
const F: bool = false;

fn scores(edges: &[Vec<bool>], metric: GraphMetric) -> Vec<f64> {
    graph_scores(edges, metric, DEFAULT_DAMPING).unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "got {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?}");
    }
}

#[test]
fn names_round_trip() {
    for &m in GraphMetric::ALL {
        assert_eq!(GraphMetric::parse(m.name()), Ok(m));
        assert_eq!(m.to_string(), m.name());
    }
    assert_eq!(GraphMetric::parse(" PageRank "), Ok(GraphMetric::PageRank));
    assert_eq!(GraphMetric::parse("page_rank"), Ok(GraphMetric::PageRank));
    assert!(GraphMetric::parse("degree_centrality").is_err());
    assert!(GraphMetric::parse("eigenvector_centrality").is_err());
}

#[test]
fn edge_rule_is_greater_or_equal_and_drops_zeros() {
    let p = vec![vec![0.5, 0.4999, 0.9], vec![0.0, f64::NAN, 1.0]];
    assert_eq!(
        bipartite_from_probs(&p, DEFAULT_EDGE_THRESHOLD),
        vec![vec![T, F, T], vec![F, F, T]]
    );
    // Threshold 0: everything >= 0 but exact zeros (sparse matrix) and NaN.
    assert_eq!(
        bipartite_from_probs(&p, 0.0),
        vec![vec![T, T, T], vec![F, F, T]]
    );
    assert_eq!(
        weighted_bipartite_from_probs(&p, 0.5),
        vec![vec![0.5, 0.0, 0.9], vec![0.0, 0.0, 1.0]]
    );
}

#[test]
fn constants() {
    // (n, m) = (1, 3): p, t = divmod(0, 3) = (0, 0): (9·1 + 3·1·(−1) − 0)/2 = 3 = C(3, 2).
    assert_eq!(betweenness_max(1, 3), Some(3.0));
    // (2, 2): p, t = divmod(1, 2) = (0, 1): (4·1 + 2·1·(2−0−1) − 1·(0−1+3))/2 = (4+2−2)/2 = 2.
    // (The paper's fractional p = 1/2 would give (9 + 1.5 − 3)/2 = 3.75, not attainable.)
    assert_eq!(betweenness_max(2, 2), Some(2.0));
    // (3, 2): divmod(2, 2) = (1, 0): (4·4 + 2·2·(0−1−1) − 0)/2 = (16 − 8)/2 = 4.
    assert_eq!(betweenness_max(3, 2), Some(4.0));
    // (4, 2): divmod(3, 2) = (1, 1): (4·4 + 2·2·(2−1−1) − 1·(2−1+3))/2 = (16 + 0 − 4)/2 = 6.
    assert_eq!(betweenness_max(4, 2), Some(6.0));
    // (3, 3): divmod(2, 3) = (0, 2): (9·1 + 3·1·(4−0−1) − 2·(0−2+3))/2 = (9 + 9 − 2)/2 = 8.
    assert_eq!(betweenness_max(3, 3), Some(8.0));
    // m = 1: divmod(n−1, 1) = (n−1, 0): (n² − n²)/2 = 0.
    assert_eq!(betweenness_max(3, 1), Some(0.0));
    assert_eq!(betweenness_max(3, 0), None);
    assert_eq!(betweenness_max(0, 3), None);
    // Closeness numerator m + 2(n−1): (3, 2) → 2 + 4 = 6; H_max = m + (n−1)/2: (3, 2) → 3.
    assert_eq!(closeness_numerator(3, 2), 6.0);
    assert_eq!(harmonic_max(3, 2), 3.0);
    assert_eq!(closeness_numerator(1, 5), 5.0);
    assert_eq!(harmonic_max(1, 5), 5.0);
    assert_eq!(harmonic_max(4, 0), 1.5);
}

/// Claim 0 entailed by all m = 3 responses, n = 1 (|s| = 1): a star centred on the claim.
#[test]
fn star_single_claim() {
    let e = vec![vec![T, T, T]];
    // Betweenness: the C(3,2) = 3 response pairs all pass through c0: 3 / B_max(1,3)=3 → 1.
    assert_close(&scores(&e, GraphMetric::Betweenness), &[1.0], 1e-12);
    // Closeness: Σ dist = 1+1+1 = 3, numerator 3 + 0 = 3, all reachable → 1.
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0], 1e-12);
    // Harmonic: 1+1+1 = 3 over H_max = 3 → 1.
    assert_close(&scores(&e, GraphMetric::Harmonic), &[1.0], 1e-12);
    // Laplacian: degrees c0=3, r=1,1,1; E = 9+1+1+1 + 2·3 = 18; G−c0 has no edge: 0 → 1.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[1.0], 1e-12);
    // PageRank (N = 4, d = 0.85): x_c = 0.0375 + 0.85·3·x_r, x_r = 0.0375 + 0.85·x_c/3
    // ⇒ x_c = 0.0375 + 0.095625 + 0.7225 x_c ⇒ x_c = 0.133125/0.2775 = 71/148.
    assert_close(&scores(&e, GraphMetric::PageRank), &[71.0 / 148.0], 5e-5);
}

/// Path c0 – r0 – c1 – r1 (n = m = 2).
#[test]
fn path() {
    let e = vec![vec![T, F], vec![T, T]];
    // c1 is the only interior claim: pairs {r0,r1} and {c0,r1} → 2 / B_max(2,2)=2 → 1;
    // c0 is a leaf → 0. (This is the optimal graph for (2,2).)
    assert_close(&scores(&e, GraphMetric::Betweenness), &[0.0, 1.0], 1e-12);
    // c0: dist r0=1, c1=2, r1=3 → 6; numerator 2+2 = 4 → 2/3. c1: 1+1+2 = 4 → 1.
    assert_close(
        &scores(&e, GraphMetric::Closeness),
        &[2.0 / 3.0, 1.0],
        1e-12,
    );
    // H_max = 2.5. c0: 1 + 1/2 + 1/3 = 11/6 → 11/15. c1: 1 + 1 + 1/2 = 2.5 → 1.
    assert_close(
        &scores(&e, GraphMetric::Harmonic),
        &[11.0 / 15.0, 1.0],
        1e-12,
    );
    // Degrees c0=1, c1=2, r0=2, r1=1, 3 edges: E = 1+4+4+1 + 6 = 16.
    // G−c0 = path r0–c1–r1: 1+4+1 + 4 = 10 → (16−10)/16 = 0.375.
    // G−c1 = edge c0–r0 + isolated r1: 1+1 + 2 = 4 → (16−4)/16 = 0.75.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[0.375, 0.75], 1e-12);
    // PageRank on P4 (a=c0, b=r0, c=c1, d=r1; x_a = x_d, x_b = x_c):
    // x_a = 0.0375 + 0.425 x_b, 2x_a + 2x_b = 1 ⇒ 0.075 + 2.85 x_b = 1 ⇒ x_b = 37/114,
    // x_a = 10/57.
    assert_close(
        &scores(&e, GraphMetric::PageRank),
        &[10.0 / 57.0, 37.0 / 114.0],
        5e-5,
    );
}

/// Two components: r0 – c0 – r1 – c1 and c2 – r2 (n = m = 3, N = 6).
#[test]
fn two_components() {
    let e = vec![vec![T, T, F], vec![F, T, F], vec![F, F, T]];
    // c0 lies on {r0,r1} and {r0,c1}: 2 / B_max(3,3)=8 = 0.25; c1, c2 are leaves.
    assert_close(
        &scores(&e, GraphMetric::Betweenness),
        &[0.25, 0.0, 0.0],
        1e-12,
    );
    // Numerator 3 + 2·2 = 7, Wasserman–Faust factor (r−1)/5.
    // c0: dist r0=1, r1=1, c1=2 → 4, r = 4: 7/4 · 3/5 = 1.05 → clipped to 1.
    // c1: r1=1, c0=2, r0=3 → 6, r = 4: 7/6 · 3/5 = 0.7.
    // c2: r2=1 → 1, r = 2: 7 · 1/5 = 1.4 → clipped to 1.
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0, 0.7, 1.0], 1e-12);
    // H_max = 3 + 1 = 4. c0: 1+1+1/2 = 2.5 → 0.625; c1: 1+1/2+1/3 = 11/6 → 11/24;
    // c2: 1 → 0.25 (unreachable nodes contribute 0).
    assert_close(
        &scores(&e, GraphMetric::Harmonic),
        &[0.625, 11.0 / 24.0, 0.25],
        1e-12,
    );
    // Degrees c0=2, c1=1, c2=1, r0=1, r1=2, r2=1; 4 edges: E = 4+1+1+1+4+1 + 8 = 20.
    // Drops d_s² + d_s + 2Σ_{j∈N(s)} d_j: c0: 4+2+2(1+2) = 12; c1: 1+1+2·2 = 6;
    // c2: 1+1+2·1 = 4.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[0.6, 0.3, 0.2], 1e-12);
    // PageRank is linear in the teleport vector and there is no dangling node: a component
    // of k nodes holds mass k/N and, inside, the PageRank of the component alone.
    // P4 alone: interior 37/114, end 10/57 (see `path`); K2 alone: 1/2.
    // c0 (interior) = 4/6 · 37/114, c1 (end) = 4/6 · 10/57, c2 = 2/6 · 1/2 = 1/6.
    assert_close(
        &scores(&e, GraphMetric::PageRank),
        &[4.0 / 6.0 * 37.0 / 114.0, 4.0 / 6.0 * 10.0 / 57.0, 1.0 / 6.0],
        5e-5,
    );
}

/// Two disjoint edges c0 – r0, c1 – r1: closeness reaches 1 through the clip.
#[test]
fn two_disjoint_edges() {
    let e = vec![vec![T, F], vec![F, T]];
    assert_close(&scores(&e, GraphMetric::Betweenness), &[0.0, 0.0], 1e-12);
    // (2 + 2)/1 · (2−1)/(4−1) = 4/3 → clipped to 1 (uqlm's min(1.0, ·)).
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0, 1.0], 1e-12);
    // 1 / 2.5.
    assert_close(&scores(&e, GraphMetric::Harmonic), &[0.4, 0.4], 1e-12);
    // E = 4·1 + 2·2 = 8; drop 1+1+2·1 = 4 → 0.5.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[0.5, 0.5], 1e-12);
    // Symmetry: every node 1/4.
    assert_close(&scores(&e, GraphMetric::PageRank), &[0.25, 0.25], 1e-9);
}

/// c0 entailed by r0 and r1, c1 entailed by nothing (isolated claim).
#[test]
fn isolated_claim() {
    let e = vec![vec![T, T], vec![F, F]];
    // c0 lies on {r0, r1}: 1 / B_max(2,2)=2 = 0.5.
    assert_close(&scores(&e, GraphMetric::Betweenness), &[0.5, 0.0], 1e-12);
    // c0: Σ = 2, numerator 4 → 2, factor 2/3 → 4/3 → 1. c1: isolated → 0.
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0, 0.0], 1e-12);
    // H_max = 2.5: c0 2/2.5 = 0.8, c1 0.
    assert_close(&scores(&e, GraphMetric::Harmonic), &[0.8, 0.0], 1e-12);
    // E = 4+1+1+0 + 4 = 10, drop(c0) = 4+2+2·2 = 10 → 1; drop(c1) = 0.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[1.0, 0.0], 1e-12);
    // PageRank, N = 4, c1 dangling (its mass z is spread uniformly):
    // z = 0.0375 + 0.85 z/4 ⇒ z = 0.0375/0.7875 = 1/21; then 0.0375 + 0.85 z/4 = 1/21 =: k,
    // a = k + 0.85·2b, b = k + 0.85 a/2 ⇒ a = 2.7k/0.2775 = 120/259.
    assert_close(
        &scores(&e, GraphMetric::PageRank),
        &[120.0 / 259.0, 1.0 / 21.0],
        5e-5,
    );
}

/// |s| = 1 claim entailed by one of m = 2 responses (r1 isolated).
#[test]
fn single_claim_partial() {
    let e = vec![vec![T, F]];
    // B_max(1,2) = (4 − 2)/2 = 1; c0 is a leaf → 0.
    assert_close(&scores(&e, GraphMetric::Betweenness), &[0.0], 1e-12);
    // Σ = 1, numerator 2 → 2, factor (2−1)/(3−1) = 1/2 → 1.
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0], 1e-12);
    // 1 / H_max = 1/2.
    assert_close(&scores(&e, GraphMetric::Harmonic), &[0.5], 1e-12);
    // E = 1+1 + 2 = 4; G−c0 has no edge → 1.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[1.0], 1e-12);
    // N = 3, r1 dangling: x_r1 = 0.05 + 0.85 x_r1/3 ⇒ x_r1 = 3/43; c0 and r0 share the rest.
    assert_close(&scores(&e, GraphMetric::PageRank), &[20.0 / 43.0], 5e-5);
}

/// m = 1: three claims all entailed by the single response (a star centred on r0).
#[test]
fn single_response() {
    let e = vec![vec![T], vec![T], vec![T]];
    // B_max(3,1) = 0 and no claim is interior → 0 (networkx would divide by zero).
    assert_close(&scores(&e, GraphMetric::Betweenness), &[0.0; 3], 0.0);
    // Σ = 1 + 2 + 2 = 5 = 1 + 2·2 → 1.
    assert_close(&scores(&e, GraphMetric::Closeness), &[1.0; 3], 1e-12);
    // 1 + 1/2 + 1/2 = 2 = H_max(3,1) → 1.
    assert_close(&scores(&e, GraphMetric::Harmonic), &[1.0; 3], 1e-12);
    // Degrees r0=3, claims 1: E = 9+3 + 6 = 18; drop(c) = 1+1+2·3 = 8 → 4/9.
    assert_close(&scores(&e, GraphMetric::Laplacian), &[4.0 / 9.0; 3], 1e-12);
    // Star centre r0 holds 71/148 (see `star_single_claim`), each leaf (1 − 71/148)/3.
    assert_close(&scores(&e, GraphMetric::PageRank), &[77.0 / 444.0; 3], 5e-5);
}

/// Normalisations reach 1 on their optimal graphs.
#[test]
fn maxima() {
    // Complete bipartite K_{3,2}: closeness Σ = 2·1 + 2·2 = 6 = numerator → 1;
    // harmonic 2 + 2·(1/2) = 3 = H_max → 1.
    let k = vec![vec![T, T]; 3];
    assert_close(&scores(&k, GraphMetric::Closeness), &[1.0; 3], 1e-12);
    assert_close(&scores(&k, GraphMetric::Harmonic), &[1.0; 3], 1e-12);
    // …but not betweenness: the pair {r0,r1} has 3 shortest paths, one through each claim:
    // 1/3 / B_max(3,2)=4 = 1/12.
    assert_close(
        &scores(&k, GraphMetric::Betweenness),
        &[1.0 / 12.0; 3],
        1e-12,
    );
    // Betweenness optimum for (3,2): c0 – {r0,r1}, c1 – r0, c2 – r1. c0 is on {r0,r1},
    // {c1,r1}, {c2,r0}, {c1,c2}: 4 = B_max → 1.
    let opt = vec![vec![T, T], vec![T, F], vec![F, T]];
    assert_close(
        &scores(&opt, GraphMetric::Betweenness),
        &[1.0, 0.0, 0.0],
        1e-12,
    );
    // Optimum for (4,2) (t = 1): c0 – {r0,r1}, c1, c2 – r0, c3 – r1. c0 is on {r0,r1},
    // {c1,r1}, {c2,r1}, {c1,c3}, {c2,c3}, {r0,c3}: 6 = B_max(4,2) → 1.
    let opt4 = vec![vec![T, T], vec![T, F], vec![T, F], vec![F, T]];
    assert_close(
        &scores(&opt4, GraphMetric::Betweenness),
        &[1.0, 0.0, 0.0, 0.0],
        1e-12,
    );
    // The claim entailed by every response always has closeness 1 and harmonic 1 in a
    // connected graph, whatever the other claims.
    assert_close(&scores(&opt4, GraphMetric::Closeness)[..1], &[1.0], 1e-12);
    assert_close(&scores(&opt4, GraphMetric::Harmonic)[..1], &[1.0], 1e-12);
}

#[test]
fn degenerate_inputs() {
    for &metric in GraphMetric::ALL {
        assert_eq!(graph_scores(&[], metric, 0.85), Ok(vec![]));
        // Claims but no responses: no edges.
        let none = graph_scores(&[vec![], vec![]], metric, 0.85).unwrap();
        if metric == GraphMetric::PageRank {
            assert_close(&none, &[0.5, 0.5], 1e-12);
        } else {
            assert_close(&none, &[0.0, 0.0], 0.0);
        }
        // No edges at all: networkx raises for Laplacian (0 energy); here 0.
        let empty = graph_scores(&[vec![F, F]], metric, 0.85).unwrap();
        if metric == GraphMetric::PageRank {
            assert_close(&empty, &[1.0 / 3.0], 1e-12);
        } else {
            assert_close(&empty, &[0.0], 0.0);
        }
        assert!(graph_scores(&[vec![T, F], vec![T]], metric, 0.85).is_err());
        assert!(graph_scores_weighted(&[vec![f64::NAN]], metric, 0.85).is_err());
        assert!(graph_scores_weighted(&[vec![-0.5]], metric, 0.85).is_err());
    }
    assert!(graph_scores(&[vec![T]], GraphMetric::PageRank, 1.5).is_err());
    assert!(graph_scores(&[vec![T]], GraphMetric::PageRank, f64::NAN).is_err());
    // Damping is ignored by the other metrics.
    assert!(graph_scores(&[vec![T]], GraphMetric::Closeness, f64::NAN).is_ok());
    // d = 0: every node 1/N (N = 3).
    assert_close(
        &graph_scores(&[vec![T, F]], GraphMetric::PageRank, 0.0).unwrap(),
        &[1.0 / 3.0],
        1e-12,
    );
    // d = 1 on the path c0–r0–c1 (periodic) from the uniform start oscillates: NaN, as uqlm.
    let osc = graph_scores(&[vec![T], vec![T]], GraphMetric::PageRank, 1.0).unwrap();
    assert!(osc.iter().all(|x| x.is_nan()), "{osc:?}");
}

/// Reference values from networkx 3.6.1 with exactly uqlm's calls
/// (`GraphScorer`'s, betweenness/closeness on the unweighted structure,
/// PageRank and Laplacian with weight="weight", graph from
/// `np.where(P >= 0.5, P, 0)` through `bipartite.from_biadjacency_matrix`).
#[test]
fn matches_networkx_reference() {
    let p = vec![
        vec![0.91, 0.62, 0.10, 0.77],
        vec![0.55, 0.05, 0.88, 0.30],
        vec![0.20, 0.70, 0.65, 0.99],
        vec![0.51, 0.45, 0.02, 0.12],
        vec![0.03, 0.04, 0.06, 0.07],
    ];
    let w = weighted_bipartite_from_probs(&p, DEFAULT_EDGE_THRESHOLD);
    let want: [(GraphMetric, [f64; 5]); 5] = [
        (GraphMetric::Betweenness, NX_BETWEENNESS),
        (GraphMetric::Closeness, NX_CLOSENESS),
        (GraphMetric::Harmonic, NX_HARMONIC),
        (GraphMetric::Laplacian, NX_LAPLACIAN_W),
        (GraphMetric::PageRank, NX_PAGERANK_W),
    ];
    for (metric, expected) in want {
        let got = graph_scores_weighted(&w, metric, DEFAULT_DAMPING).unwrap();
        assert_close(&got, &expected, 1e-9);
    }
    // Unweighted (the paper's graph): the same structure with weight 1.
    let e = bipartite_from_probs(&p, DEFAULT_EDGE_THRESHOLD);
    assert_close(&scores(&e, GraphMetric::Laplacian), &NX_LAPLACIAN_U, 1e-9);
    assert_close(&scores(&e, GraphMetric::PageRank), &NX_PAGERANK_U, 1e-9);
    assert_close(&scores(&e, GraphMetric::Betweenness), &NX_BETWEENNESS, 1e-9);
}

const NX_BETWEENNESS: [f64; 5] = [
    0.2847222222222222,
    0.12499999999999999,
    0.17361111111111108,
    0.0,
    0.0,
];
const NX_CLOSENESS: [f64; 5] = [0.875, 0.75, 0.75, 0.5833333333333333, 0.0];
const NX_HARMONIC: [f64; 5] = [
    0.8055555555555557,
    0.6944444444444445,
    0.7638888888888888,
    0.5416666666666667,
    0.0,
];
const NX_LAPLACIAN_W: [f64; 5] = [
    0.43938437068743713,
    0.23336374055621809,
    0.4295020232498304,
    0.07395972212476304,
    -2.0774645514937554e-16,
];
const NX_PAGERANK_W: [f64; 5] = [
    0.1639702221080415,
    0.11136958681166542,
    0.16305462194813433,
    0.05240311514442865,
    0.018404907975460127,
];
const NX_LAPLACIAN_U: [f64; 5] = [
    0.41935483870967744,
    0.25806451612903225,
    0.3870967741935484,
    0.12903225806451613,
    0.0,
];
const NX_PAGERANK_U: [f64; 5] = [
    0.15648403568896824,
    0.11246155619396314,
    0.15635340840028544,
    0.06549854572905303,
    0.018404907975460127,
];

/// Σ λ² of the Laplacian, by cyclic Jacobi rotations (test only).
#[allow(clippy::needless_range_loop)] // rotations read two rows and two columns at once
fn jacobi_eigenvalues(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let n = a.len();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-22 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k][p], a[k][q]);
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p][k], a[q][k]);
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
            }
        }
    }
    (0..n).map(|i| a[i][i]).collect()
}

/// Laplacian matrix of the bipartite graph `w` with node `drop` removed.
fn laplacian_matrix(w: &[Vec<f64>], drop: Option<usize>) -> Vec<Vec<f64>> {
    let n = w.len();
    let m = w.first().map_or(0, Vec::len);
    let keep: Vec<usize> = (0..n + m).filter(|&v| Some(v) != drop).collect();
    let weight = |u: usize, v: usize| -> f64 {
        match (u < n, v < n) {
            (true, false) => w[u][v - n],
            (false, true) => w[v][u - n],
            _ => 0.0,
        }
    };
    keep.iter()
        .map(|&u| {
            keep.iter()
                .map(|&v| {
                    if u == v {
                        keep.iter().map(|&x| weight(u, x)).sum()
                    } else {
                        -weight(u, v)
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn laplacian_closed_form_matches_eigenvalues() {
    let graphs: Vec<Vec<Vec<f64>>> = vec![
        vec![vec![1.0, 0.0], vec![1.0, 1.0]],
        vec![
            vec![1.0, 1.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ],
        vec![
            vec![0.9, 0.6, 0.0],
            vec![0.0, 0.7, 0.55],
            vec![0.8, 0.0, 0.95],
            vec![0.0, 0.0, 0.0],
        ],
    ];
    for w in graphs {
        let n = w.len();
        let energy = |drop| -> f64 {
            jacobi_eigenvalues(laplacian_matrix(&w, drop))
                .iter()
                .map(|l| l * l)
                .sum()
        };
        let full = energy(None);
        let want: Vec<f64> = (0..n).map(|s| (full - energy(Some(s))) / full).collect();
        let got = graph_scores_weighted(&w, GraphMetric::Laplacian, 0.85).unwrap();
        assert_close(&got, &want, 1e-9);
        // And the closed form of E_L(G) itself.
        let g = Bipartite::new(&w).unwrap();
        let closed = g.laplacian_energy(&g.weighted_degrees());
        assert!((closed - full).abs() < 1e-9, "{closed} vs {full}");
    }
}

#[test]
fn brandes_matches_brute_force() {
    // Brute force on a small graph: for each pair {u, v}, count shortest paths through s
    // via σ_uv(s) = σ_us σ_sv when d(u,s) + d(s,v) = d(u,v).
    let e = [
        vec![T, T, F, F],
        vec![F, T, T, F],
        vec![T, F, T, T],
        vec![F, F, F, T],
        vec![T, T, T, F],
    ];
    let w: Vec<Vec<f64>> = e
        .iter()
        .map(|r| r.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect())
        .collect();
    let g = Bipartite::new(&w).unwrap();
    let nv = g.len();
    let counts = |s: usize| -> (Vec<Option<usize>>, Vec<f64>) {
        let d = g.bfs(s);
        let mut order: Vec<usize> = (0..nv).filter(|&v| d[v].is_some()).collect();
        order.sort_by_key(|&v| d[v]);
        let mut sig = vec![0.0; nv];
        sig[s] = 1.0;
        for &v in &order {
            for &(u, _) in &g.adj[v] {
                if d[u].is_some() && d[u].map(|x| x + 1) == d[v] {
                    sig[v] += sig[u];
                }
            }
        }
        (d, sig)
    };
    let all: Vec<_> = (0..nv).map(counts).collect();
    let raw = g.raw_betweenness();
    for s in 0..nv {
        let mut b = 0.0;
        for u in 0..nv {
            for v in u + 1..nv {
                if u == s || v == s {
                    continue;
                }
                let (du, su) = &all[u];
                let (ds, ss) = &all[s];
                if let (Some(us), Some(sv), Some(uv)) = (du[s], ds[v], du[v]) {
                    if us + sv == uv {
                        b += su[s] * ss[v] / su[v];
                    }
                }
            }
        }
        assert!((raw[s] - b).abs() < 1e-12, "node {s}: {} vs {b}", raw[s]);
    }
}
