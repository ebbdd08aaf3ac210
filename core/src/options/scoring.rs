//! Stage 2 options (paper §3.3): the scorers (family × η), the m sampled responses they compare
//! against, and the settings of each scorer family (graph, unit-QA, semantic negentropy,
//! normalized probability, verbalized confidence).

use serde_json::Value;

use super::values::{bool_option, ranged, string_array, string_option, strings};
use crate::ensemble::{combine, Weights};
use crate::json::{number_or_type, type_name};
use crate::logprobs::TokenLogprob;
use crate::score::black_box::Clustering;
use crate::score::graph::{DEFAULT_DAMPING, DEFAULT_EDGE_THRESHOLD};
use crate::score::premise::Premise;
use crate::scorers::{self, Family, Scorer};

/// Scorers used when `scorers` is not given.
pub const DEFAULT_SCORERS: &[Scorer] = &[
    Scorer::Entailment,
    Scorer::Noncontradiction,
    Scorer::ContrastedEntailment,
];

/// Unit-QA: questions per unit when `num_questions` is not given (uqlm's default).
pub const DEFAULT_NUM_QUESTIONS: usize = 1;
/// Unit-QA: sampled answers per question (m_qa) when `qa_samples` is not given (the paper's and
/// uqlm's `num_claim_qa_responses` default).
pub const DEFAULT_QA_SAMPLES: usize = 5;
/// Largest `num_questions` / `qa_samples` accepted (each multiplies the LLM calls).
pub const MAX_QA: usize = 100;

/// Which scorers run, and with what.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoringOptions {
    /// Option `scorers`: non-empty, without duplicates, in the order given.
    pub scorers: Vec<Scorer>,
    /// Option `num_samples`: use the first m samples; `None` = all.
    pub num_samples: Option<usize>,
    /// Option `prompt`: the question the response answers (verbalized confidence needs it).
    pub prompt: Option<String>,
    /// Option `claim_union`, for graph scorers: the union of unique claims across the original
    /// and the sampled answers (e.g. stored merges from `uq_claim_union`). The response's own
    /// claims are appended when missing. `None`: the daemon builds the union by LLM claim
    /// merging (the merge LLM merges each sample's claims into the response's, in order, as
    /// uqlm's `ClaimMerger`).
    pub claim_union: Option<Vec<String>>,
    /// Option `graph_threshold`, for graph scorers: a claim–response edge exists iff
    /// p_e ≥ this (uqlm's `binary_edge_threshold`, default 0.5).
    pub graph_threshold: f64,
    /// Option `pagerank_damping`, for graph scorers: PageRank's damping d (networkx's default
    /// 0.85).
    pub pagerank_damping: f64,
    /// Option `premise`, for the unit-response and graph scorers: the whole answer (the paper)
    /// or its sentences most relevant to the unit ([`crate::score::premise`]); `None`: the
    /// granularity's default ([`super::ScoreOptions::premise`]).
    pub premise: Option<Premise>,
    /// Option `num_questions`, for unit-QA: questions per unit (Q, default 1 as uqlm).
    pub num_questions: usize,
    /// Option `qa_samples`, for unit-QA: sampled answers per question (m_qa, default 5); the
    /// original answer is one more.
    pub qa_samples: usize,
    /// Option `semantic_clustering`, for semantic negentropy (unit-QA and short-form): how
    /// answers are clustered (default uqlm's).
    pub semantic_clustering: Clustering,
    /// Option `response_logprobs`, for the white-box scorers: the response's tokens with their
    /// log-probabilities (and top-k alternatives), when the caller has them (`uq_generate`'s
    /// `logprobs` with `"generation_llm":{"logprobs":true}`; bare numbers are read as tokens
    /// of unknown text).
    pub response_logprobs: Option<Vec<TokenLogprob>>,
    /// Option `sample_logprobs`, for `monte_carlo_probability`, `semantic_negentropy` and
    /// `semantic_density`: one token list per sample, in sample order.
    pub sample_logprobs: Option<Vec<Vec<TokenLogprob>>>,
    /// Option `length_normalize` (default true, as uqlm): sequence probabilities are the
    /// geometric mean of the token probabilities rather than their product.
    pub length_normalize: bool,
    /// Option `ensemble_weights`, for scorer `ensemble`: its component scorers and their
    /// weights (from `uq_fit_ensemble`).
    pub ensemble_weights: Option<EnsembleWeights>,
}

/// The `ensemble` scorer's components (unit scorers, each once) and their weights, divided by
/// their sum.
#[derive(Debug, Clone, PartialEq)]
pub struct EnsembleWeights {
    pub components: Vec<Scorer>,
    pub weights: Vec<f64>,
}

