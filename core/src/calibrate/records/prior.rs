//! A prior-shift adaptation ([`Prior`], [`crate::calibrate::adapt`]) and the guard's check of
//! it ([`Check`], [`crate::calibrate::guard`]), as the model JSON's `"prior"` carries them.

use serde_json::{json, Value};

use crate::json::type_name;

/// A prior-shift adaptation: training and target base rates, and the EM iterations it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// π_t: the training set's share of true units (positives / n).
    pub train: f64,
    /// π: the target's estimated share of true units.
    pub target: f64,
    /// EM iterations run (at most
    /// [`MAX_ITERATIONS`](crate::calibrate::adapt::MAX_ITERATIONS)).
    pub iterations: usize,
    /// Whether [`Calibration::apply`](crate::calibrate::model::Calibration::apply) re-weights
    /// to `target`: false when the guard refused the adaptation ([`crate::calibrate::guard`]).
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

/// The guard's log-loss comparison ([`crate::calibrate::guard`]).
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
