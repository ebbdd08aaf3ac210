//! The `generate` op: the original answer to a prompt and `n` sampled answers, by the
//! generation LLM (uqlm's `generate_original_responses` + `generate_candidate_responses`).
//!
//! * Row 0 is generated at `options.temperature` (default 0), rows 1..n at
//!   `options.sampling_temperature` (default 1.0) as samples 0..n−1 of one request, so they are
//!   distinct (each sample has its own index and, with a seed, its own seed `seed + index`; an
//!   OpenAI server that honours `n` answers them in one call). When both temperatures are equal
//!   the original is sample 0 of that same request and the rows are samples 1..n, so no row
//!   repeats another.
//! * Everything goes through the completion cache: the same request again returns the same rows
//!   with `cached: true` and costs no call. Token counts are those of the call that produced a
//!   row (a call that produced several samples reports its whole usage on the first).
//! * With a generation LLM whose config sets `"logprobs": true`, each row carries its tokens
//!   (text, character offset into the row's text when the tokens tile it, log-probability and
//!   the `top_logprobs` most likely alternatives, default 5) and `normalized_probability` =
//!   exp(mean log-probability); pass row 0's as option `response_logprobs` and the samples' as
//!   `sample_logprobs` to the white-box scorers (`uq_core::score::white_box`).
//! * The prompt is sent as the user message with no system message (the local model uses its
//!   chat template's default system prompt).

use serde_json::Value;
use uq_core::options::{parse_options, LlmRole};
use uq_core::protocol::{GenerateResult, GeneratedResponse};
use uq_core::score::white_box::sequence_probability;
use uq_llm::ChatRequest;

use crate::role_llms::{LlmService, RoleLlm};
use uq_core::limits::check_text;

/// Most sampled answers one `generate` request may ask for.
pub const MAX_SAMPLES: usize = 1024;

/// One block of rows: `count` samples of `req`, starting at sample index `first`.
struct Block {
    req: ChatRequest,
    temperature: f64,
    first: usize,
    count: usize,
}

/// Answers a `generate` request.
pub fn generate(
    llm: &LlmService,
    prompt: &str,
    n: usize,
    options: &Value,
) -> Result<GenerateResult, String> {
    if prompt.trim().is_empty() {
        return Err("prompt is empty: pass the question or instruction to answer".into());
    }
    check_text(prompt, "prompt")?;
    if n > MAX_SAMPLES {
        return Err(format!(
            "n = {n} sampled answers is more than the {MAX_SAMPLES} allowed in one call: ask in smaller batches"
        ));
    }
    let opts = parse_options(options)?;
    let generator = llm.for_role(&opts, LlmRole::Generation)?;
    let blocks = blocks(
        prompt,
        n,
        opts.generation.temperature,
        opts.generation.sampling_temperature,
    );
    // Which rows the cache already holds (before any call).
    let mut was_cached = Vec::new();
    for b in &blocks {
        for i in b.first..b.first + b.count {
            was_cached.push(generator.cached(&b.req, i)?.is_some());
        }
    }
    let results = llm.block_on(futures_util::future::join_all(
        blocks
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| generator.complete(&b.req, b.count)),
    ));
    let mut completions = Vec::new();
    for r in results {
        completions.push(r?);
    }
    let mut rows = Vec::with_capacity(n + 1);
    let mut completions = completions.into_iter();
    let mut cached = was_cached.into_iter();
    for b in blocks.iter().filter(|b| b.count > 0) {
        let c = completions
            .next()
            .ok_or_else(|| generator.error("no completion"))?;
        let mut lps = c.logprobs.map(|v| v.into_iter());
        for (k, text) in c.texts.into_iter().enumerate() {
            let mut logprobs = lps.as_mut().and_then(|it| it.next());
            if let Some(t) = logprobs.as_mut() {
                // Offsets only when the tokens are the text; else they stay unset.
                let _ = uq_core::logprobs::place(&text, t);
            }
            let (model, prompt_tokens, completion_tokens) =
                stored(&generator, &b.req, b.first + k).unwrap_or_else(|| (c.model.clone(), 0, 0));
            rows.push(GeneratedResponse {
                index: rows.len(),
                text,
                temperature: b.temperature,
                model,
                prompt_tokens,
                completion_tokens,
                cached: cached.next().unwrap_or(false),
                normalized_probability: logprobs
                    .as_deref()
                    .map(|t| sequence_probability(t, true))
                    .filter(|x| x.is_finite()),
                logprobs,
            });
        }
    }
    if rows.len() != n + 1 {
        return Err(generator.error(format!("asked for {} answers, got {}", n + 1, rows.len())));
    }
    Ok(GenerateResult { responses: rows })
}

/// The blocks of a request for the original answer and `n` samples: one block of n + 1 when
/// both are drawn at the same temperature, else the original and the samples apart.
fn blocks(prompt: &str, n: usize, temperature: f64, sampling_temperature: f64) -> Vec<Block> {
    let original = ChatRequest::new(prompt).with_temperature(temperature);
    let sampled = ChatRequest::new(prompt).with_temperature(sampling_temperature);
    if temperature == sampling_temperature {
        vec![Block {
            req: sampled,
            temperature: sampling_temperature,
            first: 0,
            count: n + 1,
        }]
    } else {
        vec![
            Block {
                req: original,
                temperature,
                first: 0,
                count: 1,
            },
            Block {
                req: sampled,
                temperature: sampling_temperature,
                first: 0,
                count: n,
            },
        ]
    }
}

/// Model and token counts of a sample as the cache stored them.
fn stored(generator: &RoleLlm, req: &ChatRequest, index: usize) -> Option<(String, u64, u64)> {
    generator
        .cached(req, index)
        .ok()
        .flatten()
        .map(|s| (s.model, s.prompt_tokens, s.completion_tokens))
}
