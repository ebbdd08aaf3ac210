//! Stage 1 at claim granularity (paper §3.1): a response's claims, extracted by the decomposition
//! LLM with the paper's prompt (`uq_llm::prompts::claim_decomposition`) at temperature 0 and read
//! by `uq_llm::parse::claims`.
//!
//! Each distinct text of a request is decomposed once (concurrently with the others), and every
//! completion goes through the daemon's persistent completion cache, so a text is sent to the
//! LLM once per cache file however many scorers, requests or restarts need its claims.
//!
//! An answer the parser cannot read (no `###` items and no list) gives no claims: the response is
//! then scored as having no units (scores NULL), as uqlm does when the decomposer finds none;
//! uqlite never re-asks in a loop.
//!
//! The embedded 135M model cannot follow the paper's instruction prompt (it echoes the passage or
//! answers `### NONE`), so a local decomposition LLM gets the same task as raw few-shot completion
//! instead (`uq_llm::prompts::claim_decomposition_few_shot`: the paper's own examples 1 and 2
//! as `Passage:` / `### fact` blocks, then the passage and an open `###`), stopping at the next
//! blank line. Remote LLMs get the paper's prompt.

use std::collections::HashMap;

use futures_util::future::join_all;
use uq_llm::{parse, prompts, ChatRequest};

use uq_core::options::LlmBackendKind;

use crate::role_llms::RoleLlm;

/// The decomposition request for `text`: the paper's prompt, or raw few-shot for the local model.
pub fn request(text: &str, local: bool) -> ChatRequest {
    if local {
        return ChatRequest::raw(prompts::claim_decomposition_few_shot(text))
            .with_temperature(0.0)
            .with_stop("\n\n");
    }
    ChatRequest::new(prompts::claim_decomposition(text)).with_temperature(0.0)
}

/// The claims of `text` (empty for a blank text, without a call).
pub async fn decompose(llm: &RoleLlm, text: &str) -> Result<Vec<String>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let local = llm.kind() == LlmBackendKind::Local;
    let answer = llm.text(&request(text, local)).await?;
    // The few-shot prompt ends in an open `###`: the completion's first line is a claim too.
    let answer = if local {
        format!("###{answer}")
    } else {
        answer
    };
    Ok(parse::claims(&answer))
}

/// The claims of each of `texts`, each distinct text decomposed once, all concurrently. Every
/// call runs to its end even when another fails (finished answers are in the cache); the first
/// error is returned.
pub async fn decompose_many(llm: &RoleLlm, texts: &[&str]) -> Result<Vec<Vec<String>>, String> {
    let mut distinct: Vec<&str> = Vec::new();
    let mut slot: HashMap<&str, usize> = HashMap::new();
    let which: Vec<usize> = texts
        .iter()
        .map(|t| {
            *slot.entry(t).or_insert_with(|| {
                distinct.push(t);
                distinct.len() - 1
            })
        })
        .collect();
    let results = join_all(distinct.iter().map(|t| decompose(llm, t))).await;
    let claims: Vec<Vec<String>> = results.into_iter().collect::<Result<_, _>>()?;
    Ok(which.into_iter().map(|i| claims[i].clone()).collect())
}
