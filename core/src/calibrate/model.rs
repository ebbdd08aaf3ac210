//! The calibration model: its [`Method`], the fitted [`Model`] and [`Calibration`], the model with
//! what it was fitted on, its fit, its map and its JSON ([`super`]'s module doc).

use serde_json::{json, Map, Value};

use super::fit::{check_training, fit_isotonic, fit_platt, interpolate, shift, sigmoid};
use super::map_platt::Precision;
use super::records::{FittedOn, Prior, Refit};
use crate::json::type_name;

/// How a calibration is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Logistic regression on the score (Platt scaling).
    #[default]
    Platt,
    /// Isotonic regression (pool-adjacent-violators).
    Isotonic,
}

impl Method {
    pub const ALL: [Method; 2] = [Method::Platt, Method::Isotonic];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Platt => "platt",
            Method::Isotonic => "isotonic",
        }
    }

    /// Parses `"platt"` or `"isotonic"` (case-insensitive, trimmed).
    pub fn parse(name: &str) -> Result<Method, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "platt" => Ok(Method::Platt),
            "isotonic" => Ok(Method::Isotonic),
            _ => Err(format!(
                "unknown calibration method {name:?}: use \"platt\" (logistic fit) or \
                 \"isotonic\" (pool-adjacent-violators)"
            )),
        }
    }
}

/// A fitted calibration model.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// p(s) = σ(a·s + b).
    Platt { a: f64, b: f64 },
    /// Points (x_i, y_i), x strictly increasing, y non-decreasing in [0, 1]: p(s) interpolates
    /// them linearly, y_0 below x_0 and the last y above the last x.
    Isotonic { x: Vec<f64>, y: Vec<f64> },
}

/// A model with the size of the data it was fitted on.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub model: Model,
    /// Labelled units fitted on.
    pub n: usize,
    /// Of which labelled 1.
    pub positives: usize,
    /// What the scores it was fitted on were made with; `None` when not recorded.
    pub fitted_on: Option<FittedOn>,
    /// A prior-shift adaptation ([`adapt`](super::adapt)): probabilities are re-weighted from the
    /// training base rate to the target's (unless the guard refused it, [`guard`](super::guard)).
    pub prior: Option<Prior>,
    /// Platt: the prior precision of a refit with this model as the prior
    /// ([`refit`](super::refit)): the fit's Fisher information on the data it was fitted on, or
    /// λ·I from a hand-set `refit_strength`; `None` when not recorded.
    pub refit_precision: Option<Precision>,
    /// What a refitted model started from ([`refit`](super::refit)).
    pub refit: Option<Refit>,
}

impl Calibration {
    /// Fits `method` to (score, label) pairs; `score` names the score argument in errors.
    /// Errors: lengths differ, a non-finite score, no pairs, a single class.
    pub fn fit(
        scores: &[f64],
        labels: &[bool],
        method: Method,
        score: &str,
    ) -> Result<Calibration, String> {
        let positives = check_training(scores, labels, score)?;
        let (model, refit_precision) = match method {
            Method::Platt => {
                let (a, b) = fit_platt(scores, labels)?;
                (Model::Platt { a, b }, Precision::of_fit(scores, (a, b)))
            }
            Method::Isotonic => {
                let (x, y) = fit_isotonic(scores, labels);
                (Model::Isotonic { x, y }, None)
            }
        };
        Ok(Calibration {
            model,
            n: scores.len(),
            positives,
            fitted_on: None,
            prior: None,
            refit_precision,
            refit: None,
        })
    }

    pub fn method(&self) -> Method {
        match self.model {
            Model::Platt { .. } => Method::Platt,
            Model::Isotonic { .. } => Method::Isotonic,
        }
    }

    /// The calibrated probability of score `s` (NaN for NaN): the fitted map, re-weighted to the
    /// target base rate when the model is adapted ([`adapt::shift`](super::adapt::shift)).
    pub fn apply(&self, s: f64) -> f64 {
        let p = self.apply_fitted(s);
        match &self.prior {
            Some(prior) if prior.applied => shift(p, prior.train, prior.target),
            _ => p,
        }
    }

