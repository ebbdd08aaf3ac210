//! The plain records a calibration model's JSON carries, each read and written as JSON: what its
//! scores were made with ([`FittedOn`]), a prior-shift adaptation ([`Prior`], [`super::adapt`])
//! with the guard's check of it ([`Check`], [`super::guard`]), and what a refitted model started
//! from ([`Refit`], [`super::refit`]).

use serde_json::{json, Map, Value};

use super::map_platt::Precision;
use crate::json::type_name;
use crate::score::premise::Premise;

/// A prior-shift adaptation: training and target base rates, and the EM iterations it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// π_t: the training set's share of true units (positives / n).
    pub train: f64,
    /// π: the target's estimated share of true units.
    pub target: f64,
    /// EM iterations run (at most [`MAX_ITERATIONS`](super::adapt::MAX_ITERATIONS)).
    pub iterations: usize,
    /// Whether [`Calibration::apply`](super::model::Calibration::apply) re-weights to `target`:
    /// false when the guard refused the adaptation ([`super::guard`]).
    pub applied: bool,
    /// The guard's figures on the target's labelled units; `None`: no labels, unchecked.
    pub check: Option<Check>,
}

/// The keys of `"prior"`.
const PRIOR_KEYS: [&str; 5] = ["train", "target", "iterations", "applied", "check"];

impl Prior {
    /// `{"train":…,"target":…,"iterations":…}`, with `"applied"` and `"check"` when checked.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"train": self.train, "target": self.target,
                           "iterations": self.iterations});
        if let Some(c) = &self.check {
            v["applied"] = json!(self.applied);
            v["check"] = c.to_json();
        } else if !self.applied {
            v["applied"] = json!(false);
        }
        v
    }

    /// Reads `{"train":…,"target":…,"iterations":…}` (`what` names it in errors).
    pub fn from_json(v: &Value, what: &str) -> Result<Prior, String> {
        let fix = "pass the JSON that uq_adapt_calibration returns, or drop \"prior\" to use the \
                   model unadapted";
        let o = v
            .as_object()
            .ok_or_else(|| format!("{what} must be a JSON object, got {}: {fix}", type_name(v)))?;
        if let Some(k) = o.keys().find(|k| !PRIOR_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                PRIOR_KEYS.join(", ")
            ));
        }
        let rate = |k: &str| -> Result<f64, String> {
            match o.get(k).and_then(Value::as_f64) {
                Some(x) if x > 0.0 && x < 1.0 => Ok(x),
                Some(x) => Err(format!(
                    "{what}.{k} = {x} is not a base rate strictly between 0 and 1: {fix}"
                )),
                None => Err(format!(
                    "{what}.{k} must be a number strictly between 0 and 1 (a base rate): {fix}"
                )),
            }
        };
        let iterations = match o.get("iterations") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().ok_or_else(|| {
                format!("{what}.iterations must be a non-negative integer, got {v}")
            })? as usize,
        };
        let applied = match o.get("applied") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(format!(
                    "{what}.applied must be true or false (false: the guard refused the \
                     adaptation), got {v}"
                ))
            }
        };
        let check = match o.get("check") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Check::from_json(v, &format!("{what}.check"))?),
        };
        Ok(Prior {
            train: rate("train")?,
            target: rate("target")?,
            iterations,
            applied,
            check,
        })
    }
}

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

/// The guard's figures on the labelled units of the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Labelled units checked on.
    pub labelled: usize,
    /// ECE of the model unadapted, and adapted, on them.
    pub ece_unadapted: f64,
    pub ece_adapted: f64,
    /// Mean log loss unadapted and adapted, and the standard error of their mean difference
    /// (what the guard decides on; `None` in checks recorded before it did).
    pub log_loss: Option<LogLossCheck>,
}

/// The guard's log-loss comparison ([`super::guard`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogLossCheck {
    pub unadapted: f64,
    pub adapted: f64,
    pub se: f64,
}

const CHECK_KEYS: [&str; 6] = [
    "labelled",
    "ece_unadapted",
    "ece_adapted",
    "log_loss_unadapted",
    "log_loss_adapted",
    "log_loss_se",
];

impl Check {
    /// "the mean log loss goes from … to … (standard error of the change …) and the ECE from …
    /// to …", for notes.
    pub fn describe(&self) -> String {
        match self.log_loss {
            Some(l) => format!(
                "the mean log loss goes from {:.3} to {:.3} (standard error of the change {:.3}) \
                 and the ECE from {:.3} to {:.3}",
                l.unadapted, l.adapted, l.se, self.ece_unadapted, self.ece_adapted
            ),
            None => format!(
                "the ECE goes from {:.3} to {:.3}",
                self.ece_unadapted, self.ece_adapted
            ),
        }
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({"labelled": self.labelled, "ece_unadapted": self.ece_unadapted,
               "ece_adapted": self.ece_adapted});
        if let Some(l) = self.log_loss {
            v["log_loss_unadapted"] = json!(l.unadapted);
            v["log_loss_adapted"] = json!(l.adapted);
            v["log_loss_se"] = json!(l.se);
        }
        v
    }

    /// Reads `{"labelled":…,"ece_unadapted":…,"ece_adapted":…[,"log_loss_unadapted":…,
    /// "log_loss_adapted":…,"log_loss_se":…]}` (`what` names it).
    pub fn from_json(v: &Value, what: &str) -> Result<Check, String> {
        let fix = "pass the JSON that uq_adapt_calibration returns";
        let o = v
            .as_object()
            .ok_or_else(|| format!("{what} must be a JSON object, got {}: {fix}", type_name(v)))?;
        if let Some(k) = o.keys().find(|k| !CHECK_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                CHECK_KEYS.join(", ")
            ));
        }
        let ece = |k: &str| match o.get(k).and_then(Value::as_f64) {
            Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(format!("{what}.{k} must be an ECE in [0, 1]: {fix}")),
        };
        let loss = |k: &str| match o.get(k).and_then(Value::as_f64) {
            Some(x) if x >= 0.0 && x.is_finite() => Ok(x),
            _ => Err(format!("{what}.{k} must be a non-negative number: {fix}")),
        };
        let log_loss = if CHECK_KEYS[3..].iter().any(|k| o.contains_key(*k)) {
            Some(LogLossCheck {
                unadapted: loss("log_loss_unadapted")?,
                adapted: loss("log_loss_adapted")?,
                se: loss("log_loss_se")?,
            })
        } else {
            None
        };
        Ok(Check {
            labelled: o
                .get("labelled")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("{what}.labelled must be a non-negative integer: {fix}"))?
                as usize,
            ece_unadapted: ece("ece_unadapted")?,
            ece_adapted: ece("ece_adapted")?,
            log_loss,
        })
    }
}

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
/// ([`super::refit::scale`]).
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
