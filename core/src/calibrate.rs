//! Calibration: a monotone map from a scorer's confidence to the probability that the unit is
//! true, fitted on labelled units (the paper evaluates calibration with ECE and Brier, §5; its
//! scores are confidences, not probabilities). Two methods, as scikit-learn's
//! `CalibratedClassifierCV`:
//!
//! * `platt` (Platt 1999): p(s) = σ(a·s + b), σ(z) = 1 / (1 + e^(−z)), (a, b) the maximum
//!   likelihood fit to Platt's smoothed targets t⁺ = (N⁺ + 1)/(N⁺ + 2) for label 1 and
//!   t⁻ = 1/(N⁻ + 2) for label 0 (finite a, b even when the classes separate). Fitted by Newton's
//!   method with backtracking (Lin, Lin & Weng 2007).
//! * `isotonic`: the non-decreasing step function closest in squared error to the labels
//!   (pool-adjacent-violators on the distinct scores, tied scores first pooled), predicted as
//!   scikit-learn's `IsotonicRegression(out_of_bounds="clip")`: linear interpolation between the
//!   first and last distinct score of each pooled block, clipped outside the fitted range.
//!
//! A model is JSON (`to_json` / `from_json`): `{"method":"platt","a":…,"b":…,"n":…,
//! "positives":…}` or `{"method":"isotonic","x":[…],"y":[…],"n":…,"positives":…}`, with two
//! optional keys: `"fitted_on"`, what its scores were made with ([`FittedOn`]: scorer, NLI model,
//! precision, premise setting, number of samples), and `"prior"`, a prior-shift adaptation to a
//! new set of answers ([`adapt`]: `{"train":…,"target":…,"iterations":…}`, checked on labels
//! of the new answers when there are some: [`guard`]), which [`Calibration::apply`] honours.
//! A Platt model fitted here also records `"refit_strength"`, the prior strength λ for a refit
//! on a few labels of new answers, and a refitted model records `"refit"`, what it started from
//! ([`refit`]).

pub mod adapt;
pub mod conformal;
pub mod guard;
pub mod refit;

pub use adapt::{FittedOn, Prior};
pub use refit::Refit;

use serde_json::{json, Map, Value};

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
    /// A prior-shift adaptation ([`adapt`]): probabilities are re-weighted from the training
    /// base rate to the target's (unless the guard refused it, [`guard`]).
    pub prior: Option<Prior>,
    /// Platt: λ for a refit with this model as the prior ([`refit`]), chosen by
    /// cross-validation on the data it was fitted on; `None` when not recorded.
    pub refit_strength: Option<f64>,
    /// What a refitted model started from ([`refit`]).
    pub refit: Option<Refit>,
}

