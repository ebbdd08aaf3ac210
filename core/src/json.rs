//! Generic helpers for reading JSON values, shared by the option parser and by the readers of
//! stored models (calibration, ensemble weights, premise selection): what a value is, in the
//! words an error message needs.

use serde_json::Value;

/// JSON type of `v`, for error messages ("a string", "an array", …).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A number as written, anything else as its type (what an integer option got instead).
pub fn number_or_type(v: &Value) -> String {
    if v.is_number() {
        v.to_string()
    } else {
        type_name(v).to_string()
    }
}
