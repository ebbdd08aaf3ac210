//! The response-level table: Pearson and Spearman between each scorer's response confidence
//! (per aggregation) and the answer's grade.

use std::collections::BTreeMap;

use uq_core::metrics::{pearson, spearman};

use crate::report::load::AnswerRow;

/// Response-level correlations of one scorer and aggregation in one run.
#[derive(Debug, Clone)]
pub struct ResponseMetrics {
    pub run_id: i64,
    pub scorer: String,
    pub aggregation: String,
    pub n_answers: usize,
    pub n_graded: usize,
    pub pearson: Option<f64>,
    pub spearman: Option<f64>,
}

/// Response level: Pearson and Spearman per (run, scorer, aggregation).
pub(super) fn response_metrics(answers: &[AnswerRow]) -> Vec<ResponseMetrics> {
    let mut resp: BTreeMap<(i64, String, String), Vec<&AnswerRow>> = BTreeMap::new();
    for a in answers {
        resp.entry((a.run_id, a.scorer.clone(), a.aggregation.clone()))
            .or_default()
            .push(a);
    }
    resp.into_iter()
        .map(|((run_id, scorer, aggregation), rows)| {
            let graded: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|a| Some((a.score?, a.grade?)))
                .collect();
            let x: Vec<f64> = graded.iter().map(|p| p.0).collect();
            let y: Vec<f64> = graded.iter().map(|p| p.1).collect();
            ResponseMetrics {
                run_id,
                scorer,
                aggregation,
                n_answers: rows.len(),
                n_graded: graded.len(),
                pearson: pearson(&x, &y),
                spearman: spearman(&x, &y),
            }
        })
        .collect()
}
