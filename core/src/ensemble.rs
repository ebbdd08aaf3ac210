//! Tuned ensembles: a weighted mean of several scorers' confidences, c(s) = Σ_k w_k·c_k(s) with
//! w_k ≥ 0 and Σ_k w_k = 1, the weights chosen on labelled units (uqlm's `UQEnsemble.tune`, which
//! does this for short answers; here for units). The paper compares scorers one at a time (§5);
//! which is best differs by dataset, and an ensemble tuned on labelled data need not choose.
//!
//! * Combining (as uqlm's `Tuner._compute_ensemble_scores`): a component whose score is missing
//!   (NaN / NULL) is left out and the remaining weights are rescaled to sum to 1; no component
//!   with a positive weight present → no score.
//! * Fitting: maximise AUROC (`auroc`, uqlm's default `roc_auc`) or minimise the log-loss
//!   (`log_loss`, scores taken as probabilities, clipped to [1e−15, 1 − 1e−15] as scikit-learn)
//!   over the units whose every component score is present. uqlm searches a grid for 2 or 3
//!   components and samples 100 random weight vectors (optuna) beyond; uqlite searches
//!   deterministically: start from the best single scorer (or equal weights when better), then
//!   move weight between pairs of components, δ ∈ {0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002,
//!   0.001}, keeping a move only when it strictly improves the objective. The result is never
//!   worse on the fitted units than the best single scorer, and weights are multiples of 0.001.

use serde_json::{Map, Value};

use crate::json::type_name;
use crate::metrics::auroc;

/// What the weights are tuned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Objective {
    /// Maximise the AUROC of the ensemble score (label 1 = positive).
    #[default]
    Auroc,
    /// Minimise the mean log-loss, the ensemble score taken as P(label = 1).
    LogLoss,
}

impl Objective {
    pub fn as_str(self) -> &'static str {
        match self {
            Objective::Auroc => "auroc",
            Objective::LogLoss => "log_loss",
        }
    }

    /// Parses `auroc` (alias uqlm's `roc_auc`) or `log_loss`.
    pub fn parse(name: &str) -> Result<Objective, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auroc" | "roc_auc" => Ok(Objective::Auroc),
            "log_loss" => Ok(Objective::LogLoss),
            _ => Err(format!(
                "unknown objective {name:?}: use \"auroc\" (maximise AUROC) or \"log_loss\" \
                 (minimise log-loss)"
            )),
        }
    }
}

/// Named, non-negative weights summing to 1, in name order.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    pub names: Vec<String>,
    pub values: Vec<f64>,
}

impl Weights {
    /// Reads a JSON object name → weight; `what` names it in errors (`weights_json`, `option
    /// ensemble_weights`). Weights must be finite and ≥ 0, at least one positive; they are
    /// divided by their sum (uqlm normalises too).
    pub fn from_json(v: &Value, what: &str) -> Result<Weights, String> {
        let example = "{\"entailment\":0.7,\"closeness_centrality\":0.3}";
        let o = v.as_object().ok_or_else(|| {
            format!(
                "{what} must be a JSON object of scorer → weight, e.g. {example} (as \
                 uq_fit_ensemble returns); got {}",
                type_name(v)
            )
        })?;
        if o.is_empty() {
            return Err(format!(
                "{what} is empty: give at least one scorer and its weight, e.g. {example}"
            ));
        }
        let mut names = Vec::with_capacity(o.len());
        let mut values = Vec::with_capacity(o.len());
        for (k, w) in o {
            match w.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => {
                    names.push(k.clone());
                    values.push(x);
                }
                _ => {
                    return Err(format!(
                        "{what}.{k} is {w}: every weight must be a number >= 0, e.g. {example}"
                    ))
                }
            }
        }
        let sum: f64 = values.iter().sum();
        if sum <= 0.0 {
            return Err(format!(
                "{what}: every weight is 0; give at least one scorer a positive weight"
            ));
        }
        values.iter_mut().for_each(|x| *x /= sum);
        Ok(Weights { names, values })
    }

    /// The weights as a JSON object name → weight.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        for (n, w) in self.names.iter().zip(&self.values) {
            o.insert(n.clone(), Value::from(*w));
        }
        Value::Object(o)
    }

    /// Names with a positive weight.
    pub fn used(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .zip(&self.values)
            .filter(|(_, &w)| w > 0.0)
            .map(|(n, _)| n.as_str())
    }

    /// The ensemble score of one unit, each component's score read with `score` (NaN or
    /// `None`: missing; see [`combine`]).
    pub fn apply(&self, score: impl Fn(&str) -> Option<f64>) -> Option<f64> {
        let s: Vec<f64> = self
            .names
            .iter()
            .map(|n| score(n).unwrap_or(f64::NAN))
            .collect();
        combine(&s, &self.values)
    }
}