    /// The fitted map alone, without any adaptation (NaN for NaN).
    pub fn apply_fitted(&self, s: f64) -> f64 {
        if s.is_nan() {
            return f64::NAN;
        }
        match &self.model {
            Model::Platt { a, b } => sigmoid(a * s + b),
            Model::Isotonic { x, y } => interpolate(x, y, s),
        }
    }

    /// The model as JSON (see the module doc).
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("method".into(), json!(self.method().as_str()));
        match &self.model {
            Model::Platt { a, b } => {
                o.insert("a".into(), json!(a));
                o.insert("b".into(), json!(b));
            }
            Model::Isotonic { x, y } => {
                o.insert("x".into(), json!(x));
                o.insert("y".into(), json!(y));
            }
        }
        o.insert("n".into(), json!(self.n));
        o.insert("positives".into(), json!(self.positives));
        if let Some(f) = &self.fitted_on {
            o.insert("fitted_on".into(), f.to_json());
        }
        if let Some(p) = &self.prior {
            o.insert("prior".into(), p.to_json());
        }
        if let Some(p) = &self.refit_precision {
            o.insert("refit_precision".into(), p.to_json());
        }
        if let Some(r) = &self.refit {
            o.insert("refit".into(), r.to_json());
        }
        Value::Object(o)
    }

    /// Reads a model written by [`Calibration::to_json`]; `what` names it in errors (e.g.
    /// `model_json`, `option calibration.entailment`). `n` and `positives` may be left out.
    pub fn from_json(v: &Value, what: &str) -> Result<Calibration, String> {
        let o = v.as_object().ok_or_else(|| {
            format!(
                "{what} must be a JSON object, got {}: {MODEL_FIX}",
                type_name(v)
            )
        })?;
        let method = method_of(o, what)?;
        let count = |k: &str| -> Result<usize, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => v
                    .as_u64()
                    .map(|n| n as usize)
                    .ok_or_else(|| format!("{what}.{k} must be a non-negative integer, got {v}")),
            }
        };
        let (n, positives) = (count("n")?, count("positives")?);
        let model = match method {
            Method::Platt => platt_from_json(o, what)?,
            Method::Isotonic => {
                let (x, y) = (
                    numbers(o.get("x"), what, "x")?,
                    numbers(o.get("y"), what, "y")?,
                );
                check_isotonic(&x, &y, what)?;
                Model::Isotonic { x, y }
            }
        };
        if positives > n {
            return Err(format!(
                "{what}.positives ({positives}) exceeds {what}.n ({n}): they count the labelled \
                 units fitted on and those labelled 1; {MODEL_FIX}"
            ));
        }
        let fitted_on = match o.get("fitted_on") {
            None | Some(Value::Null) => None,
            Some(v) => Some(FittedOn::from_json(v, &format!("{what}.fitted_on"))?),
        };
        let prior = match o.get("prior") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Prior::from_json(v, &format!("{what}.prior"))?),
        };
        let refit_precision = match (o.get("refit_precision"), o.get("refit_strength")) {
            (Some(v), _) if !v.is_null() => Some(Precision::from_json(
                v,
                &format!("{what}.refit_precision"),
                MODEL_FIX,
            )?),
            (_, None | Some(Value::Null)) => None,
            (_, Some(v)) => match v.as_f64() {
                Some(x) if x > 0.0 && x.is_finite() => Some(Precision::isotropic(x)),
                _ => {
                    return Err(format!(
                        "{what}.refit_strength must be a positive number (λ of a refit's prior \
                         N(θ, I/λ)), got {v}: {MODEL_FIX}"
                    ))
                }
            },
        };
        let refit = match o.get("refit") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Refit::from_json(v, &format!("{what}.refit"))?),
        };
        Ok(Calibration {
            model,
            n,
            positives,
            fitted_on,
            prior,
            refit_precision,
            refit,
        })
    }
}

