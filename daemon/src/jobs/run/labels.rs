//! A row's labels: those of `labels_column`, and the graders' (job options `grade` and
//! `objectivity`), written to `uq_label`.

use serde_json::Value;
use uq_core::jobs::JobSpec;
use uq_core::options::LlmRole;

use super::cells::col;
use crate::grade::{self, Graded};
use crate::jobs::rows::SourceRow;
use crate::role_llms::LlmService;

/// The graders' labels of the units (job options `grade` and `objectivity`).
pub(super) fn grader_labels(
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    units: &[String],
) -> Result<Vec<(usize, &'static str, Graded)>, String> {
    let mut labels = Vec::new();
    if !(spec.grade || spec.objectivity) || units.is_empty() {
        return Ok(labels);
    }
    let judge = llm.for_role(&spec.parsed, LlmRole::Judge)?;
    if spec.grade {
        let reference = row.reference.as_deref().unwrap_or("");
        if reference.trim().is_empty() {
            return Err(format!(
                "the reference column {:?} is NULL or empty for this row: grading needs the reference text",
                col(&spec.columns.reference)
            ));
        }
        let graded = llm.block_on(grade::factscore_many(&judge, units, reference))?;
        labels.extend(
            graded
                .into_iter()
                .enumerate()
                .map(|(i, g)| (i, "factual", g)),
        );
    }
    if spec.objectivity {
        let graded = llm.block_on(grade::objectivity_many(&judge, units))?;
        labels.extend(
            graded
                .into_iter()
                .enumerate()
                .map(|(i, g)| (i, "objective", g)),
        );
    }
    Ok(labels)
}

/// The labels of `labels_column` for a row with `n_units` units: a JSON array of 0/1 (or
/// true/false), null for an unlabelled unit, one per unit.
pub(super) fn given_labels(
    spec: &JobSpec,
    row: &SourceRow,
    n_units: usize,
) -> Result<Vec<(usize, &'static str, Graded)>, String> {
    let (Some(column), Some(text)) = (&spec.columns.labels, &row.labels) else {
        return Ok(Vec::new());
    };
    let how =
        "store one label per unit as a JSON array of 0, 1 or null, e.g. json_array(1, 0, null)";
    let items: Vec<Value> = serde_json::from_str(text)
        .map_err(|e| format!("column {column:?} is not a JSON array ({e}): {how}"))?;
    if items.len() != n_units {
        return Err(format!(
            "column {column:?} holds {} labels for {n_units} units: {how}",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_null())
        .map(|(i, v)| {
            let label = match v {
                Value::Bool(b) => *b,
                Value::Number(n) if n.as_i64() == Some(1) => true,
                Value::Number(n) if n.as_i64() == Some(0) => false,
                other => {
                    return Err(format!("column {column:?}[{i}] is {other}: {how}"));
                }
            };
            Ok((
                i,
                "factual",
                Graded {
                    label: Some(label),
                    raw: v.to_string(),
                    grader: format!("column:{column}"),
                },
            ))
        })
        .collect()
}
