//! Scalar SQL functions: `uq_version`, `uq_debug`, `uq_nli`, `response_confidence`.

use std::fmt::Write as _;
use std::sync::Arc;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::Connection;
use serde_json::Value;
use uq_core::paths::default_socket_path;

use crate::args;
use crate::client::{self, Client};
use crate::{guard, sql_err, VERSION};

/// Scorer sent by `response_confidence` when options name none (uqlm's default).
const DEFAULT_CONFIDENCE_SCORER: &str = "entailment";

pub fn register(db: &Connection, client: &Arc<Client>) -> rusqlite::Result<()> {
    let pure = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    // Daemon-backed results depend on the loaded model: not deterministic.
    let daemon = FunctionFlags::SQLITE_UTF8;

    db.create_scalar_function(c"uq_version", 0, pure, |_| {
        guard("uq_version", || Ok(VERSION))
    })?;
    db.create_scalar_function(c"uq_debug", 0, FunctionFlags::SQLITE_UTF8, |_| {
        guard("uq_debug", || Ok(debug_text()))
    })?;

    let c = Arc::clone(client);
    db.create_scalar_function(c"uq_nli", 2, daemon, move |ctx| {
        guard("uq_nli", || uq_nli(&c, ctx))
    })?;

    for n_arg in [2, 3] {
        let c = Arc::clone(client);
        db.create_scalar_function(c"response_confidence", n_arg, daemon, move |ctx| {
            guard("response_confidence", || response_confidence(&c, ctx))
        })?;
    }
    Ok(())
}

/// `uq_nli(premise, hypothesis)` → `{"entailment":…,"neutral":…,"contradiction":…}`.
fn uq_nli(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<String> {
    const F: &str = "uq_nli";
    let premise =
        args::required_text(F, "premise", ctx.get_raw(0), "the premise text").map_err(sql_err)?;
    let hypothesis = args::required_text(F, "hypothesis", ctx.get_raw(1), "the hypothesis text")
        .map_err(sql_err)?;
    let probs = client
        .nli(&premise, &hypothesis)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    serde_json::to_string(&probs).map_err(|e| sql_err(format!("{F}: {e}")))
}

/// `response_confidence(response, samples_json[, options_json])` → the response-level score of
/// exactly one scorer (default `entailment`); NULL when the response has no units.
fn response_confidence(client: &Client, ctx: &Context<'_>) -> rusqlite::Result<Option<f64>> {
    const F: &str = "response_confidence";
    let response =
        args::required_text(F, "response", ctx.get_raw(0), "the answer text").map_err(sql_err)?;
    let samples = args::samples(F, ctx.get_raw(1)).map_err(sql_err)?;
    let mut options = args::options(F, (ctx.len() > 2).then(|| ctx.get_raw(2))).map_err(sql_err)?;
    if options.get("scorers").is_none_or(Value::is_null) {
        options.insert(
            "scorers".into(),
            Value::from(vec![DEFAULT_CONFIDENCE_SCORER]),
        );
    }
    let parsed = args::validate_options(F, &options).map_err(sql_err)?;
    if parsed.scorers.len() > 1 {
        return Err(sql_err(format!(
            r#"{F} returns one number: pass one scorer, e.g. {{"scorers":["entailment"]}} (got {}); use uq_unit_scores for several"#,
            parsed.scorers.len()
        )));
    }
    if !args::has_units(&response, &parsed) {
        return Ok(None);
    }
    let result = client
        .score(response, samples, options)
        .map_err(|e| sql_err(format!("{F}: {e}")))?;
    let mut scores = result.response_scores.into_values();
    match (scores.next(), scores.next()) {
        (Some(score), None) => Ok(score),
        _ => Err(sql_err(format!(
            "{F}: unexpected reply from uqd: expected exactly one response score"
        ))),
    }
}

/// `uq_debug()`: extension, SQLite, socket, daemon binary and, when it answers, the daemon's
/// state. Pings with a short timeout and never starts the daemon.
fn debug_text() -> String {
    let socket = default_socket_path();
    let mut s = String::new();
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(s, "{k}: {v}");
    };
    line("uq0 version", &VERSION);
    line(
        "extension",
        &client::library_path().map_or_else(|| "(unknown)".into(), |p| p.display().to_string()),
    );
    line("sqlite version", &rusqlite::version());
    line("socket", &socket.display());
    line(
        "uqd binary",
        &match client::find_daemon() {
            Ok((p, how)) => format!("{} ({how})", p.display()),
            Err(e) => e.trim_start_matches("uqd binary ").to_string(),
        },
    );
    line("uqd log", &client::log_path(&socket).display());
    line(
        "timeout ms",
        &client::env_ms("UQ_TIMEOUT_MS", client::DEFAULT_TIMEOUT_MS).as_millis(),
    );
    line(
        "start timeout ms",
        &client::env_ms("UQ_START_TIMEOUT_MS", client::DEFAULT_START_TIMEOUT_MS).as_millis(),
    );
    match client::ping(&socket, client::PING_TIMEOUT) {
        Err(e) => line("daemon reachable", &format!("no ({e})")),
        Ok(p) => {
            line("daemon reachable", &"yes");
            line("daemon version", &p.version);
            line("daemon pid", &p.pid);
            line("daemon socket", &p.socket);
            line("nli model", &p.nli_model);
            line("embed model", &p.embed_model.as_deref().unwrap_or("(none)"));
            line("device", &p.device);
            line("threads", &p.threads);
            line("labels", &p.labels.join(", "));
            line("nli cache entries", &p.nli_cache_entries);
            line("embed cache entries", &p.embed_cache_entries);
        }
    }
    s.truncate(s.trim_end().len());
    s
}
