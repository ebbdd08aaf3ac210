//! The reply of a `uad` request (uncertainty-aware decoding, §3.4): the claims kept and
//! dropped, the refined response, and the warning and note texts the extension shows.

use serde::{Deserialize, Serialize};

use super::score::{nan_if_null, origin};

/// One claim of a `uad` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UadClaim {
    pub idx: usize,
    pub claim: String,
    /// The UAD scorer's score (NaN / JSON `null` when it could not be had; never kept).
    #[serde(deserialize_with = "nan_if_null")]
    pub score: f64,
    /// The score calibrated by `options.calibration`'s model of the UAD scorer; when present,
    /// UAD filters on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<f64>,
    /// Filtered score (calibrated when calibrated) ≥ threshold
    /// (`uq_core::aggregate::uad_retained`).
    pub kept: bool,
    /// Where the claim came from ([`origin`]).
    #[serde(default = "claim_origin")]
    pub origin: String,
}

fn claim_origin() -> String {
    origin::CLAIM.to_string()
}

/// The warning of a `uad` reply whose claims the bundled SmolLM2-135M wrote (the extension's
/// `uad_filter` shows it once per connection on stderr).
pub const UAD_BUNDLED_LLM_WARNING: &str = "the claims were written by the bundled \
    SmolLM2-135M, which writes poor claims (it merges, drops and garbles them): for sentence-level \
    filtering without an LLM pass '{\"granularity\":\"sentence\"}', or configure a capable LLM \
    with option decomposition_llm or llm (e.g. one registered in temp.uq_llms)";

/// The note of a `uad` reply that filtered sentences because no capable LLM is configured (no
/// option `granularity`, no `units`, the decomposition LLM the bundled SmolLM2): the extension
/// shows it once per connection on stderr.
pub const UAD_SENTENCE_DEFAULT_NOTE: &str = "no capable LLM is configured (the decomposition \
    LLM is the bundled SmolLM2-135M, which writes poor claims), so the answer's sentences were \
    filtered without an LLM (granularity sentence); for claims configure a capable LLM with \
    option decomposition_llm or llm (e.g. one registered in temp.uq_llms), or pass \
    '{\"granularity\":\"claim\"}' to use the bundled one";

/// Result of a `uad` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UadResult {
    pub claims: Vec<UadClaim>,
    /// The scorer whose claim scores filter.
    pub scorer: String,
    /// Whether threshold, kept and the confidences use calibrated scores.
    #[serde(default)]
    pub calibrated: bool,
    /// The threshold used; `None` only with `threshold_percentile` and no scored claim.
    pub threshold: Option<f64>,
    /// Aggregate (`options.aggregation`) over every claim; `None` without claims.
    pub pre_confidence: Option<f64>,
    /// Aggregate over the kept claims; `None` when none is kept.
    pub post_confidence: Option<f64>,
    /// The kept claims rewritten by the reconstruction LLM; the original response when no
    /// claim is kept (as uqlm). With option `verify` (default), only its sentences that the kept
    /// claims entail (all failing: the kept claims joined). With option
    /// `reconstruction_fallback` (default), the answer's sentences that hold the kept claims
    /// when the rewrite does not entail one of them (a warning says so).
    pub refined_response: String,
    /// Whether the reconstruction was checked against the kept claims (option `verify`, and a
    /// reconstruction was made).
    #[serde(default)]
    pub verified: bool,
    /// Sentences of the reconstruction removed by the check; for the sentence filter, the
    /// answer's sentences (units) it removed, in order.
    #[serde(default)]
    pub removed_sentences: Vec<String>,
    /// What went wrong that the result alone does not show: kept claims the reconstruction
    /// does not entail (lost or changed by the reconstruction LLM) and what was done about it,
    /// claims written by the bundled SmolLM2 ([`UAD_BUNDLED_LLM_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the NLI judge (option `nli_llm`) did while scoring and verifying, with the pairs it
    /// could not read (the extension keeps them for `uq_debug()`, as a score reply's notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
