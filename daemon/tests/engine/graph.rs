//! Graph scorers through `pipeline::score` with a caller-supplied `claim_union`, checked
//! against `uq_core::score::graph` on the NLI probabilities fetched separately from the engine.

use crate::common;

use common::{tmpdir, ENGINE};
use serde_json::{json, Value};
use uq_core::protocol::ScoreResult;
use uq_core::score::graph::{graph_scores_weighted, weighted_bipartite_from_probs};
use uq_core::scorers::{Family, Scorer, ALL};
use uqd::pipeline;
use uqd::role_llms::LlmService;

const RESPONSE: &str = "Marie Curie was a Polish physicist and chemist. She won two Nobel Prizes. \
                        She was born in Paris.";
const SAMPLES: [&str; 3] = [
    "Marie Curie was a Polish-born physicist and chemist who won the Nobel Prize twice.",
    "Marie Curie, born in Warsaw, was a chemist and physicist. She received two Nobel Prizes.",
    "Maria Sklodowska-Curie was a physicist from Poland, born in Warsaw in 1867.",
];
const UNITS: [&str; 3] = [
    "Marie Curie was a physicist.",
    "Marie Curie won two Nobel Prizes.",
    "Marie Curie was born in Paris.",
];
/// The union misses the last unit (it must be appended) and holds claims of the samples only.
const UNION: [&str; 4] = [
    "Marie Curie won two Nobel Prizes.",
    "Marie Curie was born in Warsaw.",
    "Marie Curie was a physicist.",
    "Marie Curie was born in 1867.",
];

fn graph_scorers() -> Vec<Scorer> {
    ALL.iter()
        .copied()
        .filter(|s| s.family() == Family::Graph)
        .collect()
}

fn llm(name: &str) -> LlmService {
    let dir = tmpdir(name);
    LlmService::new(
        dir.join("completions.sqlite"),
        "/nonexistent/unused.gguf".into(),
    )
    .unwrap()
}

fn samples() -> Vec<String> {
    SAMPLES.iter().map(|s| s.to_string()).collect()
}

fn score(llm: &LlmService, options: &Value) -> Result<ScoreResult, String> {
    pipeline::score(&ENGINE, llm, RESPONSE, &samples(), options)
}

/// The expected scores: p_e(premise = response node, hypothesis = claim node) from the engine,
/// claim nodes = union + missing units, response nodes = original response + samples.
fn expected(scorer: Scorer, threshold: f64, damping: f64) -> Vec<f64> {
    let mut claims: Vec<String> = UNION.iter().map(|c| c.to_string()).collect();
    for u in UNITS {
        if !claims.iter().any(|c| c == u) {
            claims.push(u.to_string());
        }
    }
    let responses: Vec<String> = std::iter::once(RESPONSE.to_string())
        .chain(samples())
        .collect();
    let p_e: Vec<Vec<f64>> = claims
        .iter()
        .map(|c| {
            let pairs: Vec<(String, String)> =
                responses.iter().map(|r| (r.clone(), c.clone())).collect();
            ENGINE
                .nli(&pairs)
                .unwrap()
                .iter()
                .map(|p| p.entailment)
                .collect()
        })
        .collect();
    let w = weighted_bipartite_from_probs(&p_e, threshold);
    let all = graph_scores_weighted(&w, scorer.graph_metric().unwrap(), damping).unwrap();
    UNITS
        .iter()
        .map(|u| all[claims.iter().position(|c| c == u).unwrap()])
        .collect()
}

#[test]
fn graph_scores_match_core_on_engine_probabilities() {
    let llm = llm("graph-match");
    let names: Vec<&str> = graph_scorers().iter().map(|s| s.name()).collect();
    for (threshold, damping, extra) in [
        (0.5, 0.85, json!({})),
        (
            0.2,
            0.6,
            json!({"graph_threshold": 0.2, "pagerank_damping": 0.6}),
        ),
    ] {
        let mut options = json!({
            "granularity": "claim",
            "units": UNITS,
            "claim_union": UNION,
            "scorers": names,
        });
        for (k, v) in extra.as_object().unwrap() {
            options[k] = v.clone();
        }
        let r = score(&llm, &options).unwrap();
        assert_eq!(r.units, UNITS.to_vec());
        assert_eq!(r.scores.len(), UNITS.len() * 5);
        for s in graph_scorers() {
            let got = r.unit_scores(s.name());
            let want = expected(s, threshold, damping);
            assert_eq!(got.len(), UNITS.len(), "{s}");
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() < 1e-9,
                    "{s} (threshold {threshold}): got {got:?}, want {want:?}"
                );
                assert!((0.0..=1.0).contains(g), "{s}: {g}");
            }
            let mean = got.iter().sum::<f64>() / got.len() as f64;
            let agg = r.response_scores[s.name()].unwrap();
            assert!((agg - mean).abs() < 1e-12, "{s}: {agg} vs {mean}");
        }
    }
}

#[test]
fn graph_scorers_with_other_scorers() {
    let llm = llm("graph-mixed");
    let r = score(
        &llm,
        &json!({"granularity": "claim", "units": UNITS, "claim_union": UNION,
                "scorers": ["entailment", "page_rank"]}),
    )
    .unwrap();
    assert_eq!(
        r.unit_scores(Scorer::PageRank.name()),
        expected(Scorer::PageRank, 0.5, 0.85)
    );
    assert_eq!(r.unit_scores(Scorer::Entailment.name()).len(), UNITS.len());
}

#[test]
fn graph_scorer_errors() {
    let llm = llm("graph-errors");
    let e = score(
        &llm,
        &json!({"units": UNITS, "claim_union": UNION, "scorers": ["betweenness_centrality"]}),
    )
    .unwrap_err();
    assert!(
        e.contains("betweenness_centrality") && e.contains("\"granularity\":\"claim\""),
        "{e}"
    );
    let e = score(
        &llm,
        &json!({"granularity": "sentence", "claim_union": UNION, "scorers": ["page_rank"]}),
    )
    .unwrap_err();
    assert!(e.contains("claims only"), "{e}");
    let e = score(
        &llm,
        &json!({"granularity": "claim", "units": UNITS, "scorers": ["closeness_centrality"]}),
    )
    .unwrap_err();
    // Without claim_union the samples are decomposed for LLM claim merging: here the
    // decomposition LLM (a missing local model) fails, and the error names it.
    assert!(e.contains("decomposition_llm"), "{e}");
}
