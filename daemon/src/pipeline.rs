//! One `score` request through the paper's three stages: decompose (§3.1) → score
//! (§3.3, unit-response and matched-unit families, and verbalized confidence) → aggregate (§3.4).
//! The maths lives in `uq_core`; this module gathers the model evidence it needs.
//!
//! At claim granularity without caller-supplied units, the response is decomposed by the
//! decomposition LLM ([`crate::decompose_claims`]); matched-unit scorers then decompose every
//! sample too (concurrently, each distinct text once), unless `sample_units` is given.

use std::collections::BTreeMap;

use serde_json::Value;
use uq_core::aggregate::aggregate;
use uq_core::decompose::split_sentences;
use uq_core::options::{parse_options, select_samples, LlmRole, ScoreOptions};
use uq_core::protocol::{NliProbs, ScoreResult, UnitScore};
use uq_core::score::consistency::{bertscore_f1, normalized_cosine};
use uq_core::score::graph::{graph_scores_weighted, weighted_bipartite_from_probs};
use uq_core::score::matched_unit::{matched_unit_scores, nli_consistency};
use uq_core::score::unit_response::unit_response_scores;
use uq_core::scorers::{Consistency, Family, Granularity, Scorer};

use crate::decompose_claims::{self, decompose_many};
use crate::engine::Engine;
use crate::llm::LlmService;
use crate::{merge_claims, shortform, unit_qa, verbalized};

/// Largest single text (response, sample or unit) a request may carry: 256 KiB, about 60k
/// tokens, i.e. some 250 NLI windows per pair. Larger texts are refused, not truncated.
pub const MAX_TEXT_BYTES: usize = 256 << 10;

/// Refuses a text over `MAX_TEXT_BYTES`, naming it.
pub fn check_text(text: &str, what: &str) -> Result<(), String> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "{what} is {:.1} MB; the limit is 256 KB per text: split it into parts and score them separately",
            text.len() as f64 / 1e6
        ));
    }
    Ok(())
}

/// Checks what a scoring request carries before any model or LLM work: `samples` (required
/// unless every scorer is verbalized confidence, which compares no samples), the size of every
/// text, and the question of scorers that need one. Returns the samples in use (`num_samples`).
pub fn check_inputs(
    response: &str,
    samples: &[String],
    opts: &ScoreOptions,
) -> Result<Vec<String>, String> {
    let needs_samples = opts.scorers.iter().any(|s| s.needs_samples());
    if needs_samples && samples.is_empty() {
        return Err("samples_json must hold at least one sampled response".into());
    }
    check_text(response, "response")?;
    for (j, s) in samples.iter().enumerate() {
        check_text(s, &format!("samples_json[{j}]"))?;
    }
    for &s in &opts.scorers {
        if s.needs_prompt() {
            opts.require_prompt(s)?;
        }
    }
    if samples.is_empty() {
        return Ok(Vec::new());
    }
    select_samples(samples, opts.num_samples)
}

/// Scores `response` against `samples` as `options` asks (see docs/design.md, Options).
pub fn score(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    samples: &[String],
    options: &Value,
) -> Result<ScoreResult, String> {
    let opts = parse_options(options)?;
    let samples = check_inputs(response, samples, &opts)?;
    let mut response_scores = BTreeMap::new();
    let mut scores = Vec::new();
    // Short-form scorers compare whole answers: no decomposition unless a unit scorer needs it.
    let (units, sample_units) = if opts.needs_units() {
        decompose(llm, response, &samples, &opts)?
    } else {
        (Vec::new(), None)
    };
    let unit_opts = ScoreOptions {
        scorers: opts
            .scorers
            .iter()
            .copied()
            .filter(|s| !s.is_response_level())
            .collect(),
        ..opts.clone()
    };
    if !unit_opts.scorers.is_empty() {
        if units.is_empty() {
            for s in &unit_opts.scorers {
                response_scores.insert(s.name().to_string(), None);
            }
        } else {
            let per_scorer = score_units(
                engine,
                llm,
                response,
                &units,
                &samples,
                sample_units.as_deref(),
                &unit_opts,
            )?;
            for (scorer, values) in &per_scorer {
                for (unit_idx, &score) in values.iter().enumerate() {
                    scores.push(UnitScore {
                        unit_idx,
                        scorer: scorer.name().to_string(),
                        score,
                    });
                }
                response_scores.insert(
                    scorer.name().to_string(),
                    aggregate(values, opts.aggregation),
                );
            }
            scores.sort_by_key(|s| s.unit_idx);
        }
    }
    let short: Vec<Scorer> = opts
        .scorers
        .iter()
        .copied()
        .filter(|s| s.is_response_level())
        .collect();
    let mut notes = Vec::new();
    if !short.is_empty() {
        let (values, n) = shortform::score(engine, response, &samples, &short, &opts)?;
        notes = n;
        for (s, v) in values {
            response_scores.insert(s.name().to_string(), v);
        }
    }
    Ok(ScoreResult {
        units,
        scores,
        response_scores,
        notes,
    })
}

