//! One call's `options_json`: the names of LLMs registered in `temp.uq_llms` (uq_llms.rs)
//! resolved into their configs, then validated with the daemon's rules.
//!
//! Options refer to a registered LLM by name (`"llm":"gpt"`); [`resolve`] replaces every such
//! name with its config object before a request is sent, reading the table with SQL, so that
//! whatever table is `temp.uq_llms` in this connection is the registry. An LLM config, given
//! inline or registered, never holds an API key.

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{Map, Value};
use uq_core::json::type_name;
use uq_core::options::{parse_llm_config, LlmRole, ScoreOptions};
use uq_core::scorers::{Family, Granularity};

use crate::args;
use crate::uq_llms::CREATE_SQL;

/// A config shown in errors and examples.
const CONFIG_EXAMPLE: &str = r#"{"backend":"openai","base_url":"https://api.openai.com/v1","model":"gpt-4o-mini","api_key_env":"OPENAI_API_KEY"}"#;

/// The options whose value may be the name of a registered LLM.
pub fn role_options() -> impl Iterator<Item = &'static str> {
    std::iter::once("llm").chain(LlmRole::ALL.iter().map(|r| r.option_name()))
}

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

// ---------------------------------------------------------------------------------------------
// LLM configs

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

// ---------------------------------------------------------------------------------------------
// Option resolution

/// Registered names substituted into one call's options: (option, name).
#[derive(Debug, Default)]
pub struct Used(pub Vec<(String, String)>);

impl Used {
    /// `func: message`, followed by which registered LLMs the call used (the daemon only sees
    /// their configs, not their names).
    pub fn error(&self, func: &str, e: impl std::fmt::Display) -> String {
        if self.0.is_empty() {
            return format!("{func}: {e}");
        }
        let names: Vec<String> = self
            .0
            .iter()
            .map(|(option, name)| format!("{option} = {}", lit(name)))
            .collect();
        format!("{func}: {e} [LLMs from temp.uq_llms: {}]", names.join(", "))
    }
}

/// Replaces every LLM role option (`llm`, `generation_llm`, …) whose value is a string by the
/// config registered under that name in `temp.uq_llms`. An inline config object is checked for
/// API keys; other values are left for the option validation.
pub fn resolve(
    conn: &Connection,
    func: &str,
    options: &mut Map<String, Value>,
) -> Result<Used, String> {
    let mut used = Used::default();
    let mut registry: Option<Vec<(String, String)>> = None;
    for option in role_options() {
        match options.get(option) {
            Some(Value::String(name)) => {
                let name = name.clone();
                if registry.is_none() {
                    registry = Some(read_registry(conn).map_err(|e| {
                        format!(
                            "{func}: option {option} names the LLM {}, but {e}; then register it: {}",
                            lit(&name),
                            insert_example(&name)
                        )
                    })?);
                }
                let rows = registry.as_deref().unwrap_or_default();
                let Some((_, text)) = rows.iter().find(|(n, _)| *n == name) else {
                    let known: Vec<String> = rows.iter().map(|(n, _)| lit(n)).collect();
                    return Err(format!(
                        "{func}: option {option} names the LLM {}, which is not registered in \
                         temp.uq_llms ({}); register it first, e.g. {} (or pass the config object \
                         itself: \"{option}\":{{\"backend\":\"local\"}})",
                        lit(&name),
                        if known.is_empty() {
                            "no LLM is registered in this connection".to_string()
                        } else {
                            format!("registered: {}", known.join(", "))
                        },
                        insert_example(&name)
                    ));
                };
                let config = parse_config(&name, text)
                    .map_err(|e| format!("{func}: option {option}: temp.uq_llms: {e}"))?;
                options.insert(option.to_string(), Value::Object(config));
                used.0.push((option.to_string(), name));
            }
            Some(Value::Object(obj)) => check_inline(func, option, obj)?,
            _ => {}
        }
    }
    Ok(used)
}

