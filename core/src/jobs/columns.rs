//! A job's source columns: the `*_column` options (or their defaults) checked against the
//! table's columns and against the options they stand in for.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Source columns of a job (`None`: not used). `id = None` means the table's rowid.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Columns {
    pub id: Option<String>,
    pub prompt: Option<String>,
    pub answer: String,
    pub samples: Option<String>,
    pub reference: Option<String>,
    /// Per-row units (JSON array), used as option `units`.
    #[serde(default)]
    pub units: Option<String>,
    /// Per-row claim union (JSON array), used as option `claim_union`.
    #[serde(default)]
    pub claim_union: Option<String>,
    /// Per-row labels of the units (JSON array of 0/1/null), written to `uq_label`.
    #[serde(default)]
    pub labels: Option<String>,
    /// Per-row sources (a text or a JSON array of passages), used as option `sources`.
    #[serde(default)]
    pub sources: Option<String>,
}

/// The source columns the `*_column` options name (or their defaults), checked against the
/// table's columns.
pub(super) fn columns(
    options: &Map<String, Value>,
    table: &str,
    table_columns: &[String],
) -> Result<Columns, String> {
    let listed = || {
        table_columns
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let find = |name: &str| table_columns.iter().find(|c| c.eq_ignore_ascii_case(name));
    let column = |key: &str, defaults: &[&str]| -> Result<Option<String>, String> {
        match options.get(key) {
            None | Some(Value::Null) => Ok(defaults.iter().find_map(|d| find(d)).cloned()),
            Some(Value::String(name)) => match find(name) {
                Some(c) => Ok(Some(c.clone())),
                None => Err(format!(
                    "option {key}: table {table:?} has no column {name:?}; its columns are {}",
                    listed()
                )),
            },
            Some(other) => Err(format!(
                "option {key} must be a column name (a string), got {other}"
            )),
        }
    };
    let id = match options.get("id_column") {
        Some(Value::String(s)) if s.eq_ignore_ascii_case("rowid") && find("rowid").is_none() => {
            None
        }
        _ => column("id_column", &[])?,
    };
    let columns = Columns {
        id,
        prompt: column("prompt_column", &["prompt", "question"])?,
        answer: column("answer_column", &["answer", "response"])?.ok_or_else(|| {
            format!(
                "table {table:?} has no column \"answer\" or \"response\": name the answers' column with option answer_column (its columns are {})",
                listed()
            )
        })?,
        samples: column("samples_column", &["samples"])?,
        reference: column("reference_column", &[])?,
        units: column("units_column", &[])?,
        claim_union: column("claim_union_column", &[])?,
        labels: column("labels_column", &[])?,
        sources: column("sources_column", &[])?,
    };
    check_given_columns(options, &columns)?;
    Ok(columns)
}

/// The per-row columns against the options they stand in for: labels need units, and a column
/// and its option may not both be given.
fn check_given_columns(options: &Map<String, Value>, columns: &Columns) -> Result<(), String> {
    if columns.labels.is_some() && columns.units.is_none() {
        return Err(
            "option labels_column needs option units_column: the labels are matched to the given units by position".into(),
        );
    }
    for (key, given) in [
        ("units", "units_column"),
        ("claim_union", "claim_union_column"),
        ("sources", "sources_column"),
    ] {
        if options.get(given).is_some_and(|v| !v.is_null())
            && options.get(key).is_some_and(|v| !v.is_null())
        {
            return Err(format!(
                "options {key} and {given} both give the {key}: keep one (the column gives them per row)"
            ));
        }
    }
    Ok(())
}
