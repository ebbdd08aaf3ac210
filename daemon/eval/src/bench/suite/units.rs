//! The units lines of the suite's JSON: each dataset's unit scores, labels and answer ids, from
//! which `--compare` recomputes every figure.

use serde_json::{json, Value};
use uq_core::evaluation::Labelled;

/// The units line of one dataset and scorer (a NaN score written as null).
/// WikiBio's sets also carry `major` (1: major-inaccurate), for NonFact\*.
pub(super) fn units_line(dataset: &str, scorer: &str, set: &Labelled) -> Value {
    let mut l = json!({"suite": "units", "dataset": dataset, "scorer": scorer,
        "scores": set.scores.iter().map(|s| s.is_finite().then_some(*s)).collect::<Vec<_>>(),
        "labels": set.labels.iter().map(|&l| u8::from(l)).collect::<Vec<_>>(),
        "answers": set.answers});
    if !set.major.is_empty() {
        l["major"] = json!(set.major.iter().map(|&m| u8::from(m)).collect::<Vec<_>>());
    }
    l
}

/// A units line read back (`--compare`).
pub(super) fn read_units(l: &Value) -> Option<Labelled> {
    let nums = |k: &str| l[k].as_array().cloned();
    Some(Labelled {
        scores: nums("scores")?
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect(),
        labels: nums("labels")?
            .iter()
            .map(|v| v.as_u64() == Some(1))
            .collect(),
        answers: nums("answers")?
            .iter()
            .map(|v| v.as_u64().map(|x| x as usize))
            .collect::<Option<_>>()?,
        major: l["major"].as_array().map_or_else(Vec::new, |m| {
            m.iter().map(|v| v.as_u64() == Some(1)).collect()
        }),
    })
}
