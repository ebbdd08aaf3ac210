//! White-box scorers (family `white_box`): scores from the generation LLM's token
//! log-probabilities, options `response_logprobs` (the answer's tokens) and `sample_logprobs`
//! (the samples'). The maths and its sources are in `uq_core::score::white_box`.
//!
//! * Response level (uqlm 0.6.7's `WhiteBoxUQ` names): `ScoreResult.response_scores` only.
//! * Unit level (`claim_*`): the tokens inside each unit's span in the answer
//!   (`uq_core::decompose::spans`), so the tokens must tile the answer (each token's text, end
//!   to end, is the answer); a unit that could not be placed, or holds no token, is NULL.
//!
//! A score that cannot be had is NULL with one note saying why (no log-probabilities, no
//! alternatives, no sample log-probabilities), never an error per row.

use uq_core::decompose::spans::unit_spans;
use uq_core::logprobs::{place, TokenLogprob};
use uq_core::options::LlmRole;
use uq_core::protocol::NliProbs;
use uq_core::score::black_box::{answer_clusters, negentropy_pairs};
use uq_core::score::white_box as wb;
use uq_core::scorers::{Consistency, Scorer, TokenStat};
use uq_llm::{prompts, ChatRequest};

use super::black_box::black_box_scores;
use super::context::Context;
use super::short_form::ScorerScore;

/// Why a score that reads the alternatives is NULL when the tokens carry none.
const NO_TOP_NOTE: &str = "the tokens carry no top_logprobs alternatives (ask the generation \
    LLM for them: \"top_logprobs\":5 in its config)";

/// Why every white-box score of a request is NULL when it has no token log-probabilities.
pub const NO_LOGPROBS_NOTE: &str = "no token log-probabilities for the response; pass them as \
    option response_logprobs (e.g. the logprobs column of uq_generate with \
    \"generation_llm\":{\"logprobs\":true}, or a job with a generation LLM that returns them)";

fn stat(s: Scorer) -> Option<TokenStat> {
    match s.consistency() {
        Consistency::TokenProbability(t) => Some(t),
        _ => None,
    }
}

/// The k the server was asked for: the fewest alternatives a token has (0 without any). A
/// server may add the chosen token to a position's list when it is not among the top k
/// (llama-cpp-python does: k + 1 there); [`uniform_top`] cuts those lists back to k.
fn top_k(tokens: &[TokenLogprob]) -> usize {
    tokens
        .iter()
        .map(|t| t.top.len())
        .filter(|&n| n > 0)
        .min()
        .unwrap_or(0)
}

/// The tokens with every alternatives list cut to its k most likely (see [`top_k`]).
fn uniform_top(tokens: &[TokenLogprob]) -> (Vec<TokenLogprob>, usize) {
    let k = top_k(tokens);
    let mut out = tokens.to_vec();
    for t in &mut out {
        t.top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        t.top.truncate(k);
    }
    (out, k)
}

/// Notes collected once per reason.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn null(&mut self, s: Scorer, why: &str) -> Option<f64> {
        let n = format!("{} is NULL: {why}", s.name());
        if !self.0.contains(&n) {
            self.0.push(n);
        }
        None
    }
}

/// Response-level white-box scores of `scorers` (in order), with notes on the NULL ones.
pub fn response(
    cx: &Context,
    scorers: &[Scorer],
) -> Result<(Vec<ScorerScore>, Vec<String>), String> {
    let o = &cx.opts.scoring;
    let mut notes = Notes::default();
    let given = o.response_logprobs.as_deref();
    let ln = o.length_normalize;
    let (tokens, k) = uniform_top(given.unwrap_or_default());
    let tokens = tokens.as_slice();
    // Only the scorers that read the samples' tokens check them, and only beside the answer's.
    let sampled = if given.is_some()
        && scorers
            .iter()
            .any(|s| s.info().options.contains(&"sample_logprobs"))
    {
        sample_tokens(cx)?
    } else {
        Err(String::new())
    };
    let mut out = Vec::with_capacity(scorers.len());
    for &s in scorers {
        let value = match stat(s) {
            // P(true) reads the judge's tokens, not the answer's.
            Some(TokenStat::PTrue) if given.is_none() => Some(p_true(cx)?),
            _ if given.is_none() => notes.null(s, NO_LOGPROBS_NOTE),
            _ if tokens.is_empty() => notes.null(s, "option response_logprobs is empty"),
            None => Some(wb::sequence_probability(tokens, true)),
            Some(TokenStat::MinProbability) => Some(wb::min_probability(tokens)),
            Some(TokenStat::SequenceProbability) => Some(wb::sequence_probability(tokens, ln)),
            Some(TokenStat::MeanNegentropy) if k >= 2 => Some(wb::mean_token_negentropy(tokens, k)),
            Some(TokenStat::MinNegentropy) if k >= 2 => Some(wb::min_token_negentropy(tokens, k)),
            Some(TokenStat::Margin) if k >= 2 => Some(wb::probability_margin(tokens)),
            Some(TokenStat::MeanNegentropy | TokenStat::MinNegentropy | TokenStat::Margin) => {
                notes.null(s, NO_TOP_NOTE)
            }
            Some(TokenStat::CoCoA) => cocoa(cx, tokens)?,
            Some(TokenStat::PTrue) => Some(p_true(cx)?),
            Some(
                t @ (TokenStat::MonteCarlo
                | TokenStat::WeightedNegentropy
                | TokenStat::SemanticDensity),
            ) => match &sampled {
                Err(why) => notes.null(s, why),
                Ok(samples) => Some(sampled_score(cx, t, tokens, samples)?),
            },
            Some(_) => return Err(format!("internal error: {} is a unit scorer", s.name())),
        };
        let value = match value {
            Some(v) if v.is_nan() && s == Scorer::PTrue => notes.null(s, P_TRUE_UNREAD),
            Some(v) if v.is_nan() => notes.null(s, "no token of the response could be scored"),
            v => v,
        };
        out.push((s, value));
    }
    Ok((out, notes.0))
}

