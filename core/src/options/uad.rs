//! Uncertainty-aware decoding options (paper §3.4): which scorer's claim scores filter, the
//! threshold a claim must reach to be kept, and the checks of the reconstruction against the
//! kept claims, both ways (beyond the paper).

use serde_json::Value;

use super::values::{bool_option, ranged, string_option};
use crate::aggregate::uad::uad_threshold;
pub use crate::aggregate::uad::DEFAULT_UAD_THRESHOLD;
use crate::calibrate::conformal::Conformal;
use crate::scorers::Scorer;

/// Default of option `verify_threshold`: a sentence of the reconstruction is kept when the kept
/// claims entail it with p_e ≥ this.
pub const DEFAULT_VERIFY_THRESHOLD: f64 = 0.5;

/// The UAD claim filter.
#[derive(Debug, Clone, PartialEq)]
pub struct UadOptions {
    /// Option `threshold`: keep claims with score ≥ threshold; `None` = the default 1/3
    /// ([`DEFAULT_UAD_THRESHOLD`]), unless `threshold_percentile` is set.
    pub threshold: Option<f64>,
    /// Option `threshold_percentile`: threshold = this percentile (0–100) of the answer's claim
    /// scores.
    pub threshold_percentile: Option<f64>,
    /// Option `conformal`: a conformal factuality model (`uq_fit_conformal`,
    /// [`crate::calibrate::conformal`]) whose threshold replaces `threshold`.
    pub conformal: Option<Conformal>,
    /// Option `uad_scorer`: the scorer whose claim scores filter; `None` = the first of
    /// `scorers` ([`super::ScoreOptions::uad_scorer`]).
    pub uad_scorer: Option<Scorer>,
    /// Option `verify` (default true): check the reconstruction against the kept claims with
    /// the NLI model and drop its sentences they do not entail; false = the paper's plain
    /// reconstruction.
    pub verify: bool,
    /// Option `verify_threshold`: p_e a sentence of the reconstruction needs to be kept.
    pub verify_threshold: f64,
    /// Option `min_kept` (default 0): keep at least this many units of each answer, the best
    /// scored, when fewer pass the threshold ([`crate::aggregate::uad::keep_at_least`]).
    pub min_kept: usize,
    /// Option `reconstruction_fallback` (default true): when the reconstruction does not entail
    /// a kept claim with p_e ≥ `verify_threshold` (it lost or changed it), the refined response
    /// is the answer's sentences that hold the kept claims instead.
    pub reconstruction_fallback: bool,
}

impl Default for UadOptions {
    fn default() -> Self {
        UadOptions {
            threshold: None,
            threshold_percentile: None,
            conformal: None,
            uad_scorer: None,
            verify: true,
            verify_threshold: DEFAULT_VERIFY_THRESHOLD,
            min_kept: 0,
            reconstruction_fallback: true,
        }
    }
}

impl UadOptions {
    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "threshold" => {
                self.threshold = Some(ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (claim scores lie in [0, 1])",
                )?)
            }
            "threshold_percentile" => {
                self.threshold_percentile = Some(ranged(
                    key,
                    val,
                    "25",
                    |x| (0.0..=100.0).contains(&x),
                    "0..=100",
                )?)
            }
            "conformal" => {
                self.conformal = Some(Conformal::from_json(val, "option conformal")?);
            }
            "verify" => self.verify = bool_option(key, val)?,
            "min_kept" => {
                self.min_kept = ranged(
                    key,
                    val,
                    "1",
                    |x| x >= 0.0 && x.fract() == 0.0 && x <= 1e6,
                    "a whole number ≥ 0 (units kept per answer at least)",
                )? as usize
            }
            "reconstruction_fallback" => self.reconstruction_fallback = bool_option(key, val)?,
            "verify_threshold" => {
                self.verify_threshold = ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (an entailment probability)",
                )?
            }
            "uad_scorer" => {
                let s = string_option(key, val, "\"entailment\"")?;
                self.uad_scorer =
                    Some(Scorer::parse(s).map_err(|e| format!("option uad_scorer: {e}"))?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The options together: one threshold rule, not two (a conformal model brings its own).
    pub(super) fn check(&self) -> Result<(), String> {
        if self.threshold.is_some() && self.threshold_percentile.is_some() {
            return Err(
                "options threshold and threshold_percentile both given: UAD filters with one of them; \
                    drop one"
                    .to_string(),
            );
        }
        if self.conformal.is_some() && self.min_kept > 0 {
            return Err(
                "options conformal and min_kept both given: a unit kept below the conformal \
                 threshold breaks its guarantee; drop min_kept"
                    .to_string(),
            );
        }
        if self.conformal.is_some() {
            if let Some(other) = [
                ("threshold", self.threshold.is_some()),
                ("threshold_percentile", self.threshold_percentile.is_some()),
            ]
            .iter()
            .find(|(_, given)| *given)
            {
                return Err(format!(
                    "options conformal and {} both given: the conformal model brings its own \
                     threshold (the one its guarantee holds for); drop {}",
                    other.0, other.0
                ));
            }
        }
        Ok(())
    }

    /// The threshold for an answer whose claims score `scores`: option `conformal`'s model's
    /// threshold when given, else [`crate::aggregate::uad::uad_threshold`]'s.
    pub fn threshold_for(&self, scores: &[f64]) -> Option<f64> {
        if let Some(c) = &self.conformal {
            return Some(c.threshold);
        }
        uad_threshold(scores, self.threshold, self.threshold_percentile)
    }
}
