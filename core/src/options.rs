//! `options_json` and `samples_json` parsing and validation (docs/design.md, "Options").
//!
//! The options choose the paper's design axes: granularity g (§3.1), the scorers (family ×
//! η, §3.3), the aggregation operator A (§3.4), and m, the number of sampled responses
//! (§3.2). Every error names the offending option and says how to fix it.

use serde_json::Value;

use crate::aggregate::Aggregation;
use crate::scorers::{self, Family, Granularity, Scorer};

/// Every option name `options_json` accepts.
pub const OPTION_NAMES: &[&str] = &[
    "granularity",
    "scorers",
    "aggregation",
    "num_samples",
    "units",
    "sample_units",
];

/// Scorers used when `scorers` is not given.
pub const DEFAULT_SCORERS: &[Scorer] = &[
    Scorer::Entailment,
    Scorer::Noncontradiction,
    Scorer::ContrastedEntailment,
];

/// Validated options of one scoring call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreOptions {
    pub granularity: Granularity,
    /// Non-empty, without duplicates, in the order given.
    pub scorers: Vec<Scorer>,
    pub aggregation: Aggregation,
    /// Use the first m samples; `None` = all.
    pub num_samples: Option<usize>,
    /// Pre-split units of the response; `None` = split it.
    pub units: Option<Vec<String>>,
    /// Pre-split units of each sample (matched-unit scorers); `None` = split each sample.
    pub sample_units: Option<Vec<Vec<String>>>,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            granularity: Granularity::Sentence,
            scorers: DEFAULT_SCORERS.to_vec(),
            aggregation: Aggregation::Mean,
            num_samples: None,
            units: None,
            sample_units: None,
        }
    }
}

impl ScoreOptions {
    /// True when any chosen scorer is of the matched-unit family (needs sample units).
    pub fn has_matched_unit(&self) -> bool {
        self.scorers
            .iter()
            .any(|s| s.family() == Family::MatchedUnit)
    }
}

/// JSON type of `v`, for error messages.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string_option<'a>(name: &str, v: &'a Value, example: &str) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| {
        format!(
            "option {name} must be a string, e.g. \"{name}\":{example}; got {}",
            type_name(v)
        )
    })
}

fn parse_scorers(v: &Value) -> Result<Vec<Scorer>, String> {
    let example = "\"scorers\":[\"entailment\",\"matched_cosine_sim\"]";
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().ok_or_else(|| {
                    format!(
                        "option scorers[{i}] is {}, not a string: give scorer names, e.g. {example}",
                        type_name(item)
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "option scorers must be an array of scorer names, e.g. {example}; got {}",
                type_name(other)
            ))
        }
    };
    let mut out: Vec<Scorer> = Vec::with_capacity(names.len());
    for name in names {
        let s = Scorer::parse(name).map_err(|e| format!("option scorers: {e}"))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "option scorers is empty: name at least one of {} (or leave scorers out for the \
             defaults)",
            scorers::all_names().join(", ")
        ));
    }
    Ok(out)
}

fn parse_num_samples(v: &Value) -> Result<usize, String> {
    match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "option num_samples must be a positive integer (the number of samples to use), \
             e.g. \"num_samples\":5; got {}",
            if v.is_number() {
                v.to_string()
            } else {
                type_name(v).to_string()
            }
        )),
    }
}

fn string_array(name: &str, v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option {name} must be an array of strings, e.g. \"{name}\":[\"First unit.\",\"Second unit.\"]; got {}",
            type_name(v)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                format!(
                    "option {name}[{i}] is {}, not a string: every unit must be a JSON string",
                    type_name(item)
                )
            })
        })
        .collect()
}

fn parse_sample_units(v: &Value) -> Result<Vec<Vec<String>>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option sample_units must be an array with one array of strings per sample, e.g. \
             \"sample_units\":[[\"Unit of sample 1.\"],[\"Unit of sample 2.\"]]; got {}",
            type_name(v)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| string_array(&format!("sample_units[{i}]"), item))
        .collect()
}

