//! Parity with uqlm 0.6.7 (`shared/data/uqlm_0.6.7_reference_scores.jsonl`, shared/data/README.md):
//! uqlm's `LongTextUQ` (sentence granularity, unit-response mode) on the SelfCheckGPT WikiBio
//! passages with the annotated `gpt3_sentences` as the units, the first m = 5 `gpt3_text_samples`
//! as the samples and the NLI model `shared/models/nli-minilm-l6` (v1). The default NLI model is
//! v2; this test names v1's directory explicitly, since the reference was computed with it.
//!
//! Through the daemon's protocol (`Server::handle_line`, as the extension sends it):
//! * `nli` op: every per-pair probability (premise = sample j, hypothesis = sentence; uqlm's
//!   `probs_contradiction_neutral_entailment`) within 1e-5;
//! * `score` op with `"premise":"whole"` (the paper's and uqlm's premise; the default selects
//!   sentences): every sentence's `entailment`, `noncontradiction` and `contrasted_entailment`
//!   within 1e-5. The file holds no matched-unit scores, so none are compared.
//!
//! A second test checks the default premise selection against a selection made here from
//! `uq_core`'s functions, through the same daemon.
//!
//! All of it: the file's 500 sentences × 5 samples = 2,500 NLI pairs (about 100 s on 2 CPU
//! cores), every score and every per-pair probability.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use uqd::config::{Config, Device, Precision};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;
use uqd::server::Server;

use crate::common::dist_config;

const TOL: f64 = 1e-5;
const SCORERS: [&str; 3] = ["entailment", "noncontradiction", "contrasted_entailment"];
/// Sentences in the reference file (every one is compared).
const ALL_SENTENCES: usize = 500;

/// A path under the project's shared folder (`../shared` beside the repository).
fn shared(rel: &str) -> PathBuf {
    let p = crate::common::repo_root().join("../shared").join(rel);
    assert!(
        p.exists(),
        "{} is missing (the project's shared data and models)",
        p.display()
    );
    p
}

#[derive(Deserialize)]
struct Passage {
    dataset_idx: usize,
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
}

#[derive(Deserialize)]
struct Reference {
    dataset_idx: usize,
    sent_idx: usize,
    sentence: String,
    m: usize,
    entailment: f64,
    noncontradiction: f64,
    contrasted_entailment: f64,
    /// Per sample j: (contradiction, neutral, entailment).
    probs_contradiction_neutral_entailment: Vec<[f64; 3]>,
}

impl Reference {
    fn score(&self, scorer: &str) -> f64 {
        match scorer {
            "entailment" => self.entailment,
            "noncontradiction" => self.noncontradiction,
            "contrasted_entailment" => self.contrasted_entailment,
            _ => unreachable!("{scorer}"),
        }
    }
}