/// The response's units, and each sample's units when a matched-unit scorer needs them.
pub type Decomposed = (Vec<String>, Option<Vec<Vec<String>>>);

/// Stage 1: the response's units and, when a matched-unit scorer is asked for, each sample's
/// units. Units given by the caller are used as they are; otherwise sentences are split, or
/// claims are extracted by the decomposition LLM: the response first, then, only when it has
/// claims, every sample concurrently (each distinct text once). Sample units are `None` when no
/// matched-unit scorer is asked for or the response has no units.
pub fn decompose(
    llm: &LlmService,
    response: &str,
    samples: &[String],
    opts: &ScoreOptions,
) -> Result<Decomposed, String> {
    let given_units = match &opts.units {
        Some(units) => {
            check_units(units, "options.units")?;
            Some(units.clone())
        }
        None => None,
    };
    let given_sample_units = if opts.has_matched_unit() {
        match &opts.sample_units {
            Some(sample_units) => {
                if sample_units.len() < samples.len() {
                    return Err(format!(
                        "options.sample_units holds units for {} samples but {} samples are scored; give one array of units per sample",
                        sample_units.len(),
                        samples.len()
                    ));
                }
                for (j, units) in sample_units.iter().take(samples.len()).enumerate() {
                    check_units(units, &format!("options.sample_units[{j}]"))?;
                }
                Some(sample_units[..samples.len()].to_vec())
            }
            None => None,
        }
    } else {
        None
    };
    match opts.granularity {
        Granularity::Sentence => {
            let units = given_units.unwrap_or_else(|| split_sentences(response));
            let sample_units = opts.has_matched_unit().then(|| {
                given_sample_units
                    .unwrap_or_else(|| samples.iter().map(|s| split_sentences(s)).collect())
            });
            Ok((units, sample_units))
        }
        Granularity::Claim => {
            // As uqlm: the response first, then (only if it has claims) the samples, all of
            // them concurrently. The LLM is built only when something is to be decomposed.
            let decomposer = || llm.for_role(opts, LlmRole::Decomposition);
            let units = match given_units {
                Some(u) => u,
                None if response.trim().is_empty() => Vec::new(),
                None => llm.block_on(decompose_claims::decompose(&decomposer()?, response))?,
            };
            let sample_units = if units.is_empty() || !opts.has_matched_unit() {
                None
            } else if given_sample_units.is_some() {
                given_sample_units
            } else {
                let texts: Vec<&str> = samples.iter().map(String::as_str).collect();
                Some(llm.block_on(decompose_many(&decomposer()?, &texts))?)
            };
            Ok((units, sample_units))
        }
    }
}

fn check_units(units: &[String], what: &str) -> Result<(), String> {
    for (i, u) in units.iter().enumerate() {
        if u.trim().is_empty() {
            return Err(format!(
                "{what}[{i}] is empty; every unit must be a non-empty string"
            ));
        }
        check_text(u, &format!("{what}[{i}]"))?;
    }
    Ok(())
}

