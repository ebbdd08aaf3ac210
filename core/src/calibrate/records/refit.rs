//! What a refitted model started from ([`Refit`], [`crate::calibrate::refit`]) and the scale
//! its prior was given ([`ScaleChoice`]), as the model JSON's `"refit"` carries them.

use serde_json::{json, Map, Value};

use crate::calibrate::map_platt::Precision;
use crate::json::type_name;

/// What a refitted model started from: the old model's parameters and counts, the prior
/// precision and the number of target labels (`"refit"` in the model JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Refit {
    /// θ₀ = (a, b), the centre: the old model's parameters, its intercept shifted by its
    /// adaptation when it was adapted.
    pub a: f64,
    pub b: f64,
    /// The old model's adaptation (its `prior` JSON) when θ₀ includes it.
    pub adaptation: Option<Value>,
    /// The old model's `n` and `positives`.
    pub n: usize,
    pub positives: usize,
    /// The old model's `fitted_on`, as JSON (`None`: not recorded).
    pub fitted_on: Option<Value>,
    /// The prior precision recorded in the old model.
    pub precision: Precision,
    /// The drift τ² the prior was widened by, when the labels called for it (the fixed refit).
    pub drift: Option<f64>,
    /// The prior's scale c, chosen on the target labels (the refit's prior is c·`precision`);
    /// `None`: the fixed refit (c = 1).
    pub scale: Option<ScaleChoice>,
    /// The target labels refitted on (k; the new model's `n`).
    pub target_labels: usize,
}

/// The keys of `"refit"`.
const REFIT_KEYS: [&str; 6] = [
    "prior",
    "precision",
    "drift",
    "scale",
    "strength",
    "target_labels",
];
const REFIT_PRIOR_KEYS: [&str; 6] = ["a", "b", "n", "positives", "fitted_on", "adaptation"];

impl Refit {
    /// The prior's precision, and its widening when there was one, for notes.
    pub fn describe_prior(&self) -> String {
        if let Some(c) = &self.scale {
            return format!("{} × {}", c.describe(), self.precision.describe());
        }
        match self.drift {
            None => self.precision.describe(),
            Some(d) => format!(
                "{}, widened by a drift τ² = {d} (the labels show these answers differ from the \
                 old ones more than the old fit allows)",
                self.precision.describe()
            ),
        }
    }

    pub fn to_json(&self) -> Value {
        let mut prior = Map::new();
        prior.insert("a".into(), json!(self.a));
        prior.insert("b".into(), json!(self.b));
        prior.insert("n".into(), json!(self.n));
        prior.insert("positives".into(), json!(self.positives));
        if let Some(f) = &self.fitted_on {
            prior.insert("fitted_on".into(), f.clone());
        }
        if let Some(p) = &self.adaptation {
            prior.insert("adaptation".into(), p.clone());
        }
        let mut v = json!({"prior": prior, "precision": self.precision.to_json(),
               "target_labels": self.target_labels});
        if let Some(d) = self.drift {
            v["drift"] = json!(d);
        }
        if let Some(c) = &self.scale {
            v["scale"] = c.to_json();
        }
        v
    }

