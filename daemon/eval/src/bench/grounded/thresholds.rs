//! `bench grounded`'s references on WikiBio, from run (a)'s NLI probabilities and run (c)'s
//! sample scores: the larger of source and samples (no saving possible), the samples' score
//! alone in the band, `grounded_fallback`'s thresholds compared on the tune half, and the
//! cross-validated thresholds ([`super::cv`]).

use serde_json::{json, Value};
use uq_core::protocol::NliProbs;
use uq_core::score::grounded::{
    band_score, check, Checked, Thresholds, Verdict, DEFAULT_THRESHOLDS,
};

use super::super::lines::round;
use super::cv;
use super::metrics::{fallback_scores, unit_metrics, Units};
use super::run::Run;

/// The reference lines: `a` is run (a) (the passage's own text), `ce` run (c)'s entailment unit
/// scores, `llm_calls` what the samples cost.
pub(super) fn references(a: &Run, ce: &[f64], units: &Units, llm_calls: usize) -> Vec<Value> {
    let ae = a.unit_scores("grounded_entailment");
    let max: Vec<f64> = ae.iter().zip(ce).map(|(x, y)| x.max(*y)).collect();
    let mut out = vec![
        json!({"bench": "grounded", "data": "wikibio", "reference": "max(grounded_entailment, entailment)",
        "auroc": unit_metrics(&max, &units.accurate).0, "llm_calls": llm_calls}),
    ];
    let probs = nli_probs(a);
    let samples_alone = samples_alone(&probs, ce);
    out.push(json!({"bench": "grounded", "data": "wikibio", "reference": "fallback with the samples' score alone in the band",
        "auroc": unit_metrics(&samples_alone, &units.accurate).0, "auroc_tune_half": units.by_half(&samples_alone, 0), "auroc_check_half": units.by_half(&samples_alone, 1)}));
    out.push(tuned(&probs, ce, units));
    out.push(cv::cross_validated(&probs, ce, &units.accurate, &units.rec));
    out
}

/// Each unit's source NLI probabilities of `grounded_entailment` in run `a` (none when the
/// evidence has none), in answer then unit order.
fn nli_probs(a: &Run) -> Vec<Vec<NliProbs>> {
    a.results
        .iter()
        .flat_map(|r| {
            let mut v: Vec<_> = r
                .scores
                .iter()
                .filter(|s| s.scorer == "grounded_entailment")
                .collect();
            v.sort_by_key(|s| s.unit_idx);
            v.into_iter()
                .map(|s| match &s.evidence {
                    Some(e) if e.entailment.is_some() => {
                        let (pe, pc) =
                            (e.entailment.unwrap_or(0.0), e.contradiction.unwrap_or(0.0));
                        vec![NliProbs {
                            entailment: pe,
                            contradiction: pc,
                            neutral: 1.0 - pe - pc,
                        }]
                    }
                    _ => vec![],
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The alternative band_score was chosen over: a silent unit placed in the band by the
/// samples' score alone, not by the larger of it and the source's own p_e (a silent unit's
/// p_e taken as 0 leaves only the samples).
fn samples_alone(probs: &[Vec<NliProbs>], ce: &[f64]) -> Vec<f64> {
    probs
        .iter()
        .zip(ce)
        .map(|(p, &s)| {
            let c = check(p, DEFAULT_THRESHOLDS);
            let c = match c.verdict {
                Verdict::Silent => Checked {
                    entailment: 0.0,
                    ..c
                },
                _ => c,
            };
            band_score(&c, DEFAULT_THRESHOLDS, Some(s))
        })
        .collect()
}

/// The thresholds of the grid with the best AUROC on the tune half, beside the default ones.
fn tuned(probs: &[Vec<NliProbs>], ce: &[f64], units: &Units) -> Value {
    let combined = |t: Thresholds| fallback_scores(probs, ce, t);
    let mut grid = Vec::new();
    for te in [0.5, 0.6, 0.7, 0.8, 0.9] {
        for tc in [0.5, 0.7, 0.8, 0.9, 0.95] {
            let t = Thresholds {
                entailment: te,
                contradiction: tc,
            };
            let conf = combined(t);
            let decided = probs
                .iter()
                .filter(|p| check(p, t).verdict != Verdict::Silent)
                .count();
            grid.push((
                units.by_half(&conf, 0).unwrap_or(0.0),
                te,
                tc,
                units.by_half(&conf, 1),
                decided,
            ));
        }
    }
    grid.sort_by(|x, y| y.0.total_cmp(&x.0));
    let best = grid[0];
    let default_conf = combined(DEFAULT_THRESHOLDS);
    json!({"bench": "grounded", "data": "wikibio", "thresholds": "chosen on the tune half",
        "best_tune": {"entailment": best.1, "contradiction": best.2, "auroc_tune": round(best.0), "auroc_check": best.3, "units_decided": best.4},
        "default": {"entailment": DEFAULT_THRESHOLDS.entailment, "contradiction": DEFAULT_THRESHOLDS.contradiction,
            "auroc_tune": units.by_half(&default_conf, 0), "auroc_check": units.by_half(&default_conf, 1)}})
}
