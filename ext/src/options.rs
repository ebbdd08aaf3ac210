//! One call's `options_json`: the names of LLMs registered in `temp.uq_llms` (sql/uq_llms.rs)
//! resolved into their configs, then validated with the daemon's rules.
//!
//! Options refer to a registered LLM by name (`"llm":"gpt"`); [`resolve`] replaces every such
//! name with its config object before a request is sent, reading the table with SQL, so that
//! whatever table is `temp.uq_llms` in this connection is the registry. An LLM config, given
//! inline or registered, never holds an API key.

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{Map, Value};
use uq_core::options::{LlmRole, ScoreOptions, Sources};
use uq_core::scorers::{Family, Granularity, Scorer};

use crate::args;
use crate::llm_config::{check_inline, insert_example, lit, parse_config, CREATE_SQL};
use crate::sources;

/// The options whose value may be the name of a registered LLM.
pub fn role_options() -> impl Iterator<Item = &'static str> {
    std::iter::once("llm").chain(LlmRole::ALL.iter().map(|r| r.option_name()))
}

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

/// One call's options: resolved (`map`, sent to the daemon), validated (`parsed`), the
/// registered names used (`used`, to annotate errors), and the notes of the retrieval of
/// `sources` from an FTS5 table (`notes`, shown by `uq_debug()` with the reply's).
pub struct Options {
    pub map: Map<String, Value>,
    pub parsed: ScoreOptions,
    pub used: Used,
    pub notes: Vec<String>,
}

impl Options {
    /// Resolves registered LLM names in `map` and validates the result with the daemon's rules.
    pub fn new(conn: &Connection, func: &str, mut map: Map<String, Value>) -> Result<Self, String> {
        let used = resolve(conn, func, &mut map)?;
        let parsed = args::validate_options(func, &map)?;
        Ok(Options {
            map,
            parsed,
            used,
            notes: Vec::new(),
        })
    }

