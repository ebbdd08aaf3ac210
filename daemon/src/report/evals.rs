//! The report's "Evaluations" section: what `uqd eval` stored (`uq_eval`, `uq_eval_figure`,
//! migration 7), the latest evaluation of each run and granularity.

use std::fmt::Write as _;

use rusqlite::Connection;

use super::svg::{esc, fmt3};

/// One `uq_eval` row with its figures.
#[derive(Debug, Clone)]
pub struct EvalRow {
    pub eval_id: i64,
    pub created_at: String,
    pub run_id: i64,
    pub source_table: Option<String>,
    pub granularity: String,
    pub units: i64,
    pub answers: i64,
    pub recommended: Option<String>,
    pub notes: Option<String>,
    pub figures: Vec<FigureRow>,
}

/// One `uq_eval_figure` row.
#[derive(Debug, Clone)]
pub struct FigureRow {
    pub scorer: String,
    pub figure: String,
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The latest evaluation of each run and granularity (none without table `uq_eval`).
pub fn read(conn: &Connection, has_table: bool) -> rusqlite::Result<Vec<EvalRow>> {
    if !has_table {
        return Ok(Vec::new());
    }
    let mut rows: Vec<EvalRow> = conn
        .prepare(
            "SELECT eval_id, created_at, run_id, source_table, granularity, units, answers,
                    recommended, notes FROM uq_eval e
             WHERE eval_id = (SELECT max(eval_id) FROM uq_eval x
                              WHERE x.run_id = e.run_id AND x.granularity = e.granularity)
             ORDER BY run_id, granularity",
        )?
        .query_map([], |r| {
            Ok(EvalRow {
                eval_id: r.get(0)?,
                created_at: r.get(1)?,
                run_id: r.get(2)?,
                source_table: r.get(3)?,
                granularity: r.get(4)?,
                units: r.get(5)?,
                answers: r.get(6)?,
                recommended: r.get(7)?,
                notes: r.get(8)?,
                figures: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut st = conn.prepare(
        "SELECT scorer, figure, estimate, low, high FROM uq_eval_figure WHERE eval_id = ?1
         ORDER BY scorer, figure",
    )?;
    for row in &mut rows {
        row.figures = st
            .query_map([row.eval_id], |r| {
                Ok(FigureRow {
                    scorer: r.get(0)?,
                    figure: r.get(1)?,
                    estimate: r.get(2)?,
                    low: r.get(3)?,
                    high: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(rows)
}

/// The section (nothing when no evaluation is stored).
pub fn section(h: &mut String, evals: &[EvalRow]) {
    if evals.is_empty() {
        return;
    }
    h.push_str("<h2>Evaluations (uqd eval)</h2><p class=\"expl\">The latest <code>uqd eval</code> of each run and granularity: each scorer's figures on the labelled units with 95 % intervals over resampled answers, and the recommended scorer (the highest AUROC), whose calibration and conformal fit are stored in <code>uq_eval</code>.</p>");
    for e in evals {
        let _ = write!(
            h,
            "<h3>Run {} ({}{}), {} labelled units of {} answers, {}</h3><table class=\"eval\"><tr><th class=\"t\">scorer</th><th>AUROC</th><th>AUC-PR</th><th>NonFact AUC-PR</th><th>ECE</th></tr>",
            e.run_id,
            esc(&e.granularity),
            e.source_table
                .as_deref()
                .map(|t| format!(", table {}", esc(t)))
                .unwrap_or_default(),
            e.units,
            e.answers,
            esc(&e.created_at)
        );
        let mut scorers: Vec<&str> = e.figures.iter().map(|f| f.scorer.as_str()).collect();
        scorers.dedup();
        for s in scorers {
            let cell = |fig: &str| {
                let Some(f) = e.figures.iter().find(|f| f.scorer == s && f.figure == fig) else {
                    return "<td>n/a</td>".to_string();
                };
                match (f.low, f.high) {
                    (Some(lo), Some(hi)) => format!(
                        "<td>{} [{}, {}]</td>",
                        fmt3(f.estimate),
                        fmt3(Some(lo)),
                        fmt3(Some(hi))
                    ),
                    _ => format!("<td>{}</td>", fmt3(f.estimate)),
                }
            };
            let mark = if e.recommended.as_deref() == Some(s) {
                " (recommended)"
            } else {
                ""
            };
            let _ = write!(
                h,
                "<tr><td class=\"t\">{}{mark}</td>{}{}{}{}</tr>",
                esc(s),
                cell("auroc"),
                cell("auc_pr"),
                cell("nonfact_auc_pr"),
                cell("ece")
            );
        }
        h.push_str("</table>");
        if let Some(n) = e.notes.as_deref().filter(|n| !n.is_empty()) {
            let _ = write!(h, "<p class=\"expl\">{}</p>", esc(n));
        }
    }
}
