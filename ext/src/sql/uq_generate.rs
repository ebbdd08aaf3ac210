//! `uq_generate(prompt, n[, options_json])`: table of the original answer (idx 0) and `n`
//! sampled answers to a prompt, written by the generation LLM (docs/reference.md, "LLM functions").
//! Every LLM role option may name an LLM registered in `temp.uq_llms` (options.rs).

use std::ffi::CStr;

use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use crate::args;
use crate::client::Client;
use crate::options::Options;
use crate::tvf::{int, real, TableFn};

/// `uq_generate(prompt, n[, options_json])`.
pub struct Generate;

impl TableFn for Generate {
    const NAME: &'static str = "uq_generate";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, response TEXT, temperature REAL, \
        model TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cached INTEGER, \
        normalized_probability REAL, logprobs TEXT, \
        prompt HIDDEN, n HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 9;
    const N_ARGS: usize = 3;
    const N_REQUIRED: usize = 2;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uq_generate('Who was Marie Curie?', 5[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = Generate::NAME;
        let prompt = args::required_text(F, "prompt", a[0], "the question to answer")?;
        if prompt.trim().is_empty() {
            return Err(format!("{F}: prompt is empty; pass the question to answer"));
        }
        let n = sample_count(F, a[1])?;
        let o = Options::from_arg(conn, F, Some(a[2]))?;
        let result = client
            .generate(prompt, n, o.map)
            .map_err(|e| o.used.error(F, e))?;
        if result.responses.len() != n + 1 {
            return Err(format!(
                "{F}: unexpected reply from uqd: {} responses for n = {n} (expected {})",
                result.responses.len(),
                n + 1
            ));
        }
        Ok(result
            .responses
            .into_iter()
            .map(|r| {
                vec![
                    int(r.index),
                    Value::Text(r.text),
                    real(Some(r.temperature)),
                    Value::Text(r.model),
                    int(r.prompt_tokens),
                    int(r.completion_tokens),
                    Value::Integer(r.cached as i64),
                    real(r.normalized_probability),
                    match &r.logprobs {
                        Some(lp) => Value::Text(serde_json::to_string(lp).unwrap_or_default()),
                        None => Value::Null,
                    },
                ]
            })
            .collect())
    }
}

/// `n` of `uq_generate`: an INTEGER ≥ 0.
fn sample_count(func: &str, v: ValueRef<'_>) -> Result<usize, String> {
    let how = "pass the number of sampled answers, e.g. 5 (0 for the original answer alone)";
    match v {
        ValueRef::Integer(n) if n >= 0 => {
            usize::try_from(n).map_err(|_| format!("{func}: n = {n} is too large; {how}"))
        }
        ValueRef::Integer(n) => Err(format!("{func}: n = {n} is negative; {how}")),
        ValueRef::Null => Err(format!("{func}: n is NULL; {how}")),
        ValueRef::Real(x) => Err(format!(
            "{func}: n must be an INTEGER, got REAL {x}; {how} (or CAST(n AS INTEGER))"
        )),
        ValueRef::Text(_) => Err(format!(
            "{func}: n must be an INTEGER, got TEXT; {how} (or CAST(n AS INTEGER))"
        )),
        ValueRef::Blob(_) => Err(format!("{func}: n must be an INTEGER, got BLOB; {how}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n_is_a_non_negative_integer() {
        assert_eq!(sample_count("f", ValueRef::Integer(0)), Ok(0));
        assert_eq!(sample_count("f", ValueRef::Integer(5)), Ok(5));
        for (v, needle) in [
            (ValueRef::Integer(-1), "negative"),
            (ValueRef::Null, "NULL"),
            (ValueRef::Real(2.5), "REAL"),
            (ValueRef::Text(b"3"), "TEXT"),
        ] {
            let e = sample_count("f", v).unwrap_err();
            assert!(e.starts_with("f: n") && e.contains(needle), "{e}");
        }
    }
}
