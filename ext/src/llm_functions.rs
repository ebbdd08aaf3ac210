//! The LLM layer's SQL functions (docs/design.md, "SQL additions"):
//! * `uq_generate(prompt, n[, options_json])` table: the original answer (idx 0) and n samples;
//! * `uq_claims(text[, options_json])` table: the claims of a text;
//! * `claim_confidence(response, samples_json[, options_json])`: `response_confidence` at claim
//!   granularity (in functions.rs);
//! * `uad_filter(response, samples_json[, options_json])`: the refined answer (UAD, §3.4);
//! * `uad_claims(response, samples_json[, options_json])` table: UAD's claims and their fate;
//! * `uq_claim_union(response, samples_json[, options_json])`: the union of unique claims across
//!   the answer and its samples (LLM claim merging) as a JSON array, to store and pass back as
//!   option `claim_union` (graph scorers then make no LLM call).
//!
//! Every LLM role option may name an LLM registered in `temp.uq_llms` (see llms.rs).

use std::ffi::CStr;
use std::sync::Arc;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::vtab::Module;
use rusqlite::Connection;

use crate::client::Client;
use crate::llms::Options;
use crate::tvf::{FnTab, TableFn};
use crate::{args, guard, sql_err};

pub fn register(db: &Connection, client: &Arc<Client>) -> rusqlite::Result<()> {
    const GENERATE: Module<FnTab<Generate>> = Module::eponymous_only_module();
    const CLAIMS: Module<FnTab<Claims>> = Module::eponymous_only_module();
    const UAD_CLAIMS: Module<FnTab<UadClaims>> = Module::eponymous_only_module();
    db.create_module(c"uq_generate", &GENERATE, Some(Arc::clone(client)))?;
    db.create_module(c"uq_claims", &CLAIMS, Some(Arc::clone(client)))?;
    db.create_module(c"uad_claims", &UAD_CLAIMS, Some(Arc::clone(client)))?;

    for n_arg in [2, 3] {
        let c = Arc::clone(client);
        db.create_scalar_function(
            c"uad_filter",
            n_arg,
            FunctionFlags::SQLITE_UTF8,
            move |ctx| guard("uad_filter", || uad_filter(&c, ctx)),
        )?;
        let c = Arc::clone(client);
        db.create_scalar_function(
            c"uq_claim_union",
            n_arg,
            FunctionFlags::SQLITE_UTF8,
            move |ctx| guard("uq_claim_union", || claim_union(&c, ctx)),
        )?;
    }
    Ok(())
}

/// `uq_claim_union(response, samples_json[, options_json])` → JSON array of the unique claims of
/// the response and its samples: the response's claims (its decomposition, or option `units`),
/// then each sample's new claims merged in by the merge LLM (`merge_llm`, else `llm`), in order.
fn claim_union(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uq_claim_union";
    let response =
        args::required_text(F, "response", ctx.get_raw(0), "the answer text").map_err(sql_err)?;
    let samples = args::samples(F, ctx.get_raw(1)).map_err(sql_err)?;
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let o = options(F, &conn, (ctx.len() > 2).then(|| ctx.get_raw(2))).map_err(sql_err)?;
    let r = client
        .claim_union(response, samples, o.map)
        .map_err(|e| sql_err(o.used.error(F, e)))?;
    serde_json::to_string(&r.claims).map_err(|e| sql_err(format!("{F}: {e}")))
}

/// `options_json` (argument `v`, NULL or absent = defaults), with registered LLM names resolved.
fn options(func: &str, conn: &Connection, v: Option<ValueRef<'_>>) -> Result<Options, String> {
    Options::new(conn, func, args::options(func, v)?)
}

fn opt_f64(x: Option<f64>) -> Value {
    match x {
        Some(x) if x.is_finite() => Value::Real(x),
        _ => Value::Null,
    }
}

fn int(n: impl TryInto<i64>) -> Value {
    Value::Integer(n.try_into().unwrap_or(i64::MAX))
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

// ---------------------------------------------------------------------------------------------

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
        let o = options(F, conn, Some(a[2]))?;
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
                    opt_f64(Some(r.temperature)),
                    Value::Text(r.model),
                    int(r.prompt_tokens),
                    int(r.completion_tokens),
                    Value::Integer(r.cached as i64),
                    opt_f64(r.normalized_probability),
                    match &r.logprobs {
                        Some(lp) => Value::Text(serde_json::to_string(lp).unwrap_or_default()),
                        None => Value::Null,
                    },
                ]
            })
            .collect())
    }
}

/// `uq_claims(text[, options_json])`; NULL or blank text → no rows, no daemon call.
pub struct Claims;

impl TableFn for Claims {
    const NAME: &'static str = "uq_claims";
    const SCHEMA: &'static CStr =
        c"CREATE TABLE x(idx INTEGER, claim TEXT, text HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 2;
    const N_ARGS: usize = 2;
    const N_REQUIRED: usize = 1;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uq_claims('Marie Curie was a physicist born in Warsaw.'[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = Claims::NAME;
        let text = args::text(F, "text", a[0])?;
        let o = options(F, conn, Some(a[1]))?;
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Ok(Vec::new());
        };
        let result = client.claims(text, o.map).map_err(|e| o.used.error(F, e))?;
        Ok(result
            .claims
            .into_iter()
            .enumerate()
            .map(|(i, c)| vec![int(i), Value::Text(c)])
            .collect())
    }
}

/// `uad_claims(response, samples_json[, options_json])`; a blank response → no rows.
pub struct UadClaims;

impl TableFn for UadClaims {
    const NAME: &'static str = "uad_claims";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, claim TEXT, score REAL, \
        kept INTEGER, threshold REAL, pre_confidence REAL, post_confidence REAL, \
        refined_response TEXT, response HIDDEN, samples_json HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 8;
    const N_ARGS: usize = 3;
    const N_REQUIRED: usize = 2;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uad_claims(response, samples_json[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        const F: &str = UadClaims::NAME;
        let response = args::required_text(F, "response", a[0], "the answer text")?;
        let samples = args::samples(F, a[1])?;
        let o = options(F, conn, Some(a[2]))?;
        if !args::has_units(&response, &o.parsed) {
            return Ok(Vec::new());
        }
        let r = client
            .uad(response, samples, o.map)
            .map_err(|e| o.used.error(F, e))?;
        Ok(r.claims
            .into_iter()
            .map(|c| {
                vec![
                    int(c.idx),
                    Value::Text(c.claim),
                    opt_f64(Some(c.score)),
                    Value::Integer(c.kept as i64),
                    opt_f64(r.threshold),
                    opt_f64(r.pre_confidence),
                    opt_f64(r.post_confidence),
                    Value::Text(r.refined_response.clone()),
                ]
            })
            .collect())
    }
}

/// `uad_filter(response, samples_json[, options_json])` → the refined answer: the claims that
/// score above the threshold, rewritten by the reconstruction LLM (the response itself when
/// none is kept, or when it is blank).
fn uad_filter(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uad_filter";
    let response =
        args::required_text(F, "response", ctx.get_raw(0), "the answer text").map_err(sql_err)?;
    let samples = args::samples(F, ctx.get_raw(1)).map_err(sql_err)?;
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let o = options(F, &conn, (ctx.len() > 2).then(|| ctx.get_raw(2))).map_err(sql_err)?;
    if !args::has_units(&response, &o.parsed) {
        return Ok(response);
    }
    let r = client
        .uad(response, samples, o.map)
        .map_err(|e| sql_err(o.used.error(F, e)))?;
    Ok(r.refined_response)
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
