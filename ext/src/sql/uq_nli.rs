//! `uq_nli(premise, hypothesis)`: the NLI model's probabilities for one pair, as JSON
//! (`{"entailment":…,"neutral":…,"contradiction":…}`).

use rusqlite::functions::Context;
use rusqlite::types::Value;

use crate::args;
use crate::client::Client;
use crate::glue::sql_err;

/// `uq_nli(premise, hypothesis)` → `{"entailment":…,"neutral":…,"contradiction":…}`.
pub fn uq_nli(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uq_nli";
    let premise =
        args::required_text(F, "premise", ctx.get_raw(0), "the premise text").map_err(sql_err)?;
    let hypothesis = args::required_text(F, "hypothesis", ctx.get_raw(1), "the hypothesis text")
        .map_err(sql_err)?;
    let probs = client
        .nli(&premise, &hypothesis)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    let json = serde_json::to_string(&probs).map_err(|e| sql_err(format!("{F}: {e}")))?;
    Ok(Value::Text(json))
}