/// Logistic function σ(z) = 1 / (1 + e^(−z)), without overflow for large |z|.
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^z) without overflow.
fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// Checks a training set: same lengths, finite scores, at least one unit of each class.
/// `score` names the score argument in errors.
fn check_training(scores: &[f64], labels: &[bool], score: &str) -> Result<usize, String> {
    if scores.len() != labels.len() {
        return Err(format!(
            "internal error: {} scores but {} labels",
            scores.len(),
            labels.len()
        ));
    }
    if let Some(s) = scores.iter().find(|s| !s.is_finite()) {
        return Err(format!("{score} must be a finite number, got {s}"));
    }
    let positives = labels.iter().filter(|&&l| l).count();
    if scores.is_empty() {
        return Err(
            "no labelled rows to fit on (rows with a NULL score or label are skipped): fit on \
             rows with a score and a 0/1 label, of both classes"
                .to_string(),
        );
    }
    if positives == 0 || positives == labels.len() {
        return Err(format!(
            "all {} labelled rows have label {}: a fit needs both classes (1 = true, \
             0 = false); add rows of the other class",
            labels.len(),
            u8::from(positives > 0)
        ));
    }
    Ok(positives)
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
        let (model, refit_strength) = match method {
            Method::Platt => {
                let (a, b) = fit_platt(scores, labels)?;
                (
                    Model::Platt { a, b },
                    refit::choose_strength(scores, labels),
                )
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
            refit_strength,
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
    /// target base rate when the model is adapted ([`adapt::shift`]).
    pub fn apply(&self, s: f64) -> f64 {
        let p = self.apply_fitted(s);
        match &self.prior {
            Some(prior) if prior.applied => adapt::shift(p, prior.train, prior.target),
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
        if let Some(l) = self.refit_strength {
            o.insert("refit_strength".into(), json!(l));
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
        let refit_strength = match o.get("refit_strength") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(x) if x > 0.0 && x.is_finite() => Some(x),
                _ => {
                    return Err(format!(
                        "{what}.refit_strength must be a positive number (the prior strength λ \
                         of a refit), got {v}: {MODEL_FIX}"
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
            refit_strength,
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

/// Linear interpolation through the points, constant beyond the ends (`np.interp`).
fn interpolate(x: &[f64], y: &[f64], s: f64) -> f64 {
    let last = x.len() - 1;
    if s <= x[0] {
        return y[0];
    }
    if s >= x[last] {
        return y[last];
    }
    // first i with x[i] > s; 1 ≤ i ≤ last
    let i = x.partition_point(|&xi| xi <= s);
    let (x0, x1, y0, y1) = (x[i - 1], x[i], y[i - 1], y[i]);
    y0 + (y1 - y0) * (s - x0) / (x1 - x0)
}

/// Platt's maximum-likelihood (a, b) for the smoothed targets (module doc), by Newton's method
/// with a backtracking line search on the negative log-likelihood
/// F(a, b) = Σ_i [ (1 − t_i)·z_i + ln(1 + e^(−z_i)) ], z_i = a·s_i + b, whose gradient is
/// Σ_i (p_i − t_i)·(s_i, 1) and Hessian Σ_i p_i(1 − p_i)·(s_i, 1)(s_i, 1)ᵀ.
fn fit_platt(scores: &[f64], labels: &[bool]) -> Result<(f64, f64), String> {
    let n_pos = labels.iter().filter(|&&l| l).count() as f64;
    let n_neg = labels.len() as f64 - n_pos;
    let targets = platt_targets(labels);
    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
    if scores.iter().all(|&s| s == scores[0]) {
        // One distinct score: only the intercept is identified; p = mean target.
        let t = targets.iter().sum::<f64>() / targets.len() as f64;
        return Ok((0.0, (t / (1.0 - t)).ln()));
    }
    // Centre the scores (z = a·(s − mean) + c, b = c − a·mean) for a well-conditioned Hessian.
    let xs: Vec<f64> = scores.iter().map(|s| s - mean).collect();
    let loss = |a: f64, c: f64| -> f64 {
        xs.iter()
            .zip(&targets)
            .map(|(&x, &t)| {
                let z = a * x + c;
                (1.0 - t) * z + softplus(-z)
            })
            .sum()
    };
    let (mut a, mut c) = (0.0, ((n_pos + 1.0) / (n_neg + 1.0)).ln());
    let mut f = loss(a, c);
    for _ in 0..200 {
        let (mut ga, mut gc, mut haa, mut hac, mut hcc) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&x, &t) in xs.iter().zip(&targets) {
            let p = sigmoid(a * x + c);
            let d = p - t;
            let w = (p * (1.0 - p)).max(1e-300);
            ga += d * x;
            gc += d;
            haa += w * x * x;
            hac += w * x;
            hcc += w;
        }
        if ga.abs() < 1e-12 * xs.len() as f64 && gc.abs() < 1e-12 * xs.len() as f64 {
            break;
        }
        // Newton direction: H·(da, dc) = −g, with Lin et al.'s tiny ridge.
        let (haa, hcc) = (haa + 1e-12, hcc + 1e-12);
        let det = haa * hcc - hac * hac;
        let da = -(hcc * ga - hac * gc) / det;
        let dc = -(haa * gc - hac * ga) / det;
        let slope = ga * da + gc * dc;
        if slope.abs() < 1e-9 * (1.0 + f.abs()) {
            // Quadratic region: the decrease is below the loss's rounding, so the line search
            // cannot see it; Newton's full step converges here.
            (a, c) = (a + da, c + dc);
            f = loss(a, c);
            continue;
        }
        let mut step = 1.0;
        let mut moved = false;
        while step >= 1e-10 {
            let (na, nc) = (a + step * da, c + step * dc);
            let nf = loss(na, nc);
            if nf <= f + 1e-4 * step * slope {
                (a, c, f) = (na, nc, nf);
                moved = true;
                break;
            }
            step /= 2.0;
        }
        if !moved {
            break; // no further decrease representable: at the optimum to rounding
        }
    }
    let b = c - a * mean;
    if a.is_finite() && b.is_finite() {
        Ok((a, b))
    } else {
        Err("internal error: the Platt fit diverged".to_string())
    }
}

/// Platt's smoothed targets: (N⁺ + 1)/(N⁺ + 2) for label 1, 1/(N⁻ + 2) for label 0.
fn platt_targets(labels: &[bool]) -> Vec<f64> {
    let n_pos = labels.iter().filter(|&&l| l).count() as f64;
    let n_neg = labels.len() as f64 - n_pos;
    let (t_pos, t_neg) = ((n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0));
    labels
        .iter()
        .map(|&l| if l { t_pos } else { t_neg })
        .collect()
}

/// Isotonic regression of the labels on the scores (module doc): the points (x, y) of the
/// fitted function, the first and last distinct score of each pooled block.
fn fit_isotonic(scores: &[f64], labels: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let mut v: Vec<(f64, f64)> = scores
        .iter()
        .zip(labels)
        .map(|(&s, &l)| (s, if l { 1.0 } else { 0.0 }))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Pool tied scores: (x, weight, sum of labels).
    let mut distinct: Vec<(f64, f64, f64)> = Vec::new();
    for (s, l) in v {
        match distinct.last_mut() {
            Some(last) if last.0 == s => {
                last.1 += 1.0;
                last.2 += l;
            }
            _ => distinct.push((s, 1.0, l)),
        }
    }
    let blocks = pool_adjacent_violators(&distinct);
    let mut x = Vec::with_capacity(2 * blocks.len());
    let mut y = Vec::with_capacity(2 * blocks.len());
    for b in blocks {
        let value = (b.sum / b.weight).clamp(0.0, 1.0);
        x.push(b.first);
        y.push(value);
        if b.last > b.first {
            x.push(b.last);
            y.push(value);
        }
    }
    (x, y)
}

/// A block of pooled distinct scores.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    first: f64,
    last: f64,
    weight: f64,
    sum: f64,
}

/// Pool-adjacent-violators over points (x, weight, weighted sum of y) sorted by x: blocks whose
/// means y = sum / weight strictly increase, each the weighted mean of the points it pools.
/// Adjacent blocks with equal means are pooled too (one constant piece).
fn pool_adjacent_violators(points: &[(f64, f64, f64)]) -> Vec<Block> {
    let mut stack: Vec<Block> = Vec::with_capacity(points.len());
    for &(x, w, s) in points {
        let mut cur = Block {
            first: x,
            last: x,
            weight: w,
            sum: s,
        };
        // previous mean ≥ current mean ⇔ prev.sum · cur.weight ≥ cur.sum · prev.weight
        while let Some(prev) = stack.last() {
            if prev.sum * cur.weight >= cur.sum * prev.weight {
                cur = Block {
                    first: prev.first,
                    last: cur.last,
                    weight: prev.weight + cur.weight,
                    sum: prev.sum + cur.sum,
                };
                stack.pop();
            } else {
                break;
            }
        }
        stack.push(cur);
    }
    stack
}

#[cfg(test)]
mod tests;
