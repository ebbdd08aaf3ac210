//! Stage 3 option (paper §3.4): the aggregation operator A of the unit scores.

use serde_json::Value;

use super::values::string_option;
use crate::aggregate::Aggregation;

/// How unit scores become the response's score.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AggregateOptions {
    /// Option `aggregation`: mean (default), min, geometric mean or rank-weighted.
    pub aggregation: Aggregation,
}

impl AggregateOptions {
    /// Reads option `key` when it is this concern's; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "aggregation" => {
                let s = string_option(key, val, "\"mean\"")?;
                self.aggregation =
                    Aggregation::parse(s).map_err(|e| format!("option aggregation: {e}"))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