/// Why `p_true` is NULL when the judge's first token is neither "True" nor "False".
const P_TRUE_UNREAD: &str = "the judge's reply does not start with True or False";

/// uqlm's P(true): the judge LLM (role `judge_llm`, asked for log-probabilities) answers
/// whether the answer to option `prompt` is true; the probability of its first token "True"
/// (1 − that of "False"), NaN for another first token.
fn p_true(cx: &Context) -> Result<f64, String> {
    let question = cx.opts.scoring.require_prompt(Scorer::PTrue)?;
    let mut cfg = cx.opts.llm.for_role(LlmRole::Judge);
    cfg.logprobs = Some(true);
    let judge = cx.llm.role_llm(&cfg, LlmRole::Judge)?;
    let req = ChatRequest::new(prompts::p_true(question, cx.response, cx.samples))
        .with_system(prompts::P_TRUE_SYSTEM)
        .with_temperature(judge.role_temperature());
    let c = cx.llm.block_on(judge.complete(&req, 1))?;
    let first = c
        .logprobs
        .as_ref()
        .and_then(|l| l.first())
        .and_then(|t| t.first());
    Ok(wb::p_true(first))
}

/// The samples' token lists, one per sample in use (the first m of `sample_logprobs`, as
/// `num_samples` takes the first m samples): `Err(why)` when there are none (the scores are
/// NULL), an error when there are fewer lists than samples in use or one is empty.
#[allow(clippy::type_complexity)]
fn sample_tokens<'a>(cx: &'a Context) -> Result<Result<&'a [Vec<TokenLogprob>], String>, String> {
    let m = cx.samples.len();
    match cx.opts.scoring.sample_logprobs.as_deref() {
        None => Ok(Err(
            "no token log-probabilities for the samples; pass option \
            sample_logprobs (one list per sample: the logprobs of uq_generate's rows 1..n)"
                .into(),
        )),
        Some(l) if l.len() < m => Err(format!(
            "option sample_logprobs has {} token lists for {m} samples: give one per sample, in \
             order (the logprobs of uq_generate's rows 1..n)",
            l.len()
        )),
        Some(l) if l[..m].iter().any(Vec::is_empty) => Err(
            "a sample's token list in option sample_logprobs is empty: give each sample's tokens"
                .into(),
        ),
        Some(l) => Ok(Ok(&l[..m])),
    }
}

/// CoCoA: the mean normalised cosine of the answer to its samples (`shortform_cosine_sim`) ×
/// its sequence probability.
fn cocoa(cx: &Context, tokens: &[TokenLogprob]) -> Result<Option<f64>, String> {
    if cx.samples.is_empty() {
        return Ok(None);
    }
    let group: Vec<String> = std::iter::once(cx.response.to_string())
        .chain(cx.samples.iter().cloned())
        .collect();
    let cos = black_box_scores(
        &cx.nli()?,
        &[group],
        &[Scorer::ShortformCosineSim],
        cx.opts.scoring.semantic_clustering,
    )?[0][0];
    Ok(Some(wb::consistency_and_confidence(
        cos,
        wb::sequence_probability(tokens, cx.opts.scoring.length_normalize),
    )))
}