/// Every (name, config) row of `temp.uq_llms`; the error completes "but …".
fn read_registry(conn: &Connection) -> Result<Vec<(String, String)>, String> {
    let mut stmt = conn
        .prepare("SELECT name, config FROM temp.uq_llms")
        .map_err(|e| {
            let msg = e.to_string();
            if msg.contains("no such table") {
                format!(
                    "temp.uq_llms does not exist in this connection (was it dropped?): create it \
                     with {CREATE_SQL}"
                )
            } else {
                format!("temp.uq_llms cannot be read ({msg})")
            }
        })?;
    let rows = stmt
        .query_map([], |row| {
            let text = |i: usize| -> rusqlite::Result<String> {
                Ok(match row.get_ref(i)? {
                    ValueRef::Null => String::new(),
                    ValueRef::Text(b) | ValueRef::Blob(b) => {
                        String::from_utf8_lossy(b).into_owned()
                    }
                    ValueRef::Integer(n) => n.to_string(),
                    ValueRef::Real(x) => x.to_string(),
                })
            };
            Ok((text(0)?, text(1)?))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(|e| format!("temp.uq_llms cannot be read ({e})"))?;
    Ok(rows)
}

/// One call's options: resolved (`map`, sent to the daemon), validated (`parsed`), and the
/// registered names used (`used`, to annotate errors).
pub struct Options {
    pub map: Map<String, Value>,
    pub parsed: ScoreOptions,
    pub used: Used,
}

impl Options {
    /// Resolves registered LLM names in `map` and validates the result with the daemon's rules.
    pub fn new(conn: &Connection, func: &str, mut map: Map<String, Value>) -> Result<Self, String> {
        let used = resolve(conn, func, &mut map)?;
        let parsed = args::validate_options(func, &map)?;
        Ok(Options { map, parsed, used })
    }

    /// The `options_json` argument `v` (NULL or absent: the defaults), resolved and validated.
    pub fn from_arg(
        conn: &Connection,
        func: &str,
        v: Option<ValueRef<'_>>,
    ) -> Result<Self, String> {
        Options::new(conn, func, args::options(func, v)?)
    }

    /// Whether a `score` request with these options makes the daemon call an LLM (claims are
    /// decomposed by an LLM; verbalized confidence asks a judge; unit-QA scorers ask questions
    /// and answers; graph scorers merge claims; `nli_llm` judges NLI pairs): its reply may take
    /// long.
    pub fn score_uses_llm(&self) -> bool {
        self.parsed.llm.nli_judge().is_some()
            || self.parsed.decompose.granularity == Granularity::Claim
            || self
                .parsed
                .scoring
                .computed()
                .iter()
                .any(|s| s.needs_llm() || s.family() == Family::Graph)
    }
}

/// The arguments `(response, samples_json[, options_json])` of the functions that score or
/// refine an answer against its samples.
pub struct AnswerArgs {
    pub response: String,
    pub samples: Vec<String>,
    pub options: Options,
}

impl AnswerArgs {
    /// Reads the argument values `a` (two, or three with `options_json`).
    pub fn parse(conn: &Connection, func: &str, a: &[ValueRef<'_>]) -> Result<Self, String> {
        let response = args::required_text(func, "response", a[0], "the answer text")?;
        let samples = args::samples(func, a[1])?;
        let options = Options::from_arg(conn, func, a.get(2).copied())?;
        Ok(AnswerArgs {
            response,
            samples,
            options,
        })
    }

    /// Whether the daemon is asked at all: see [`args::has_units`].
    pub fn has_units(&self) -> bool {
        args::has_units(&self.response, &self.options.parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_options_are_the_eight_llm_options() {
        let names: Vec<&str> = role_options().collect();
        assert_eq!(names.len(), 8);
        assert!(names.contains(&"llm") && names.contains(&"judge_llm"));
        // The NLI judge may be a registered LLM too.
        assert!(names.contains(&"nli_llm"));
    }

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

    #[test]
    fn used_names_annotate_errors() {
        assert_eq!(Used::default().error("f", "boom"), "f: boom");
        let u = Used(vec![("llm".into(), "gpt".into())]);
        assert_eq!(
            u.error("f", "boom"),
            "f: boom [LLMs from temp.uq_llms: llm = 'gpt']"
        );
    }
}
