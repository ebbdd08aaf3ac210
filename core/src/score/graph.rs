//! Graph-based claim scorers (paper §3.3.4; Jiang et al. 2024, arXiv:2410.20783): each claim's
//! score is a centrality of its node in the bipartite graph whose nodes are the union of unique
//! claims and the responses, a claim joined to each response that entails it. The reference
//! implementation is uqlm 0.6.7's `GraphScorer` (module `uqlm.longform.graph.graph_scorer`),
//! which calls networkx 3.x; the function of each metric derives its normalisation from the
//! paper's formula and says where networkx departs from it. Nodes are numbered as networkx's
//! `bipartite.from_biadjacency_matrix` does: claims `0..n`, then responses `n..n+m`.
//! The paper's graph is unweighted ([`graph_scores`]); uqlm keeps p_e as the edge weight
//! ([`graph_scores_weighted`]), which only PageRank and Laplacian centrality read.

use crate::scorers::GraphMetric;
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;
use std::collections::VecDeque;

/// uqlm's default `binary_edge_threshold` (`GraphScorer`).
pub const DEFAULT_EDGE_THRESHOLD: f64 = 0.5;
/// networkx's default PageRank damping `alpha` (uqlm does not override it).
pub const DEFAULT_DAMPING: f64 = 0.85;
/// PageRank iteration cap: uqlm passes `max_iter=1000` to networkx's `pagerank`.
pub const PAGERANK_MAX_ITER: usize = 1000;
/// networkx's PageRank tolerance; convergence when the L1 change < N · tol.
pub const PAGERANK_TOL: f64 = 1.0e-6;

/// The paper's edge rule "claim s is entailed in response y" (§3.3.4) as uqlm's `GraphScorer`
/// decides it: claim c and response r are joined iff `p_e[c][r] >= threshold` (default
/// [`DEFAULT_EDGE_THRESHOLD`] = 0.5; note `>=`, not `>`), where `p_e[c][r]` is the NLI
/// entailment probability with premise = response r and hypothesis = claim c. The filtered
/// matrix goes through a
/// scipy sparse matrix, which drops zeros, so a probability of exactly 0 never makes an edge
/// even with a threshold ≤ 0. NaN never makes an edge. Rows are kept as given (ragged input
/// stays ragged and is rejected by [`graph_scores`]).
pub fn bipartite_from_probs(p_e: &[Vec<f64>], threshold: f64) -> Vec<Vec<bool>> {
    p_e.iter()
        .map(|row| row.iter().map(|&p| keeps_edge(p, threshold)).collect())
        .collect()
}

/// As [`bipartite_from_probs`], but keeps the entailment probability as the edge weight
/// (0 = no edge), exactly as uqlm's `GraphScorer` builds its graph.
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
/// with `n_claims` claims and `m` responses: the paper's footnote to §3.3.4,
/// ½[m²(p+1)² + m(p+1)(2t−p−1) − t(2p−t+3)], with networkx's integer
/// `p, t = divmod(n − 1, m)` (`bipartite.betweenness_centrality`). The paper writes
/// p = (n−1)/m, a fraction, for which the constant is not the attainable maximum (n = m = 2:
/// 3.75, attainable 2). It is attained by a claim entailed by every response whose other claims
/// are spread evenly over the responses, one edge each (a complete bipartite graph does not
/// reach it). `None` when m = 0 or n = 0 (undefined).
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

/// The closeness numerator m + 2(n − 1) of §3.3.4: the smallest possible Σ_{v≠s} dist(s, v)
/// for a claim, reached by a claim entailed by every response (each response at distance 1,
/// each other claim at distance 2).
pub fn closeness_numerator(n_claims: usize, m: usize) -> f64 {
    m as f64 + 2.0 * n_claims.saturating_sub(1) as f64
}

/// H_max = m + (n − 1)/2 (§3.3.4, as uqlm's `GraphScorer`), the harmonic centrality of a
/// claim entailed by every response: m responses at distance 1, n − 1 claims at distance 2.
pub fn harmonic_max(n_claims: usize, m: usize) -> f64 {
    m as f64 + n_claims.saturating_sub(1) as f64 * 0.5
}

