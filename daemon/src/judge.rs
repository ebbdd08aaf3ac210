//! The NLI judge: every (premise, hypothesis) pair of the NLI-based scorers, coverage and
//! verified reconstruction goes through [`Nli::probs`], to the NLI model, or, with option
//! `nli_llm` (docs/reference.md "NLI judge"; beyond the paper, as uqlm's `EntailmentClassifier`
//! and SelfCheckGPT's prompt variant, Manakul et al. 2023 §5.4), to an LLM.
//!
//! * One judge call per distinct pair ([`prompts::nli_judge`], style `nli_prompt`), all pairs of
//!   a call concurrently, through the LLM layer (completion cache, rate limits, replicas,
//!   retries, `concurrency`). The completion cache keys a call by the judge, the prompt (its
//!   style, premise and hypothesis): a rerun makes no call.
//! * Probabilities: when the reply starts with the answer word and the server returned token
//!   log-probabilities, p = exp(log-probability of the reply's first token) is the judge's
//!   probability of its label; binary: yes → p_e = p, p_c = 1 − p; no → p_c = p, p_e = 1 − p;
//!   ternary: the label gets p, the two others (1 − p)/2 each. Otherwise the parsed label gives
//!   1/0. The judge's config asks for logprobs unless it sets `"logprobs":false`.
//! * A reply without a label is asked again (sample indices 1..=[`RETRIES`], each its own cache
//!   entry; not when the local model decodes greedily, which would repeat itself); a pair still
//!   without a label is NaN (SQL NULL): the scorers use the pairs that parsed, and the count
//!   goes to the reply's notes (`uq_debug()`) and the job's message through [`tallied`].
//!
//! The judge is no stage's own: decomposition asks it for coverage (§3.1), the scorers for
//! their entailment probabilities (§3.3) and UAD for verification (§3.4). It is a service
//! beside the two it routes to, [`Engine`]'s NLI model and the role LLMs, so that no stage
//! reaches into another for it.

use std::cell::Cell;
use std::collections::HashMap;

use futures_util::future::join_all;
use uq_core::options::{LlmBackendKind, LlmRole, NliPrompt, ScoreOptions};
use uq_core::protocol::NliProbs;
use uq_llm::parse::{nli_label, NliLabel};
use uq_llm::{prompts, ChatRequest};

use crate::engine::Engine;
use crate::role_llms::{LlmService, RoleLlm};

/// Extra attempts for a reply without a label (uqlm's judge retries up to 5 times; 2 keeps the
/// cost of a paid endpoint bounded).
pub const RETRIES: usize = 2;
/// Token cap of a judge reply: the answer word comes first.
pub const MAX_TOKENS: u32 = 8;

/// How the pairs judged on this thread were read (see [`tallied`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Pairs the LLM judged (distinct within each call).
    pub pairs: usize,
    /// Pairs whose probabilities come from the answer word's log-probability.
    pub from_logprobs: usize,
    /// Pairs read as 1/0 from the parsed label.
    pub from_labels: usize,
    /// Pairs without a label after the retries: NaN.
    pub unparsed: usize,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.pairs += o.pairs;
        self.from_logprobs += o.from_logprobs;
        self.from_labels += o.from_labels;
        self.unparsed += o.unparsed;
    }

    /// The reply note (`uq_debug()`), `None` when no LLM judged.
    pub fn note(&self, judge: &str) -> Option<String> {
        (self.pairs > 0).then(|| {
            let mut n = format!(
                "nli_llm ({judge}) judged {} NLI pairs: {} with probabilities from the answer word's \
                 log-probability, {} as 1/0 from the parsed label",
                self.pairs, self.from_logprobs, self.from_labels
            );
            if self.unparsed > 0 {
                n.push_str(&format!(
                    ", {} unparsed after up to {RETRIES} retries (none for the local model \
                     decoding greedily; NULL, left out of their units' scores)",
                    self.unparsed
                ));
            }
            n
        })
    }
}

thread_local! {
    static TALLY: Cell<Option<Tally>> = const { Cell::new(None) };
}

