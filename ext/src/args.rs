//! Argument extraction and validation shared by the SQL functions. Every error names the SQL
//! function and the argument and says how to fix it.

use rusqlite::functions::Context;
use rusqlite::types::ValueRef;
use serde_json::{Map, Value};
use uq_core::options::{parse_options, ScoreOptions};

/// Example shown in errors about `samples_json`.
pub const SAMPLES_EXAMPLE: &str = r#"'["sampled answer 1","sampled answer 2"]'"#;
/// Example shown in errors about `options_json`.
const OPTIONS_EXAMPLE: &str = r#"'{"scorers":["entailment"]}'"#;

/// The argument values of a scalar function call.
pub fn values<'a>(ctx: &'a Context<'_>) -> Vec<ValueRef<'a>> {
    (0..ctx.len()).map(|i| ctx.get_raw(i)).collect()
}

/// A value for error messages: its storage class, and the value when it is a number.
pub fn describe(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Integer(n) => format!("INTEGER {n}"),
        ValueRef::Real(x) => format!("REAL {x}"),
        other => type_name(other).to_string(),
    }
}

/// SQLite storage class name of a value, for error messages.
fn type_name(v: ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "INTEGER",
        ValueRef::Real(_) => "REAL",
        ValueRef::Text(_) => "TEXT",
        ValueRef::Blob(_) => "BLOB",
    }
}

/// A TEXT (or UTF-8 BLOB) argument; `None` for NULL. Numbers are rejected.
pub fn text(func: &str, arg: &str, v: ValueRef<'_>) -> Result<Option<String>, String> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Text(b) => String::from_utf8(b.to_vec())
            .map(Some)
            .map_err(|e| format!("{func}: {arg} is not valid UTF-8 ({e}); pass UTF-8 text")),
        ValueRef::Blob(b) => String::from_utf8(b.to_vec()).map(Some).map_err(|e| {
            format!("{func}: {arg} is a BLOB that is not valid UTF-8 ({e}); pass UTF-8 text")
        }),
        other => Err(format!(
            "{func}: {arg} must be TEXT, got {}; pass text (or CAST({arg} AS TEXT))",
            type_name(other)
        )),
    }
}

/// A TEXT argument that must not be NULL; `what` completes "pass …".
pub fn required_text(func: &str, arg: &str, v: ValueRef<'_>, what: &str) -> Result<String, String> {
    text(func, arg, v)?.ok_or_else(|| format!("{func}: {arg} is NULL; pass {what}"))
}

/// `samples_json`: a JSON array of at least one string.
pub fn samples(func: &str, v: ValueRef<'_>) -> Result<Vec<String>, String> {
    let what = format!("a JSON array of sampled answers, e.g. {SAMPLES_EXAMPLE}");
    let s = required_text(func, "samples_json", v, &what)?;
    let json: Value = serde_json::from_str(&s)
        .map_err(|e| format!("{func}: samples_json is not valid JSON ({e}); pass {what}"))?;
    uq_core::options::parse_samples(&json).map_err(|e| format!("{func}: {e}"))
}

/// Whether `samples_json` gives no sample: NULL or an empty JSON array (`'[]'`), which the
/// functions accept when their options need no samples (e.g. grounded scorers only).
pub fn no_samples(v: ValueRef<'_>) -> bool {
    match v {
        ValueRef::Null => true,
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            matches!(serde_json::from_slice::<Value>(b), Ok(Value::Array(a)) if a.is_empty())
        }
        _ => false,
    }
}

/// `options_json`: a JSON object, or NULL / absent for the defaults. Only the shape is checked
/// here; see [`validate_options`].
pub fn options(func: &str, v: Option<ValueRef<'_>>) -> Result<Map<String, Value>, String> {
    let Some(s) = v
        .map(|v| text(func, "options_json", v))
        .transpose()?
        .flatten()
    else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(&s) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "{func}: options_json must be a JSON object or NULL, got a JSON {}; e.g. {OPTIONS_EXAMPLE}",
            json_kind(&other)
        )),
        Err(e) => Err(format!(
            "{func}: options_json is not valid JSON ({e}); pass a JSON object or NULL, e.g. {OPTIONS_EXAMPLE}"
        )),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Validates the options with the daemon's own rules (`uq_core::options::parse_options`), so
/// that a mistake is reported without a daemon round trip.
pub fn validate_options(func: &str, options: &Map<String, Value>) -> Result<ScoreOptions, String> {
    parse_options(&Value::Object(options.clone())).map_err(|e| format!("{func}: {e}"))
}

