//! Verified reconstruction (beyond the paper, docs/reference.md "UAD"): the reconstruction LLM
//! may add facts that no kept claim states, so every sentence of its reply is checked with the
//! NLI model. Premise: the kept claims joined in order; hypothesis: the sentence; a sentence is
//! kept when p_e ≥ `verify_threshold`. If no sentence passes, the refined answer is the kept
//! claims joined in order. The refined answer is then never less faithful than its kept claims
//! (as far as the NLI model can tell).

use uq_core::decompose::split_sentences;

use crate::judge::Nli;

/// A reconstruction after verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub text: String,
    /// The reply's sentences not entailed by the kept claims, in order.
    pub removed: Vec<String>,
}

/// Keeps the sentences of `reply` entailed by `kept` (see the module doc).
pub fn verify(nli: &Nli, kept: &[String], reply: &str, threshold: f64) -> Result<Verified, String> {
    let sentences = split_sentences(reply);
    let premise = kept.join(" ");
    let pairs: Vec<(String, String)> = sentences
        .iter()
        .map(|s| (premise.clone(), s.clone()))
        .collect();
    let probs = if pairs.is_empty() {
        Vec::new()
    } else {
        nli.probs(&pairs)?
    };
    let (mut passed, mut removed) = (Vec::new(), Vec::new());
    for (s, p) in sentences.into_iter().zip(probs) {
        if p.entailment >= threshold {
            passed.push(s);
        } else {
            removed.push(s);
        }
    }
    let text = if removed.is_empty() {
        reply.trim().to_string()
    } else if passed.is_empty() {
        premise
    } else {
        passed.join(" ")
    };
    Ok(Verified { text, removed })
}
