//! `uqd eval --labels LABELS_TABLE`: reading a user's labels table (one row per labelled
//! sentence: the scored row's key, the sentence's index and text, its label) and turning its
//! labels into true = factual by `--label-map`, `--label-expr`, or as given (0/1, true/false).

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use serde_json::Map;
use uq_core::jobs::{quote_ident, LIST_TABLES};

use uqd::jobs::run::table_columns;

/// How the labels table is read (the flags of `uqd eval`).
#[derive(Debug, Clone, Default)]
pub struct LabelsSpec {
    pub table: String,
    /// `--label-map`: label value → 1 (factual), 0, or null (left out).
    pub map: Option<Map<String, serde_json::Value>>,
    /// `--label-expr`: a SQL expression over the table's columns, true = factual.
    pub expr: Option<String>,
    pub key: Option<String>,
    pub index: Option<String>,
    pub text: Option<String>,
    pub label: Option<String>,
}

/// One labelled sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    /// The index column's value, else the row's order within its key (from 0).
    pub index: i64,
    pub text: Option<String>,
    pub label: bool,
}

/// The labels table read: its labelled sentences by key (each key's in index order).
#[derive(Debug, Default)]
pub struct LabelRows {
    pub by_key: BTreeMap<String, Vec<Sentence>>,
    /// Whether the table has a text column (else units are matched by index).
    pub has_text: bool,
    /// The columns used: key, index (if any), text (if any).
    pub key: String,
    pub index: Option<String>,
    /// Rows whose label is NULL (or mapped to null): left out.
    pub skipped: usize,
}

/// The columns that were resolved.
struct Cols {
    key: String,
    index: Option<String>,
    text: Option<String>,
    label: Option<String>,
}

/// Reads the labels table of `db` as `spec` says; errors name the flag and the fix.
pub fn read(db: &Path, spec: &LabelsSpec) -> Result<LabelRows, String> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open database {}: {e}", db.display()))?;
    let _ = conn.busy_timeout(uqd::store::BUSY_TIMEOUT);
    let table = find_table(&conn, &spec.table)?;
    let cols = resolve(&conn, &table, spec)?;
    let q = |c: &Option<String>| {
        c.as_deref()
            .map(quote_ident)
            .unwrap_or_else(|| "NULL".into())
    };
    let label_sql = match &spec.expr {
        Some(e) => format!("({e})"),
        None => q(&cols.label),
    };
    let sql = format!(
        "SELECT {}, {}, {}, {label_sql} FROM {}",
        quote_ident(&cols.key),
        q(&cols.index),
        q(&cols.text),
        quote_ident(&table)
    );
    let mut st = conn.prepare(&sql).map_err(|e| match &spec.expr {
        Some(x) => format!(
            "--label-expr {x:?}: SQLite says {e}; give a SQL expression over the columns of \
             {table:?} ({}) that is 1 for a factual sentence, e.g. --label-expr \"label = \
             'accurate'\"",
            table_columns(&conn, &table).unwrap_or_default().join(", ")
        ),
        None => format!("cannot read table {table:?}: {e}"),
    })?;
    let rows: Vec<[Value; 4]> = st
        .query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]))
        .and_then(|it| it.collect())
        .map_err(|e| format!("cannot read table {table:?}: {e}"))?;
    let mut out = LabelRows {
        has_text: cols.text.is_some(),
        key: cols.key.clone(),
        index: cols.index.clone(),
        ..LabelRows::default()
    };
    let mut order: BTreeMap<String, i64> = BTreeMap::new();
    for [key, index, text, label] in rows {
        let Some(key) = key_text(&key) else {
            continue;
        };
        let next = order.entry(key.clone()).or_insert(0);
        let index = match &cols.index {
            Some(c) => integer(&index).ok_or_else(|| {
                format!(
                    "--labels-index {c}: table {table:?} holds {} for key {key}, not an \
                     integer: name the column of each sentence's index (from 0) with \
                     --labels-index COL",
                    describe(&index)
                )
            })?,
            None => *next,
        };
        *next += 1;
        let Some(label) = truth(&conn, &table, &cols, spec, &label)? else {
            out.skipped += 1;
            continue;
        };
        let text = match text {
            Value::Text(s) => Some(s),
            Value::Null => None,
            other => Some(describe(&other)),
        };
        out.by_key
            .entry(key)
            .or_default()
            .push(Sentence { index, text, label });
    }
    for s in out.by_key.values_mut() {
        s.sort_by_key(|s| s.index);
    }
    Ok(out)
}

/// The table's own name (case as stored); an error listing the tables when none matches.
fn find_table(conn: &Connection, name: &str) -> Result<String, String> {
    let tables: Vec<String> = conn
        .prepare(LIST_TABLES)
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| format!("cannot read the tables of the database: {e}"))?;
    tables
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .cloned()
        .ok_or_else(|| {
            format!(
                "--labels {name}: no table or view named {name:?} in the database; its tables \
                 are {}: name the table of labelled sentences with --labels TABLE",
                listed(&tables)
            )
        })
}

