//! The replies of the `score` and `coverage` requests: unit scores, the grounded scorers'
//! evidence, the response scores, where each unit came from and the sentences' coverage.

use serde::{Deserialize, Deserializer, Serialize};

/// Reads a score that JSON may carry as `null` (a NaN when written: serde_json writes
/// non-finite floats as `null`) back as NaN.
pub(super) fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// One row of `uq_unit_scores`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitScore {
    pub unit_idx: usize,
    pub scorer: String,
    /// NaN (JSON `null`) when the score could not be had (e.g. a judge reply that names no
    /// confidence phrase).
    #[serde(deserialize_with = "nan_if_null")]
    pub score: f64,
    /// The score calibrated by `options.calibration`'s model of this scorer: a probability;
    /// `None` without a model (or for a NaN score).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<f64>,
    /// What decided a grounded scorer's score (`uq_core::score::grounded`); `None` for the
    /// other scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

/// Why a grounded scorer scored a unit as it did: the sources' verdict, which evidence decided
/// (the `evidence` column of `uq_unit_scores` and `uq_unit_score`, as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `"source"` (the sources decided; `grounded_fallback`: their p_e was at least the
    /// samples' score, or, with a threshold option, their verdict), `"samples"`
    /// (`grounded_fallback`: the samples' score was the larger, or, with a threshold option, the
    /// sources were silent) or `"none"` (the sources were silent and nothing else decided:
    /// the other grounded scorers, or `grounded_fallback`'s NULL score).
    pub decided_by: String,
    /// The sources' verdict: `"supported"`, `"contradicted"` or `"silent"`.
    pub verdict: String,
    /// The deciding premise's passage: its index in the sources, its id (an FTS5 rowid, or the
    /// id given), and the character span of its selected sentences (end exclusive). `None`
    /// when no source sentence shares a word with the unit.
    #[serde(default)]
    pub passage: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage_id: Option<String>,
    #[serde(default)]
    pub start: Option<usize>,
    #[serde(default)]
    pub end: Option<usize>,
    /// p_e and p_c of that premise.
    #[serde(default)]
    pub entailment: Option<f64>,
    #[serde(default)]
    pub contradiction: Option<f64>,
}

/// Result of a `score` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreResult {
    pub units: Vec<String>,
    /// Where each unit came from ([`origin`]), parallel to `units`.
    #[serde(default)]
    pub origins: Vec<String>,
    pub scores: Vec<UnitScore>,
    /// Aggregated score per scorer (and the short-form scorers' whole-response scores); `None`
    /// when there are no units (or a short-form score could not be had, see `notes`).
    pub response_scores: std::collections::BTreeMap<String, Option<f64>>,
    /// Per calibrated scorer (`options.calibration`), the aggregate of its calibrated unit
    /// scores (with mean: the expected share of true units).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub calibrated_scores: std::collections::BTreeMap<String, Option<f64>>,
    /// Why a score is NULL, e.g. `normalized_probability` without token log-probabilities
    /// (the extension keeps the last notes for `uq_debug()`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Decomposition coverage of the response's sentences (claims decomposed by the LLM with
    /// option `coverage` other than `"off"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<SentenceCoverage>,
}

/// Where a unit came from (the `origin` column of `uq_unit_scores`, `uad_claims` and `uq_unit`).
pub mod origin {
    /// Split from the response by the sentence splitter.
    pub const SENTENCE: &str = "sentence";
    /// A claim of the decomposition LLM.
    pub const CLAIM: &str = "claim";
    /// Given by the caller (option `units`, a job's `units_column`).
    pub const GIVEN: &str = "given";
    /// A sentence of the response that its claims do not entail, scored as a unit of its own
    /// (option `coverage: "add_units"`).
    pub const UNCOVERED_SENTENCE: &str = "uncovered_sentence";
}

/// One sentence of a response checked against the response's claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceCoverage {
    pub idx: usize,
    pub sentence: String,
    /// p_e(premise = the claims joined, hypothesis = the sentence).
    pub entailment: f64,
    /// entailment ≥ option `coverage_threshold`.
    pub covered: bool,
}

/// Result of a `coverage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageResult {
    pub claims: Vec<String>,
    pub sentences: Vec<SentenceCoverage>,
}

impl ScoreResult {
    /// The unit scores of `scorer`, in unit order.
    pub fn unit_scores(&self, scorer: &str) -> Vec<f64> {
        let mut v: Vec<(usize, f64)> = self
            .scores
            .iter()
            .filter(|s| s.scorer == scorer)
            .map(|s| (s.unit_idx, s.score))
            .collect();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|x| x.1).collect()
    }
}
