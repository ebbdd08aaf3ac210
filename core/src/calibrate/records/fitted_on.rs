//! What a model's scores were made with ([`FittedOn`], the model JSON's `"fitted_on"`).

use serde_json::{json, Map, Value};

use crate::json::type_name;
use crate::score::premise::Premise;

/// The setting a model's scores were made with. Every field is optional: what is not recorded
/// is not compared.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FittedOn {
    /// The scorer (its canonical name).
    pub scorer: Option<String>,
    /// The NLI model (as `uqd status` names it).
    pub nli_model: Option<String>,
    /// The NLI model's precision ("int8", "fp32", "fp16", "original").
    pub precision: Option<String>,
    /// Option `premise` in force, written canonically (`Premise::to_json`).
    pub premise: Option<Value>,
    /// The number of samples each answer was compared with.
    pub num_samples: Option<usize>,
}

/// The keys of `fitted_on`.
pub const FITTED_ON_KEYS: [&str; 5] =
    ["scorer", "nli_model", "precision", "premise", "num_samples"];

/// Option `premise` written canonically, so that equal settings compare equal; a value that is
/// no valid premise is kept as given (it can only differ).
fn canonical_premise(v: &Value) -> Value {
    Premise::parse(v).map_or_else(|_| v.clone(), Premise::to_json)
}

impl FittedOn {
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        if let Some(s) = &self.scorer {
            o.insert("scorer".into(), json!(s));
        }
        if let Some(s) = &self.nli_model {
            o.insert("nli_model".into(), json!(s));
        }
        if let Some(s) = &self.precision {
            o.insert("precision".into(), json!(s));
        }
        if let Some(p) = &self.premise {
            o.insert("premise".into(), p.clone());
        }
        if let Some(n) = self.num_samples {
            o.insert("num_samples".into(), json!(n));
        }
        Value::Object(o)
    }

    /// Reads `{"scorer":…,"nli_model":…,"precision":…,"premise":…,"num_samples":…}`, each key
    /// optional; the scorer is checked against the catalogue and written canonically. `what`
    /// names it in errors.
    pub fn from_json(v: &Value, what: &str) -> Result<FittedOn, String> {
        let example = "{\"scorer\":\"entailment\",\"num_samples\":5,\"premise\":\"whole\"}";
        let o = v.as_object().ok_or_else(|| {
            format!(
                "{what} must be a JSON object of what the scores were made with, e.g. \
                 {example}; got {}",
                type_name(v)
            )
        })?;
        if let Some(k) = o.keys().find(|k| !FITTED_ON_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                FITTED_ON_KEYS.join(", ")
            ));
        }
        let text = |k: &str| -> Result<Option<String>, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "{what}.{k} must be a string, got {}: e.g. {example}",
                    type_name(other)
                )),
            }
        };
        let scorer = match text("scorer")? {
            Some(s) => Some(
                crate::scorers::Scorer::parse(&s)
                    .map_err(|e| format!("{what}.scorer: {e}"))?
                    .name()
                    .to_string(),
            ),
            None => None,
        };
        let num_samples = match o.get("num_samples") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => Some(n as usize),
                _ => {
                    return Err(format!(
                        "{what}.num_samples must be a positive integer (the samples each answer \
                         was compared with), got {v}"
                    ))
                }
            },
        };
        Ok(FittedOn {
            scorer,
            nli_model: text("nli_model")?,
            precision: text("precision")?,
            premise: o
                .get("premise")
                .filter(|p| !p.is_null())
                .map(canonical_premise),
            num_samples,
        })
    }

    /// The setting of a score request: the scorer, the engine's NLI model and precision,
    /// the premise setting in force (`ScoreOptions::premise`) and the samples used (`None`: not
    /// known, not compared).
    pub fn of_request(
        scorer: &str,
        nli_model: &str,
        precision: &str,
        premise: Premise,
        num_samples: Option<usize>,
    ) -> FittedOn {
        FittedOn {
            scorer: Some(scorer.to_string()),
            nli_model: Some(nli_model.to_string()),
            precision: Some(precision.to_string()),
            premise: Some(premise.to_json()),
            num_samples,
        }
    }
}