/// The key, index, text and label columns: given ones must exist; defaults where present.
fn resolve(conn: &Connection, table: &str, spec: &LabelsSpec) -> Result<Cols, String> {
    let all = table_columns(conn, table)?;
    let find = |n: &str| all.iter().find(|c| c.eq_ignore_ascii_case(n)).cloned();
    let need = |flag: &str, given: &Option<String>, default: &str, what: &str| {
        let name = given.as_deref().unwrap_or(default);
        find(name).ok_or_else(|| {
            format!(
                "{flag} {name}: table {table:?} has no column {name:?}; its columns are {}: \
                 name the column of {what} with {flag} COL",
                listed(&all)
            )
        })
    };
    let optional = |flag: &str, given: &Option<String>, default: &str, what: &str| match given {
        Some(_) => need(flag, given, default, what).map(Some),
        None => Ok(find(default)),
    };
    Ok(Cols {
        key: need(
            "--labels-key",
            &spec.key,
            "answer_id",
            "the scored row's key (its id_column, else rowid: uq_answer.source_key)",
        )?,
        index: optional(
            "--labels-index",
            &spec.index,
            "sent_idx",
            "each sentence's index",
        )?,
        text: optional(
            "--labels-text",
            &spec.text,
            "sentence",
            "each sentence's text",
        )?,
        label: match &spec.expr {
            Some(_) => None,
            None => Some(need(
                "--labels-label",
                &spec.label,
                "label",
                "the labels (or give --label-expr SQL)",
            )?),
        },
    })
}

/// A key as `uq_answer.source_key` stores it (CAST(id AS TEXT)); `None` for NULL.
fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Integer(i) => Some(i.to_string()),
        Value::Real(r) if r.fract() == 0.0 && r.abs() < 1e15 => Some((*r as i64).to_string()),
        Value::Real(r) => Some(r.to_string()),
        Value::Text(s) => Some(s.clone()),
        Value::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
    }
}

fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Real(r) if r.fract() == 0.0 && r.abs() < 1e15 => Some(*r as i64),
        Value::Text(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A row's label as true = factual; `None`: left out (NULL, or mapped to null).
fn truth(
    conn: &Connection,
    table: &str,
    cols: &Cols,
    spec: &LabelsSpec,
    v: &Value,
) -> Result<Option<bool>, String> {
    if let Value::Null = v {
        return Ok(None);
    }
    if let Some(expr) = &spec.expr {
        return zero_one(v).map(Some).ok_or_else(|| {
            format!(
                "--label-expr {expr:?} gave {} for a row of {table:?}: it must give 1 (factual), \
                 0 or NULL (left out), e.g. --label-expr \"label = 'accurate'\"",
                describe(v)
            )
        });
    }
    let column = cols.label.as_deref().unwrap_or("label");
    if let Some(map) = &spec.map {
        let key = key_text(v).unwrap_or_default();
        return match map.get(&key) {
            Some(serde_json::Value::Null) => Ok(None),
            Some(m) => Ok(Some(m.as_bool().unwrap_or(m.as_f64() == Some(1.0)))),
            None => Err(format!(
                "--label-map has no value for {} of column {column:?} of table {table:?} (its keys \
                 are {}): add it, e.g. --label-map '{}' (1 = factual, 0 = not, null = leave \
                 the sentence out)",
                describe(v),
                listed(&map.keys().cloned().collect::<Vec<_>>()),
                example_map(&distinct(conn, table, column))
            )),
        };
    }
    zero_one(v).map(Some).ok_or_else(|| {
        let values = distinct(conn, table, column);
        format!(
            "--labels {table}: column {column:?} holds {}, not 0/1 (or true/false): say which \
             values are factual with --label-map '{}' (1 = factual; set each value's 0 or 1) or with \
             --label-expr \"{column} = {}\" (a SQL expression over the table's columns)",
            describe(v),
            example_map(&values),
            literal(values.first().map(String::as_str).unwrap_or("accurate"))
        )
    })
}

/// 0/1, 0.0/1.0, or the text 0/1/true/false.
fn zero_one(v: &Value) -> Option<bool> {
    match v {
        Value::Integer(0) => Some(false),
        Value::Integer(1) => Some(true),
        Value::Real(r) if *r == 0.0 || *r == 1.0 => Some(*r == 1.0),
        Value::Text(s) => match s.trim().to_ascii_lowercase().as_str() {
            "0" | "false" => Some(false),
            "1" | "true" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// Up to 8 distinct non-NULL values of the column, as text.
fn distinct(conn: &Connection, table: &str, column: &str) -> Vec<String> {
    conn.prepare(&format!(
        "SELECT DISTINCT CAST({} AS TEXT) FROM {} WHERE {0} IS NOT NULL ORDER BY 1 LIMIT 8",
        quote_ident(column),
        quote_ident(table)
    ))
    .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
    .unwrap_or_default()
}

/// `{"v1":1,"v2":0,…}` of the values (the first 1, the rest 0).
fn example_map(values: &[String]) -> String {
    let o: Map<String, serde_json::Value> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (v.clone(), serde_json::json!(u8::from(i == 0))))
        .collect();
    serde_json::Value::Object(o).to_string()
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Integer(i) => format!("INTEGER {i}"),
        Value::Real(r) => format!("REAL {r}"),
        Value::Text(t) => format!("TEXT {}", literal(t)),
        Value::Blob(b) => format!("BLOB of {} bytes", b.len()),
    }
}

fn listed(names: &[String]) -> String {
    names
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