/// Whether a `score` request can have units: false for a blank response without caller-supplied
/// `units`, which is answered locally (no rows / NULL) without asking the daemon.
pub fn has_units(response: &str, options: &ScoreOptions) -> bool {
    !response.trim().is_empty() || options.decompose.units.is_some()
}

/// Keeps in `first` the value of an aggregate's argument that must be the same for every row
/// of a group (`bins`, `alpha`): the first row's; a later row's other value is an error.
pub fn same_in_group<T: PartialEq + std::fmt::Display>(
    func: &str,
    arg: &str,
    first: &mut Option<T>,
    value: T,
) -> Result<(), String> {
    match first {
        None => *first = Some(value),
        Some(prev) if *prev != value => {
            return Err(format!(
                "{func}: {arg} must be the same for every row of a group (got {prev} and {value})"
            ))
        }
        Some(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_accepts_text_and_utf8_blobs_and_names_the_argument() {
        assert_eq!(text("f", "a", ValueRef::Null), Ok(None));
        assert_eq!(text("f", "a", ValueRef::Text(b"hi")), Ok(Some("hi".into())));
        assert_eq!(text("f", "a", ValueRef::Blob(b"hi")), Ok(Some("hi".into())));
        let e = text("f", "premise", ValueRef::Blob(&[0xff])).unwrap_err();
        assert!(e.starts_with("f: premise") && e.contains("UTF-8"), "{e}");
        let e = text("f", "premise", ValueRef::Integer(3)).unwrap_err();
        assert!(e.contains("premise must be TEXT, got INTEGER"), "{e}");
        let e = required_text("f", "response", ValueRef::Null, "the answer text").unwrap_err();
        assert_eq!(e, "f: response is NULL; pass the answer text");
    }

    #[test]
    fn options_must_be_an_object_or_null() {
        assert!(options("f", None).unwrap().is_empty());
        assert!(options("f", Some(ValueRef::Null)).unwrap().is_empty());
        let m = options("f", Some(ValueRef::Text(br#"{"scorers":["luq"]}"#))).unwrap();
        assert_eq!(m["scorers"], serde_json::json!(["luq"]));
        let e = options("f", Some(ValueRef::Text(b"[1]"))).unwrap_err();
        assert!(
            e.contains("options_json must be a JSON object") && e.contains("array"),
            "{e}"
        );
        let e = options("f", Some(ValueRef::Text(b"{"))).unwrap_err();
        assert!(e.contains("options_json is not valid JSON"), "{e}");
    }

    #[test]
    fn samples_errors_name_samples_json() {
        let e = samples("f", ValueRef::Null).unwrap_err();
        assert!(e.starts_with("f: samples_json is NULL"), "{e}");
        for bad in [&b"not json"[..], b"{}", b"[1]", b"[]"] {
            let e = samples("f", ValueRef::Text(bad)).unwrap_err();
            assert!(e.starts_with("f: samples_json"), "{e}");
        }
        assert_eq!(
            samples("f", ValueRef::Text(br#"["a","b"]"#)).unwrap(),
            vec!["a", "b"]
        );
    }

    #[test]
    fn no_samples_is_null_or_an_empty_array() {
        assert!(no_samples(ValueRef::Null));
        assert!(no_samples(ValueRef::Text(b" [ ] ")));
        assert!(no_samples(ValueRef::Blob(b"[]")));
        for given in [&b"[\"a\"]"[..], b"", b"null", b"{}", b"not json"] {
            assert!(!no_samples(ValueRef::Text(given)), "{given:?}");
        }
        assert!(!no_samples(ValueRef::Integer(0)));
    }

    #[test]
    fn options_are_validated_by_core() {
        let m = options("f", Some(ValueRef::Text(br#"{"scorer":["luq"]}"#))).unwrap();
        let e = validate_options("f", &m).unwrap_err();
        assert!(e.starts_with("f: ") && e.contains("granularity"), "{e}");
        let m = options(
            "f",
            Some(ValueRef::Text(
                br#"{"scorers":["luq","contrasted_entailment"]}"#,
            )),
        )
        .unwrap();
        assert_eq!(
            validate_options("f", &m).unwrap().scoring.scorers.len(),
            1,
            "aliases resolve"
        );
    }

    #[test]
    fn blank_response_has_no_units_unless_units_are_given() {
        let defaults = validate_options("f", &Map::new()).unwrap();
        assert!(!has_units(" \n ", &defaults));
        assert!(has_units("A.", &defaults));
        let m = options("f", Some(ValueRef::Text(br#"{"units":["u"]}"#))).unwrap();
        assert!(has_units("", &validate_options("f", &m).unwrap()));
    }
}
