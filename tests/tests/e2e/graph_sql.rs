//! Graph scorers from SQL: `uq_unit_scores` at claim granularity with caller-supplied units and
//! `claim_union`, against the real daemon and NLI model.

use uq_integration::*;

const GRAPH_SCORERS: [&str; 5] = [
    "betweenness_centrality",
    "closeness_centrality",
    "harmonic_centrality",
    "laplacian_centrality",
    "page_rank",
];

#[test]
fn graph_scorers_from_sql() {
    let sb = Sandbox::new("graph-sql");
    let units = [
        "Marie Curie was a physicist.",
        "Marie Curie won the Nobel Prize in Physics in 1903.",
        "Marie Curie was born in Vienna.",
    ];
    // The union lacks the last unit: the daemon appends it.
    let union = [
        "Marie Curie was a physicist.",
        "Marie Curie was a chemist.",
        "Marie Curie won the Nobel Prize in Physics in 1903.",
        "Marie Curie was born in Warsaw.",
    ];
    let options = serde_json::json!({
        "granularity": "claim",
        "units": units,
        "claim_union": union,
        "scorers": GRAPH_SCORERS,
    })
    .to_string();
    let out = sb.sqlite_ok(&format!(
        "SELECT unit_idx || '|' || scorer || '|' || score FROM uq_unit_scores({}, {}, {}) ORDER BY scorer, unit_idx;",
        lit(RESPONSE),
        json_lit(&SAMPLES),
        lit(&options)
    ));
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(
        rows.len(),
        5 * units.len(),
        "5 graph scorers x 3 units: {out}"
    );
    for (i, scorer) in GRAPH_SCORERS.iter().enumerate() {
        for (k, row) in rows[i * units.len()..(i + 1) * units.len()]
            .iter()
            .enumerate()
        {
            assert_eq!(row[0], k.to_string(), "{out}");
            assert_eq!(row[1], *scorer, "{out}");
            let s: f64 = row[2]
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {out}"));
            assert!(
                (0.0..=1.0).contains(&s),
                "{scorer} score {s} outside [0, 1]: {out}"
            );
        }
    }

    // Without claim_union the daemon merges claims, decomposing the samples first: the error
    // when that fails is pinned by errors.rs (golden file errors/llm_calls.txt).
}
