//! Stage 1, decomposition (paper §3.1): the response's units and, when a matched-unit scorer
//! needs them, each sample's units. Sentences are split by rule (`uq_core::decompose`); claims
//! come from the decomposition LLM ([`claims`]); the graph scorers' claim union from the merge
//! LLM ([`merge`]).

pub mod claims;
pub mod coverage;
pub mod merge;

use uq_core::decompose::split_sentences;
use uq_core::limits::check_units;
use uq_core::options::{Coverage, LlmRole, ScoreOptions};
use uq_core::protocol::{origin, SentenceCoverage};
use uq_core::scorers::Granularity;

use crate::engine::Engine;
use crate::role_llms::LlmService;

/// A request's units after stage 1.
#[derive(Debug, Default)]
pub struct Decomposed {
    /// The response's units.
    pub units: Vec<String>,
    /// Where each unit came from (`uq_core::protocol::origin`), parallel to `units`.
    pub origins: Vec<String>,
    /// Each sample's units; `None` when no matched-unit scorer is asked for or the response has
    /// no units.
    pub sample_units: Option<Vec<Vec<String>>>,
    /// Coverage of the response's sentences by its LLM claims (empty when not checked).
    pub coverage: Vec<SentenceCoverage>,
}

/// The response's units and, when a matched-unit scorer is asked for, each sample's units.
/// Units given by the caller are used as they are; otherwise sentences are split, or claims are
/// extracted by the decomposition LLM: the response first, then, only when it has claims, every
/// sample concurrently (each distinct text once), as uqlm does. LLM claims are checked for
/// coverage of the response's sentences ([`coverage`], option `coverage`).
pub fn decompose(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    samples: &[String],
    opts: &ScoreOptions,
) -> Result<Decomposed, String> {
    let given_units = match &opts.decompose.units {
        Some(units) => {
            check_units(units, "options.units")?;
            Some(units.clone())
        }
        None => None,
    };
    let given_sample_units = if opts.scoring.has_matched_unit() {
        given_sample_units(opts, samples.len())?
    } else {
        None
    };
    match opts.decompose.granularity {
        Granularity::Sentence => {
            let origin = if given_units.is_some() {
                origin::GIVEN
            } else {
                origin::SENTENCE
            };
            let units = given_units.unwrap_or_else(|| split_sentences(response));
            let sample_units = opts.scoring.has_matched_unit().then(|| {
                given_sample_units
                    .unwrap_or_else(|| samples.iter().map(|s| split_sentences(s)).collect())
            });
            Ok(Decomposed {
                origins: vec![origin.to_string(); units.len()],
                units,
                sample_units,
                coverage: Vec::new(),
            })
        }
        Granularity::Claim => {
            // The LLM is built only when something is to be decomposed.
            let decomposer = || llm.for_role(opts, LlmRole::Decomposition);
            let Decomposed {
                units,
                origins,
                coverage: covered,
                ..
            } = match given_units {
                Some(u) => Decomposed {
                    origins: vec![origin::GIVEN.to_string(); u.len()],
                    units: u,
                    ..Default::default()
                },
                None if response.trim().is_empty() => Decomposed::default(),
                None => {
                    let claims = llm.block_on(claims::decompose(&decomposer()?, response))?;
                    with_coverage(engine, llm, response, claims, opts)?
                }
            };
            let sample_units = if units.is_empty() || !opts.scoring.has_matched_unit() {
                None
            } else if given_sample_units.is_some() {
                given_sample_units
            } else {
                let texts: Vec<&str> = samples.iter().map(String::as_str).collect();
                Some(llm.block_on(claims::decompose_many(&decomposer()?, &texts))?)
            };
            Ok(Decomposed {
                units,
                origins,
                sample_units,
                coverage: covered,
            })
        }
    }
}

/// The LLM's `claims` of `response` as units, checked for coverage of the response's sentences
/// as option `coverage` asks: with `add_units`, each uncovered sentence is appended as a unit of
/// origin `uncovered_sentence`.
fn with_coverage(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    claims: Vec<String>,
    opts: &ScoreOptions,
) -> Result<Decomposed, String> {
    let mut origins = vec![origin::CLAIM.to_string(); claims.len()];
    let mut units = claims;
    let mode = opts.decompose.coverage;
    let covered = if mode == Coverage::Off {
        Vec::new()
    } else {
        coverage::coverage(
            &crate::judge::Nli::new(engine, llm, opts)?,
            response,
            &units,
            opts.decompose.coverage_threshold,
        )?
    };
    if mode == Coverage::AddUnits {
        for c in covered.iter().filter(|c| !c.covered) {
            units.push(c.sentence.clone());
            origins.push(origin::UNCOVERED_SENTENCE.to_string());
        }
    }
    Ok(Decomposed {
        units,
        origins,
        sample_units: None,
        coverage: covered,
    })
}

/// `options.sample_units`, checked: one array of non-empty units per scored sample.
fn given_sample_units(
    opts: &ScoreOptions,
    n_samples: usize,
) -> Result<Option<Vec<Vec<String>>>, String> {
    let Some(sample_units) = &opts.decompose.sample_units else {
        return Ok(None);
    };
    if sample_units.len() < n_samples {
        return Err(format!(
            "options.sample_units holds units for {} samples but {} samples are scored; give one array of units per sample",
            sample_units.len(),
            n_samples
        ));
    }
    for (j, units) in sample_units.iter().take(n_samples).enumerate() {
        check_units(units, &format!("options.sample_units[{j}]"))?;
    }
    Ok(Some(sample_units[..n_samples].to_vec()))
}