    /// When option `sources` names an FTS5 table, retrieves the passages for `response` from
    /// this connection (sources.rs), puts them in `map` in its place and validates the options
    /// again, so that `parsed` is what the daemon receives; the retrieval's notes go to
    /// `notes`. A blank response is searched with the units given as option `units` (they are
    /// what is scored then). Jobs do not call this: the daemon retrieves from the job's
    /// database.
    pub fn resolve_sources(
        &mut self,
        conn: &Connection,
        func: &str,
        response: &str,
    ) -> Result<(), String> {
        if !matches!(self.parsed.grounded.sources, Some(Sources::Fts(_))) {
            return Ok(());
        }
        let text = if response.trim().is_empty() {
            self.parsed
                .decompose
                .units
                .as_deref()
                .unwrap_or_default()
                .join("\n")
        } else {
            response.to_string()
        };
        self.notes =
            sources::resolve(conn, &mut self.map, &text).map_err(|e| format!("{func}: {e}"))?;
        self.parsed = args::validate_options(func, &self.map)?;
        Ok(())
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

/// What decides whether a call of an [`AnswerArgs`] function needs samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplesFor {
    /// A `score` request: some scorer of the options compares samples.
    Score,
    /// A `uad` request: its scorer ([`ScoreOptions::uad_scorer`], the only one the daemon runs)
    /// compares samples.
    Uad,
    /// Always (the samples are the input itself, e.g. `uq_claim_union`).
    Always,
}

impl SamplesFor {
    /// The scorers of a call with `options` that compare the answer with sampled answers
    /// (for [`SamplesFor::Always`], none: the samples are the input itself).
    pub fn sampling_scorers(self, options: &ScoreOptions) -> Vec<Scorer> {
        let computed = match self {
            SamplesFor::Score => options.scoring.computed(),
            SamplesFor::Uad => {
                let mut scoring = options.scoring.clone();
                scoring.scorers = vec![options.uad_scorer()];
                scoring.computed()
            }
            SamplesFor::Always => return Vec::new(),
        };
        computed.into_iter().filter(|s| s.needs_samples()).collect()
    }
}

/// `samples_json` (`v`), read after the options were checked: NULL or `'[]'` is no samples when
/// no scorer of `options` compares samples (grounded scorers only, verbalized confidence);
/// otherwise the error names the scorers that need them and says which to use instead.
/// `defaulted`: the scorers are the defaults (the options named none).
pub fn samples_for(
    func: &str,
    v: ValueRef<'_>,
    options: &ScoreOptions,
    need: SamplesFor,
    defaulted: bool,
) -> Result<Vec<String>, String> {
    if need == SamplesFor::Always || !args::no_samples(v) {
        return args::samples(func, v);
    }
    let scorers = need.sampling_scorers(options);
    if scorers.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = scorers.iter().map(|s| s.name()).collect();
    let which = match (defaulted, names.len()) {
        (true, 1) => format!("the default scorer {}", names[0]),
        (true, _) => format!("the default scorers {}", names.join(", ")),
        (false, 1) => format!("scorer {}", names[0]),
        (false, _) => format!("scorers {}", names.join(", ")),
    };
    let verb = if names.len() == 1 {
        "compares"
    } else {
        "compare"
    };
    let given = match v {
        ValueRef::Null => "samples_json is NULL",
        _ => "samples_json holds no sampled answer",
    };
    Err(format!(
        "{func}: {given}, but {which} {verb} the answer with sampled answers: pass a JSON array \
         of them, e.g. {}, or check the answer against sources without samples: \
         \"scorers\":[\"grounded_entailment\"] with option sources, e.g. \
         \"sources\":{{\"fts\":\"docs\",\"k\":5}}",
        args::SAMPLES_EXAMPLE
    ))
}

/// Whether `map` leaves the scorers that decide on samples to their defaults: no `scorers`
/// (and, for UAD, no `uad_scorer`).
pub fn scorers_defaulted(map: &Map<String, Value>, need: SamplesFor) -> bool {
    let absent = |k: &str| map.get(k).is_none_or(Value::is_null);
    absent("scorers") && (need != SamplesFor::Uad || absent("uad_scorer"))
}

/// The arguments `(response, samples_json[, options_json])` of the functions that score or
/// refine an answer against its samples.
pub struct AnswerArgs {
    pub response: String,
    pub samples: Vec<String>,
    pub options: Options,
}

impl AnswerArgs {
    /// Reads the argument values `a` (two, or three with `options_json`): the response, then
    /// the options (shape, registered LLMs, every check), then `samples_json`
    /// ([`samples_for`]: NULL or `'[]'` is fine when no chosen scorer compares samples). An
    /// FTS5 table named by option `sources` is searched for the answer
    /// ([`Options::resolve_sources`]) when the daemon is to be asked.
    pub fn parse(
        conn: &Connection,
        func: &str,
        a: &[ValueRef<'_>],
        need: SamplesFor,
    ) -> Result<Self, String> {
        let response = args::required_text(func, "response", a[0], "the answer text")?;
        let map = args::options(func, a.get(2).copied())?;
        let defaulted = scorers_defaulted(&map, need);
        let mut options = Options::new(conn, func, map)?;
        let samples = samples_for(func, a[1], &options.parsed, need, defaulted)?;
        if args::has_units(&response, &options.parsed) {
            options.resolve_sources(conn, func, &response)?;
        }
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
    fn samples_are_needed_only_by_scorers_that_compare_them() {
        let parsed = |v: Value| args::validate_options("f", v.as_object().unwrap()).unwrap();
        let grounded =
            parsed(serde_json::json!({"scorers": ["grounded_entailment"], "sources": "x"}));
        let mixed = parsed(
            serde_json::json!({"scorers": ["grounded_entailment", "entailment"], "sources": "x"}),
        );
        let null = ValueRef::Null;
        let empty = ValueRef::Text(b"[]");
        for v in [null, empty] {
            assert_eq!(
                samples_for("f", v, &grounded, SamplesFor::Score, false),
                Ok(vec![])
            );
            let e = samples_for("f", v, &mixed, SamplesFor::Score, false).unwrap_err();
            assert!(
                e.contains("but scorer entailment compares the answer with sampled answers"),
                "{e}"
            );
            assert!(e.contains("grounded_entailment"), "{e}");
        }
        let e = samples_for("f", null, &mixed, SamplesFor::Score, false).unwrap_err();
        assert!(e.starts_with("f: samples_json is NULL, but"), "{e}");
        let e = samples_for("f", empty, &mixed, SamplesFor::Score, false).unwrap_err();
        assert!(
            e.starts_with("f: samples_json holds no sampled answer, but"),
            "{e}"
        );
        let defaults = parsed(serde_json::json!({}));
        let e = samples_for("f", null, &defaults, SamplesFor::Score, true).unwrap_err();
        assert!(
            e.contains("but the default scorers entailment, noncontradiction, contrasted_entailment compare"),
            "{e}"
        );
        // UAD runs one scorer: uad_scorer, else the first of scorers.
        let uad = parsed(
            serde_json::json!({"scorers": ["entailment"], "uad_scorer": "grounded_fallback", "sources": "x"}),
        );
        assert_eq!(
            samples_for("f", null, &uad, SamplesFor::Uad, false),
            Ok(vec![])
        );
        assert!(samples_for("f", null, &uad, SamplesFor::Score, false).is_err());
        // The samples are the input itself: always needed.
        let e = samples_for("f", null, &grounded, SamplesFor::Always, false).unwrap_err();
        assert!(e.starts_with("f: samples_json is NULL; pass"), "{e}");
        // Given samples are read as ever.
        let two = ValueRef::Text(br#"["a","b"]"#);
        assert_eq!(
            samples_for("f", two, &mixed, SamplesFor::Score, false)
                .unwrap()
                .len(),
            2
        );
        assert!(samples_for(
            "f",
            ValueRef::Text(b"[1]"),
            &grounded,
            SamplesFor::Score,
            false
        )
        .is_err());
    }

    #[test]
    fn defaulted_scorers_are_those_not_named() {
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(scorers_defaulted(
            &m(serde_json::json!({})),
            SamplesFor::Score
        ));
        assert!(scorers_defaulted(
            &m(serde_json::json!({"scorers": null})),
            SamplesFor::Score
        ));
        assert!(!scorers_defaulted(
            &m(serde_json::json!({"scorers": ["luq"]})),
            SamplesFor::Score
        ));
        let uad = m(serde_json::json!({"uad_scorer": "luq"}));
        assert!(scorers_defaulted(&uad, SamplesFor::Score));
        assert!(!scorers_defaulted(&uad, SamplesFor::Uad));
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
