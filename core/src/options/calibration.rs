//! Calibration option: a fitted calibration model (`uq_fit_calibration`, [`crate::calibrate`])
//! per scorer, applied to that scorer's unit scores after scoring. The calibrated scores sit
//! beside the raw ones (`calibrated`), and UAD filters on them when its scorer has a model.
//! In a job, `calibration.adapt` adapts the models to the job's answers ([`Adapt`],
//! [`crate::calibrate::adapt`], checked on the job's labels: [`crate::calibrate::guard`]) and
//! `calibration.refit` refits them on the job's labelled units ([`crate::calibrate::refit`]);
//! the job takes both out before these options are read.

use serde_json::Value;

use crate::calibrate::Calibration;
use crate::json::type_name;
use crate::scorers::Scorer;

/// Option `calibration`: `{"<scorer>": <model>, …}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CalibrationOptions {
    /// One model per scorer, in the option's key order.
    pub models: Vec<(Scorer, Calibration)>,
}

const EXAMPLE: &str =
    "\"calibration\":{\"entailment\":{\"method\":\"platt\",\"a\":4.2,\"b\":-1.9}}";

/// Option `calibration.adapt` of a job: which answers share one estimated base rate when the
/// models are adapted to the job's scores (Saerens et al. 2002, [`crate::calibrate::adapt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapt {
    /// `"job"`: one base rate for all the job's answers (a job scores one table: per table).
    Job,
    /// `"llm"`: one base rate per LLM that wrote the answers (`uq_answer.model`; answers uqlite
    /// did not generate form one group).
    Llm,
}

impl Adapt {
    pub fn as_str(self) -> &'static str {
        match self {
            Adapt::Job => "job",
            Adapt::Llm => "llm",
        }
    }

    /// Reads `"job"` or `"llm"` (option `calibration.adapt`).
    pub fn parse(v: &Value) -> Result<Adapt, String> {
        Adapt::parse_option(v, "adapt", "one base rate")
    }

    /// Reads `"job"` or `"llm"` of option `calibration.<key>`; `what` says what a group shares.
    pub fn parse_option(v: &Value, key: &str, what: &str) -> Result<Adapt, String> {
        match v.as_str().map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            Some("job") => Ok(Adapt::Job),
            Some("llm") => Ok(Adapt::Llm),
            _ => Err(format!(
                "option calibration.{key} must be \"job\" ({what} for the job's answers) \
                 or \"llm\" (one per LLM that wrote them), got {v}"
            )),
        }
    }
}

impl CalibrationOptions {
    /// Reads option `key` when it is this concern's; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        if key != "calibration" {
            return Ok(false);
        }
        let o = val.as_object().ok_or_else(|| {
            format!(
                "option calibration must be an object of scorer name → calibration model (as \
                 uq_fit_calibration returns), e.g. {EXAMPLE}; got {}",
                type_name(val)
            )
        })?;
        if o.contains_key("method") {
            return Err(format!(
                "option calibration maps scorer names to models, but it holds a bare model (key \
                 \"method\"): name the scorer it was fitted on, e.g. {EXAMPLE}"
            ));
        }
        if o.contains_key("refit") {
            return Err(
                "option calibration.refit refits the models on a job's labelled units \
                 (uq_score_table, uqd score); here, refit a model with \
                 uq_refit_calibration(score, label, prior_model) over a few labelled units of \
                 the new answers and pass the refitted model"
                    .to_string(),
            );
        }
        if o.contains_key("adapt") {
            return Err(
                "option calibration.adapt adapts the models to a job's answers \
                 (uq_score_table, uqd score); here, adapt a model with \
                 uq_adapt_calibration(score, model_json) over the new answers' raw scores and \
                 pass the adapted model"
                    .to_string(),
            );
        }
        let mut models: Vec<(Scorer, Calibration)> = Vec::with_capacity(o.len());
        for (name, model) in o {
            let s = Scorer::parse(name).map_err(|e| format!("option calibration: {e}"))?;
            if s.is_response_level() {
                return Err(format!(
                    "option calibration.{name}: {name} scores the whole response and has no unit \
                     scores to calibrate; calibrate a unit scorer"
                ));
            }
            if models.iter().any(|(t, _)| *t == s) {
                return Err(format!(
                    "option calibration names scorer {} twice (an alias counts as its scorer); \
                     keep one model",
                    s.name()
                ));
            }
            let c = Calibration::from_json(model, &format!("option calibration.{name}"))?;
            models.push((s, c));
        }
        self.models = models;
        Ok(true)
    }

    /// The model of scorer `s`, if any.
    pub fn model(&self, s: Scorer) -> Option<&Calibration> {
        self.models.iter().find(|(t, _)| *t == s).map(|(_, c)| c)
    }

    /// `s`'s calibrated score, `None` without a model for `s`.
    pub fn calibrated(&self, s: Scorer, score: f64) -> Option<f64> {
        self.model(s).map(|c| c.apply(score))
    }

    /// Every model must be of a scorer that is computed: one of `scorers` or the UAD scorer.
    pub(super) fn check(
        &self,
        scorers: &[Scorer],
        uad_scorer: Option<Scorer>,
    ) -> Result<(), String> {
        match self
            .models
            .iter()
            .find(|(s, _)| !scorers.contains(s) && uad_scorer != Some(*s))
        {
            Some((s, _)) => {
                Err(format!(
                "option calibration has a model for {s}, which is not among scorers ({}){}: add \
                 {s} to scorers or drop its model",
                scorers.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
                if uad_scorer.is_some() { " nor uad_scorer" } else { "" }
            ))
            }
            None => Ok(()),
        }
    }
}
