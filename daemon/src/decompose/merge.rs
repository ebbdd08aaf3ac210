//! Claim merging for the graph scorers (paper §3.3.4 and its footnote: "the union of unique
//! claims is obtained by sequentially merging claims from each sampled response using an LLM").
//!
//! As uqlm 0.6.7 `uqlm/longform/graph/claim_merger.py` (`ClaimMerger.merge_claims`):
//!
//! * the master list starts as the original answer's claims;
//! * the samples are merged **in order**, one call each: the sample's claims not already in the
//!   master list (exact text; uqlm's `set(sampled) - set(master)`) are sent with the master list
//!   in the paper's merging prompt (`uq_llm::prompts::claim_merging`, lists joined with `\n`);
//! * a sample with no such claims (no claims at all, or all already in the master) makes **no
//!   call** (uqlm's `if unique_sampled_claims`);
//! * the reply's `-` lines (`uq_llm::parse::merged_claims`, uqlm's `^\s*-\s*(.+)`) are appended
//!   to the master list.
//!
//! Differences, documented: the new claims are sent in the sample's order (uqlm's set has none),
//! and a returned claim already in the master list is not appended twice (uqlm appends it, which
//! would make a duplicate claim node; the paper asks for the union of *unique* claims).
//!
//! The merge LLM is `merge_llm` (else `llm`; uqlm uses its decomposition LLM), at its config's
//! temperature (default 0). Every call goes through the completion cache, so a rerun is free.
//!
//! Merging is decomposition work (it decomposes the samples and unites their claims), so it
//! lives in stage 1; the graph scorers of stage 2 call [`claim_union`], a later stage reading an
//! earlier one, never the reverse.

use uq_core::options::{LlmRole, ScoreOptions};
use uq_llm::{parse, prompts, ChatRequest};

use super::claims::{self, decompose_many};
use crate::role_llms::{LlmService, RoleLlm};
use uq_core::limits::check_text;

/// The merging request for `master` and the `new` claims.
pub fn request(merger: &RoleLlm, master: &[String], new: &[String]) -> ChatRequest {
    ChatRequest::new(prompts::claim_merging(master, new))
        .with_temperature(merger.role_temperature())
}

/// Merges each of `sampled` (one claim list per sample, in order) into `original`, returning
/// the union (the original claims first, then new claims in the order they were found).
pub async fn merge(
    merger: &RoleLlm,
    original: &[String],
    sampled: &[Vec<String>],
) -> Result<Vec<String>, String> {
    let mut master: Vec<String> = original.to_vec();
    for claims in sampled {
        let mut unique: Vec<String> = Vec::new();
        for c in claims {
            if !master.contains(c) && !unique.contains(c) {
                unique.push(c.clone());
            }
        }
        if unique.is_empty() {
            continue;
        }
        let reply = merger.text(&request(merger, &master, &unique)).await?;
        for c in parse::merged_claims(&reply) {
            if !master.contains(&c) {
                master.push(c);
            }
        }
    }
    Ok(master)
}

/// The claim union of `response` and `samples` as the graph scorers need it: `response_claims`
/// when known (else `options.units`, else the decomposition of `response`), the samples' claims
/// from `sample_claims` when known (else `options.sample_units`, else their decomposition, each
/// distinct text once, concurrently), then [`merge`] with the merge LLM.
pub fn claim_union(
    llm: &LlmService,
    opts: &ScoreOptions,
    response: &str,
    samples: &[String],
    response_claims: Option<&[String]>,
    sample_claims: Option<&[Vec<String>]>,
) -> Result<Vec<String>, String> {
    let decomposer = || llm.for_role(opts, LlmRole::Decomposition);
    let original: Vec<String> = match (response_claims, &opts.decompose.units) {
        (Some(c), _) => c.to_vec(),
        (None, Some(u)) => u.clone(),
        (None, None) => llm.block_on(claims::decompose(&decomposer()?, response))?,
    };
    let sampled: Vec<Vec<String>> = match (sample_claims, &opts.decompose.sample_units) {
        (Some(c), _) => c.to_vec(),
        (None, Some(su)) if su.len() >= samples.len() => su[..samples.len()].to_vec(),
        _ => {
            let texts: Vec<&str> = samples.iter().map(String::as_str).collect();
            llm.block_on(decompose_many(&decomposer()?, &texts))?
        }
    };
    if sampled.iter().all(Vec::is_empty) {
        return Ok(original);
    }
    let merger = llm.for_role(opts, LlmRole::Merge)?;
    llm.block_on(merge(&merger, &original, &sampled))
}

/// The `claim_union` op: checks the texts, then [`claim_union`].
pub fn claim_union_op(
    llm: &LlmService,
    response: &str,
    samples: &[String],
    options: &serde_json::Value,
) -> Result<Vec<String>, String> {
    let opts = uq_core::options::parse_options(options)?;
    check_text(response, "response")?;
    for (j, s) in samples.iter().enumerate() {
        check_text(s, &format!("samples_json[{j}]"))?;
    }
    let samples = uq_core::options::select_samples(samples, opts.scoring.num_samples)?;
    claim_union(llm, &opts, response, &samples, None, None)
}

#[cfg(test)]
mod tests {
    use uq_llm::parse;

    #[test]
    fn new_claims_from_a_recorded_merge_reply() {
        // A reply in the shape gpt-4o-mini gives to the paper's merging prompt: the verification
        // step's bullets are not new claims; only the compilation's dash lines are.
        let reply = "**Verification Process:**\n\
            - \"Marie Curie was a physicist.\" - entailed by the original list.\n\
            - \"Marie Curie was born in Warsaw.\" - not entailed.\n\n\
            **Compilation of Non-Entailed Claims:**\n\
            - Marie Curie was born in Warsaw.\n\
            - Marie Curie won the Nobel Prize in Chemistry in 1911.\n";
        assert_eq!(
            parse::merged_claims(reply),
            vec![
                "Marie Curie was born in Warsaw.",
                "Marie Curie won the Nobel Prize in Chemistry in 1911."
            ]
        );
        assert!(parse::merged_claims("**Compilation of Non-Entailed Claims:**\n- None").is_empty());
    }
}
