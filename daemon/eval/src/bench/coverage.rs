//! `uqd bench coverage`: how much of an answer the decomposition LLM loses, on the FActScore-Bio
//! answers of the graph-uq data (shared/data/README.md). Each response is decomposed by the
//! decomposition LLM (default: the embedded SmolLM2) and its sentences are checked for coverage
//! (`decompose::coverage`, threshold 0.5). Against the data's own labelled claims (GPT-4
//! decomposition, GPT-4 grader): a false claim (label 0) is *under scoring* when some unit
//! entails it (p_e(premise = unit, hypothesis = claim) ≥ 0.5); counted with the LLM's claims
//! alone and with the uncovered sentences added as units (`coverage: "add_units"`).
//! Prints one JSON object per answer and a summary line.

use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use uq_core::options::{LlmRole, ScoreOptions};

use super::lines::{load_jsonl, round};
use uqd::decompose::{claims, coverage::coverage};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// p_e a unit needs to entail a labelled claim, and a sentence to count as covered.
const THRESHOLD: f64 = 0.5;

#[derive(Deserialize)]
struct Record {
    entity: String,
    response: String,
    response_claims: Vec<Claim>,
}

#[derive(Deserialize)]
struct Claim {
    claim: String,
    label: Option<u8>,
}

/// Runs the coverage benchmark on `data` (the first `limit` answers).
pub fn coverage_bench(
    engine: &Engine,
    llm: &LlmService,
    data: &Path,
    limit: Option<usize>,
) -> Result<(), String> {
    let records: Vec<Record> = load_jsonl(data, limit)?;
    let decomposer = llm.for_role(&ScoreOptions::default(), LlmRole::Decomposition)?;
    let start = std::time::Instant::now();
    let (mut sentences, mut uncovered, mut false_claims) = (0usize, 0usize, 0usize);
    let (mut by_claims, mut with_added, mut no_claims) = (0usize, 0usize, 0usize);
    for r in &records {
        let units = llm.block_on(claims::decompose(&decomposer, &r.response))?;
        let cov = coverage(
            &uqd::judge::Nli::model(engine),
            &r.response,
            &units,
            THRESHOLD,
        )?;
        let added: Vec<String> = cov
            .iter()
            .filter(|c| !c.covered)
            .map(|c| c.sentence.clone())
            .collect();
        let wrong: Vec<&str> = r
            .response_claims
            .iter()
            .filter(|c| c.label == Some(0))
            .map(|c| c.claim.as_str())
            .collect();
        let c1 = caught(engine, &units, &wrong)?;
        let c2 = caught(engine, &added, &wrong)?;
        let n1 = c1.iter().filter(|&&x| x).count();
        let n2 = c1.iter().zip(&c2).filter(|(a, b)| **a || **b).count();
        println!(
            "{}",
            json!({"entity": r.entity, "sentences": cov.len(), "claims": units.len(),
                   "uncovered": added.len(), "false_claims": wrong.len(),
                   "false_under_scoring_claims_only": n1, "false_under_scoring_with_added": n2})
        );
        sentences += cov.len();
        uncovered += added.len();
        false_claims += wrong.len();
        by_claims += n1;
        with_added += n2;
        no_claims += units.is_empty() as usize;
    }
    let share = |a: usize, b: usize| {
        if b == 0 {
            None
        } else {
            Some(round(a as f64 / b as f64))
        }
    };
    println!(
        "{}",
        json!({"bench": "coverage", "answers": records.len(), "answers_without_claims": no_claims,
               "decomposition_llm": decomposer.label(),
               "sentences": sentences, "uncovered_sentences": uncovered,
               "uncovered_share": share(uncovered, sentences),
               "false_claims": false_claims,
               "false_under_scoring_claims_only": by_claims,
               "false_under_scoring_with_added": with_added,
               "false_brought_under_scoring": with_added - by_claims,
               "wall_s": round(start.elapsed().as_secs_f64())})
    );
    Ok(())
}

/// Per false claim: whether some premise entails it (at [`THRESHOLD`]), i.e. whether scoring
/// against `premises` would bring it under an NLI check.
fn caught(engine: &Engine, premises: &[String], wrong: &[&str]) -> Result<Vec<bool>, String> {
    if premises.is_empty() || wrong.is_empty() {
        return Ok(vec![false; wrong.len()]);
    }
    let pairs: Vec<(String, String)> = wrong
        .iter()
        .flat_map(|w| premises.iter().map(move |p| (p.clone(), w.to_string())))
        .collect();
    let probs = engine.nli(&pairs)?;
    Ok(probs
        .chunks(premises.len())
        .map(|row| row.iter().any(|p| p.entailment >= THRESHOLD))
        .collect())
}
