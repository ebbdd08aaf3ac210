//! `uq_grade(unit, reference_text[, options_json])`: the paper's FactScore grading of a sentence
//! or claim against a reference text by the judge LLM (judge.rs): 1, 0, or NULL.

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::protocol::Request;

use super::judge;
use crate::args;
use crate::client::Client;
use crate::glue::sql_err;

pub fn uq_grade(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uq_grade";
    let unit = args::required_text(F, "unit", ctx.get_raw(0), "the sentence or claim to grade")
        .map_err(sql_err)?;
    let reference = args::required_text(
        F,
        "reference_text",
        ctx.get_raw(1),
        "the reference text (e.g. the Wikipedia article) to grade against",
    )
    .map_err(sql_err)?;
    let options = judge::options(F, ctx, 2)?;
    judge::label(
        client,
        F,
        Request::Grade {
            unit,
            reference,
            options,
        },
    )
}
