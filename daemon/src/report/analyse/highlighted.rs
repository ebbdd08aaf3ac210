//! The "least confident answers" section: per run and granularity, the answers with the lowest
//! response confidence, each highlighted by its units' scores (`uq_core::highlight`).

use std::collections::{BTreeMap, HashMap};

use uq_core::highlight::{marks, render, Mark, Options};

use crate::report::load::{Data, SpanRow, UnitRow};

/// An answer of the report's "least confident answers": its response score and its text as
/// `uq_core::highlight` HTML.
#[derive(Debug, Clone)]
pub struct HighlightedAnswer {
    pub source_key: String,
    pub prompt: Option<String>,
    pub score: Option<f64>,
    pub html: String,
}

/// How many answers the report highlights per run and granularity.
pub const HIGHLIGHTED_ANSWERS: usize = 5;

/// The [`HIGHLIGHTED_ANSWERS`] answers of one scorer's units with the lowest response score
/// (the mean of their unit scores when no response score is stored; ties by answer id), each
/// highlighted by its units' scores: at their stored spans, or found in the answer for units
/// written before schema v5.
pub(super) fn least_confident_answers(data: &Data, rows: &[&UnitRow]) -> Vec<HighlightedAnswer> {
    // The colours' legend under the first answer shown only (the section's text explains them).
    let mut legend = true;
    lowest_scored(data, rows)
        .into_iter()
        .filter_map(|(score, id, units)| {
            let text = data.answer_texts.get(&id)?;
            let m = answer_marks(text, &units)?;
            let options = Options {
                legend: std::mem::take(&mut legend),
                ..Options::default()
            };
            Some(HighlightedAnswer {
                source_key: units[0].source_key.clone(),
                prompt: units[0].prompt.clone(),
                score,
                html: render(text, &m, &options),
            })
        })
        .collect()
}

/// The [`HIGHLIGHTED_ANSWERS`] answers of `rows` with the lowest response score, lowest first:
/// (score, answer id, its units).
fn lowest_scored<'a>(
    data: &Data,
    rows: &[&'a UnitRow],
) -> Vec<(Option<f64>, i64, Vec<&'a UnitRow>)> {
    let mut by_answer: BTreeMap<i64, Vec<&UnitRow>> = BTreeMap::new();
    for u in rows {
        by_answer.entry(u.answer_id).or_default().push(u);
    }
    // The rows share one run and scorer: their stored response scores, looked up once.
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let aggregation = data
        .runs
        .iter()
        .find(|r| r.id == first.run_id)
        .map(|r| r.aggregation.as_str());
    let stored: HashMap<i64, Option<f64>> = data
        .answers
        .iter()
        .filter(|a| {
            a.run_id == first.run_id
                && a.scorer == first.scorer
                && aggregation.is_none_or(|g| g == a.aggregation)
        })
        .map(|a| (a.answer_id, a.score))
        .collect();
    let response_score = |id: i64, units: &[&UnitRow]| -> Option<f64> {
        stored.get(&id).copied().flatten().or_else(|| {
            let s: Vec<f64> = units.iter().filter_map(|u| u.score).collect();
            (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64)
        })
    };
    let mut scored: Vec<(Option<f64>, i64, Vec<&UnitRow>)> = by_answer
        .into_iter()
        .map(|(id, units)| (response_score(id, &units), id, units))
        .collect();
    scored.sort_by(|a, b| {
        a.0.unwrap_or(f64::INFINITY)
            .total_cmp(&b.0.unwrap_or(f64::INFINITY))
            .then(a.1.cmp(&b.1))
    });
    scored.truncate(HIGHLIGHTED_ANSWERS);
    scored
}

/// The marks of an answer's units in its `text`: at their stored spans, or (a unit written
/// before schema v5) found in the text; `None` when they cannot be placed.
fn answer_marks(text: &str, units: &[&UnitRow]) -> Option<Vec<Mark>> {
    let n = text.chars().count();
    let clamp = |x: Option<f64>| x.filter(|s| (0.0..=1.0).contains(s));
    let stored: Option<Vec<Mark>> = units
        .iter()
        .map(|u| match u.span {
            SpanRow::Stored(span) => Some(Mark {
                unit: Some(u.unit.clone()),
                scorer: Some(u.scorer.clone()),
                score: clamp(u.score),
                span: span.filter(|&(_, e)| e <= n),
            }),
            SpanRow::Unknown => None,
        })
        .collect();
    match stored {
        Some(m) => Some(m),
        None => {
            let given: Vec<serde_json::Value> = units
                .iter()
                .map(|u| serde_json::json!({"unit": u.unit, "score": clamp(u.score), "scorer": u.scorer}))
                .collect();
            marks(text, &serde_json::Value::Array(given)).ok()
        }
    }
}