/// Parses `options_json`: JSON null (all defaults) or an object with any of
/// [`OPTION_NAMES`]. A key whose value is null keeps its default.
///
/// Errors name the option: unknown keys (listing the valid ones), wrong types, unknown
/// scorer/aggregation/granularity names, an empty `scorers`, `num_samples` < 1, and
/// `granularity: "claim"` without the caller's claims (`units`, plus `sample_units` for
/// matched-unit scorers): uqlite does not extract claims itself.
pub fn parse_options(v: &Value) -> Result<ScoreOptions, String> {
    let obj = match v {
        Value::Null => return Ok(ScoreOptions::default()),
        Value::Object(o) => o,
        _ => {
            return Err(
                "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
                    .to_string(),
            )
        }
    };
    let mut o = ScoreOptions::default();
    for (key, val) in obj {
        if !OPTION_NAMES.contains(&key.as_str()) {
            return Err(format!(
                "unknown option {key:?} in options_json: valid options are {}",
                OPTION_NAMES.join(", ")
            ));
        }
        if val.is_null() {
            continue;
        }
        match key.as_str() {
            "granularity" => {
                let s = string_option(key, val, "\"sentence\"")?;
                o.granularity =
                    Granularity::parse(s).map_err(|e| format!("option granularity: {e}"))?;
            }
            "scorers" => o.scorers = parse_scorers(val)?,
            "aggregation" => {
                let s = string_option(key, val, "\"mean\"")?;
                o.aggregation =
                    Aggregation::parse(s).map_err(|e| format!("option aggregation: {e}"))?;
            }
            "num_samples" => o.num_samples = Some(parse_num_samples(val)?),
            "units" => o.units = Some(string_array("units", val)?),
            "sample_units" => o.sample_units = Some(parse_sample_units(val)?),
            _ => {}
        }
    }
    if o.granularity == Granularity::Claim {
        if o.units.is_none() {
            return Err(
                "option granularity \"claim\" needs the response's claims in option units \
                        (uqlite does not extract claims): pass \"units\":[\"claim 1\",...] or use \
                        \"granularity\":\"sentence\""
                    .to_string(),
            );
        }
        if o.has_matched_unit() && o.sample_units.is_none() {
            return Err("option granularity \"claim\" with a matched-unit scorer needs the claims of \
                        every sample in option sample_units: pass \"sample_units\":[[\"claim\",...],...] \
                        (one array per sample), or use unit-response scorers"
                .to_string());
        }
    }
    Ok(o)
}

/// Parses `samples_json`: a non-empty JSON array of strings (the m sampled responses).
pub fn parse_samples(v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "samples_json must be a JSON array of strings, e.g. [\"sampled answer 1\",\"sampled answer 2\"]; got {}",
            type_name(v)
        )
    })?;
    if items.is_empty() {
        return Err(
            "samples_json must hold at least one sampled response, e.g. [\"sampled answer 1\"]"
                .to_string(),
        );
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                format!(
                    "samples_json[{i}] is {}, not a string: every sample must be a JSON string",
                    type_name(item)
                )
            })
        })
        .collect()
}

/// The first `num_samples` samples (all when `None`). Errors when more are asked for than
/// were given.
pub fn select_samples(
    samples: &[String],
    num_samples: Option<usize>,
) -> Result<Vec<String>, String> {
    match num_samples {
        None => Ok(samples.to_vec()),
        Some(m) if m <= samples.len() => Ok(samples[..m].to_vec()),
        Some(m) => Err(format!(
            "option num_samples is {m} but samples_json holds only {} sample{}: lower num_samples \
             or pass more samples",
            samples.len(),
            if samples.len() == 1 { "" } else { "s" }
        )),
    }
}