/// Stage 2: unit scores per requested scorer, in request order. `sample_units` (from
/// [`decompose`]) must be given when a matched-unit scorer is asked for. `response` (the
/// original answer) is a node of the graph scorers' graph, with the samples.
pub fn score_units(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    units: &[String],
    samples: &[String],
    sample_units: Option<&[Vec<String>]>,
    opts: &ScoreOptions,
) -> Result<Vec<(Scorer, Vec<f64>)>, String> {
    let wants = |family: Family, pred: &dyn Fn(Consistency) -> bool| {
        opts.scorers
            .iter()
            .any(|s| s.family() == family && pred(s.consistency()))
    };
    let is_nli = |c: Consistency| {
        matches!(
            c,
            Consistency::Entailment
                | Consistency::Noncontradiction
                | Consistency::ContrastedEntailment
        )
    };

    // Unit-response evidence: NLI(premise = sample y_j, hypothesis = unit s), §3.3.1.
    let response_probs = if wants(Family::UnitResponse, &is_nli) {
        let pairs: Vec<(String, String)> = units
            .iter()
            .flat_map(|u| samples.iter().map(move |y| (y.clone(), u.clone())))
            .collect();
        Some(reshape(engine.nli(&pairs)?, units.len(), samples.len()))
    } else {
        None
    };

    let sample_units: &[Vec<String>] = if opts.has_matched_unit() {
        sample_units.ok_or_else(|| {
            "internal error: sample units were not decomposed; please report it".to_string()
        })?
    } else {
        &[]
    };

    // Matched-unit NLI evidence: NLI(premise = sample unit s', hypothesis = unit s), §3.3.2.
    let matched_probs = if wants(Family::MatchedUnit, &is_nli) {
        let pairs: Vec<(String, String)> = units
            .iter()
            .flat_map(|u| {
                sample_units
                    .iter()
                    .flatten()
                    .map(move |s| (s.clone(), u.clone()))
            })
            .collect();
        let flat = engine.nli(&pairs)?;
        let mut it = flat.into_iter();
        let probs: Vec<Vec<Vec<NliProbs>>> = units
            .iter()
            .map(|_| {
                sample_units
                    .iter()
                    .map(|su| it.by_ref().take(su.len()).collect())
                    .collect()
            })
            .collect();
        Some(probs)
    } else {
        None
    };

    let cosine = if wants(Family::MatchedUnit, &|c| c == Consistency::Cosine) {
        let unit_emb = engine.embed(units)?;
        let sample_emb: Vec<_> = sample_units
            .iter()
            .map(|su| engine.embed(su))
            .collect::<Result<_, _>>()?;
        Some(pairwise(&unit_emb, &sample_emb, |a, b| {
            normalized_cosine(a, b)
        }))
    } else {
        None
    };

    let bert = if wants(Family::MatchedUnit, &|c| c == Consistency::BertScore) {
        let unit_tok = engine.token_embeddings(units)?;
        let sample_tok: Vec<_> = sample_units
            .iter()
            .map(|su| engine.token_embeddings(su))
            .collect::<Result<_, _>>()?;
        Some(pairwise(&unit_tok, &sample_tok, |a, b| bertscore_f1(a, b)))
    } else {
        None
    };

    // Verbalized confidence: one judge call per unit (§ appendix prompt).
    let verbalized = match opts
        .scorers
        .iter()
        .find(|s| s.family() == Family::Verbalized)
    {
        Some(&scorer) => {
            let question = opts.require_prompt(scorer)?;
            let judge = llm.for_role(opts, LlmRole::Judge)?;
            Some(llm.block_on(verbalized::score_units(&judge, question, units))?)
        }
        None => None,
    };

    let graph = if opts.scorers.iter().any(|s| s.family() == Family::Graph) {
        Some(graph_evidence(
            engine,
            llm,
            response,
            units,
            samples,
            (!sample_units.is_empty()).then_some(sample_units),
            opts,
        )?)
    } else {
        None
    };

    // Unit-QA (§3.3.3): questions, answers, then whole-answer consistency per question.
    let qa_scorers: Vec<Scorer> = opts
        .scorers
        .iter()
        .copied()
        .filter(|s| s.family() == Family::UnitQa)
        .collect();
    let unit_qa = if qa_scorers.is_empty() {
        None
    } else {
        Some(unit_qa::score_units(
            engine,
            llm,
            response,
            units,
            &qa_scorers,
            opts,
        )?)
    };

    let mut out = Vec::with_capacity(opts.scorers.len());
    for &scorer in &opts.scorers {
        let values = match (scorer.family(), scorer.consistency()) {
            (Family::UnitQa, _) => {
                let i = qa_scorers.iter().position(|s| *s == scorer).unwrap_or(0);
                expect(&unit_qa)?
                    .get(i)
                    .cloned()
                    .ok_or("internal error: unit-QA scores missing")?
            }
            (Family::ShortForm, _) => {
                return Err(format!(
                    "scorer {} scores the whole response and has no unit scores: use it with \
                     response_confidence, or pick a unit scorer",
                    scorer.name()
                ))
            }
            (Family::Verbalized, _) => expect(&verbalized)?.clone(),
            (Family::UnitResponse, _) => unit_response_scores(expect(&response_probs)?, scorer)?,
            (Family::MatchedUnit, Consistency::Cosine) => matched_unit_scores(expect(&cosine)?),
            (Family::MatchedUnit, Consistency::BertScore) => matched_unit_scores(expect(&bert)?),
            (Family::MatchedUnit, c) => {
                matched_unit_scores(&nli_consistency(expect(&matched_probs)?, c))
            }
            (Family::Graph, _) => {
                let (weights, unit_nodes) = expect(&graph)?;
                let metric = scorer.graph_metric().ok_or_else(|| {
                    format!("internal error: {} has no graph metric", scorer.name())
                })?;
                let all = graph_scores_weighted(weights, metric, opts.pagerank_damping)?;
                unit_nodes.iter().map(|&i| all[i]).collect()
            }
        };
        out.push((scorer, values));
    }
    Ok(out)
}

