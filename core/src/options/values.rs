//! Reading option values out of JSON, with error messages that name the option and show an
//! example of a valid value.

use serde_json::Value;

use crate::json::type_name;

pub(super) fn string_option<'a>(
    name: &str,
    v: &'a Value,
    example: &str,
) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| {
        format!(
            "option {name} must be a string, e.g. \"{name}\":{example}; got {}",
            type_name(v)
        )
    })
}

pub(super) fn bool_option(name: &str, v: &Value) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| {
        format!(
            "option {name} must be true or false, e.g. \"{name}\":false; got {}",
            type_name(v)
        )
    })
}

pub(super) fn string_array(name: &str, v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option {name} must be an array of strings, e.g. \"{name}\":[\"First unit.\",\"Second unit.\"]; got {}",
            type_name(v)
        )
    })?;
    strings(items, |i, item| {
        format!(
            "option {name}[{i}] is {}, not a string: every unit must be a JSON string",
            type_name(item)
        )
    })
}

/// The strings of `items`; `not_string(i, item)` is the error for item `i` when it is none.
pub(super) fn strings(
    items: &[Value],
    not_string: impl Fn(usize, &Value) -> String,
) -> Result<Vec<String>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| not_string(i, item))
        })
        .collect()
}

fn number_option(name: &str, v: &Value, example: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!(
            "option {name} must be a number, e.g. \"{name}\":{example}; got {}",
            type_name(v)
        )),
    }
}

/// A number option that `ok` accepts; `range` describes the accepted values in the error.
pub(super) fn ranged(
    name: &str,
    v: &Value,
    example: &str,
    ok: impl Fn(f64) -> bool,
    range: &str,
) -> Result<f64, String> {
    let x = number_option(name, v, example)?;
    if ok(x) {
        Ok(x)
    } else {
        Err(format!(
            "option {name} is {x}, outside {range}: e.g. \"{name}\":{example}"
        ))
    }
}
