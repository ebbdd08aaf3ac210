//! Stage 2, unit scoring (paper §3.3). Each family gathers its own model evidence from one
//! [`Context`] and returns one score per unit for each of its scorers; the maths lives in
//! `uq_core::score`.

pub mod black_box;
pub mod context;
pub mod graph;
pub mod grounded;
pub mod matched_unit;
pub mod ngram;
pub mod premise;
pub mod short_form;
pub mod unit_qa;
pub mod unit_response;
pub mod verbalized;
pub mod white_box;

use uq_core::protocol::Evidence;
use uq_core::scorers::{Family, Scorer};

pub use context::Context;

/// Families in the order their evidence is gathered (LLM calls run in this order).
const ORDER: [Family; 8] = [
    Family::WhiteBox,
    Family::Ngram,
    Family::Grounded,
    Family::UnitResponse,
    Family::MatchedUnit,
    Family::Verbalized,
    Family::Graph,
    Family::UnitQa,
];

/// What stage 2 gives stage 3: unit scores of the unit scorers, whole-answer scores of the
/// short-form ones, and notes on scores that are NULL.
pub struct Scored {
    /// Per unit scorer, in request order, one score per unit; empty when there are no units.
    pub unit_scores: Vec<(Scorer, Vec<f64>)>,
    /// Unit scorers that had no units to score.
    pub unscored: Vec<Scorer>,
    /// Per short-form scorer, in request order.
    pub response_scores: Vec<(Scorer, Option<f64>)>,
    pub notes: Vec<String>,
    /// Per grounded scorer, what decided each unit's score (parallel to its unit scores).
    pub evidence: Vec<(Scorer, Vec<Option<Evidence>>)>,
}

/// Unit scores of several scorers, with the grounded ones' evidence and notes.
#[derive(Default)]
pub struct UnitScores {
    pub scores: Vec<(Scorer, Vec<f64>)>,
    pub evidence: Vec<(Scorer, Vec<Option<Evidence>>)>,
    pub notes: Vec<String>,
}

/// Scores every scorer of the request: unit scorers on `cx.units`, short-form scorers on the
/// whole answers.
pub fn score(cx: &Context) -> Result<Scored, String> {
    let (short, unit): (Vec<Scorer>, Vec<Scorer>) = cx
        .opts
        .scoring
        .scorers
        .iter()
        .partition(|s| s.is_response_level());
    let (units, unscored) = if unit.is_empty() {
        (UnitScores::default(), Vec::new())
    } else if cx.units.is_empty() {
        (UnitScores::default(), unit)
    } else {
        (score_units_with_evidence(cx, &unit)?, Vec::new())
    };
    let (white, black): (Vec<Scorer>, Vec<Scorer>) =
        short.iter().partition(|s| s.family() == Family::WhiteBox);
    let (mut by_scorer, mut notes) = if black.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        short_form::score(&cx.nli()?, cx.response, cx.samples, &black, cx.opts)?
    };
    if !white.is_empty() {
        let (w, n) = white_box::response(cx, &white)?;
        by_scorer.extend(w);
        notes.extend(n);
    }
    // In request order.
    let response_scores = short
        .iter()
        .filter_map(|s| by_scorer.iter().find(|(t, _)| t == s).copied())
        .collect();
    notes.extend(units.notes);
    Ok(Scored {
        unit_scores: units.scores,
        unscored,
        response_scores,
        notes,
        evidence: units.evidence,
    })
}

/// Unit scores of `scorers` (unit scorers), in that order, one per unit of `cx.units`. The
/// `ensemble` scorer is the weighted mean of its components' scores (`ensemble_weights`), which
/// are computed for it (and returned only when asked for too).
pub fn score_units(cx: &Context, scorers: &[Scorer]) -> Result<Vec<(Scorer, Vec<f64>)>, String> {
    Ok(score_units_with_evidence(cx, scorers)?.scores)
}

/// [`score_units`] with the grounded scorers' evidence and notes.
pub fn score_units_with_evidence(cx: &Context, scorers: &[Scorer]) -> Result<UnitScores, String> {
    if let Some(s) = scorers.iter().find(|s| s.is_response_level()) {
        return Err(format!(
            "scorer {} scores the whole response and has no unit scores: use it with \
             response_confidence, or pick a unit scorer",
            s.name()
        ));
    }
    let ensemble = match (
        scorers.contains(&Scorer::Ensemble),
        &cx.opts.scoring.ensemble_weights,
    ) {
        (false, _) => None,
        (true, Some(e)) => Some(e),
        (true, None) => {
            return Err("scorer ensemble needs option ensemble_weights".to_string());
        }
    };
    let mut computed: Vec<Scorer> = scorers
        .iter()
        .copied()
        .filter(|&s| s != Scorer::Ensemble)
        .collect();
    if let Some(e) = ensemble {
        for &c in &e.components {
            if !computed.contains(&c) {
                computed.push(c);
            }
        }
    }
    let UnitScores {
        scores: mut scored,
        evidence,
        notes,
    } = score_components(cx, &computed)?;
    if let Some(e) = ensemble {
        let values = (0..cx.units.len())
            .map(|i| {
                e.apply(|c| {
                    scored
                        .iter()
                        .find(|(s, _)| *s == c)
                        .and_then(|(_, v)| v.get(i).copied())
                })
            })
            .collect();
        scored.push((Scorer::Ensemble, values));
    }
    Ok(UnitScores {
        scores: scorers
            .iter()
            .filter_map(|s| scored.iter().find(|(t, _)| t == s).cloned())
            .collect(),
        evidence,
        notes,
    })
}

/// Unit scores of `scorers` (of the model families, not the ensemble), in family order.
fn score_components(cx: &Context, scorers: &[Scorer]) -> Result<UnitScores, String> {
    let mut out = UnitScores::default();
    for family in ORDER {
        let of_family: Vec<Scorer> = scorers
            .iter()
            .copied()
            .filter(|s| s.family() == family)
            .collect();
        if of_family.is_empty() {
            continue;
        }
        let values = match family {
            Family::UnitResponse => unit_response::score(cx, &of_family)?,
            Family::MatchedUnit => matched_unit::score(cx, &of_family)?,
            Family::Verbalized => verbalized::score(cx, &of_family)?,
            Family::Graph => graph::score(cx, &of_family)?,
            Family::UnitQa => unit_qa::score(cx, &of_family)?,
            Family::Ngram => ngram::score(cx, &of_family)?,
            Family::Grounded => {
                let g = grounded::score(cx, &of_family, score_units)?;
                out.evidence
                    .extend(of_family.iter().copied().zip(g.evidence));
                out.notes.extend(g.notes);
                g.values
            }
            Family::WhiteBox => {
                let (v, n) = white_box::units(cx, &of_family)?;
                out.notes.extend(n);
                v
            }
            Family::ShortForm | Family::Ensemble => unreachable!("refused above"),
        };
        out.scores.extend(of_family.into_iter().zip(values));
    }
    Ok(out)
}
