//! An LLM config as SQL holds it, in `temp.uq_llms` (sql/uq_llms.rs) or inline in
//! `options_json`: validated with the daemon's rules, never with an API key; and how to create
//! and fill the registry, for the texts of errors.

use serde_json::{Map, Value};
use uq_core::json::type_name;
use uq_core::options::parse_llm_config;

/// Creates the registry in a connection (run on load; also the fix shown when it is missing).
pub const CREATE_SQL: &str =
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.uq_llms USING uq_llms_module()";

/// A config shown in errors and examples.
const CONFIG_EXAMPLE: &str = r#"{"backend":"openai","base_url":"https://api.openai.com/v1","model":"gpt-4o-mini","api_key_env":"OPENAI_API_KEY"}"#;

/// SQL string literal.
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `INSERT INTO temp.uq_llms …` registering `name`, for error messages.
pub fn insert_example(name: &str) -> String {
    format!(
        "INSERT INTO temp.uq_llms(name, config) VALUES ({}, '{CONFIG_EXAMPLE}')",
        lit(name)
    )
}

/// The error for an `api_key` key in an LLM config (`whose`: "config of LLM 'x'" or "option llm").
fn api_key_error(whose: &str, key: &str) -> String {
    format!(
        "{whose} has the key {key:?}: an API key is never stored in SQL nor sent to uqd. Put it in \
         an environment variable of the daemon (e.g. export OPENAI_API_KEY=sk-… before the first \
         query starts uqd) and name that variable instead: \"api_key_env\":\"OPENAI_API_KEY\""
    )
}

/// A key that holds an API key itself (`api_key`, `apiKey`, `API-KEY`…), not `api_key_env`.
fn is_api_key(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    k == "apikey"
}

/// Checks an inline LLM config object given as an option value (the daemon validates the rest).
pub fn check_inline(func: &str, option: &str, obj: &Map<String, Value>) -> Result<(), String> {
    match obj.keys().find(|k| is_api_key(k)) {
        Some(k) => Err(format!(
            "{func}: {}",
            api_key_error(&format!("option {option}"), k)
        )),
        None => Ok(()),
    }
}

/// Parses and validates the config of registered LLM `name`: a JSON object of LLM settings
/// (docs/reference.md, "LLM config"), without an API key.
pub fn parse_config(name: &str, text: &str) -> Result<Map<String, Value>, String> {
    let whose = format!("config of LLM {}", lit(name));
    let value: Value = serde_json::from_str(text).map_err(|e| {
        format!("{whose} is not valid JSON ({e}); pass a JSON object, e.g. '{CONFIG_EXAMPLE}'")
    })?;
    let Value::Object(obj) = value else {
        return Err(format!(
            "{whose} must be a JSON object of LLM settings, got {}; e.g. '{CONFIG_EXAMPLE}'",
            type_name(&value)
        ));
    };
    if let Some(k) = obj.keys().find(|k| is_api_key(k)) {
        return Err(api_key_error(&whose, k));
    }
    if let Some(b) = obj.get("backend").filter(|b| !b.is_null()) {
        let ok = b
            .as_str()
            .map(|s| matches!(s.trim().to_ascii_lowercase().as_str(), "local" | "openai"))
            .unwrap_or(false);
        if !ok {
            return Err(format!(
                "{whose}: backend is {b}; use \"local\" (the embedded SmolLM2, the default) or \
                 \"openai\" (any OpenAI-compatible server)"
            ));
        }
    }
    // The daemon's own rules (keys, types, ranges), worded for a config.
    parse_llm_config("config", &Value::Object(obj.clone()))
        .map_err(|e| format!("{whose}: {}", e.replace("option config", "config")))?;
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_json_objects_without_api_keys() {
        assert!(parse_config("gpt", CONFIG_EXAMPLE).is_ok());
        assert!(parse_config("l", "{}").is_ok());
        let e = parse_config("gpt", "[1]").unwrap_err();
        assert!(e.contains("'gpt'") && e.contains("JSON object"), "{e}");
        let e = parse_config("gpt", "{").unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
        for k in ["api_key", "apiKey", "API-KEY"] {
            let e = parse_config("gpt", &format!(r#"{{"{k}":"sk-x"}}"#)).unwrap_err();
            assert!(e.contains("api_key_env") && !e.contains("sk-x"), "{e}");
        }
        let e = parse_config("gpt", r#"{"backend":"anthropic"}"#).unwrap_err();
        assert!(e.contains("\"local\"") && e.contains("\"openai\""), "{e}");
        let e = parse_config("gpt", r#"{"max_tokens":"many"}"#).unwrap_err();
        assert!(e.contains("config.max_tokens"), "{e}");
        let e = parse_config("gpt", r#"{"modle":"x"}"#).unwrap_err();
        assert!(e.contains("modle"), "{e}");
    }
}
