//! `uq_debug()`: what is loaded, where the daemon is, and whether it answers.

use std::fmt::{Display, Write as _};

use rusqlite::functions::Context;
use rusqlite::types::Value;
use uq_core::paths::default_socket_path;
use uq_core::protocol::PingInfo;

use super::uq_version::VERSION;
use crate::client::autostart::{find_daemon, library_path};
use crate::client::conn::{log_path, ping};
use crate::client::settings::{
    env_ms, reply_timeout, DEFAULT_START_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, PING_TIMEOUT,
};
use crate::client::{last_notes, Client};

pub fn uq_debug(_: &Client, _: &Context<'_>) -> rusqlite::Result<Value> {
    Ok(Value::Text(debug_text()))
}

/// `key: value` lines.
#[derive(Default)]
struct Lines(String);

impl Lines {
    fn add(&mut self, key: &str, value: impl Display) {
        let _ = writeln!(self.0, "{key}: {value}");
    }
}

/// `uq_debug()`: extension, SQLite, socket, daemon binary and, when it answers, the daemon's
/// state. Pings with a short timeout and never starts the daemon.
fn debug_text() -> String {
    let socket = default_socket_path();
    let mut s = Lines::default();
    s.add("uq0 version", VERSION);
    s.add(
        "extension",
        library_path().map_or_else(|| "(unknown)".into(), |p| p.display().to_string()),
    );
    s.add("sqlite version", rusqlite::version());
    s.add("socket", socket.display());
    s.add(
        "uqd binary",
        match find_daemon() {
            Ok((p, how)) => format!("{} ({how})", p.display()),
            Err(e) => e.trim_start_matches("uqd binary ").to_string(),
        },
    );
    s.add("uqd log", log_path(&socket).display());
    let notes = last_notes();
    s.add(
        "last score notes",
        if notes.is_empty() {
            "(none)".to_string()
        } else {
            notes.join(" | ")
        },
    );
    s.add(
        "timeout ms",
        env_ms("UQ_TIMEOUT_MS", DEFAULT_TIMEOUT_MS).as_millis(),
    );
    s.add("llm timeout ms", reply_timeout(true).as_millis());
    s.add(
        "start timeout ms",
        env_ms("UQ_START_TIMEOUT_MS", DEFAULT_START_TIMEOUT_MS).as_millis(),
    );
    match ping(&socket, PING_TIMEOUT) {
        Err(e) => s.add("daemon reachable", format!("no ({e})")),
        Ok(p) => {
            s.add("daemon reachable", "yes");
            daemon_lines(&mut s, &p);
        }
    }
    let mut s = s.0;
    s.truncate(s.trim_end().len());
    s
}

/// The state of the daemon that answered the ping `p`.
fn daemon_lines(s: &mut Lines, p: &PingInfo) {
    s.add("daemon version", &p.version);
    s.add("daemon pid", p.pid);
    s.add("daemon socket", &p.socket);
    s.add("nli model", &p.nli_model);
    s.add("embed model", p.embed_model.as_deref().unwrap_or("(none)"));
    s.add("device", &p.device);
    if let Some(n) = &p.device_note {
        s.add("cuda not used", n);
    }
    s.add("nli file", p.nli_file.as_deref().unwrap_or("(unknown)"));
    s.add("precision", p.precision.as_deref().unwrap_or("(unknown)"));
    if let Some(n) = &p.precision_note {
        s.add("precision note", n);
    }
    if let Some(b) = p.nli_batch {
        s.add("nli batch", b);
    }
    for (i, e) in p.nli_endpoints.iter().flatten().enumerate() {
        let state = if e.healthy { "up" } else { "down" };
        let last = e
            .last_error
            .as_deref()
            .map(|l| format!(", last error: {l}"));
        s.add(
            &format!("nli server {}", i + 1),
            format!(
                "{} ({state}, {} requests served, {} failures{})",
                e.url,
                e.served,
                e.failures,
                last.unwrap_or_default()
            ),
        );
    }
    s.add("threads", p.threads);
    if let Some(n) = p.nli_sessions {
        s.add("nli sessions", n);
    }
    s.add("labels", p.labels.join(", "));
    s.add("nli cache entries", p.nli_cache_entries);
    s.add("embed cache entries", p.embed_cache_entries);
    s.add("local llm", p.local_llm.as_deref().unwrap_or("(none)"));
    s.add("local llm loaded", p.local_llm_loaded);
    s.add("llm cache", p.llm_cache.as_deref().unwrap_or("(none)"));
}
