//! Graph-based claim scorers (paper §3.3.4 "Graph-Based Scorers"; Jiang et al. 2024,
//! arXiv:2410.20783), following the reference implementation uqlm 0.6.7
//! (`uqlm/longform/graph/graph_scorer.py`, which calls networkx 3.x).
//!
//! The graph G is bipartite with node set V = s ∪ y: the |s| = n claims (the union of unique
//! claims over all responses) and the m responses. An edge (claim c, response r) exists iff c is
//! entailed by r. Node numbering follows networkx's `bipartite.from_biadjacency_matrix`
//! (networkx `algorithms/bipartite/matrix.py:193`), used by uqlm (`graph_scorer.py:158`):
//! claims are nodes `0..n`, responses are nodes `n..n+m`. The graph is held in a petgraph
//! [`UnGraph`], claim nodes first, then response nodes.
//!
//! # Metrics (per claim node s; N = |V| = n + m)
//!
//! * **Betweenness** (`betweenness_centrality`): (1/B_max) Σ_{u≠v≠s} σ_uv(s)/σ_uv, each
//!   unordered pair {u, v} counted once (Brandes' algorithm; networkx
//!   `betweenness_centrality(G, normalized=False)` halves the ordered-pair sum for an undirected
//!   graph, `centrality/betweenness.py:528`). uqlm calls
//!   `nx.bipartite.betweenness_centrality(G, claim_nodes)` (`graph_scorer.py:120`), whose
//!   B_max (networkx `bipartite/centrality.py:165-170`) is the paper's footnote constant
//!   B_max = ½[m²(p+1)² + m(p+1)(2t−p−1) − t(2p−t+3)] **with integer division**
//!   `p, t = divmod(n − 1, m)`, i.e. p = ⌊(n−1)/m⌋, t = (n−1) mod m. The paper writes
//!   p = (|s|−1)/m (a fraction); with a fractional p the constant is *not* the attainable
//!   maximum (n = m = 2: fractional 3.75, attainable and networkx 2), so the integer form is
//!   used ([`betweenness_max`]). Where networkx raises, no panic here: m = 0 (`divmod` by
//!   zero) and m = 1 (B_max = 0; no claim can lie between two nodes) give 0 for every claim.
//!   With n = 1 networkx's *response-side* maximum is 0 and uqlm raises `ZeroDivisionError`
//!   although only claims are reported; here the claim gets its claim-side value
//!   (C(deg, 2)/C(m, 2)), which networkx computes before failing.
//!   B_max is attained by a claim entailed by every response whose other claims are spread as
//!   evenly as possible over the responses with one edge each; a complete bipartite graph does
//!   **not** reach it (each claim scores m(m−1)/(2n)/B_max there).
//! * **Closeness** (`closeness_centrality`): (m + 2(n−1)) / Σ_{v≠s} dist(s, v). uqlm calls
//!   `nx.bipartite.closeness_centrality(G, claim_nodes)` (normalized=True) and clips at 1
//!   (`graph_scorer.py:129-130`). networkx (`bipartite/centrality.py:270-279`) sums the
//!   distances over the nodes *reachable* from s only and multiplies by the Wasserman–Faust
//!   factor (r − 1)/(N − 1), r = number of nodes reachable from s (s included); when the sum
//!   is 0 (isolated claim) or N = 1 the score is 0. For a connected graph the factor is 1 and
//!   the value is the paper's formula, which is ≤ 1 and equals 1 iff s is entailed by every
//!   response (then every other claim is at distance 2). For a disconnected graph the factor
//!   does not undo the smaller numerator of a small component, values above 1 occur and are
//!   clipped to 1 as uqlm does (e.g. n = m = 2 with two disjoint edges: (2+2)/1 · 1/3 = 4/3 → 1).
//! * **Harmonic** (`harmonic_centrality`): (1/H_max) Σ_{v≠s} 1/dist(s, v), unreachable nodes
//!   contributing 0 (`nx.harmonic_centrality`, `centrality/harmonic.py:85-86`), with
//!   H_max = m + (n − 1)/2 (`graph_scorer.py:142`), the value of any claim of a complete
//!   bipartite graph. H_max = 0 (n = 1, m = 0; uqlm raises) gives 0.
//! * **Laplacian** (`laplacian_centrality`): (E_L(G) − E_L(G−s)) / E_L(G) with
//!   E_L = Σ λ_i² over the eigenvalues of the Laplacian L = D − W. Since L is symmetric,
//!   Σ λ_i² = trace(L²) = ‖L‖²_F = Σ_i d_i² + 2 Σ_{edges} w_e² (networkx 3.6 computes exactly
//!   `np.sum(L**2)`, `centrality/laplacian.py:125`, and removes s by deleting its row and
//!   column and lowering the neighbours' degrees, `:136-137`, which is the Laplacian of G−s).
//!   Hence E_L(G) − E_L(G−s) = d_s² + Σ_{j∈N(s)} w_sj² + 2 Σ_{j∈N(s)} d_j w_sj
//!   (= d_s² + d_s + 2 Σ_{j∈N(s)} d_j unweighted). No eigen-solver is needed. uqlm calls
//!   `nx.laplacian_centrality(G, weight="weight", normalized=True)` (`graph_scorer.py:133`);
//!   networkx raises `ZeroDivisionError` when G has no edges (`laplacian.py:107-109`); here
//!   every claim then scores 0.
//! * **PageRank** (`page_rank`): C_PR(s) = (1−d)/N + d Σ_{v∈N(s)} C_PR(v) w_sv / deg_w(v)
//!   + d · (mass on dangling nodes)/N, by power iteration from the uniform vector as networkx's
//!   `_pagerank_scipy` (`link_analysis/pagerank_alg.py:493-498`): dangling (isolated) nodes
//!   redistribute their mass uniformly, stop when the L1 change < N · 1e-6, at most 1000
//!   iterations (uqlm passes `max_iter=1000`, `graph_scorer.py:124`). The claim nodes' values
//!   are reported as they are (uqlm does not rescale PageRank); they are probabilities over
//!   the whole graph, so they sum with the response nodes' values to 1. If the iteration does
//!   not converge (possible only for damping 1) every score is NaN, as uqlm
//!   (`graph_scorer.py:125-126`).
//!
//! # Weights
//!
//! The paper's graph is unweighted ("an edge exists … iff"); its PageRank formula divides by
//! the neighbour count. uqlm keeps the entailment probability as the edge weight
//! (`graph_scorer.py:154-158`) and passes `weight="weight"` to PageRank and Laplacian
//! centrality (betweenness, closeness and harmonic ignore weights). [`graph_scores`] takes the
//! paper's unweighted graph (every weight 1); [`graph_scores_weighted`] with
//! [`weighted_bipartite_from_probs`] reproduces uqlm exactly. The two agree for betweenness,
//! closeness and harmonic.