/// The graph scorers' weighted bipartite graph (paper §3.3.4, as uqlm 0.6.7
/// `GraphScorer`): claim nodes = `options.claim_union` (else the LLM-merged union,
/// [`merge_claims::claim_union`]) with any response claim (unit) missing
/// from it appended; response nodes = the original response followed by the m samples (uqlm's
/// `response_sets = [response] + sampled_responses`; a blank response is left out); edge weight = p_e(premise = response,
/// hypothesis = claim) when ≥ `graph_threshold`, else no edge. Returns the weights
/// (`weights[claim][response]`) and, per unit, the index of its claim node.
fn graph_evidence(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    units: &[String],
    samples: &[String],
    sample_units: Option<&[Vec<String>]>,
    opts: &ScoreOptions,
) -> Result<(Vec<Vec<f64>>, Vec<usize>), String> {
    opts.check_graph()?;
    let mut claims: Vec<String> = match &opts.claim_union {
        Some(union) => union.clone(),
        // No union given: merge the samples' claims into the response's with the merge LLM.
        None => merge_claims::claim_union(llm, opts, response, samples, Some(units), sample_units)?,
    };
    for (i, c) in claims.iter().enumerate() {
        check_text(c, &format!("options.claim_union[{i}]"))?;
    }
    let mut unit_nodes = Vec::with_capacity(units.len());
    for u in units {
        let idx = match claims.iter().position(|c| c == u) {
            Some(i) => i,
            None => {
                claims.push(u.clone());
                claims.len() - 1
            }
        };
        unit_nodes.push(idx);
    }
    // A blank response (callers may pass '' with their own units) is no answer: samples only.
    let responses: Vec<&str> = std::iter::once(response)
        .filter(|r| !r.trim().is_empty())
        .chain(samples.iter().map(String::as_str))
        .collect();
    let pairs: Vec<(String, String)> = claims
        .iter()
        .flat_map(|c| responses.iter().map(move |r| (r.to_string(), c.clone())))
        .collect();
    let p_e: Vec<Vec<f64>> = reshape(engine.nli(&pairs)?, claims.len(), responses.len())
        .into_iter()
        .map(|row| row.iter().map(|p| p.entailment).collect())
        .collect();
    Ok((
        weighted_bipartite_from_probs(&p_e, opts.graph_threshold),
        unit_nodes,
    ))
}

fn expect<T>(evidence: &Option<T>) -> Result<&T, String> {
    evidence.as_ref().ok_or_else(|| {
        "internal error: evidence for a scorer was not gathered; please report it".to_string()
    })
}

/// `flat[i * cols + j]` → `out[i][j]`.
fn reshape<T>(flat: Vec<T>, rows: usize, cols: usize) -> Vec<Vec<T>> {
    let mut it = flat.into_iter();
    (0..rows)
        .map(|_| it.by_ref().take(cols).collect())
        .collect()
}

/// `out[i][j][k] = f(unit i, sample j's unit k)`.
fn pairwise<T>(units: &[T], samples: &[Vec<T>], f: impl Fn(&T, &T) -> f64) -> Vec<Vec<Vec<f64>>> {
    units
        .iter()
        .map(|u| {
            samples
                .iter()
                .map(|su| su.iter().map(|s| f(u, s)).collect())
                .collect()
        })
        .collect()
}