/// The scores that need the samples' tokens.
fn sampled_score(
    cx: &Context,
    t: TokenStat,
    tokens: &[TokenLogprob],
    samples: &[Vec<TokenLogprob>],
) -> Result<f64, String> {
    let ln = cx.opts.scoring.length_normalize;
    let all: Vec<&[TokenLogprob]> = std::iter::once(tokens)
        .chain(samples.iter().map(Vec::as_slice))
        .collect();
    let probs: Vec<f64> = all
        .iter()
        .map(|a| wb::sequence_probability(a, ln))
        .collect();
    Ok(match t {
        TokenStat::MonteCarlo => wb::monte_carlo_probability(&all, ln),
        TokenStat::WeightedNegentropy => {
            let answers: Vec<String> = std::iter::once(cx.response.to_string())
                .chain(cx.samples.iter().cloned())
                .collect();
            let clusters = clusters(cx, &answers)?;
            wb::weighted_semantic_negentropy(&clusters, &probs)
        }
        TokenStat::SemanticDensity => {
            // uqlm: NLI(prompt + "\n" + answer, prompt + "\n" + sample j).
            let with = |s: &str| match &cx.opts.scoring.prompt {
                Some(p) => format!("{p}\n{s}"),
                None => s.to_string(),
            };
            let pairs: Vec<(String, String)> = cx
                .samples
                .iter()
                .map(|y| (with(cx.response), with(y)))
                .collect();
            let nli: Vec<NliProbs> = cx.nli()?.probs(&pairs)?;
            wb::semantic_density(&nli, &probs[1..])
        }
        _ => f64::NAN,
    })
}

/// The member lists of the answers' semantic clusters (option `semantic_clustering`), from
/// the NLI of each pair of different texts (`negentropy_pairs`).
fn clusters(cx: &Context, answers: &[String]) -> Result<Vec<Vec<usize>>, String> {
    let idx = negentropy_pairs(answers);
    let pairs: Vec<(String, String)> = idx
        .iter()
        .map(|&(a, b)| (answers[a].clone(), answers[b].clone()))
        .collect();
    let probs = if pairs.is_empty() {
        Vec::new()
    } else {
        cx.nli()?.probs(&pairs)?
    };
    let neutral = NliProbs {
        entailment: 0.0,
        neutral: 1.0,
        contradiction: 0.0,
    };
    let p = |a: usize, b: usize| {
        idx.iter()
            .position(|&x| x == (a, b))
            .map_or(neutral, |i| probs[i])
    };
    Ok(answer_clusters(
        answers,
        cx.opts.scoring.semantic_clustering,
        p,
    ))
}

/// Unit-level white-box scores of `scorers`, one per unit of `cx.units` (NaN: NULL), with notes.
pub fn units(cx: &Context, scorers: &[Scorer]) -> Result<(Vec<Vec<f64>>, Vec<String>), String> {
    let mut notes = Notes::default();
    let n = cx.units.len();
    let nan = |notes: &mut Notes, why: &str| -> Vec<Vec<f64>> {
        for &s in scorers {
            notes.null(s, why);
        }
        vec![vec![f64::NAN; n]; scorers.len()]
    };
    let Some(given) = cx.opts.scoring.response_logprobs.as_deref() else {
        return Ok((nan(&mut notes, NO_LOGPROBS_NOTE), notes.0));
    };
    let mut tokens = given.to_vec();
    if let Err(why) = place(cx.response, &mut tokens) {
        let why = format!("{why}, so the tokens of a unit cannot be found (the response must be the text the LLM generated)");
        return Ok((nan(&mut notes, &why), notes.0));
    }
    let (tokens, k) = uniform_top(&tokens);
    let spans = unit_spans(cx.response, cx.units);
    let per_unit: Vec<Option<wb::ClaimScores>> = spans
        .iter()
        .map(|sp| {
            sp.map(|sp| wb::tokens_in_span(&tokens, sp.start, sp.end))
                .filter(|t| !t.is_empty())
                .map(|t| wb::claim_scores(&t, k))
        })
        .collect();
    if per_unit.iter().any(Option::is_none) {
        for &s in scorers {
            notes.null(
                s,
                "for a unit that could not be placed in the response (uq_units' start is NULL)",
            );
        }
    }
    let mut out = Vec::with_capacity(scorers.len());
    for &s in scorers {
        let pick = |c: &wb::ClaimScores| match stat(s) {
            Some(TokenStat::ClaimProbability) => c.probability,
            Some(TokenStat::ClaimNormalizedProbability) => c.normalized_probability,
            Some(TokenStat::ClaimMinNegentropy) => c.min_token_negentropy,
            _ => f64::NAN,
        };
        if stat(s) == Some(TokenStat::ClaimMinNegentropy) && k < 2 {
            notes.null(s, NO_TOP_NOTE);
        }
        out.push(
            per_unit
                .iter()
                .map(|c| c.as_ref().map_or(f64::NAN, pick))
                .collect(),
        );
    }
    Ok((out, notes.0))
}