/// Σ_k w_k s_k / Σ_k w_k over the components whose score is not NaN; `None` when no component
/// with a positive weight is present.
pub fn combine(scores: &[f64], weights: &[f64]) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for (&s, &w) in scores.iter().zip(weights) {
        if !s.is_nan() && w > 0.0 {
            num += w * s;
            den += w;
        }
    }
    (den > 0.0).then(|| num / den)
}

/// One scores object of a unit (name → score or null), as `uq_fit_ensemble` and `uq_ensemble`
/// take it; `what` names it in errors. NULL or NaN is a missing score (`None`).
pub fn scores_from_json(v: &Value, what: &str) -> Result<Vec<(String, Option<f64>)>, String> {
    let example = "json_object('entailment', e.score, 'closeness_centrality', c.score)";
    let o = v.as_object().ok_or_else(|| {
        format!(
            "{what} must be a JSON object of scorer → score for one unit, e.g. {example}; got {}",
            type_name(v)
        )
    })?;
    if o.is_empty() {
        return Err(format!(
            "{what} is empty: give each component's score of the unit, e.g. {example}"
        ));
    }
    o.iter()
        .map(|(k, s)| match s {
            Value::Null => Ok((k.clone(), None)),
            _ => match s.as_f64() {
                Some(x) if x.is_finite() => Ok((k.clone(), Some(x))),
                _ => Err(format!(
                    "{what}.{k} is {s}: every score must be a finite number (or null when \
                     missing)"
                )),
            },
        })
        .collect()
}

/// The labelled units an ensemble is fitted on: the component names (from the first unit) and,
/// per unit with every component present, the scores in name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Training {
    pub names: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub labels: Vec<bool>,
    /// Units left out because a component score was missing.
    pub incomplete: usize,
}

impl Training {
    /// Adds one unit. Every unit must name the same components; `what` names the scores
    /// argument in errors.
    pub fn push(
        &mut self,
        scores: Vec<(String, Option<f64>)>,
        label: bool,
        what: &str,
    ) -> Result<(), String> {
        if self.names.is_empty() && self.rows.is_empty() && self.incomplete == 0 {
            self.names = scores.iter().map(|(n, _)| n.clone()).collect();
            self.names.sort();
        } else {
            let mut names: Vec<&String> = scores.iter().map(|(n, _)| n).collect();
            names.sort();
            if names.len() != self.names.len()
                || names.iter().zip(&self.names).any(|(a, b)| *a != b)
            {
                let missing = self.names.iter().find(|n| !names.contains(n));
                let extra = names.iter().find(|n| !self.names.contains(n));
                let which = match (missing, extra) {
                    (Some(m), _) => format!("lacks {m:?}"),
                    (None, Some(e)) => format!("has {e:?}, which the first row lacks"),
                    (None, None) => "names other scorers".to_string(),
                };
                return Err(format!(
                    "{what} must name the same scorers in every row (the first row names {}), \
                     but a row {which}; give every scorer in every row, with null for a \
                     missing score",
                    self.names.join(", ")
                ));
            }
        }
        let mut row = Vec::with_capacity(self.names.len());
        for n in &self.names {
            match scores.iter().find(|(k, _)| k == n).and_then(|(_, s)| *s) {
                Some(s) => row.push(s),
                None => {
                    self.incomplete += 1;
                    return Ok(());
                }
            }
        }
        self.rows.push(row);
        self.labels.push(label);
        Ok(())
    }

