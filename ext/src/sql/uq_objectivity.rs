//! `uq_objectivity(claim[, options_json])`: whether the judge LLM (judge.rs) finds a claim
//! objective (1) or subjective (0); NULL for a reply that cannot be read.

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::protocol::Request;

use super::judge;
use crate::args;
use crate::client::Client;
use crate::glue::sql_err;

pub fn uq_objectivity(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uq_objectivity";
    let claim = args::required_text(F, "claim", ctx.get_raw(0), "the claim to classify")
        .map_err(sql_err)?;
    let options = judge::options(F, ctx, 1)?;
    judge::label(client, F, Request::Objectivity { claim, options })
}
