//! A job's scoring options: every key but the job keys, with `calibration.adapt` and
//! `calibration.refit` taken out, checked as `uq_unit_scores` checks its options.

use serde_json::{Map, Value};

use super::keys::JOB_KEYS;
use crate::options::{parse_options, Adapt, ScoreOptions};

/// Options `calibration.adapt` and `calibration.refit` of a job.
type AdaptRefit = (Option<Adapt>, Option<Adapt>);

/// The scoring options: every key but the job keys, `calibration.adapt` and `calibration.refit`
/// taken out; returned as given and parsed, with those two.
pub(super) fn scoring_options(
    options: &Map<String, Value>,
) -> Result<(Value, AdaptRefit, ScoreOptions), String> {
    let mut scoring = Map::new();
    for (k, v) in options {
        if !JOB_KEYS.contains(&k.as_str()) {
            scoring.insert(k.clone(), v.clone());
        }
    }
    let (mut adapt, mut refit) = (None, None);
    if let Some(Value::Object(c)) = scoring.get_mut("calibration") {
        if let Some(a) = c.remove("adapt") {
            adapt = Some(Adapt::parse(&a)?);
        }
        if let Some(r) = c.remove("refit") {
            refit = Some(Adapt::parse_option(&r, "refit", "one refit")?);
        }
    }
    let mut checked = scoring.clone();
    stand_in_sources(options, &mut checked);
    let scoring = Value::Object(scoring);
    let parsed = parse_options(&Value::Object(checked)).map_err(|e| {
        format!(
            "{e} (job options are the scoring options plus {})",
            JOB_KEYS.join(", ")
        )
    })?;
    Ok((scoring, (adapt, refit), parsed))
}

/// A job whose `sources_column` gives each row its sources has its scoring options checked as
/// if option `sources` were given: an empty array stands in for it in `scoring` (the checked
/// copy, never the stored options) unless `sources` is there already. Returns whether it was
/// put in.
pub fn stand_in_sources(
    job_options: &Map<String, Value>,
    scoring: &mut Map<String, Value>,
) -> bool {
    let per_row = job_options
        .get("sources_column")
        .is_some_and(|v| !v.is_null());
    if !per_row || scoring.contains_key("sources") {
        return false;
    }
    scoring.insert("sources".into(), Value::Array(Vec::new()));
    true
}