/// Runs `f` on this thread and returns what the NLI judge did in it.
pub fn tallied<T>(f: impl FnOnce() -> T) -> (T, Tally) {
    let previous = TALLY.with(|t| t.replace(Some(Tally::default())));
    struct Restore(Option<Tally>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let inner = TALLY.with(|t| t.replace(self.0.take()));
            // Nested: the outer tally also counts the inner work.
            if let (Some(mut outer), Some(inner)) = (TALLY.with(|t| t.get()), inner) {
                outer.add(&inner);
                TALLY.with(|t| t.set(Some(outer)));
            }
        }
    }
    let guard = Restore(previous);
    let out = f();
    let tally = TALLY.with(|t| t.get()).unwrap_or_default();
    drop(guard);
    (out, tally)
}

fn record(t: &Tally) {
    TALLY.with(|c| {
        if let Some(mut cur) = c.get() {
            cur.add(t);
            c.set(Some(cur));
        }
    });
}

/// Where the NLI pairs of one request go: the NLI model, or the LLM of option `nli_llm`.
pub struct Nli<'a> {
    pub engine: &'a Engine,
    judge: Option<Judge<'a>>,
}

struct Judge<'a> {
    llm: &'a LlmService,
    role: RoleLlm,
    style: NliPrompt,
}

impl<'a> Nli<'a> {
    /// The judge `opts` asks for: `nli_llm` when given, else the engine's NLI model.
    pub fn new(
        engine: &'a Engine,
        llm: &'a LlmService,
        opts: &ScoreOptions,
    ) -> Result<Self, String> {
        let judge = match opts.llm.nli_judge() {
            None => None,
            Some((cfg, style)) => {
                let mut cfg = cfg.clone();
                // Probabilities from log-probabilities unless the server cannot send them.
                cfg.logprobs.get_or_insert(true);
                Some(Judge {
                    llm,
                    role: llm.role_llm(&cfg, LlmRole::Nli)?,
                    style,
                })
            }
        };
        Ok(Nli { engine, judge })
    }

    /// The NLI model alone.
    pub fn model(engine: &'a Engine) -> Self {
        Nli {
            engine,
            judge: None,
        }
    }

    /// The label of the LLM judge, `None` for the NLI model.
    pub fn judge_label(&self) -> Option<&str> {
        self.judge.as_ref().map(|j| j.role.label())
    }

