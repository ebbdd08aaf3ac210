//! Grading, as the paper labels its data (§4, appendix prompts): FactScore grading of a unit
//! against a reference text (is the unit supported by it?) and the objectivity check of a claim
//! (the paper evaluates objective claims only), both by the judge LLM at its config's
//! temperature (default 0), with the appendix's system and user prompts, read by
//! `uq_llm::parse::yes_no` / `parse::objectivity`. A reply neither parser can read gives no
//! label (SQL NULL) and is kept as `raw` so that it can be inspected.

use futures_util::future::join_all;
pub use uq_core::protocol::GradeResult as Graded;
use uq_llm::{parse, prompts, ChatRequest};

use crate::role_llms::RoleLlm;

/// The FactScore request: is `unit` supported by `reference`?
pub fn factscore_request(judge: &RoleLlm, unit: &str, reference: &str) -> ChatRequest {
    ChatRequest::new(prompts::factscore_user(unit, reference))
        .with_system(prompts::FACTSCORE_SYSTEM)
        .with_temperature(judge.role_temperature())
}

/// The objectivity request for `claim`.
pub fn objectivity_request(judge: &RoleLlm, claim: &str) -> ChatRequest {
    ChatRequest::new(prompts::objectivity_user(claim))
        .with_system(prompts::OBJECTIVITY_SYSTEM)
        .with_temperature(judge.role_temperature())
}

/// FactScore grade of `unit` against `reference`.
pub async fn factscore(judge: &RoleLlm, unit: &str, reference: &str) -> Result<Graded, String> {
    let raw = judge
        .text(&factscore_request(judge, unit, reference))
        .await?;
    Ok(Graded {
        label: parse::yes_no(&raw),
        raw,
        grader: format!("factscore:{}", judge.label()),
    })
}

/// Objectivity of `claim`.
pub async fn objectivity(judge: &RoleLlm, claim: &str) -> Result<Graded, String> {
    let raw = judge.text(&objectivity_request(judge, claim)).await?;
    Ok(Graded {
        label: parse::objectivity(&raw),
        raw,
        grader: format!("objectivity:{}", judge.label()),
    })
}

/// FactScore grades of several units against one reference, asked concurrently. Every call
/// runs to its end (finished answers are cached) before the first error is returned.
pub async fn factscore_many(
    judge: &RoleLlm,
    units: &[String],
    reference: &str,
) -> Result<Vec<Graded>, String> {
    join_all(units.iter().map(|u| factscore(judge, u, reference)))
        .await
        .into_iter()
        .collect()
}

/// Objectivity of several claims, asked concurrently.
pub async fn objectivity_many(judge: &RoleLlm, claims: &[String]) -> Result<Vec<Graded>, String> {
    join_all(claims.iter().map(|c| objectivity(judge, c)))
        .await
        .into_iter()
        .collect()
}
