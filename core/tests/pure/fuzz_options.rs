//! Property tests (proptest, fixed budget, fixed seed) of the JSON the user hands in: `options_json`
//! and LLM config objects. Whatever the JSON, parsing never panics, and an error names the argument
//! (`options_json`) or one of the options present. Cases run per target are printed
//! (`cargo test -p uq-core --test pure fuzz_options:: -- --nocapture`).

use proptest::prelude::*;
#[path = "../common/fuzz.rs"]
mod fuzz_runner;
use fuzz_runner::fuzz;
use serde_json::{json, Map, Value};
use uq_core::options::{parse_llm_config, parse_options, LLM_CONFIG_KEYS, OPTION_NAMES};

/// Leaves that sit at or past the edges of what options accept.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            2.0000001,
            1e308,
            -1e308,
            1e-320,
            f64::MAX
        ])
        .prop_map(Value::from),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::String),
        prop::sample::select(vec![
            "sentence",
            "claim",
            "entailment",
            "noncontradiction",
            "mean",
            "min",
            "local",
            "openai",
            "cosine",
            "luq",
            "luq_pair",
            "bert_score",
            "ensemble",
            "betweenness_centrality",
            "verbalized_confidence",
            "unit_qa",
            "platt",
            "isotonic",
            "",
            " ",
            "NaN",
            "1e999",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ]
}

/// Arbitrary JSON, nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An object whose keys are mostly valid names (so parsing gets past the key check), with
/// arbitrary values, sometimes an unknown key.
fn object_of(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        8 => prop::sample::select(keys).prop_map(str::to_string),
        1 => ".{0,12}",
    ];
    prop::collection::vec((key, json_value()), 0..6).prop_map(|kv| {
        let mut m = Map::new();
        for (k, v) in kv {
            m.insert(k, v);
        }
        Value::Object(m)
    })
}

#[test]
fn options_json_never_panics_and_errors_name_an_option() {
    let strategy = prop_oneof![3 => object_of(OPTION_NAMES), 1 => json_value()];
    fuzz("options_json", 20000, strategy, |v| {
        let out = std::panic::catch_unwind(|| parse_options(&v))
            .map_err(|_| format!("parse_options panicked on {v}"))?;
        if let Err(msg) = out {
            let named = msg.contains("options_json")
                || v.as_object()
                    .is_some_and(|o| o.keys().any(|k| !k.is_empty() && msg.contains(k.as_str())));
            if !named {
                return Err(format!("error names no option of {v}: {msg}"));
            }
        }
        Ok(())
    });
}

#[test]
fn llm_config_never_panics_and_errors_name_the_option() {
    let strategy = prop_oneof![3 => object_of(LLM_CONFIG_KEYS), 1 => json_value()];
    fuzz("llm_config", 20000, strategy, |v| {
        for name in ["llm", "judge_llm"] {
            let out = std::panic::catch_unwind(|| parse_llm_config(name, &v))
                .map_err(|_| format!("parse_llm_config panicked on {v}"))?;
            if let Err(msg) = out {
                if !msg.contains(name) {
                    return Err(format!("error does not name option {name} for {v}: {msg}"));
                }
            }
        }
        // The same config inside options_json, as the daemon receives it.
        let opts = json!({ "decomposition_llm": v });
        if let Err(msg) = parse_options(&opts) {
            if !msg.contains("decomposition_llm") {
                return Err(format!(
                    "options error does not name decomposition_llm for {v}: {msg}"
                ));
            }
        }
        Ok(())
    });
}