    /// NLI(premise, hypothesis) of each pair, in order. With the LLM judge, a pair whose reply
    /// never parsed is NaN in all three probabilities.
    pub fn probs(&self, pairs: &[(String, String)]) -> Result<Vec<NliProbs>, String> {
        let Some(judge) = &self.judge else {
            return self.engine.nli(pairs);
        };
        let mut index: HashMap<&(String, String), usize> = HashMap::new();
        let mut distinct: Vec<&(String, String)> = Vec::new();
        let slots: Vec<usize> = pairs
            .iter()
            .map(|p| {
                *index.entry(p).or_insert_with(|| {
                    distinct.push(p);
                    distinct.len() - 1
                })
            })
            .collect();
        let judged: Vec<Result<(NliProbs, Source), String>> = judge
            .llm
            .block_on(join_all(distinct.iter().map(|(p, h)| judge.pair(p, h))));
        let mut tally = Tally {
            pairs: judged.len(),
            ..Tally::default()
        };
        let mut probs = Vec::with_capacity(judged.len());
        let mut first_err = None;
        for r in judged {
            match r {
                Ok((p, source)) => {
                    match source {
                        Source::Logprobs => tally.from_logprobs += 1,
                        Source::Label => tally.from_labels += 1,
                        Source::Unparsed => tally.unparsed += 1,
                    }
                    probs.push(p);
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        record(&tally);
        Ok(slots.into_iter().map(|i| probs[i]).collect())
    }
}

/// How a pair's probabilities were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Logprobs,
    Label,
    Unparsed,
}

impl Judge<'_> {
    /// The chat prompt; for the local model a raw few-shot completion prompt ending in
    /// "Answer:" ([`prompts::nli_judge_local`]), which a small chat model answers with the label
    /// first, cut at the line's end.
    fn request(&self, premise: &str, hypothesis: &str) -> ChatRequest {
        let ternary = self.style == NliPrompt::Ternary;
        let req = if self.role.kind() == LlmBackendKind::Local {
            ChatRequest::raw(prompts::nli_judge_local(premise, hypothesis, ternary)).with_stop("\n")
        } else {
            ChatRequest::new(prompts::nli_judge(premise, hypothesis, ternary))
                .with_system(prompts::NLI_SYSTEM)
        };
        req.with_temperature(self.role.role_temperature())
            .with_max_tokens(self.role.max_tokens().min(MAX_TOKENS))
    }

    async fn pair(&self, premise: &str, hypothesis: &str) -> Result<(NliProbs, Source), String> {
        let req = self.request(premise, hypothesis);
        let attempts = if self.role.deterministic(&req) {
            1
        } else {
            1 + RETRIES
        };
        let ternary = self.style == NliPrompt::Ternary;
        for index in 0..attempts {
            let c = self.role.complete_sample(&req, index).await?;
            let Some((label, first)) = c.texts.first().and_then(|t| nli_label(t, ternary)) else {
                continue;
            };
            let p = if first {
                c.logprobs
                    .as_ref()
                    .and_then(|l| l.first())
                    .and_then(|l| l.first())
                    .map(|lp| lp.logprob.exp())
                    .filter(|p| p.is_finite())
            } else {
                None
            };
            return Ok(match p {
                Some(p) => (
                    probabilities(self.style, label, p.clamp(0.0, 1.0)),
                    Source::Logprobs,
                ),
                None => (probabilities(self.style, label, 1.0), Source::Label),
            });
        }
        let nan = f64::NAN;
        Ok((
            NliProbs {
                entailment: nan,
                neutral: nan,
                contradiction: nan,
            },
            Source::Unparsed,
        ))
    }
}

/// The three probabilities when the judge gives `label` with probability `p` (see the module
/// doc).
pub fn probabilities(style: NliPrompt, label: NliLabel, p: f64) -> NliProbs {
    let q = 1.0 - p;
    let (entailment, neutral, contradiction) = match (style, label) {
        (NliPrompt::Binary, NliLabel::Entailment) => (p, 0.0, q),
        (NliPrompt::Binary, _) => (q, 0.0, p),
        (NliPrompt::Ternary, NliLabel::Entailment) => (p, q / 2.0, q / 2.0),
        (NliPrompt::Ternary, NliLabel::Neutral) => (q / 2.0, p, q / 2.0),
        (NliPrompt::Ternary, NliLabel::Contradiction) => (q / 2.0, q / 2.0, p),
    };
    NliProbs {
        entailment,
        neutral,
        contradiction,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_sum_to_one_and_follow_the_label() {
        for style in [NliPrompt::Binary, NliPrompt::Ternary] {
            for label in [
                NliLabel::Entailment,
                NliLabel::Neutral,
                NliLabel::Contradiction,
            ] {
                let p = probabilities(style, label, 0.8);
                let sum = p.entailment + p.neutral + p.contradiction;
                assert!((sum - 1.0).abs() < 1e-12, "{style:?} {label:?}: {p:?}");
            }
        }
        let b = probabilities(NliPrompt::Binary, NliLabel::Contradiction, 0.9);
        assert!((b.entailment - 0.1).abs() < 1e-12 && (b.contradiction - 0.9).abs() < 1e-12);
        let t = probabilities(NliPrompt::Ternary, NliLabel::Neutral, 0.6);
        assert!((t.neutral - 0.6).abs() < 1e-12 && (t.entailment - 0.2).abs() < 1e-12);
        let one = probabilities(NliPrompt::Ternary, NliLabel::Entailment, 1.0);
        assert_eq!(
            (one.entailment, one.neutral, one.contradiction),
            (1.0, 0.0, 0.0)
        );
    }

    #[test]
    fn tallies_nest_and_notes_name_unparsed_pairs() {
        let ((), outer) = tallied(|| {
            record(&Tally {
                pairs: 2,
                from_labels: 1,
                unparsed: 1,
                ..Tally::default()
            });
            let ((), inner) = tallied(|| {
                record(&Tally {
                    pairs: 1,
                    from_logprobs: 1,
                    ..Tally::default()
                })
            });
            assert_eq!(inner.pairs, 1);
        });
        assert_eq!(
            outer,
            Tally {
                pairs: 3,
                from_logprobs: 1,
                from_labels: 1,
                unparsed: 1
            }
        );
        let note = outer.note("local model x.gguf").unwrap_or_default();
        assert!(
            note.contains("3 NLI pairs") && note.contains("1 unparsed"),
            "{note}"
        );
        assert_eq!(Tally::default().note("x"), None);
        // Outside tallied: nothing recorded, nothing panics.
        record(&Tally {
            pairs: 1,
            ..Tally::default()
        });
    }
}
