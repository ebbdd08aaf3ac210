//! Decomposition coverage (beyond the paper, docs/reference.md "Coverage"): a claim-level scorer
//! is blind to whatever the decomposition drops, so each sentence of the response is checked
//! against its claims. Premise: the claims joined in order (the decomposition LLM splits the
//! whole answer, so the sentence → claims mapping is unknown); hypothesis: the sentence. A
//! sentence is covered when p_e ≥ `coverage_threshold`; with `coverage: "add_units"` an
//! uncovered sentence becomes a unit of its own (origin `uncovered_sentence`), so no part of the
//! answer escapes scoring.

use uq_core::decompose::split_sentences;
use uq_core::protocol::SentenceCoverage;

use crate::judge::Nli;

/// Per sentence of `response`: p_e(premise = `claims` joined, hypothesis = sentence) and
/// whether it reaches `threshold`. No claims: nothing is covered (entailment 0). A pair the
/// NLI judge (`nli_llm`) could not read has entailment NaN (null) and is not covered.
pub fn coverage(
    nli: &Nli,
    response: &str,
    claims: &[String],
    threshold: f64,
) -> Result<Vec<SentenceCoverage>, String> {
    let sentences = split_sentences(response);
    let entailment: Vec<f64> = if claims.is_empty() {
        vec![0.0; sentences.len()]
    } else {
        let premise = claims.join(" ");
        let pairs: Vec<(String, String)> = sentences
            .iter()
            .map(|s| (premise.clone(), s.clone()))
            .collect();
        nli.probs(&pairs)?.iter().map(|p| p.entailment).collect()
    };
    Ok(sentences
        .into_iter()
        .zip(entailment)
        .enumerate()
        .map(|(idx, (sentence, entailment))| SentenceCoverage {
            idx,
            sentence,
            entailment,
            covered: entailment >= threshold,
        })
        .collect())
}