use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;
use std::collections::VecDeque;
use std::fmt;

/// uqlm's default `binary_edge_threshold` (`graph_scorer.py:64`).
pub const DEFAULT_EDGE_THRESHOLD: f64 = 0.5;
/// networkx's default PageRank damping `alpha` (uqlm does not override it).
pub const DEFAULT_DAMPING: f64 = 0.85;
/// PageRank iteration cap: uqlm passes `max_iter=1000` (`graph_scorer.py:124`).
pub const PAGERANK_MAX_ITER: usize = 1000;
/// networkx's PageRank tolerance; convergence when the L1 change < N · tol.
pub const PAGERANK_TOL: f64 = 1.0e-6;

/// A graph centrality metric used as a claim scorer (paper §3.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphMetric {
    Betweenness,
    Closeness,
    Harmonic,
    Laplacian,
    PageRank,
}

impl GraphMetric {
    /// Every metric, in the paper's order.
    pub const ALL: &'static [GraphMetric] = &[
        GraphMetric::Betweenness,
        GraphMetric::Closeness,
        GraphMetric::Harmonic,
        GraphMetric::Laplacian,
        GraphMetric::PageRank,
    ];

    /// The scorer name uqlm uses (`uqlm/scorers/longform/graph.py:23`, `GRAPH_SCORERS`).
    pub fn name(self) -> &'static str {
        match self {
            GraphMetric::Betweenness => "betweenness_centrality",
            GraphMetric::Closeness => "closeness_centrality",
            GraphMetric::Harmonic => "harmonic_centrality",
            GraphMetric::Laplacian => "laplacian_centrality",
            GraphMetric::PageRank => "page_rank",
        }
    }

    /// Parses uqlm's scorer name (case-insensitive, surrounding blanks ignored); the short
    /// forms "betweenness", "closeness", "harmonic", "laplacian" and "pagerank" are accepted
    /// too.
    pub fn parse(name: &str) -> Result<GraphMetric, String> {
        let key = name.trim().to_ascii_lowercase();
        if let Some(m) = Self::ALL.iter().find(|m| m.name() == key) {
            return Ok(*m);
        }
        match key.as_str() {
            "betweenness" => Ok(GraphMetric::Betweenness),
            "closeness" => Ok(GraphMetric::Closeness),
            "harmonic" => Ok(GraphMetric::Harmonic),
            "laplacian" => Ok(GraphMetric::Laplacian),
            "pagerank" | "page_rank_centrality" => Ok(GraphMetric::PageRank),
            _ => Err(format!(
                "unknown graph metric {name:?}: use one of {}",
                Self::ALL
                    .iter()
                    .map(|m| format!("{:?}", m.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for GraphMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// uqlm's edge rule (`graph_scorer.py:156-158`): claim c and response r are joined iff
/// `p_e[c][r] >= threshold` (default [`DEFAULT_EDGE_THRESHOLD`] = 0.5; note `>=`, not `>`),
/// where `p_e[c][r]` is the NLI entailment probability with premise = response r and
/// hypothesis = claim c (`graph_scorer.py:187-189`). The filtered matrix goes through a
/// scipy sparse matrix, which drops zeros, so a probability of exactly 0 never makes an edge
/// even with a threshold ≤ 0. NaN never makes an edge. Rows are kept as given (ragged input
/// stays ragged and is rejected by [`graph_scores`]).
pub fn bipartite_from_probs(p_e: &[Vec<f64>], threshold: f64) -> Vec<Vec<bool>> {
    p_e.iter()
        .map(|row| row.iter().map(|&p| keeps_edge(p, threshold)).collect())
        .collect()
}

/// As [`bipartite_from_probs`], but keeps the entailment probability as the edge weight
/// (0 = no edge), exactly as uqlm builds its graph (`graph_scorer.py:156`).
pub fn weighted_bipartite_from_probs(p_e: &[Vec<f64>], threshold: f64) -> Vec<Vec<f64>> {
    p_e.iter()
        .map(|row| {
            row.iter()
                .map(|&p| if keeps_edge(p, threshold) { p } else { 0.0 })
                .collect()
        })
        .collect()
}

fn keeps_edge(p: f64, threshold: f64) -> bool {
    p >= threshold && p != 0.0
}

/// B_max, the largest betweenness (pairs counted once) a claim can have in a bipartite graph
/// with `n_claims` claims and `m` responses: the paper's footnote with networkx's integer
/// `p, t = divmod(n − 1, m)` (`bipartite/centrality.py:165-170`). `None` when m = 0 or
/// n = 0 (undefined).
pub fn betweenness_max(n_claims: usize, m: usize) -> Option<f64> {
    if n_claims == 0 || m == 0 {
        return None;
    }
    let (p, t) = ((n_claims - 1) / m, (n_claims - 1) % m);
    let (m, p, t) = (m as f64, p as f64, t as f64);
    Some(
        (m * m * (p + 1.0) * (p + 1.0) + m * (p + 1.0) * (2.0 * t - p - 1.0)
            - t * (2.0 * p - t + 3.0))
            / 2.0,
    )
}

/// The closeness numerator m + 2(n − 1): the smallest possible Σ_{v≠s} dist(s, v) for a claim
/// (reached by a claim entailed by every response).
pub fn closeness_numerator(n_claims: usize, m: usize) -> f64 {
    m as f64 + 2.0 * n_claims.saturating_sub(1) as f64
}

/// H_max = m + (n − 1)/2 (`graph_scorer.py:142`), the harmonic centrality of a claim
/// entailed by every response.
pub fn harmonic_max(n_claims: usize, m: usize) -> f64 {
    m as f64 + n_claims.saturating_sub(1) as f64 * 0.5
}

/// One score per claim for the unweighted bipartite graph `edges[c][r]` (claim c entailed by
/// response r), with the paper's normalisations as uqlm/networkx compute them (see the module
/// documentation). `damping` is PageRank's d (ignored by the other metrics; default
/// [`DEFAULT_DAMPING`]).
///
/// Errors: rows of different lengths; `damping` outside [0, 1] (for PageRank). No claims give
/// an empty vector.
pub fn graph_scores(
    edges: &[Vec<bool>],
    metric: GraphMetric,
    damping: f64,
) -> Result<Vec<f64>, String> {
    let weights: Vec<Vec<f64>> = edges
        .iter()
        .map(|row| row.iter().map(|&e| if e { 1.0 } else { 0.0 }).collect())
        .collect();
    graph_scores_weighted(&weights, metric, damping)
}

/// As [`graph_scores`] for a weighted bipartite graph: `weights[c][r]` > 0 is an edge of that
/// weight, 0 is no edge. With `weights = weighted_bipartite_from_probs(p_e, 0.5)` and
/// damping 0.85 this is uqlm's computation exactly: PageRank and Laplacian centrality use the
/// weights, betweenness, closeness and harmonic centrality only the edge structure.
///
/// Errors: rows of different lengths; a negative or non-finite weight; `damping` outside
/// [0, 1] (for PageRank).
pub fn graph_scores_weighted(
    weights: &[Vec<f64>],
    metric: GraphMetric,
    damping: f64,
) -> Result<Vec<f64>, String> {
    let g = Bipartite::new(weights)?;
    Ok(match metric {
        GraphMetric::Betweenness => g.betweenness(),
        GraphMetric::Closeness => g.closeness(),
        GraphMetric::Harmonic => g.harmonic(),
        GraphMetric::Laplacian => g.laplacian(),
        GraphMetric::PageRank => {
            if !(0.0..=1.0).contains(&damping) {
                return Err(format!(
                    "PageRank damping must lie in [0, 1], got {damping}"
                ));
            }
            g.pagerank(damping)
        }
    })
}

/// The bipartite graph (claims `0..n`, responses `n..n+m`) and its adjacency lists.
struct Bipartite {
    n: usize,
    m: usize,
    /// `adj[v]` = (neighbour, weight) pairs.
    adj: Vec<Vec<(usize, f64)>>,
}

impl Bipartite {
    fn new(weights: &[Vec<f64>]) -> Result<Bipartite, String> {
        let n = weights.len();
        let m = weights.first().map_or(0, Vec::len);
        let mut g: UnGraph<(), f64> = UnGraph::with_capacity(n + m, 0);
        let nodes: Vec<NodeIndex> = (0..n + m).map(|_| g.add_node(())).collect();
        for (c, row) in weights.iter().enumerate() {
            if row.len() != m {
                return Err(format!(
                    "ragged claim-response matrix: row {c} has {} responses, row 0 has {m}",
                    row.len()
                ));
            }
            for (r, &w) in row.iter().enumerate() {
                if !w.is_finite() || w < 0.0 {
                    return Err(format!(
                        "edge weight ({c}, {r}) must be finite and non-negative, got {w}"
                    ));
                }
                if w > 0.0 {
                    g.add_edge(nodes[c], nodes[n + r], w);
                }
            }
        }
        let adj = nodes
            .iter()
            .map(|&a| {
                let mut nb: Vec<(usize, f64)> = g
                    .edges(a)
                    .map(|e| {
                        let other = if e.source() == a {
                            e.target()
                        } else {
                            e.source()
                        };
                        (other.index(), *e.weight())
                    })
                    .collect();
                nb.sort_by_key(|&(v, _)| v);
                nb
            })
            .collect();
        Ok(Bipartite { n, m, adj })
    }

    fn len(&self) -> usize {
        self.n + self.m
    }

    /// Breadth-first distances (hop counts) from `s`; `None` = unreachable.
    fn bfs(&self, s: usize) -> Vec<Option<usize>> {
        let mut dist = vec![None; self.len()];
        dist[s] = Some(0);
        let mut queue = VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            let dv = dist[v].unwrap_or(0);
            for &(w, _) in &self.adj[v] {
                if dist[w].is_none() {
                    dist[w] = Some(dv + 1);
                    queue.push_back(w);
                }
            }
        }
        dist
    }

    /// Brandes (2001) for an unweighted graph: σ counts of shortest paths by BFS from every
    /// source, dependencies accumulated in reverse BFS order; each unordered pair is counted
    /// once (the ordered-pair sum halved, as networkx with normalized=False).
    fn raw_betweenness(&self) -> Vec<f64> {
        let nv = self.len();
        let mut bc = vec![0.0; nv];
        let mut sigma = vec![0.0f64; nv];
        let mut dist: Vec<Option<usize>> = vec![None; nv];
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nv];
        let mut delta = vec![0.0f64; nv];
        let mut order: Vec<usize> = Vec::with_capacity(nv);
        let mut queue = VecDeque::new();
        for s in 0..nv {
            sigma.iter_mut().for_each(|x| *x = 0.0);
            dist.iter_mut().for_each(|x| *x = None);
            preds.iter_mut().for_each(Vec::clear);
            delta.iter_mut().for_each(|x| *x = 0.0);
            order.clear();
            sigma[s] = 1.0;
            dist[s] = Some(0);
            queue.push_back(s);
            while let Some(v) = queue.pop_front() {
                order.push(v);
                let dv = dist[v].unwrap_or(0);
                for &(w, _) in &self.adj[v] {
                    if dist[w].is_none() {
                        dist[w] = Some(dv + 1);
                        queue.push_back(w);
                    }
                    if dist[w] == Some(dv + 1) {
                        sigma[w] += sigma[v];
                        preds[w].push(v);
                    }
                }
            }
            while let Some(w) = order.pop() {
                let coeff = (1.0 + delta[w]) / sigma[w];
                for &v in &preds[w] {
                    delta[v] += sigma[v] * coeff;
                }
                if w != s {
                    bc[w] += delta[w];
                }
            }
        }
        bc.iter_mut().for_each(|x| *x *= 0.5);
        bc
    }

    fn betweenness(&self) -> Vec<f64> {
        let bmax = betweenness_max(self.n, self.m).unwrap_or(0.0);
        if bmax <= 0.0 {
            // m = 0 or m = 1: no claim lies on any shortest path (networkx would raise).
            return vec![0.0; self.n];
        }
        let bc = self.raw_betweenness();
        bc[..self.n].iter().map(|&b| b / bmax).collect()
    }

    fn closeness(&self) -> Vec<f64> {
        let nv = self.len();
        let numer = closeness_numerator(self.n, self.m);
        (0..self.n)
            .map(|s| {
                let dist = self.bfs(s);
                let reached = dist.iter().flatten().count();
                let total: usize = dist.iter().flatten().sum();
                if total == 0 || nv <= 1 {
                    return 0.0;
                }
                let wf = (reached - 1) as f64 / (nv - 1) as f64;
                (numer / total as f64 * wf).min(1.0)
            })
            .collect()
    }

    fn harmonic(&self) -> Vec<f64> {
        let hmax = harmonic_max(self.n, self.m);
        (0..self.n)
            .map(|s| {
                if hmax <= 0.0 {
                    return 0.0;
                }
                let raw: f64 = self
                    .bfs(s)
                    .iter()
                    .flatten()
                    .filter(|&&d| d != 0)
                    .map(|&d| 1.0 / d as f64)
                    .sum();
                raw / hmax
            })
            .collect()
    }

    fn weighted_degrees(&self) -> Vec<f64> {
        self.adj
            .iter()
            .map(|nb| nb.iter().map(|&(_, w)| w).sum())
            .collect()
    }

    /// E_L(G) = Σ_i d_i² + 2 Σ_e w_e² = trace(L²) = Σ λ_i².
    fn laplacian_energy(&self, deg: &[f64]) -> f64 {
        let d2: f64 = deg.iter().map(|d| d * d).sum();
        // Every edge appears in two adjacency lists: Σ_v Σ_{nb} w² = 2 Σ_e w_e².
        let w2: f64 = self
            .adj
            .iter()
            .flat_map(|nb| nb.iter().map(|&(_, w)| w * w))
            .sum();
        d2 + w2
    }

    /// E_L(G) − E_L(G − s) = d_s² + Σ_{j∈N(s)} w_sj² + 2 Σ_{j∈N(s)} d_j w_sj.
    fn laplacian_drop(&self, deg: &[f64], s: usize) -> f64 {
        let nb = &self.adj[s];
        deg[s] * deg[s]
            + nb.iter().map(|&(_, w)| w * w).sum::<f64>()
            + 2.0 * nb.iter().map(|&(j, w)| deg[j] * w).sum::<f64>()
    }

    fn laplacian(&self) -> Vec<f64> {
        let deg = self.weighted_degrees();
        let full = self.laplacian_energy(&deg);
        if full <= 0.0 || !full.is_finite() {
            return vec![0.0; self.n];
        }
        (0..self.n)
            .map(|s| self.laplacian_drop(&deg, s) / full)
            .collect()
    }

    /// networkx `_pagerank_scipy` with uniform start, personalization and dangling weights
    /// (the transition matrix is row-normalised first, w / deg_w, as networkx's `Q @ A`).
    fn pagerank(&self, alpha: f64) -> Vec<f64> {
        let nv = self.len();
        if nv == 0 {
            return Vec::new();
        }
        let nf = nv as f64;
        let deg = self.weighted_degrees();
        let mut x = vec![1.0 / nf; nv];
        let mut next = vec![0.0; nv];
        for _ in 0..PAGERANK_MAX_ITER {
            let dangling: f64 = (0..nv).filter(|&v| deg[v] == 0.0).map(|v| x[v]).sum();
            for (j, out) in next.iter_mut().enumerate() {
                let inflow: f64 = self.adj[j].iter().map(|&(i, w)| x[i] * (w / deg[i])).sum();
                *out = alpha * (inflow + dangling / nf) + (1.0 - alpha) / nf;
            }
            let err: f64 = x.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            std::mem::swap(&mut x, &mut next);
            if err < nf * PAGERANK_TOL {
                return x[..self.n].to_vec();
            }
        }
        vec![f64::NAN; self.n]
    }
}

#[cfg(test)]
mod tests {
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
    /// (`graph_scorer.py:120-146`, betweenness/closeness on the unweighted structure,
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
        let e = vec![
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
}
