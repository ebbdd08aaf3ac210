//! `options_json` and `samples_json` parsing and validation (docs/reference.md, "Options").
//!
//! The options choose the paper's design axes: granularity g (§3.1), the scorers (family ×
//! η, §3.3), the aggregation operator A (§3.4), and m, the number of sampled responses
//! (§3.2). The LLM options (docs/reference.md, "LLM options") choose the LLM of each
//! role (claim decomposition, generation, judging, reconstruction…), the temperatures of
//! `uq_generate`, the question (`prompt`) and the UAD filter (§3.4). Beyond the paper,
//! `ensemble_weights` weighs the `ensemble` scorer's components and `calibration` maps scores to
//! probabilities ([`crate::ensemble`], [`crate::calibrate`]). Every error names the offending
//! option and says how to fix it.

mod aggregate;
mod calibration;
mod decompose;
mod generation;
mod grounded;
mod llm;
mod scoring;
mod uad;
mod values;

use serde_json::Value;

pub use aggregate::AggregateOptions;
pub use calibration::{Adapt, CalibrationOptions};
pub use decompose::{check_sample_units, Coverage, DecomposeOptions, DEFAULT_COVERAGE_THRESHOLD};
pub use generation::{GenerationOptions, DEFAULT_SAMPLING_TEMPERATURE, DEFAULT_TEMPERATURE};
pub use grounded::{GroundedOptions, Sources, DEFAULT_SOURCE_PREMISE};
pub use llm::{
    parse_llm_config, LlmBackendKind, LlmConfig, LlmOptions, LlmRole, NliPrompt, LLM_CONFIG_KEYS,
};
pub use scoring::{
    parse_samples, select_samples, EnsembleWeights, ScoringOptions, DEFAULT_NUM_QUESTIONS,
    DEFAULT_QA_SAMPLES, DEFAULT_SCORERS, MAX_QA,
};
pub use uad::{UadOptions, DEFAULT_UAD_THRESHOLD, DEFAULT_VERIFY_THRESHOLD};

use crate::scorers::Scorer;

/// Every option name `options_json` accepts.
pub const OPTION_NAMES: &[&str] = &[
    "granularity",
    "scorers",
    "aggregation",
    "num_samples",
    "units",
    "sample_units",
    "coverage",
    "coverage_threshold",
    "llm",
    "generation_llm",
    "decomposition_llm",
    "question_llm",
    "merge_llm",
    "reconstruction_llm",
    "judge_llm",
    "nli_llm",
    "nli_prompt",
    "temperature",
    "sampling_temperature",
    "prompt",
    "threshold",
    "threshold_percentile",
    "conformal",
    "uad_scorer",
    "verify",
    "verify_threshold",
    "reconstruction_fallback",
    "min_kept",
    "claim_union",
    "graph_threshold",
    "pagerank_damping",
    "premise",
    "num_questions",
    "qa_samples",
    "semantic_clustering",
    "response_logprobs",
    "sample_logprobs",
    "length_normalize",
    "ensemble_weights",
    "calibration",
    "sources",
    "source_premise",
    "source_entailment_threshold",
    "source_contradiction_threshold",
    "fallback_scorer",
];

/// Validated options of one scoring call, by concern. Each concern's fields are named after the
/// options they hold (`opts.scoring.num_samples` is option `num_samples`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScoreOptions {
    /// Stage 1: `granularity`, `units`, `sample_units`, `coverage`, `coverage_threshold`.
    pub decompose: DecomposeOptions,
    /// Stage 2: `scorers`, `num_samples`, `prompt` and the settings of the scorer families.
    pub scoring: ScoringOptions,
    /// Stage 3: `aggregation`.
    pub aggregate: AggregateOptions,
    /// Uncertainty-aware decoding: `threshold`, `threshold_percentile`, `conformal`, `uad_scorer`,
    /// `verify`, `verify_threshold`, `reconstruction_fallback`, `min_kept`.
    pub uad: UadOptions,
    /// Generated answers: `temperature`, `sampling_temperature`.
    pub generation: GenerationOptions,
    /// The LLM of each role: `llm`, `generation_llm`, `decomposition_llm`, ….
    pub llm: LlmOptions,
    /// After scoring: `calibration`, a model per scorer.
    pub calibration: CalibrationOptions,
    /// Grounded checking: `sources`, `source_premise`, the source thresholds,
    /// `fallback_scorer`.
    pub grounded: GroundedOptions,
}