impl EnsembleWeights {
    /// Reads option `ensemble_weights`: an object scorer name → weight ≥ 0.
    fn parse(val: &Value) -> Result<EnsembleWeights, String> {
        let w = Weights::from_json(val, "option ensemble_weights")?;
        let mut components: Vec<Scorer> = Vec::with_capacity(w.names.len());
        for name in &w.names {
            let s = Scorer::parse(name).map_err(|e| format!("option ensemble_weights: {e}"))?;
            if s.is_response_level() || s.family() == Family::Ensemble {
                return Err(format!(
                    "option ensemble_weights.{name}: the ensemble combines unit scores, and {}                      has none of its own; weight unit scorers only",
                    s.name()
                ));
            }
            if components.contains(&s) {
                return Err(format!(
                    "option ensemble_weights names scorer {} twice (an alias counts as its                      scorer); give it one weight",
                    s.name()
                ));
            }
            components.push(s);
        }
        Ok(EnsembleWeights {
            components,
            weights: w.values,
        })
    }

    /// The ensemble's score of one unit from its components' scores (`score(component)`, NaN
    /// or `None` when missing: left out, the other weights rescaled); NaN when none is present.
    pub fn apply(&self, score: impl Fn(Scorer) -> Option<f64>) -> f64 {
        let s: Vec<f64> = self
            .components
            .iter()
            .map(|&c| score(c).unwrap_or(f64::NAN))
            .collect();
        combine(&s, &self.weights).unwrap_or(f64::NAN)
    }
}

impl Default for ScoringOptions {
    fn default() -> Self {
        ScoringOptions {
            scorers: DEFAULT_SCORERS.to_vec(),
            num_samples: None,
            prompt: None,
            claim_union: None,
            graph_threshold: DEFAULT_EDGE_THRESHOLD,
            pagerank_damping: DEFAULT_DAMPING,
            premise: None,
            num_questions: DEFAULT_NUM_QUESTIONS,
            qa_samples: DEFAULT_QA_SAMPLES,
            semantic_clustering: Clustering::Uqlm,
            response_logprobs: None,
            sample_logprobs: None,
            length_normalize: true,
            ensemble_weights: None,
        }
    }
}

impl ScoringOptions {
    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "scorers" => self.scorers = parse_scorers(val)?,
            "num_samples" => self.num_samples = Some(parse_num_samples(val)?),
            "prompt" => {
                let p = string_option(key, val, "\"Who was Marie Curie?\"")?;
                if p.trim().is_empty() {
                    return Err("option prompt is empty: pass the question the response answers, or leave prompt out".to_string());
                }
                self.prompt = Some(p.to_string());
            }
            "claim_union" => {
                let union = string_array("claim_union", val)?;
                if let Some(i) = union.iter().position(|c| c.trim().is_empty()) {
                    return Err(format!(
                        "option claim_union[{i}] is empty; every claim must be a non-empty string"
                    ));
                }
                self.claim_union = Some(union);
            }
            "graph_threshold" => {
                self.graph_threshold = ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (an edge joins a claim and a response iff p_e >= graph_threshold)",
                )?
            }
            "pagerank_damping" => {
                self.pagerank_damping =
                    ranged(key, val, "0.85", |x| (0.0..=1.0).contains(&x), "0..=1")?
            }
            "premise" => self.premise = Some(Premise::parse(val)?),
            "num_questions" => self.num_questions = bounded_count(key, val, "1")?,
            "qa_samples" => self.qa_samples = bounded_count(key, val, "5")?,
            "semantic_clustering" => {
                let s = string_option(key, val, "\"uqlm\"")?;
                self.semantic_clustering =
                    Clustering::parse(s).map_err(|e| format!("option semantic_clustering: {e}"))?;
            }
            "response_logprobs" => {
                self.response_logprobs = Some(parse_logprobs(val, "option response_logprobs")?)
            }
            "sample_logprobs" => self.sample_logprobs = Some(parse_sample_logprobs(val)?),
            "length_normalize" => self.length_normalize = bool_option(key, val)?,
            "ensemble_weights" => self.ensemble_weights = Some(EnsembleWeights::parse(val)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether some scorer compares the answer with sampled answers (all but verbalized
    /// confidence, which asks a judge, and the scorers that sample answers of their own).
    pub fn needs_samples(&self) -> bool {
        self.computed().iter().any(|s| s.needs_samples())
    }

    /// The scorers whose evidence is gathered: `scorers` with `ensemble` replaced by its
    /// components (those not already listed, appended in `ensemble_weights` order).
    pub fn computed(&self) -> Vec<Scorer> {
        let mut out: Vec<Scorer> = self
            .scorers
            .iter()
            .copied()
            .filter(|s| s.family() != Family::Ensemble)
            .collect();
        if self.scorers.contains(&Scorer::Ensemble) {
            if let Some(e) = &self.ensemble_weights {
                for &c in &e.components {
                    if !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// True when any chosen scorer is of the matched-unit family (needs sample units).
    pub fn has_matched_unit(&self) -> bool {
        self.has(Family::MatchedUnit)
    }

    /// True when any chosen scorer is a graph scorer (family [`Family::Graph`]).
    pub fn has_graph(&self) -> bool {
        self.has(Family::Graph)
    }

    /// True when any chosen scorer is a unit-QA scorer (family [`Family::UnitQa`]).
    pub fn has_unit_qa(&self) -> bool {
        self.has(Family::UnitQa)
    }

    fn has(&self, family: Family) -> bool {
        self.computed().iter().any(|s| s.family() == family)
    }

    /// True when any chosen scorer scores units (all but the short-form, response-level ones):
    /// only then is the response decomposed.
    pub fn needs_units(&self) -> bool {
        self.scorers.iter().any(|s| !s.is_response_level())
    }

    /// The question for scorers that need one (`prompt`), or an error naming the option.
    pub fn require_prompt(&self, scorer: Scorer) -> Result<&str, String> {
        self.prompt.as_deref().ok_or_else(|| {
            format!(
                "scorer {} needs the question the response answers: pass it as option prompt, e.g. \
                 \"prompt\":\"Who was Marie Curie?\"",
                scorer.name()
            )
        })
    }
}

fn parse_scorers(v: &Value) -> Result<Vec<Scorer>, String> {
    let example = "\"scorers\":[\"entailment\",\"matched_cosine_sim\"]";
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().ok_or_else(|| {
                    format!(
                        "option scorers[{i}] is {}, not a string: give scorer names, e.g. {example}",
                        type_name(item)
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "option scorers must be an array of scorer names, e.g. {example}; got {}",
                type_name(other)
            ))
        }
    };
    let mut out: Vec<Scorer> = Vec::with_capacity(names.len());
    for name in names {
        let s = Scorer::parse(name).map_err(|e| format!("option scorers: {e}"))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "option scorers is empty: name at least one of {} (or leave scorers out for the \
             defaults)",
            scorers::all_names().join(", ")
        ));
    }
    Ok(out)
}

fn parse_num_samples(v: &Value) -> Result<usize, String> {
    match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "option num_samples must be a positive integer (the number of samples to use), \
             e.g. \"num_samples\":5; got {}",
            number_or_type(v)
        )),
    }
}

