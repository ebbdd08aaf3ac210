//! Generating one sample: the prompt as tokens, the decoding loop (sampling, stop strings, the
//! window) and the per-token log-probability records.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use candle_transformers::models::quantized_llama::MAX_SEQ_LEN;

use super::engine::{candle_err, local_err, Engine};
use crate::client::{ChatRequest, Params};
use crate::error::LlmError;
use crate::gguf_tokenizer::GgufTokenizer;
use crate::logprobs::{Alternative, TokenLogprob};
use crate::sampling::top_k;
use crate::sampling::Sampler;

/// One generated sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Each generated token with its text (the tokens tile `text`), log-probability and, when
    /// asked (`top_logprobs`), the most likely alternatives.
    pub logprobs: Vec<TokenLogprob>,
    /// Wall time of the decoding steps (prompt processing excluded).
    pub decode_secs: f64,
}

/// One generation under the engine lock; candle panics become errors.
pub(super) fn generate(
    engine: &Mutex<Engine>,
    path: &Path,
    req: &ChatRequest,
    p: &Params,
    seed: u64,
) -> Result<Generation, LlmError> {
    let mut guard = match engine.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    catch_unwind(AssertUnwindSafe(|| {
        generate_locked(&mut guard, path, req, p, seed)
    }))
    .map_err(|_| {
        local_err(
            path,
            "generation panicked inside candle; please report this input",
        )
    })?
}

/// Samples up to `p.max_tokens` tokens (within the window) after the request's prompt, stopping
/// at a control token or at the first stop string (the text is cut there).
fn generate_locked(
    e: &mut Engine,
    path: &Path,
    req: &ChatRequest,
    p: &Params,
    seed: u64,
) -> Result<Generation, LlmError> {
    let prompt = prompt_tokens(e, path, req)?;
    let budget = (p.max_tokens as usize).min(MAX_SEQ_LEN - prompt.len());
    let mut sampler = Sampler::new(p.temperature, p.top_p, seed);
    let mut logits = e.forward(path, &prompt, 0)?;
    let started = Instant::now();
    let mut out: Vec<u32> = Vec::new();
    let mut lps: Vec<f64> = Vec::new();
    let mut tops: Vec<Vec<(u32, f64)>> = Vec::new();
    let mut text_end: Option<usize> = None;
    for step in 0..budget {
        let v: Vec<f32> = logits
            .squeeze(0)
            .and_then(|t| t.to_dtype(candle_core::DType::F32))
            .and_then(|t| t.to_vec1())
            .map_err(|x| candle_err(path, "cannot read the logits", x))?;
        let (tok, lp) = sampler
            .pick(&v)
            .ok_or_else(|| local_err(path, "the model produced non-finite logits"))?;
        if e.tokenizer.is_control(tok) {
            break;
        }
        out.push(tok);
        lps.push(lp);
        if p.logprobs && p.top_logprobs > 0 {
            tops.push(top_k(&v, p.top_logprobs as usize));
        }
        if !req.stop.is_empty() {
            let text = e.tokenizer.decode(&out).map_err(|m| local_err(path, m))?;
            if let Some(cut) = req.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
                text_end = Some(cut);
                break;
            }
        }
        if step + 1 == budget {
            break;
        }
        logits = e.forward(path, &[tok], prompt.len() + step)?;
    }
    let decode_secs = started.elapsed().as_secs_f64();
    let mut text = e.tokenizer.decode(&out).map_err(|m| local_err(path, m))?;
    if let Some(cut) = text_end {
        text.truncate(cut);
    }
    let logprobs = if p.logprobs {
        token_records(&e.tokenizer, path, &out, &lps, &tops, text.len())?
    } else {
        Vec::new()
    };
    Ok(Generation {
        text,
        prompt_tokens: prompt.len() as u64,
        completion_tokens: out.len() as u64,
        logprobs,
        decode_secs,
    })
}

/// The generated tokens as records whose texts tile the answer's first `text_len` bytes: token i's
/// text is what decoding tokens 0..=i adds to decoding 0..i, without a trailing incomplete
/// character (U+FFFD: a character split over two tokens lands on the second), cut at a stop
/// string. Alternatives are decoded alone.
fn token_records(
    tokenizer: &GgufTokenizer,
    path: &Path,
    ids: &[u32],
    lps: &[f64],
    tops: &[Vec<(u32, f64)>],
    text_len: usize,
) -> Result<Vec<TokenLogprob>, LlmError> {
    let mut out = Vec::with_capacity(ids.len());
    let mut before = String::new();
    for (i, (&lp, _)) in lps.iter().zip(ids).enumerate() {
        let mut upto = tokenizer
            .decode(&ids[..=i])
            .map_err(|m| local_err(path, m))?;
        while upto.ends_with('\u{FFFD}') && i + 1 < ids.len() {
            upto.pop();
        }
        let start = before.len().min(upto.len());
        let end = upto.len().min(text_len);
        if start >= text_len {
            break;
        }
        let piece = upto.get(start..end).unwrap_or_default().to_string();
        let top = match tops.get(i) {
            Some(alts) => alts
                .iter()
                .map(|&(id, logprob)| {
                    let token = tokenizer.decode(&[id]).unwrap_or_default();
                    Alternative { token, logprob }
                })
                .collect(),
            None => Vec::new(),
        };
        out.push(TokenLogprob {
            token: piece,
            offset: None,
            logprob: lp,
            top,
        });
        before = upto;
    }
    Ok(out)
}

/// The request's prompt as tokens: the system and user text as they are (`raw`), else in the
/// model's chat template; it must be non-empty and leave room in the window.
fn prompt_tokens(e: &Engine, path: &Path, req: &ChatRequest) -> Result<Vec<u32>, LlmError> {
    let prompt = if req.raw {
        let mut s = String::new();
        if let Some(sys) = &req.system {
            s.push_str(sys);
            s.push_str("\n\n");
        }
        s.push_str(&req.user);
        e.tokenizer.encode(&s)
    } else {
        e.tokenizer.chat_prompt(req.system.as_deref(), &req.user)
    }
    .map_err(|m| local_err(path, m))?;
    if prompt.is_empty() {
        return Err(local_err(path, "the prompt tokenized to nothing"));
    }
    if prompt.len() >= MAX_SEQ_LEN {
        return Err(local_err(
            path,
            format!(
                "the prompt is {} tokens, more than the {MAX_SEQ_LEN}-token window: shorten it",
                prompt.len()
            ),
        ));
    }
    Ok(prompt)
}