    /// Reads `{"prior":{"a":…,"b":…,"n":…,"positives":…[,"fitted_on":…]},"precision":[…],
    /// "target_labels":…}` (`what` names it in errors; `"strength": λ`, as refits recorded it
    /// before, reads as λ·I).
    pub fn from_json(v: &Value, what: &str) -> Result<Refit, String> {
        let fix = "pass the JSON that uq_refit_calibration returns, or drop \"refit\"";
        let o = v
            .as_object()
            .ok_or_else(|| format!("{what} must be a JSON object, got {}: {fix}", type_name(v)))?;
        if let Some(k) = o.keys().find(|k| !REFIT_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                REFIT_KEYS.join(", ")
            ));
        }
        let precision = match (
            o.get("precision"),
            o.get("strength").and_then(Value::as_f64),
        ) {
            (Some(v), _) => Precision::from_json(v, &format!("{what}.precision"), fix)?,
            (None, Some(x)) if x > 0.0 && x.is_finite() => Precision::isotropic(x),
            _ => {
                return Err(format!(
                    "{what}.precision must be an array of three numbers [aa, ab, bb] (the prior \
                     precision): {fix}"
                ))
            }
        };
        let drift = match o.get("drift") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(x) if x > 0.0 && x.is_finite() => Some(x),
                _ => return Err(format!("{what}.drift must be a positive number: {fix}")),
            },
        };
        let p = match o.get("prior") {
            Some(Value::Object(p)) => p,
            _ => return Err(format!("{what}.prior must be a JSON object: {fix}")),
        };
        if let Some(k) = p.keys().find(|k| !REFIT_PRIOR_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what}.prior has unknown key {k:?}: its keys are {}",
                REFIT_PRIOR_KEYS.join(", ")
            ));
        }
        let num = |k: &str| match p.get(k).and_then(Value::as_f64) {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(format!("{what}.prior.{k} must be a finite number: {fix}")),
        };
        let count = |k: &str| {
            p.get(k)
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                .ok_or_else(|| format!("{what}.prior.{k} must be a non-negative integer: {fix}"))
        };
        let target_labels = o
            .get("target_labels")
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .ok_or_else(|| format!("{what}.target_labels must be a non-negative integer: {fix}"))?;
        Ok(Refit {
            a: num("a")?,
            b: num("b")?,
            n: count("n")?,
            positives: count("positives")?,
            fitted_on: p.get("fitted_on").filter(|f| !f.is_null()).cloned(),
            adaptation: p.get("adaptation").filter(|f| !f.is_null()).cloned(),
            precision,
            drift,
            scale: match o.get("scale") {
                None | Some(Value::Null) => None,
                Some(v) => Some(ScaleChoice::from_json(v, &format!("{what}.scale"), fix)?),
            },
            target_labels,
        })
    }
}

/// The scale of a refit's prior chosen on the target labels, and what chose it
/// ([`crate::calibrate::refit::scale`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleChoice {
    /// c: the refit's prior is c·P.
    pub scale: f64,
    /// Folds held out: the labelled answers (or units).
    pub folds: usize,
    /// Whether the folds are answers (`true`) or single units (no answer ids given).
    pub by_answer: bool,
    /// Per scale tried, the mean held-out log loss per unit (`None`: a fold's fit failed).
    pub log_loss: Vec<(f64, Option<f64>)>,
}

impl ScaleChoice {
    /// "prior scale 0.25 (leave-one-answer-out over 10 answers)".
    pub fn describe(&self) -> String {
        if self.log_loss.is_empty() {
            return format!(
                "prior scale {} (one {} labelled: nothing to hold out)",
                self.scale,
                if self.by_answer { "answer" } else { "unit" }
            );
        }
        format!(
            "prior scale {} (leave-one-{}-out over {} {}s)",
            self.scale,
            self.what(),
            self.folds,
            self.what()
        )
    }

    fn what(&self) -> &'static str {
        if self.by_answer {
            "answer"
        } else {
            "unit"
        }
    }

    /// `{"chosen": c, "held_out": "answer"|"unit", "folds": n, "log_loss": [[c, loss], …]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "chosen": self.scale,
            "held_out": self.what(),
            "folds": self.folds,
            "log_loss": self.log_loss.iter().map(|(c, l)| json!([c, l])).collect::<Vec<_>>(),
        })
    }

    /// Reads [`Choice::to_json`]'s form; `what` names it, `fix` says what to pass instead.
    pub fn from_json(v: &Value, what: &str, fix: &str) -> Result<ScaleChoice, String> {
        let bad = || {
            format!("{what} must be {{\"chosen\": c, \"held_out\": \"answer\" or \"unit\", \"folds\": n, \"log_loss\": [[c, loss], …]}}, got {v}: {fix}")
        };
        let scale = v["chosen"]
            .as_f64()
            .filter(|c| c.is_finite() && *c > 0.0)
            .ok_or_else(bad)?;
        let by_answer = match v["held_out"].as_str() {
            Some("answer") => true,
            Some("unit") => false,
            _ => return Err(bad()),
        };
        let folds = v["folds"].as_u64().ok_or_else(bad)? as usize;
        let log_loss = v["log_loss"]
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64())))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        Ok(ScaleChoice {
            scale,
            folds,
            by_answer,
            log_loss,
        })
    }
}