fn jsonl<T: for<'de> Deserialize<'de>>(rel: &str) -> Vec<T> {
    std::fs::read_to_string(shared(rel))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A daemon on the v1 NLI model (the ONNX Runtime library from the tests' configuration).
fn v1_server() -> Server {
    let engine = Engine::load(&Config {
        nli_model: shared("models/nli-minilm-l6"),
        embed_model: None,
        device: Device::Cpu,
        // uqlm ran the fp32 weights: never an optimized or int8 variant.
        precision: Precision::Original,
        ..dist_config::test_config()
    })
    .unwrap_or_else(|e| panic!("Engine::load: {e}"));
    let dir = std::env::temp_dir().join(format!("uqd-uqlm-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let llm = LlmService::new(dir.join("completions.sqlite"), "/nonexistent.gguf".into()).unwrap();
    Server::new(Arc::new(engine), Arc::new(llm), dir.join("unused.sock"))
}

fn ok(server: &Server, request: &Value) -> Value {
    let (reply, _) = server.handle_line(&request.to_string());
    let reply = serde_json::to_value(&reply).unwrap();
    assert_eq!(reply["ok"], json!(true), "{reply}");
    reply["result"].clone()
}

#[test]
fn unit_response_scores_match_uqlm_with_the_v1_model() {
    let server = v1_server();
    let passages: BTreeMap<usize, Passage> = jsonl::<Passage>("data/selfcheck_wikibio_dev.jsonl")
        .into_iter()
        .map(|p| (p.dataset_idx, p))
        .collect();
    let mut by_passage: BTreeMap<usize, Vec<Reference>> = BTreeMap::new();
    for r in jsonl::<Reference>("data/uqlm_0.6.7_reference_scores.jsonl") {
        by_passage.entry(r.dataset_idx).or_default().push(r);
    }
    assert_eq!(by_passage.values().map(Vec::len).sum::<usize>(), 500);

    let (mut sentences, mut pairs, mut worst_prob, mut worst_score) = (0, 0, 0.0f64, 0.0f64);
    for (idx, refs) in by_passage.iter() {
        let p = &passages[idx];
        let m = refs[0].m;
        let samples = &p.gpt3_text_samples[..m];
        assert_eq!(refs.len(), p.gpt3_sentences.len(), "passage {idx}");
        for (i, r) in refs.iter().enumerate() {
            assert_eq!(
                (r.sent_idx, &r.sentence),
                (i, &p.gpt3_sentences[i]),
                "passage {idx}"
            );
            assert_eq!(r.probs_contradiction_neutral_entailment.len(), m);
        }

        // Per-pair NLI probabilities: premise = sample j, hypothesis = sentence.
        let nli_pairs: Vec<[&str; 2]> = refs
            .iter()
            .flat_map(|r| {
                samples
                    .iter()
                    .map(move |s| [s.as_str(), r.sentence.as_str()])
            })
            .collect();
        let probs = ok(&server, &json!({"op": "nli", "pairs": nli_pairs}));
        let want = refs
            .iter()
            .flat_map(|r| &r.probs_contradiction_neutral_entailment);
        for (k, (got, want)) in probs.as_array().unwrap().iter().zip(want).enumerate() {
            for (label, w) in ["contradiction", "neutral", "entailment"].iter().zip(want) {
                let g = got[label].as_f64().unwrap();
                worst_prob = worst_prob.max((g - w).abs());
                assert!(
                    (g - w).abs() < TOL,
                    "passage {idx} pair {k} ({:?}) {label}: uqlite {g} vs uqlm {w}",
                    nli_pairs[k]
                );
            }
        }
        pairs += nli_pairs.len();

        // The unit-response scores of every sentence.
        let r = ok(
            &server,
            &json!({"op": "score", "response": p.gpt3_text, "samples": samples,
                    "options": {"granularity": "sentence", "units": p.gpt3_sentences,
                                "scorers": SCORERS, "premise": "whole"}}),
        );
        let mut seen = 0;
        for s in r["scores"].as_array().unwrap() {
            let (i, scorer) = (
                s["unit_idx"].as_u64().unwrap() as usize,
                s["scorer"].as_str().unwrap(),
            );
            let (g, w) = (s["score"].as_f64().unwrap(), refs[i].score(scorer));
            worst_score = worst_score.max((g - w).abs());
            assert!(
                (g - w).abs() < TOL,
                "passage {idx} sentence {i} {scorer}: uqlite {g} vs uqlm {w}"
            );
            seen += 1;
        }
        assert_eq!(seen, refs.len() * SCORERS.len(), "passage {idx}: {r}");
        sentences += refs.len();
    }
    assert_eq!((sentences, pairs), (ALL_SENTENCES, ALL_SENTENCES * 5));
    eprintln!(
        "uqlm parity: {sentences} sentences, {pairs} NLI pairs; largest difference: \
         probabilities {worst_prob:.2e}, scores {worst_score:.2e}"
    );
}

/// The default premise (the 3 sentences of each sample sharing the most content words with the
/// unit, less those sharing none) gives the scores of the `nli` op on premises selected here by
/// hand from `uq_core::score::premise`, and they differ from the whole-sample scores.
#[test]
fn default_premise_scores_the_selected_sentences() {
    use uq_core::decompose::split_sentences;
    use uq_core::score::premise::{join_selected, lexical_relevance, lexical_selection};
    let server = v1_server();
    let passages = jsonl::<Passage>("data/selfcheck_wikibio_dev.jsonl");
    let (mut reduced, mut differ) = (0, 0);
    for p in passages.iter().take(3) {
        let samples = &p.gpt3_text_samples[..5];
        let score = |premise: Value| {
            ok(
                &server,
                &json!({"op": "score", "response": p.gpt3_text, "samples": samples,
                        "options": {"units": p.gpt3_sentences, "scorers": ["entailment"],
                                    "premise": premise}}),
            )["scores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["score"].as_f64().unwrap())
                .collect::<Vec<f64>>()
        };
        let default = ok(
            &server,
            &json!({"op": "score", "response": p.gpt3_text, "samples": samples,
                    "options": {"units": p.gpt3_sentences, "scorers": ["entailment"]}}),
        )["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["score"].as_f64().unwrap())
            .collect::<Vec<f64>>();
        assert_eq!(default, score(json!({"top_k": 3, "rank": "lexical"})));
        let whole = score(json!("whole"));
        for (i, unit) in p.gpt3_sentences.iter().enumerate() {
            let pairs: Vec<[String; 2]> = samples
                .iter()
                .map(|y| {
                    let sents = split_sentences(y);
                    let premise = if sents.len() <= 3 {
                        y.clone()
                    } else {
                        let rel = lexical_relevance(unit, &sents);
                        join_selected(y, &sents, &lexical_selection(&rel, 3))
                    };
                    reduced += usize::from(premise.len() < y.len());
                    [premise, unit.clone()]
                })
                .collect();
            let probs = ok(&server, &json!({"op": "nli", "pairs": pairs}));
            let mean = probs
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q["entailment"].as_f64().unwrap())
                .sum::<f64>()
                / samples.len() as f64;
            assert!(
                (default[i] - mean).abs() < 1e-7,
                "passage {} unit {i}: score {} vs hand-selected premises {mean}",
                p.dataset_idx,
                default[i]
            );
            differ += usize::from((default[i] - whole[i]).abs() > 1e-6);
        }
    }
    assert!(
        reduced > 0 && differ > 0,
        "reduced {reduced}, differ {differ}"
    );
}