/// One score per claim for the paper's unweighted bipartite graph `edges[c][r]` (claim c
/// entailed by response r, §3.3.4), with the paper's normalisations as uqlm/networkx compute
/// them (see each metric's method). `damping` is PageRank's d (ignored by the other metrics; default
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
/// weight, 0 is no edge. The paper's graph is unweighted ("an edge exists … iff", §3.3.4);
/// uqlm keeps p_e as the weight and passes `weight="weight"` to PageRank and Laplacian
/// centrality, while betweenness, closeness and harmonic centrality read only the edge
/// structure (so the two graphs agree for them). With
/// `weights = weighted_bipartite_from_probs(p_e, 0.5)` and damping 0.85 this is uqlm's
/// computation exactly.
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

    /// Σ_{u≠v≠s} σ_uv(s)/σ_uv of §3.3.4 by Brandes (2001) for an unweighted graph: σ counts of
    /// shortest paths by BFS from every source, dependencies accumulated in reverse BFS order;
    /// each unordered pair is counted once (the ordered-pair sum halved, as networkx's
    /// `betweenness_centrality` with normalized=False).
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

    /// Betweenness (§3.3.4): the raw sum over [`betweenness_max`], as uqlm's
    /// `nx.bipartite.betweenness_centrality(G, claim_nodes)`. Where networkx raises, 0 for every
    /// claim: m = 0 (`divmod` by zero) and m = 1 (B_max = 0: no claim lies between two nodes).
    /// With n = 1 networkx's response-side maximum is 0 and uqlm raises although only claims are
    /// reported; here the claim gets its claim-side value C(deg, 2)/C(m, 2).
    fn betweenness(&self) -> Vec<f64> {
        let bmax = betweenness_max(self.n, self.m).unwrap_or(0.0);
        if bmax <= 0.0 {
            // m = 0 or m = 1: no claim lies on any shortest path (networkx would raise).
            return vec![0.0; self.n];
        }
        let bc = self.raw_betweenness();
        bc[..self.n].iter().map(|&b| b / bmax).collect()
    }

    /// Closeness (§3.3.4): (m + 2(n−1)) / Σ_{v≠s} dist(s, v), as uqlm's
    /// `nx.bipartite.closeness_centrality(G, claim_nodes)` clipped at 1. networkx sums the
    /// distances to the nodes reachable from s only and multiplies by the Wasserman–Faust factor
    /// (r − 1)/(N − 1), r = nodes reachable from s (s included), N = n + m; 0 for an isolated
    /// claim or N = 1. Connected, the factor is 1 and the value the paper's, ≤ 1 with equality
    /// iff every response entails s. Disconnected, values above 1 occur (n = m = 2, two disjoint
    /// edges: (2+2)/1 · 1/3 = 4/3) and are clipped to 1 as uqlm does.
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

    /// Harmonic (§3.3.4): Σ_{v≠s} 1/dist(s, v) over [`harmonic_max`], unreachable nodes adding
    /// 0 (networkx's `harmonic_centrality`). H_max = 0 (n = 1, m = 0; uqlm raises) gives 0.
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

    /// E_L(G) = Σ λ_i² of §3.3.4 without an eigen-solver: L = D − W is symmetric, so
    /// Σ λ_i² = trace(L²) = ‖L‖²_F = Σ_i d_i² + 2 Σ_e w_e² (networkx computes `np.sum(L**2)`).
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

    /// E_L(G) − E_L(G − s) = d_s² + Σ_{j∈N(s)} w_sj² + 2 Σ_{j∈N(s)} d_j w_sj. Removing s (as
    /// networkx builds the Laplacian of G − s) takes d_s² out, each edge (s, j) its 2 w_sj², and
    /// lowers each neighbour's d_j² to (d_j − w_sj)², a drop of 2 d_j w_sj − w_sj²; summed, the
    /// above. Unweighted: d_s² + d_s + 2 Σ_{j∈N(s)} d_j.
    fn laplacian_drop(&self, deg: &[f64], s: usize) -> f64 {
        let nb = &self.adj[s];
        deg[s] * deg[s]
            + nb.iter().map(|&(_, w)| w * w).sum::<f64>()
            + 2.0 * nb.iter().map(|&(j, w)| deg[j] * w).sum::<f64>()
    }

    /// Laplacian (§3.3.4): (E_L(G) − E_L(G−s)) / E_L(G), as uqlm's
    /// `nx.laplacian_centrality(G, weight="weight", normalized=True)`. networkx raises when G has
    /// no edges (E_L = 0); every claim then scores 0 here.
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

    /// PageRank (§3.3.4): C_PR(s) = (1−d)/N + d Σ_{v∈N(s)} C_PR(v) w_sv / deg_w(v) + d · (mass on
    /// dangling nodes)/N, the paper's formula with uqlm's weights (1/|N(v)| unweighted), by
    /// power iteration as networkx's `pagerank`: uniform start, personalization and dangling
    /// weights (isolated nodes spread their mass uniformly), stop when the L1 change < N · 1e-6,
    /// at most [`PAGERANK_MAX_ITER`] iterations. Claim values are reported unscaled (they sum
    /// with the response nodes' to 1, as uqlm); no convergence (only possible for d = 1) gives
    /// NaN for every claim, as uqlm.
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
mod tests;
