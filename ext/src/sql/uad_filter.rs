//! `uad_filter(response, samples_json[, options_json])`: the answer refined by
//! uncertainty-aware decoding (uad.rs).

use rusqlite::functions::Context;
use rusqlite::types::Value;

use super::uad::{show_warnings, uad};
use crate::args;
use crate::client::{self, Client};
use crate::glue::sql_err;
use crate::options::{AnswerArgs, SamplesFor};

/// `uad_filter(response, samples_json[, options_json])` → the refined answer: the claims that
/// reach the threshold, rewritten by the reconstruction LLM and verified against them (the
/// response itself when none is kept, or when it is blank; the answer's sentences that hold the
/// kept claims when the rewrite lost one); at sentence granularity the kept sentences as
/// written. Claims by the bundled SmolLM2 are a warning on stderr, once per connection.
pub fn uad_filter(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    const F: &str = "uad_filter";
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let a = AnswerArgs::parse(&conn, F, &args::values(ctx), SamplesFor::Uad).map_err(sql_err)?;
    if !a.has_units() {
        client::note_blank_response(F, "the response as given");
        return Ok(Value::Text(a.response));
    }
    let r = uad(client, F, a).map_err(sql_err)?;
    show_warnings(client, F, &r);
    Ok(Value::Text(r.refined_response))
}
