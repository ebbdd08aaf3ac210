//! Matched-unit scorers (§3.3.2: p_e, 1 − p_c, LUQ-pair = p_e/(p_e + p_c), normalised cosine,
//! BERTScore F1) and the unit-response ones (LUQ = contrasted entailment, entailment,
//! noncontradiction) through `pipeline::score` with caller-given units and sample units, checked
//! against `uq_core::score` on NLI probabilities and embeddings fetched separately from the
//! engine (as graph.rs and unit_qa.rs do for their families).

use crate::common;

use common::{tmpdir, ENGINE};
use serde_json::json;
use uq_core::protocol::{NliProbs, ScoreResult};
use uq_core::score::consistency::{bertscore_f1, nli_eta, normalized_cosine};
use uq_core::score::{matched_unit_scores, nli_consistency, unit_response_scores};
use uq_core::scorers::{Consistency, Scorer};
use uqd::pipeline;
use uqd::role_llms::LlmService;

const RESPONSE: &str = "Marie Curie was a Polish physicist and chemist. She won two Nobel Prizes. \
                        She was born in Paris.";
const UNITS: [&str; 3] = [
    "Marie Curie was a Polish physicist and chemist.",
    "She won two Nobel Prizes.",
    "She was born in Paris.",
];
const SAMPLES: [&str; 3] = [
    "Marie Curie was a Polish-born physicist and chemist who won the Nobel Prize twice.",
    "Marie Curie, born in Warsaw, was a chemist and physicist. She received two Nobel Prizes.",
    "Maria Sklodowska-Curie was a physicist from Poland, born in Warsaw in 1867.",
];

fn sample_units() -> Vec<Vec<String>> {
    vec![
        vec![
            "Marie Curie was a Polish-born physicist and chemist who won the Nobel Prize twice."
                .into(),
        ],
        vec![
            "Marie Curie, born in Warsaw, was a chemist and physicist.".into(),
            "She received two Nobel Prizes.".into(),
        ],
        vec!["Maria Sklodowska-Curie was a physicist from Poland, born in Warsaw in 1867.".into()],
    ]
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

const TOL: f64 = 1e-9;

fn assert_close(name: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() < TOL,
            "{name}: pipeline {got:?}, core maths {want:?}"
        );
    }
}

#[test]
fn matched_unit_and_unit_response_scores_equal_core_maths_on_engine_values() {
    let dir = tmpdir("matched-unit");
    let llm = LlmService::new(
        dir.join("completions.sqlite"),
        "/nonexistent/unused.gguf".into(),
    )
    .unwrap();
    let scorers = [
        "matched_entailment",
        "matched_noncontradiction",
        "luq_pair",
        "matched_cosine_sim",
        "matched_bert_score",
        "luq",
        "entailment",
        "noncontradiction",
    ];
    let options = json!({"granularity": "sentence", "units": UNITS, "sample_units": sample_units(),
                         "scorers": scorers});
    let r: ScoreResult = pipeline::score(&ENGINE, &llm, RESPONSE, &s(&SAMPLES), &options).unwrap();
    assert_eq!(r.units, s(&UNITS));

    // NLI(premise = sample j's unit k, hypothesis = unit i), fetched from the engine.
    let su = sample_units();
    let mut pairs = Vec::new();
    for u in UNITS {
        for units in &su {
            for k in units {
                pairs.push((k.clone(), u.to_string()));
            }
        }
    }
    let flat = ENGINE.nli(&pairs).unwrap();
    let mut it = flat.into_iter();
    let probs: Vec<Vec<Vec<NliProbs>>> = UNITS
        .iter()
        .map(|_| {
            su.iter()
                .map(|units| units.iter().map(|_| it.next().unwrap()).collect())
                .collect()
        })
        .collect();
    for (scorer, c) in [
        ("matched_entailment", Consistency::Entailment),
        ("matched_noncontradiction", Consistency::Noncontradiction),
        (
            "matched_contrasted_entailment",
            Consistency::ContrastedEntailment,
        ),
    ] {
        assert_close(
            scorer,
            &r.unit_scores(scorer),
            &matched_unit_scores(&nli_consistency(&probs, c)),
        );
    }

    // Embeddings of the units and sample units, fetched from the engine.
    let sentence_emb = |t: &str| ENGINE.embed(&[t.to_string()]).unwrap()[0].clone();
    let token_emb = |t: &str| ENGINE.token_embeddings(&[t.to_string()]).unwrap()[0].clone();
    let cos: Vec<Vec<Vec<f64>>> = UNITS
        .iter()
        .map(|u| {
            su.iter()
                .map(|units| {
                    units
                        .iter()
                        .map(|k| normalized_cosine(&sentence_emb(k), &sentence_emb(u)))
                        .collect()
                })
                .collect()
        })
        .collect();
    assert_close(
        "matched_cosine_sim",
        &r.unit_scores("matched_cosine_sim"),
        &matched_unit_scores(&cos),
    );
    let bert: Vec<Vec<Vec<f64>>> = UNITS
        .iter()
        .map(|u| {
            su.iter()
                .map(|units| {
                    units
                        .iter()
                        .map(|k| bertscore_f1(&token_emb(k), &token_emb(u)))
                        .collect()
                })
                .collect()
        })
        .collect();
    assert_close(
        "matched_bert_score",
        &r.unit_scores("matched_bert_score"),
        &matched_unit_scores(&bert),
    );

    // Unit-response (LUQ): premise = the whole sample j, hypothesis = unit i.
    let pairs: Vec<(String, String)> = UNITS
        .iter()
        .flat_map(|u| {
            SAMPLES
                .iter()
                .map(move |smp| (smp.to_string(), u.to_string()))
        })
        .collect();
    let flat = ENGINE.nli(&pairs).unwrap();
    let by_unit: Vec<Vec<NliProbs>> = flat.chunks(SAMPLES.len()).map(|c| c.to_vec()).collect();
    for name in ["contrasted_entailment", "entailment", "noncontradiction"] {
        let scorer = Scorer::parse(name).unwrap();
        assert_close(
            name,
            &r.unit_scores(name),
            &unit_response_scores(&by_unit, scorer).unwrap(),
        );
    }
    // LUQ by hand as well: the mean over samples of p_e / (p_e + p_c).
    let luq: Vec<f64> = by_unit
        .iter()
        .map(|ps| {
            ps.iter()
                .map(|p| nli_eta(Consistency::ContrastedEntailment, p).unwrap())
                .sum::<f64>()
                / ps.len() as f64
        })
        .collect();
    assert_close("luq by hand", &r.unit_scores("contrasted_entailment"), &luq);
    // The scorers disagree somewhere (the comparison is not between constants).
    let a = r.unit_scores("matched_entailment");
    assert!(a.iter().any(|x| (x - a[0]).abs() > 1e-3), "{a:?}");
}
