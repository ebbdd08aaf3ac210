//! Stage 1 options (paper §3.1): the granularity g of the decomposition δ_g and units given by
//! the caller.

use serde_json::Value;

use super::values::{ranged, string_array, string_option};
use crate::json::type_name;
use crate::scorers::Granularity;

/// Option `coverage`: what to do with the sentences of the response that its LLM claims do not
/// entail (beyond the paper: a claim-level scorer is blind to what the decomposition drops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coverage {
    /// Score each uncovered sentence as a unit of its own (origin `uncovered_sentence`).
    #[default]
    AddUnits,
    /// Only report the coverage of each sentence.
    Report,
    /// No check.
    Off,
}

impl Coverage {
    pub const ALL: [Coverage; 3] = [Coverage::AddUnits, Coverage::Report, Coverage::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::AddUnits => "add_units",
            Coverage::Report => "report",
            Coverage::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Result<Coverage, String> {
        Coverage::ALL
            .into_iter()
            .find(|c| c.as_str() == s.trim())
            .ok_or_else(|| {
                format!(
                    "option coverage is {s:?}: use \"add_units\" (score uncovered sentences), \"report\" or \"off\""
                )
            })
    }
}

/// Default of option `coverage_threshold`: a sentence is covered when its claims entail it with
/// p_e ≥ this.
pub const DEFAULT_COVERAGE_THRESHOLD: f64 = 0.5;

/// How the response (and, for matched-unit scorers, each sample) is split into units.
#[derive(Debug, Clone, PartialEq)]
pub struct DecomposeOptions {
    /// Option `granularity`: sentences (default) or claims.
    pub granularity: Granularity,
    /// Option `units`: pre-split units of the response; `None` = split it.
    pub units: Option<Vec<String>>,
    /// Option `sample_units`: pre-split units of each sample (matched-unit scorers); `None` =
    /// split each sample.
    pub sample_units: Option<Vec<Vec<String>>>,
    /// Option `coverage`: the check of LLM claims against the response's sentences.
    pub coverage: Coverage,
    /// Option `coverage_threshold`: p_e a sentence needs to count as covered by its claims.
    pub coverage_threshold: f64,
}

impl Default for DecomposeOptions {
    fn default() -> Self {
        DecomposeOptions {
            granularity: Granularity::default(),
            units: None,
            sample_units: None,
            coverage: Coverage::default(),
            coverage_threshold: DEFAULT_COVERAGE_THRESHOLD,
        }
    }
}

impl DecomposeOptions {
    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "granularity" => {
                let s = string_option(key, val, "\"sentence\"")?;
                self.granularity =
                    Granularity::parse(s).map_err(|e| format!("option granularity: {e}"))?;
            }
            "units" => self.units = Some(string_array("units", val)?),
            "sample_units" => self.sample_units = Some(parse_sample_units(val)?),
            "coverage" => self.coverage = Coverage::parse(string_option(key, val, "\"report\"")?)?,
            "coverage_threshold" => {
                self.coverage_threshold = ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (an entailment probability)",
                )?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn parse_sample_units(v: &Value) -> Result<Vec<Vec<String>>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option sample_units must be an array with one array of strings per sample, e.g. \
             \"sample_units\":[[\"Unit of sample 1.\"],[\"Unit of sample 2.\"]]; got {}",
            type_name(v)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| string_array(&format!("sample_units[{i}]"), item))
        .collect()
}

/// Checks that `sample_units` has one entry per given sample (before `num_samples` picks the
/// first m; the same first m entries are then used).
pub fn check_sample_units(sample_units: &[Vec<String>], n_samples: usize) -> Result<(), String> {
    if sample_units.len() == n_samples {
        Ok(())
    } else {
        Err(format!(
            "option sample_units has {} entries but samples_json holds {n_samples} samples: give \
             one array of units per sample, in the same order",
            sample_units.len()
        ))
    }
}
