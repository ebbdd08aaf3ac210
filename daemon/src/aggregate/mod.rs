//! Stage 3, aggregation (paper §3.4): each unit scorer's unit scores become one response-level
//! confidence (`uq_core::aggregate`, option `aggregation`), beside the short-form scorers'
//! whole-answer scores; [`uad`] filters and rewrites the answer.

pub mod kept;
pub mod uad;
pub mod verify;

use std::collections::BTreeMap;

use uq_core::aggregate::aggregate;
use uq_core::options::ScoreOptions;
use uq_core::protocol::{ScoreResult, UnitScore};

use crate::decompose::Decomposed;
use crate::score::Scored;

/// The reply to a `score` request: unit score rows (by unit, then request order) and one
/// response score per scorer (NULL for a unit scorer without units); with `calibration`, each
/// calibrated scorer's unit scores calibrated too, and their aggregate.
pub fn respond(decomposed: Decomposed, scored: Scored, opts: &ScoreOptions) -> ScoreResult {
    let aggregation = opts.aggregate.aggregation;
    let mut response_scores = BTreeMap::new();
    let mut calibrated_scores = BTreeMap::new();
    for s in &scored.unscored {
        response_scores.insert(s.name().to_string(), None);
        if opts.calibration.model(*s).is_some() {
            calibrated_scores.insert(s.name().to_string(), None);
        }
    }
    let mut scores = Vec::new();
    for (scorer, values) in &scored.unit_scores {
        let evidence = scored
            .evidence
            .iter()
            .find(|(s, _)| s == scorer)
            .map(|(_, e)| e);
        let calibrated: Option<Vec<f64>> = opts
            .calibration
            .model(*scorer)
            .map(|c| values.iter().map(|&v| c.apply(v)).collect());
        scores.extend(values.iter().enumerate().map(|(unit_idx, &score)| {
            UnitScore {
                unit_idx,
                scorer: scorer.name().to_string(),
                score,
                calibrated: calibrated
                    .as_ref()
                    .and_then(|c| c.get(unit_idx).copied())
                    .filter(|c| !c.is_nan()),
                evidence: evidence.and_then(|e| e.get(unit_idx).cloned().flatten()),
            }
        }));
        response_scores.insert(scorer.name().to_string(), aggregate(values, aggregation));
        if let Some(c) = &calibrated {
            calibrated_scores.insert(scorer.name().to_string(), aggregate(c, aggregation));
        }
    }
    scores.sort_by_key(|s| s.unit_idx);
    for (s, v) in scored.response_scores {
        response_scores.insert(s.name().to_string(), v);
    }
    ScoreResult {
        units: decomposed.units,
        origins: decomposed.origins,
        scores,
        response_scores,
        calibrated_scores,
        notes: scored.notes,
        coverage: decomposed.coverage,
    }
}
