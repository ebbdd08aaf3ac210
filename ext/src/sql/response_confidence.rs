//! `response_confidence(response, samples_json[, options_json])` and
//! `claim_confidence(response, samples_json[, options_json])`: one scorer's response-level
//! confidence, at sentence or claim granularity.

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::scorers::Granularity;

use crate::args;
use crate::client::{self, Client};
use crate::glue::sql_err;
use crate::options::{samples_for, scorers_defaulted, Options, SamplesFor};

/// Scorer sent by `response_confidence` when options name none (uqlm's default).
const DEFAULT_CONFIDENCE_SCORER: &str = "entailment";

/// `response_confidence(response, samples_json[, options_json])`: see [`confidence`].
pub fn response_confidence(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    confidence(client, ctx, false).map(Value::from)
}

/// `claim_confidence(response, samples_json[, options_json])`: see [`confidence`].
pub fn claim_confidence(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    confidence(client, ctx, true).map(Value::from)
}

/// `response_confidence(response, samples_json[, options_json])` → the response-level score of
/// exactly one scorer (default `entailment`), calibrated when option `calibration` has a model
/// of it; NULL when the response has no units. `samples_json` may be NULL or `'[]'` when the
/// scorer compares no samples (a grounded scorer; option `sources` naming an FTS5 table is
/// searched on this connection first).
/// `claim_confidence` (`claims`) is the same at `granularity: "claim"`.
fn confidence(client: &Client, ctx: &Context<'_>, claims: bool) -> rusqlite::Result<Option<f64>> {
    let f = if claims {
        "claim_confidence"
    } else {
        "response_confidence"
    };
    let response =
        args::required_text(f, "response", ctx.get_raw(0), "the answer text").map_err(sql_err)?;
    // The options first, then samples_json: NULL or '[]' is fine when the scorer compares no
    // samples (options.rs, `samples_for`).
    let mut options = args::options(f, (ctx.len() > 2).then(|| ctx.get_raw(2))).map_err(sql_err)?;
    let defaulted = scorers_defaulted(&options, SamplesFor::Score);
    if defaulted {
        options.insert(
            "scorers".into(),
            serde_json::Value::from(vec![DEFAULT_CONFIDENCE_SCORER]),
        );
    }
    if claims
        && options
            .get("granularity")
            .is_none_or(serde_json::Value::is_null)
    {
        options.insert("granularity".into(), serde_json::Value::from("claim"));
    }
    // SAFETY: a non-owning handle on the connection running this function, used here only.
    let conn = unsafe { ctx.get_connection() }?;
    let mut o = Options::new(&conn, f, options).map_err(sql_err)?;
    if claims && o.parsed.decompose.granularity != Granularity::Claim {
        return Err(sql_err(format!(
            "{f}: option granularity is {}, but {f} scores claims: drop granularity (or set it to \
             \"claim\"), or use response_confidence for sentences",
            o.map["granularity"]
        )));
    }
    if o.parsed.scoring.scorers.len() > 1 {
        return Err(sql_err(format!(
            r#"{f} returns one number: pass one scorer, e.g. {{"scorers":["entailment"]}} (got {}); use uq_unit_scores for several"#,
            o.parsed.scoring.scorers.len()
        )));
    }
    let samples =
        samples_for(f, ctx.get_raw(1), &o.parsed, SamplesFor::Score, defaulted).map_err(sql_err)?;
    if !args::has_units(&response, &o.parsed) {
        client::note_blank_response(f, "NULL");
        return Ok(None);
    }
    o.resolve_sources(&conn, f, &response).map_err(sql_err)?;
    let llm = o.score_uses_llm();
    let result = client
        .score(response, samples, o.map, llm)
        .map_err(|e| sql_err(o.used.error(f, e)))?;
    client::add_last_notes(&o.notes);
    // One scorer: its calibrated confidence when `calibration` has a model of it.
    let mut calibrated = result.calibrated_scores.into_values();
    if let (Some(c), None) = (calibrated.next(), calibrated.next()) {
        return Ok(c);
    }
    let mut scores = result.response_scores.into_values();
    match (scores.next(), scores.next()) {
        (Some(score), None) => Ok(score),
        _ => Err(sql_err(format!(
            "{f}: unexpected reply from uqd: expected exactly one response score"
        ))),
    }
}
