//! A source row's cells as the row's scoring options: its prompt, its sources (job option
//! `sources_column`), its stored units and claim union; and the column names their errors cite.

use serde_json::Value;
use uq_core::jobs::JobSpec;

use crate::jobs::rows::SourceRow;

/// The name of a source column in an error text.
pub(super) fn col(c: &Option<String>) -> String {
    c.as_deref().unwrap_or("?").to_string()
}

/// The job's scoring options with this row's prompt, stored decomposition and claim union.
pub(super) fn row_options(spec: &JobSpec, row: &SourceRow) -> Result<Value, String> {
    let mut options = spec.scoring.clone();
    if let (Some(p), Some(map)) = (&row.prompt, options.as_object_mut()) {
        if !map.contains_key("prompt") && !p.trim().is_empty() {
            map.insert("prompt".into(), Value::String(p.clone()));
        }
    }
    // The row's sources: a JSON array of passages, else the text itself.
    if let (Some(text), Some(map)) = (&row.sources, options.as_object_mut()) {
        let v = match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Array(_)) => v,
            _ => Value::String(text.clone()),
        };
        map.insert("sources".into(), v);
    } else if let (Some(_), Some(map)) = (&spec.columns.sources, options.as_object_mut()) {
        // A NULL sources cell: no passage (the grounded scores are NULL, with a note).
        map.insert("sources".into(), Value::Array(Vec::new()));
    }
    // Stored decompositions and claim unions (JSON arrays of strings) become this row's options.
    for (given, key, column) in [
        (&row.units, "units", &spec.columns.units),
        (&row.claim_union, "claim_union", &spec.columns.claim_union),
    ] {
        if let (Some(text), Some(map)) = (given, options.as_object_mut()) {
            let v: Value = serde_json::from_str(text)
                .ok()
                .filter(|v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
                .ok_or_else(|| {
                    format!(
                        "column {:?} must hold a JSON array of strings, e.g. json_array('unit 1', 'unit 2')",
                        col(column)
                    )
                })?;
            map.insert(key.into(), v);
        }
    }
    Ok(options)
}
