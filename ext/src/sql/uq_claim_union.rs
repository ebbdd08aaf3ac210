//! `uq_claim_union(response, samples_json[, options_json])`: the union of unique claims across
//! the answer and its samples (LLM claim merging) as a JSON array, to store and pass back as
//! option `claim_union` (graph scorers then make no LLM call). The merge LLM may be an LLM
//! registered in `temp.uq_llms` (options.rs).

use rusqlite::functions::Context;
use rusqlite::types::Value;

use crate::args;
use crate::client::Client;
use crate::glue::sql_err;
use crate::options::{AnswerArgs, SamplesFor};

/// `uq_claim_union(response, samples_json[, options_json])` → JSON array of the unique claims of
/// the response and its samples: the response's claims (its decomposition, or option `units`),
/// then each sample's new claims merged in by the merge LLM (`merge_llm`, else `llm`), in order.
pub fn uq_claim_union(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uq_claim_union";
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let a = AnswerArgs::parse(&conn, F, &args::values(ctx), SamplesFor::Always).map_err(sql_err)?;
    let o = a.options;
    let r = client
        .claim_union(a.response, a.samples, o.map)
        .map_err(|e| sql_err(o.used.error(F, e)))?;
    let json = serde_json::to_string(&r.claims).map_err(|e| sql_err(format!("{F}: {e}")))?;
    Ok(Value::Text(json))
}
