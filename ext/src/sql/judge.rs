//! What the paper's graders (`uq_grade`, `uq_objectivity`) share: the judge's options and the
//! label of its reply (1, 0, or NULL for a reply that cannot be read). The judge LLM
//! (`judge_llm`, else `llm`) may be an LLM registered in `temp.uq_llms` (options.rs).

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::protocol::{GradeResult, Request};

use crate::client::Client;
use crate::glue::sql_err;
use crate::options::Options;

/// The judge's options: argument `idx` of the call, resolved and validated.
pub fn options(func: &str, ctx: &Context<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let o = Options::from_arg(&conn, func, (ctx.len() > idx).then(|| ctx.get_raw(idx)));
    Ok(serde_json::Value::Object(o.map_err(sql_err)?.map))
}

/// The label of the judge's reply to `req` (1, 0, or NULL).
pub fn label(client: &Client, func: &str, req: Request) -> rusqlite::Result<Value> {
    let r: GradeResult = client.call_for(func, &req, true).map_err(sql_err)?;
    Ok(Value::from(r.label.map(i64::from)))
}
