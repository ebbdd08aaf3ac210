//! The verbalized-confidence scorer (family `verbalized`): for each unit, one judge-LLM call with
//! the paper's appendix prompt (`uq_llm::prompts::verbalized_confidence`, original_question =
//! `options.prompt`), read by `uq_llm::parse::verbalized_confidence` (No chance 0 … Almost
//! certain 1).
//!
//! Unreadable replies follow uqlm's `VerbalizedConfidence.judge_responses`: the judge is asked
//! again, up to [`RETRIES`] more times, and a unit still without a readable phrase scores NaN
//! (JSON `null`), which aggregation skips (as uqlm's `nanmean`). Each retry is its own sample
//! index, so it is its own cache entry (and, with a `seed`, its own seed). Retries are skipped
//! when they cannot change the answer: the local model decoding greedily (temperature 0).
//!
//! The judge runs at the LLM config's `temperature` (default 0). With the local model, replies are
//! capped at [`LOCAL_MAX_TOKENS`] tokens (a confidence phrase is a few tokens; the cap keeps the
//! small model from rambling for its whole budget); HTTP backends keep their `max_tokens`.

use futures_util::future::join_all;
use uq_core::options::{LlmBackendKind, LlmRole};
use uq_core::scorers::Scorer;
use uq_llm::{parse, prompts, ChatRequest};

use super::context::Context;
use crate::role_llms::RoleLlm;

/// Extra attempts for a reply without a confidence phrase (uqlm's `retries=5`).
pub const RETRIES: usize = 5;
/// Token cap of a local judge's reply.
pub const LOCAL_MAX_TOKENS: u32 = 24;

/// The judge request for `unit` of an answer to `question`.
pub fn request(judge: &RoleLlm, question: &str, unit: &str) -> ChatRequest {
    let mut req = ChatRequest::new(prompts::verbalized_confidence(question, unit))
        .with_temperature(judge.role_temperature());
    if judge.kind() == LlmBackendKind::Local {
        req = req.with_max_tokens(judge.max_tokens().min(LOCAL_MAX_TOKENS));
    }
    req
}

/// The confidence of one unit (NaN when no attempt gives a readable phrase).
pub async fn score_unit(judge: &RoleLlm, question: &str, unit: &str) -> Result<f64, String> {
    let req = request(judge, question, unit);
    let attempts = if judge.deterministic(&req) {
        1
    } else {
        1 + RETRIES
    };
    for index in 0..attempts {
        let c = judge.complete_sample(&req, index).await?;
        if let Some(x) = c
            .texts
            .first()
            .and_then(|t| parse::verbalized_confidence(t))
        {
            return Ok(x);
        }
    }
    Ok(f64::NAN)
}

/// The confidence of each unit, all asked concurrently. Every call runs to its end even when
/// another fails (finished answers are in the cache); the first error is returned.
pub async fn score_units(
    judge: &RoleLlm,
    question: &str,
    units: &[String],
) -> Result<Vec<f64>, String> {
    join_all(units.iter().map(|u| score_unit(judge, question, u)))
        .await
        .into_iter()
        .collect()
}

/// The judge's confidence in each unit, for each of `scorers` (family verbalized; they share
/// one set of judge calls, with the question of option `prompt`).
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let Some(&first) = scorers.first() else {
        return Ok(Vec::new());
    };
    let question = cx.opts.scoring.require_prompt(first)?;
    let judge = cx.llm.for_role(cx.opts, LlmRole::Judge)?;
    let values = cx.llm.block_on(score_units(&judge, question, cx.units))?;
    Ok(vec![values; scorers.len()])
}