/// Checks that `sample_units` has one entry per given sample (before `num_samples` picks the
/// first m; the same first m entries are then used).
pub fn check_sample_units(sample_units: &[Vec<String>], n_samples: usize) -> Result<(), String> {
    if sample_units.len() == n_samples {
        Ok(())
    } else {
        Err(format!(
            "option sample_units has {} entries but samples_json holds {n_samples} samples: give \
             one array of units per sample, in the same order",
            sample_units.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_and_empty_object_are_defaults() {
        let d = ScoreOptions::default();
        assert_eq!(parse_options(&Value::Null), Ok(d.clone()));
        assert_eq!(parse_options(&json!({})), Ok(d.clone()));
        assert_eq!(d.granularity, Granularity::Sentence);
        assert_eq!(d.aggregation, Aggregation::Mean);
        assert_eq!(
            d.scorers,
            vec![
                Scorer::Entailment,
                Scorer::Noncontradiction,
                Scorer::ContrastedEntailment
            ]
        );
        assert_eq!((d.num_samples, d.units, d.sample_units), (None, None, None));
        // null values keep defaults
        assert_eq!(
            parse_options(&json!({"scorers": null, "units": null})),
            Ok(ScoreOptions::default())
        );
    }

    #[test]
    fn not_an_object() {
        for v in [json!([1]), json!("x"), json!(3), json!(true)] {
            let e = parse_options(&v).unwrap_err();
            assert_eq!(
                e,
                "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
            );
        }
    }

    #[test]
    fn unknown_key() {
        let e = parse_options(&json!({"scorer": ["entailment"]})).unwrap_err();
        assert!(e.contains("\"scorer\""), "{e}");
        for k in OPTION_NAMES {
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn full_options() {
        let o = parse_options(&json!({
            "granularity": "claim",
            "scorers": ["LUQ_PAIR", "entailment", "matched_contrasted_entailment", "luq"],
            "aggregation": "gmean",
            "num_samples": 3,
            "units": ["a", "b"],
            "sample_units": [["x"], [], ["y", "z"]]
        }))
        .unwrap_or_default();
        assert_eq!(o.granularity, Granularity::Claim);
        assert_eq!(
            o.scorers,
            vec![
                Scorer::MatchedContrastedEntailment,
                Scorer::Entailment,
                Scorer::ContrastedEntailment
            ]
        );
        assert_eq!(o.aggregation, Aggregation::GeometricMean);
        assert_eq!(o.num_samples, Some(3));
        assert_eq!(o.units, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(o.sample_units.as_ref().map(Vec::len), Some(3));
        assert!(o.has_matched_unit());
    }

    #[test]
    fn scorers_string_or_array() {
        let o = parse_options(&json!({"scorers": "matched_bert_score"})).unwrap_or_default();
        assert_eq!(o.scorers, vec![Scorer::MatchedBertScore]);
        let e = parse_options(&json!({"scorers": []})).unwrap_err();
        assert!(e.contains("scorers") && e.contains("empty"), "{e}");
        let e = parse_options(&json!({"scorers": ["entailment", 3]})).unwrap_err();
        assert!(e.contains("scorers[1]") && e.contains("a number"), "{e}");
        let e = parse_options(&json!({"scorers": {"a": 1}})).unwrap_err();
        assert!(e.contains("scorers") && e.contains("an object"), "{e}");
        let e = parse_options(&json!({"scorers": ["nope"]})).unwrap_err();
        assert!(
            e.contains("scorers") && e.contains("\"nope\"") && e.contains("matched_cosine_sim"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_name_the_option() {
        let cases = [
            (json!({"granularity": 1}), "granularity"),
            (json!({"granularity": "word"}), "granularity"),
            (json!({"aggregation": ["mean"]}), "aggregation"),
            (json!({"aggregation": "median"}), "aggregation"),
            (json!({"num_samples": 0}), "num_samples"),
            (json!({"num_samples": -2}), "num_samples"),
            (json!({"num_samples": 2.5}), "num_samples"),
            (json!({"num_samples": "5"}), "num_samples"),
            (json!({"units": "one unit"}), "units"),
            (json!({"units": ["ok", null]}), "units[1]"),
            (json!({"sample_units": ["a"]}), "sample_units[0]"),
            (json!({"sample_units": [["a"], [1]]}), "sample_units[1][0]"),
            (json!({"sample_units": "a"}), "sample_units"),
        ];
        for (v, name) in cases {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(name), "{v}: {e}");
        }
        let e = parse_options(&json!({"num_samples": 0})).unwrap_err();
        assert!(e.contains("positive integer") && e.contains("got 0"), "{e}");
    }

    #[test]
    fn claim_needs_units() {
        let e = parse_options(&json!({"granularity": "claim"})).unwrap_err();
        assert!(e.contains("units") && e.contains("claim"), "{e}");
        assert!(parse_options(&json!({"granularity": "claim", "units": ["c"]})).is_ok());
        let e = parse_options(
            &json!({"granularity": "claim", "units": ["c"], "scorers": ["luq_pair"]}),
        )
        .unwrap_err();
        assert!(e.contains("sample_units"), "{e}");
    }

    #[test]
    fn samples() {
        assert_eq!(
            parse_samples(&json!(["a", "b"])),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        let e = parse_samples(&json!([])).unwrap_err();
        assert!(
            e.contains("samples_json must hold at least one sampled response"),
            "{e}"
        );
        let e = parse_samples(&json!(["a", 2, "c"])).unwrap_err();
        assert!(
            e.contains("samples_json[1]") && e.contains("a number"),
            "{e}"
        );
        let e = parse_samples(&json!({"a": "b"})).unwrap_err();
        assert!(e.contains("samples_json") && e.contains("array"), "{e}");
        assert!(parse_samples(&Value::Null).is_err());
    }

    #[test]
    fn selecting_samples() {
        let s: Vec<String> = ["a", "b", "c"].iter().map(|x| x.to_string()).collect();
        assert_eq!(select_samples(&s, None), Ok(s.clone()));
        assert_eq!(select_samples(&s, Some(2)), Ok(s[..2].to_vec()));
        assert_eq!(select_samples(&s, Some(3)), Ok(s.clone()));
        let e = select_samples(&s, Some(5)).unwrap_err();
        assert!(
            e.contains("num_samples is 5") && e.contains("only 3 samples"),
            "{e}"
        );
        let e = select_samples(&s[..1], Some(2)).unwrap_err();
        assert!(e.contains("only 1 sample:"), "{e}");
    }

    #[test]
    fn sample_units_count() {
        assert!(check_sample_units(&[vec![], vec![]], 2).is_ok());
        let e = check_sample_units(&[vec![]], 2).unwrap_err();
        assert!(
            e.contains("sample_units") && e.contains("1 entries") && e.contains("2 samples"),
            "{e}"
        );
    }
}