impl ScoreOptions {
    /// Every scorer must work at the chosen granularity: graph scorers work on claims only
    /// (the union of sentences is not well defined, §3.3.4). The claim union is
    /// `claim_union`, or LLM claim merging without it.
    pub fn check_graph(&self) -> Result<(), String> {
        let g = self.decompose.granularity;
        let mut computed = self.scoring.computed();
        if self.uad.uad_scorer == Some(Scorer::Ensemble) {
            if let Some(e) = &self.scoring.ensemble_weights {
                computed.extend(&e.components);
            }
        }
        match computed
            .iter()
            .find(|s| !s.is_response_level() && !s.granularities().contains(&g))
        {
            Some(scorer) => Err(format!(
                "scorer {}{} is a graph scorer and works on claims only (the union of sentences \
                 is not well defined): set \"granularity\":\"claim\"",
                scorer.name(),
                if self.scoring.scorers.contains(scorer) {
                    ""
                } else {
                    " (weighted in ensemble_weights)"
                }
            )),
            None => Ok(()),
        }
    }

    /// Scorer `ensemble` (in `scorers` or as `uad_scorer`) needs `ensemble_weights`, and
    /// `ensemble_weights` needs scorer `ensemble`; `calibration` models must be of computed
    /// scorers.
    pub fn check_ensemble_and_calibration(&self) -> Result<(), String> {
        let wants_ensemble = self.scoring.scorers.contains(&Scorer::Ensemble)
            || self.uad.uad_scorer == Some(Scorer::Ensemble);
        match (wants_ensemble, &self.scoring.ensemble_weights) {
            (true, None) => {
                return Err(
                    "scorer ensemble needs option ensemble_weights, the weights \
                            uq_fit_ensemble returns, e.g. \
                            \"ensemble_weights\":{\"entailment\":0.6,\"noncontradiction\":0.4}"
                        .to_string(),
                )
            }
            (false, Some(_)) => {
                return Err(
                    "option ensemble_weights is given but scorer ensemble is not used: add \
                            \"ensemble\" to scorers (or make it uad_scorer), or drop \
                            ensemble_weights"
                        .to_string(),
                )
            }
            _ => {}
        }
        self.calibration
            .check(&self.scoring.scorers, self.uad.uad_scorer)
    }

    /// Option `premise`, else the default of the granularity
    /// ([`crate::score::premise::default_premise`]).
    pub fn premise(&self) -> crate::score::premise::Premise {
        self.scoring
            .premise
            .unwrap_or_else(|| crate::score::premise::default_premise(self.decompose.granularity))
    }

    /// UAD's scorer: `uad_scorer`, else the first of `scorers`.
    pub fn uad_scorer(&self) -> Scorer {
        self.uad
            .uad_scorer
            .or_else(|| self.scoring.scorers.first().copied())
            .unwrap_or(Scorer::Entailment)
    }
}

/// Parses `options_json`: JSON null (all defaults) or an object with any of
/// [`OPTION_NAMES`]. A key whose value is null keeps its default.
///
/// Errors name the option: unknown keys (listing the valid ones), wrong types, unknown
/// scorer/aggregation/granularity names, an empty `scorers`, `num_samples` < 1, an LLM given
/// by name (the extension resolves names from `temp.uq_llms`; the daemon only takes objects),
/// temperatures outside their range, and both `threshold` and `threshold_percentile`.
/// `granularity: "claim"` without `units` is valid: the daemon decomposes the response (and,
/// for matched-unit scorers without `sample_units`, every sample) with the decomposition LLM.
pub fn parse_options(v: &Value) -> Result<ScoreOptions, String> {
    let obj = match v {
        Value::Null => return Ok(ScoreOptions::default()),
        Value::Object(o) => o,
        _ => {
            return Err(
                "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
                    .to_string(),
            )
        }
    };
    let mut o = ScoreOptions::default();
    for (key, val) in obj {
        if !OPTION_NAMES.contains(&key.as_str()) {
            return Err(format!(
                "unknown option {key:?} in options_json: {}valid options are {}",
                crate::suggest::did_you_mean(key, OPTION_NAMES.iter().copied()),
                OPTION_NAMES.join(", ")
            ));
        }
        if val.is_null() {
            continue;
        }
        o.set(key, val)?;
    }
    o.uad.check()?;
    o.llm.check()?;
    o.check_ensemble_and_calibration()?;
    o.check_graph()?;
    let mut computed = o.scoring.computed();
    computed.extend(o.uad.uad_scorer);
    o.grounded.check(&computed)?;
    Ok(o)
}

impl ScoreOptions {
    /// Reads one option of [`OPTION_NAMES`] into the concern that owns it; `Ok(false)` when no
    /// concern does (a test checks that each name has exactly one).
    fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        Ok(self.decompose.set(key, val)?
            || self.scoring.set(key, val)?
            || self.aggregate.set(key, val)?
            || self.uad.set(key, val)?
            || self.generation.set(key, val)?
            || self.llm.set(key, val)?
            || self.calibration.set(key, val)?
            || self.grounded.set(key, val)?)
    }
}

#[cfg(test)]
mod tests;