    /// Tunes the weights for `objective` (module doc).
    pub fn fit(&self, objective: Objective) -> Result<Weights, String> {
        let skipped = if self.incomplete > 0 {
            format!(
                " ({} rows were left out for a missing component score)",
                self.incomplete
            )
        } else {
            String::new()
        };
        let positives = self.labels.iter().filter(|&&l| l).count();
        if self.rows.is_empty() {
            return Err(format!(
                "no labelled rows to fit on{skipped}: fit on rows with every component score \
                 and a 0/1 label, of both classes"
            ));
        }
        if positives == 0 || positives == self.labels.len() {
            return Err(format!(
                "all {} labelled rows have label {}{skipped}: a fit needs both classes \
                 (1 = true, 0 = false); add rows of the other class",
                self.labels.len(),
                u8::from(positives > 0)
            ));
        }
        if objective == Objective::LogLoss {
            for row in &self.rows {
                if let Some((n, s)) = self
                    .names
                    .iter()
                    .zip(row)
                    .find(|(_, s)| !(0.0..=1.0).contains(*s))
                {
                    return Err(format!(
                        "objective log_loss takes the scores as probabilities, but {n} has \
                         score {s} outside [0, 1]: use objective auroc, or calibrate {n} first"
                    ));
                }
            }
        }
        let value = |w: &[f64]| self.objective_value(w, objective);
        let values = search(self.names.len(), value);
        Ok(Weights {
            names: self.names.clone(),
            values,
        })
    }

    /// The objective at weights `w`, larger is better: AUROC, or minus the mean log-loss.
    pub fn objective_value(&self, w: &[f64], objective: Objective) -> f64 {
        let scores: Vec<f64> = self
            .rows
            .iter()
            .map(|r| r.iter().zip(w).map(|(s, w)| s * w).sum())
            .collect();
        match objective {
            Objective::Auroc => auroc(&scores, &self.labels).unwrap_or(f64::NEG_INFINITY),
            Objective::LogLoss => -log_loss(&scores, &self.labels),
        }
    }
}

/// Mean log-loss −(1/N) Σ [y ln p + (1 − y) ln(1 − p)], p clipped to [1e−15, 1 − 1e−15].
pub fn log_loss(p: &[f64], labels: &[bool]) -> f64 {
    const EPS: f64 = 1e-15;
    let sum: f64 = p
        .iter()
        .zip(labels)
        .map(|(&p, &l)| {
            let p = p.clamp(EPS, 1.0 - EPS);
            if l {
                -p.ln()
            } else {
                -(1.0 - p).ln()
            }
        })
        .sum();
    sum / p.len() as f64
}

/// Pairwise-transfer steps of the weight search.
const STEPS: [f64; 8] = [0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001];
/// Most passes over the pairs at one step size.
const MAX_PASSES: usize = 200;

/// Maximises `value` over the simplex of `k` weights (module doc); weights rounded to 1e−9.
fn search(k: usize, value: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    if k == 1 {
        return vec![1.0];
    }
    let mut starts: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    starts.push(vec![1.0 / k as f64; k]);
    let mut best = starts[0].clone();
    let mut best_v = value(&best);
    for s in &starts[1..] {
        let v = value(s);
        if v > best_v + 1e-12 {
            (best, best_v) = (s.clone(), v);
        }
    }
    for delta in STEPS {
        for _ in 0..MAX_PASSES {
            let mut improved = false;
            for i in 0..k {
                for j in 0..k {
                    let d = delta.min(best[j]);
                    if i == j || d <= 0.0 {
                        continue;
                    }
                    let mut w = best.clone();
                    w[i] += d;
                    w[j] -= d;
                    let v = value(&w);
                    if v > best_v + 1e-12 {
                        (best, best_v) = (w, v);
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
    }
    // Clean the float noise of the steps; the largest weight takes the rounding residual.
    let mut w: Vec<f64> = best.iter().map(|x| (x * 1e9).round() / 1e9).collect();
    let residual = 1.0 - w.iter().sum::<f64>();
    if let Some(i) = (0..k).max_by(|&a, &b| w[a].total_cmp(&w[b])) {
        w[i] = (w[i] + residual).max(0.0);
    }
    w
}

#[cfg(test)]
mod tests;