/// How to fix a model JSON that [`Calibration::from_json`] refuses.
const MODEL_FIX: &str = "pass the JSON that uq_fit_calibration returns, e.g. \
                         {\"method\":\"platt\",\"a\":4.2,\"b\":-1.9}";

/// The `method` of a model JSON, checked against the keys the object has.
fn method_of(o: &Map<String, Value>, what: &str) -> Result<Method, String> {
    let method = match o.get("method") {
        Some(Value::String(m)) => Method::parse(m).map_err(|e| format!("{what}: {e}"))?,
        Some(other) => {
            return Err(format!(
                "{what}.method must be a string, got {}: {MODEL_FIX}",
                type_name(other)
            ))
        }
        None => return Err(format!("{what} has no \"method\": {MODEL_FIX}")),
    };
    let allowed: &[&str] = match method {
        Method::Platt => &[
            "method",
            "a",
            "b",
            "n",
            "positives",
            "fitted_on",
            "prior",
            "refit_precision",
            "refit_strength",
            "refit",
        ],
        Method::Isotonic => &["method", "x", "y", "n", "positives", "fitted_on", "prior"],
    };
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "{what} has unknown key {k:?} for method {}: its keys are {}",
            method.as_str(),
            allowed.join(", ")
        ));
    }
    Ok(method)
}

/// The Platt model of a model JSON: finite `a` and `b`.
fn platt_from_json(o: &Map<String, Value>, what: &str) -> Result<Model, String> {
    let num = |k: &str| -> Result<f64, String> {
        let formula = "platt: p = 1/(1+exp(-(a*score+b)))";
        match o.get(k) {
            None => Err(format!("{what} has no \"{k}\" ({formula}): {MODEL_FIX}")),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() => Ok(x),
                _ => Err(format!(
                    "{what}.{k} must be a finite number ({formula}), got {v}: {MODEL_FIX}"
                )),
            },
        }
    };
    Ok(Model::Platt {
        a: num("a")?,
        b: num("b")?,
    })
}

/// An array of finite numbers (`what.key`).
fn numbers(v: Option<&Value>, what: &str, key: &str) -> Result<Vec<f64>, String> {
    let fix = "pass the JSON that uq_fit_calibration(score, label, 'isotonic') returns";
    let items = match v {
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(format!(
                "{what}.{key} must be an array of numbers, got {}: {fix}",
                type_name(other)
            ))
        }
        None => return Err(format!("{what} has no \"{key}\" (isotonic): {fix}")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| match x.as_f64() {
            Some(f) if f.is_finite() => Ok(f),
            _ => Err(format!(
                "{what}.{key}[{i}] must be a finite number, got {x}: {fix}"
            )),
        })
        .collect()
}

/// An isotonic model's points: as many x as y, at least one, x strictly increasing, y
/// non-decreasing within [0, 1].
fn check_isotonic(x: &[f64], y: &[f64], what: &str) -> Result<(), String> {
    if x.len() != y.len() || x.is_empty() {
        return Err(format!(
            "{what}: x and y must be non-empty arrays of the same length (the fitted points), \
             got {} x and {} y",
            x.len(),
            y.len()
        ));
    }
    if let Some(i) = (1..x.len()).find(|&i| x[i] <= x[i - 1]) {
        return Err(format!(
            "{what}.x must be strictly increasing, but x[{}] = {} follows x[{}] = {}",
            i,
            x[i],
            i - 1,
            x[i - 1]
        ));
    }
    if let Some(i) = (0..y.len()).find(|&i| !(0.0..=1.0).contains(&y[i])) {
        return Err(format!(
            "{what}.y[{i}] = {} is not a probability in [0, 1]",
            y[i]
        ));
    }
    if let Some(i) = (1..y.len()).find(|&i| y[i] < y[i - 1]) {
        return Err(format!(
            "{what}.y must be non-decreasing (an isotonic fit), but y[{}] = {} follows y[{}] = {}",
            i,
            y[i],
            i - 1,
            y[i - 1]
        ));
    }
    Ok(())
}
