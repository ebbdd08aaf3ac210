//! Unit-QA scorers (paper §3.3.3; uqlm 0.6.7 `uqlm/scorers/longform/qa.py` `LongTextQA`, with
//! `uqlm/longform/qa/question_generator.py` and `uqlm/utils/prompts/claim_qa.py`).
//!
//! For each unit s (sentence or claim) of the response:
//!
//! 1. **Questions** (question LLM, `question_llm`, else `llm`; at its config's temperature,
//!    default 0): with `num_questions` Q = 1, uqlm's one-question prompt
//!    (`prompts::unit_qa_single_question`) and the whole reply, trimmed, is the question (as
//!    uqlm, which takes the reply as is); with Q > 1 the paper's question-creation prompt
//!    (`prompts::unit_qa_questions`, with the response as the preceding text) and the `###`
//!    items of the reply (`parse::questions`), the first Q of them. (uqlm 0.6.7 sends its own
//!    response-less multi-question template there; the paper prints this one.) A unit whose
//!    reply holds no question scores NaN (`null`, skipped by aggregation).
//! 2. **Answers** (generation LLM): uqlm's answer prompt (`prompts::unit_qa_answer`, prefixed by
//!    the original question `options.prompt` when given, no response so far, as `LongTextQA`):
//!    y_0 at `options.temperature`, y_1..y_m (m = `qa_samples`, default 5) at
//!    `options.sampling_temperature`, as `uq_generate` does (samples 0..m−1 of one request; when
//!    the two temperatures are equal, y_0 is sample 0 and y_1..y_m samples 1..m).
//! 3. **Consistency** per question (`uq_core::score::black_box`): η(y_0, y_j) averaged over j,
//!    or the semantic negentropy of the m + 1 answers; then the mean over the unit's questions
//!    (`black_box::unit_qa_score`, uqlm's `np.mean` over `num_questions`).
//!
//! Every LLM call goes through the completion cache (a rerun makes none); the calls of all units
//! run concurrently on the LLM runtime. The NLI pairs and embeddings of all units are sent to the
//! engine in one batch each.
//!
//! With the embedded local model, questions are capped at [`LOCAL_QUESTION_TOKENS`] tokens and
//! answers at [`LOCAL_ANSWER_TOKENS`] (answers are asked to be "as few words as possible");
//! HTTP backends keep their `max_tokens`.

use futures_util::future::join_all;
use uq_core::options::{LlmBackendKind, LlmRole, ScoreOptions};
use uq_core::score::black_box::unit_qa_score;
use uq_core::scorers::Scorer;
use uq_llm::{parse, prompts, ChatRequest};

use super::black_box::black_box_scores;
use super::context::Context;
use crate::role_llms::{LlmService, RoleLlm};

/// Token cap of a local question LLM's reply.
pub const LOCAL_QUESTION_TOKENS: u32 = 48;
/// Token cap of a local generation LLM's answer to a unit question.
pub const LOCAL_ANSWER_TOKENS: u32 = 32;

/// One unit's questions and, per question, its answers `[y_0, y_1, …, y_m]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitQa {
    pub questions: Vec<String>,
    pub answers: Vec<Vec<String>>,
}

fn capped(req: ChatRequest, llm: &RoleLlm, cap: u32) -> ChatRequest {
    if llm.kind() == LlmBackendKind::Local {
        let m = llm.max_tokens().min(cap);
        req.with_max_tokens(m)
    } else {
        req
    }
}

/// The question request for `unit` (Q = `num_questions`; see the module docs).
pub fn question_request(q_llm: &RoleLlm, response: &str, unit: &str, q: usize) -> ChatRequest {
    let prompt = if q == 1 {
        prompts::unit_qa_single_question(unit)
    } else {
        prompts::unit_qa_questions(response, unit, q)
    };
    capped(
        ChatRequest::new(prompt).with_temperature(q_llm.role_temperature()),
        q_llm,
        LOCAL_QUESTION_TOKENS,
    )
}

/// The questions in a question LLM's `reply` for Q = `q`.
pub fn read_questions(reply: &str, q: usize) -> Vec<String> {
    if q == 1 {
        let t = reply.trim();
        if t.is_empty() {
            Vec::new()
        } else {
            vec![t.to_string()]
        }
    } else {
        parse::questions(reply).into_iter().take(q).collect()
    }
}

/// The answer request for `question` at `temperature`.
pub fn answer_request(
    gen: &RoleLlm,
    question: &str,
    original_question: Option<&str>,
    temperature: f64,
) -> ChatRequest {
    capped(
        ChatRequest::new(prompts::unit_qa_answer(question, original_question, None))
            .with_temperature(temperature),
        gen,
        LOCAL_ANSWER_TOKENS,
    )
}

