//! Uncertainty-aware decoding (UAD, §3.4; docs/reference.md, "Uncertainty-aware decoding"):
//! * `uad_claims(response, samples_json[, options_json])` table: UAD's claims and their fate;
//! * `uad_filter(response, samples_json[, options_json])`: the refined answer.
//!
//! Every LLM role option may name an LLM registered in `temp.uq_llms` (options.rs).

use std::ffi::CStr;
use std::sync::Arc;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

use uq_core::protocol::UadResult;

use crate::client::{self, Client};
use crate::options::AnswerArgs;
use crate::tvf::{self, int, real, TableFn};
use crate::{args, scalar, sql_err};

pub fn register(db: &Connection, client: &Arc<Client>) -> rusqlite::Result<()> {
    tvf::register::<UadClaims>(db, client)?;
    scalar(
        db,
        client,
        c"uad_filter",
        &[2, 3],
        FunctionFlags::SQLITE_UTF8,
        uad_filter,
    )
}

/// `uad_claims(response, samples_json[, options_json])`; a blank response → no rows.
pub struct UadClaims;

impl TableFn for UadClaims {
    const NAME: &'static str = "uad_claims";
    const SCHEMA: &'static CStr = c"CREATE TABLE x(idx INTEGER, claim TEXT, score REAL, \
        kept INTEGER, threshold REAL, pre_confidence REAL, post_confidence REAL, \
        refined_response TEXT, origin TEXT, verified INTEGER, removed_sentences TEXT, \
        calibrated REAL, response HIDDEN, samples_json HIDDEN, options_json HIDDEN)";
    const N_OUT: usize = 12;
    const N_ARGS: usize = 3;
    const N_REQUIRED: usize = 2;
    const MISSING_ARGS: &'static str = "pass the arguments, e.g. \
        SELECT * FROM uad_claims(response, samples_json[, options_json])";

    fn rows(
        client: &Client,
        conn: &Connection,
        a: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String> {
        let a = AnswerArgs::parse(conn, Self::NAME, a)?;
        if !a.has_units() {
            return Ok(Vec::new());
        }
        let r = uad(client, Self::NAME, a)?;
        let removed = serde_json::to_string(&r.removed_sentences)
            .map_err(|e| format!("{}: {e}", Self::NAME))?;
        Ok(r.claims
            .into_iter()
            .map(|c| {
                vec![
                    int(c.idx),
                    Value::Text(c.claim),
                    real(Some(c.score)),
                    Value::Integer(c.kept as i64),
                    real(r.threshold),
                    real(r.pre_confidence),
                    real(r.post_confidence),
                    Value::Text(r.refined_response.clone()),
                    Value::Text(c.origin),
                    Value::Integer(r.verified as i64),
                    Value::Text(removed.clone()),
                    real(c.calibrated),
                ]
            })
            .collect())
    }
}

/// `uad_filter(response, samples_json[, options_json])` → the refined answer: the claims that
/// reach the threshold, rewritten by the reconstruction LLM and verified against them (the
/// response itself when none is kept, or when it is blank).
fn uad_filter(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uad_filter";
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let a = AnswerArgs::parse(&conn, F, &args::values(ctx)).map_err(sql_err)?;
    if !a.has_units() {
        return Ok(a.response);
    }
    Ok(uad(client, F, a).map_err(sql_err)?.refined_response)
}

/// The daemon's `uad` op on the answer in `a`; the reply's notes (the NLI judge's, with its
/// unparsed pairs) and what verification removed become the notes of `uq_debug()`.
fn uad(client: &Client, func: &str, a: AnswerArgs) -> Result<UadResult, String> {
    let o = a.options;
    let r = client
        .uad(a.response, a.samples, o.map)
        .map_err(|e| o.used.error(func, e))?;
    let notes: Vec<String> = r
        .notes
        .iter()
        .cloned()
        .chain(r.removed_sentences.iter().map(|s| {
            format!("{func}: verification removed {s:?} (not entailed by the kept claims)")
        }))
        .collect();
    client::set_last_notes(&notes);
    Ok(r)
}