/// An integer option in 1..=[`MAX_QA`] (`num_questions`, `qa_samples`).
fn bounded_count(name: &str, v: &Value, example: &str) -> Result<usize, String> {
    match v.as_u64() {
        Some(n) if n >= 1 && n <= MAX_QA as u64 => Ok(n as usize),
        _ => Err(format!(
            "option {name} must be an integer in 1..={MAX_QA}, e.g. \"{name}\":{example}; got {}",
            number_or_type(v)
        )),
    }
}

/// A token list: an array of numbers (log-probabilities alone) or of `{"token", "logprob",
/// "top_logprobs"}` objects (`uq_generate`'s `logprobs`), each log-probability a number <= 0.
fn parse_logprobs(val: &Value, what: &str) -> Result<Vec<TokenLogprob>, String> {
    let shape = "an array of numbers or of {\"token\",\"logprob\",\"top_logprobs\"} objects (the \
        response's tokens, e.g. uq_generate's logprobs column)";
    let items = val.as_array().ok_or_else(|| {
        format!(
            "{what} must be {shape}, e.g. [-0.01,-0.3]; got {}",
            type_name(val)
        )
    })?;
    let mut tokens = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let t: TokenLogprob = serde_json::from_value(x.clone()).map_err(|_| {
            format!("{what}[{i}] is {x}: every token must be a log-probability <= 0 or {shape}")
        })?;
        tokens.push(t);
    }
    crate::logprobs::check(&mut tokens, what)?;
    Ok(tokens)
}

/// `sample_logprobs`: one token list per sample.
fn parse_sample_logprobs(val: &Value) -> Result<Vec<Vec<TokenLogprob>>, String> {
    let items = val.as_array().ok_or_else(|| {
        format!(
            "option sample_logprobs must be an array with one token list per sample (each as \
             response_logprobs), e.g. [[-0.1,-0.2],[-0.3]]; got {}",
            type_name(val)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(j, v)| parse_logprobs(v, &format!("option sample_logprobs[{j}]")))
        .collect()
}

/// Parses `samples_json`: a non-empty JSON array of strings (the m sampled responses).
pub fn parse_samples(v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "samples_json must be a JSON array of strings, e.g. [\"sampled answer 1\",\"sampled answer 2\"]; got {}",
            type_name(v)
        )
    })?;
    if items.is_empty() {
        return Err(
            "samples_json must hold at least one sampled response, e.g. [\"sampled answer 1\"]"
                .to_string(),
        );
    }
    strings(items, |i, item| {
        format!(
            "samples_json[{i}] is {}, not a string: every sample must be a JSON string",
            type_name(item)
        )
    })
}

/// The first `num_samples` samples (all when `None`). Errors when more are asked for than
/// were given.
pub fn select_samples(
    samples: &[String],
    num_samples: Option<usize>,
) -> Result<Vec<String>, String> {
    match num_samples {
        None => Ok(samples.to_vec()),
        Some(m) if m <= samples.len() => Ok(samples[..m].to_vec()),
        Some(m) => Err(format!(
            "option num_samples is {m} but samples_json holds only {} sample{}: lower num_samples \
             or pass more samples",
            samples.len(),
            if samples.len() == 1 { "" } else { "s" }
        )),
    }
}