/// `[y_0, y_1..y_m]` for `question`.
async fn answers(
    gen: &RoleLlm,
    question: &str,
    opts: &ScoreOptions,
) -> Result<Vec<String>, String> {
    let q = opts.scoring.prompt.as_deref();
    let m = opts.scoring.qa_samples;
    let sampled = answer_request(gen, question, q, opts.generation.sampling_temperature);
    let texts = if opts.generation.temperature == opts.generation.sampling_temperature {
        gen.complete(&sampled, m + 1).await?.texts
    } else {
        let original = answer_request(gen, question, q, opts.generation.temperature);
        let (o, s) =
            futures_util::future::join(gen.complete(&original, 1), gen.complete(&sampled, m)).await;
        let mut t = o?.texts;
        t.truncate(1);
        t.extend(s?.texts);
        t
    };
    if texts.len() != m + 1 {
        return Err(gen.error(format!(
            "asked for {} answers to a unit question, got {}",
            m + 1,
            texts.len()
        )));
    }
    Ok(texts.into_iter().map(|t| t.trim().to_string()).collect())
}

/// Questions and answers of every unit (all LLM calls concurrent, through the cache).
pub fn gather(
    llm: &LlmService,
    opts: &ScoreOptions,
    response: &str,
    units: &[String],
) -> Result<Vec<UnitQa>, String> {
    let q_llm = llm.for_role(opts, LlmRole::Question)?;
    let gen = llm.for_role(opts, LlmRole::Generation)?;
    let q = opts.scoring.num_questions;
    llm.block_on(async {
        let q_llm = &q_llm;
        let replies = join_all(units.iter().map(|u| {
            let req = question_request(q_llm, response, u, q);
            async move { q_llm.text(&req).await }
        }))
        .await;
        let questions: Vec<Vec<String>> = replies
            .into_iter()
            .map(|r| r.map(|t| read_questions(&t, q)))
            .collect::<Result<_, _>>()?;
        let flat: Vec<&String> = questions.iter().flatten().collect();
        let all = join_all(flat.iter().map(|qq| answers(&gen, qq, opts))).await;
        let mut all = all.into_iter();
        let mut out = Vec::with_capacity(units.len());
        for qs in questions {
            let mut a = Vec::with_capacity(qs.len());
            for _ in &qs {
                a.push(
                    all.next()
                        .unwrap_or_else(|| Err("internal error: answers lost".into()))?,
                );
            }
            out.push(UnitQa {
                questions: qs,
                answers: a,
            });
        }
        Ok(out)
    })
}

/// One score per unit for each of `scorers` (all of family unit-QA), in order.
pub fn score(cx: &Context, scorers: &[Scorer]) -> Result<Vec<Vec<f64>>, String> {
    let qa = gather(cx.llm, cx.opts, cx.response, cx.units)?;
    let groups: Vec<Vec<String>> = qa.iter().flat_map(|u| u.answers.iter().cloned()).collect();
    let per_group = black_box_scores(
        &cx.nli()?,
        &groups,
        scorers,
        cx.opts.scoring.semantic_clustering,
    )?;
    Ok(per_group
        .into_iter()
        .map(|values| {
            let mut it = values.into_iter();
            qa.iter()
                .map(|u| {
                    let per_q: Vec<f64> = it.by_ref().take(u.answers.len()).collect();
                    unit_qa_score(&per_q)
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::read_questions;

    #[test]
    fn questions_from_recorded_replies() {
        // Q = 1: the whole reply (uqlm's get_question_template asks for the question alone).
        assert_eq!(
            read_questions("  In which city was Marie Curie born?\n", 1),
            vec!["In which city was Marie Curie born?"]
        );
        assert!(read_questions(" \n ", 1).is_empty());
        // Q > 1: `###` items (gpt-4o-mini style, one line or several), the first Q kept.
        let reply = "Here are the questions:\n### In which city was Marie Curie born?\n\
                     ### What did Marie Curie win twice?\n### Who was her husband?";
        assert_eq!(
            read_questions(reply, 2),
            vec![
                "In which city was Marie Curie born?",
                "What did Marie Curie win twice?"
            ]
        );
        assert_eq!(
            read_questions("### Where was she born? ### What did she win?", 2),
            vec!["Where was she born?", "What did she win?"]
        );
        assert!(read_questions("I cannot help with that.", 2).is_empty());
    }
}
