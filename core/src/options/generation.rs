//! Options of `uq_generate` and of the answers unit-QA scorers sample: the temperatures of the
//! original and of the sampled answers.

use serde_json::Value;

use super::values::ranged;

/// Default temperature of the original answer (`uq_generate` row 0).
pub const DEFAULT_TEMPERATURE: f64 = 0.0;
/// Default temperature of the sampled answers (`uq_generate` rows 1..n; uqlm's default).
pub const DEFAULT_SAMPLING_TEMPERATURE: f64 = 1.0;

/// The temperatures of generated answers.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationOptions {
    /// Option `temperature`: of the original answer (`generate` row 0), in [0, 2].
    pub temperature: f64,
    /// Option `sampling_temperature`: of the sampled answers (`generate` rows 1..n), in (0, 2].
    pub sampling_temperature: f64,
}

impl Default for GenerationOptions {
    fn default() -> Self {
        GenerationOptions {
            temperature: DEFAULT_TEMPERATURE,
            sampling_temperature: DEFAULT_SAMPLING_TEMPERATURE,
        }
    }
}

impl GenerationOptions {
    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "temperature" => {
                self.temperature = ranged(key, val, "0", |x| (0.0..=2.0).contains(&x), "0..=2")?
            }
            "sampling_temperature" => {
                self.sampling_temperature = ranged(
                    key,
                    val,
                    "1.0",
                    |x| x > 0.0 && x <= 2.0,
                    "(0, 2] (sampled answers need a temperature above 0)",
                )?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
