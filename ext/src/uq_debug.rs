//! `uq_version()` and `uq_debug()`: what is loaded, where the daemon is, and whether it answers.

use std::fmt::Write as _;

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;
use uq_core::paths::default_socket_path;

use crate::autostart::{self, DEFAULT_START_TIMEOUT_MS};
use crate::client;
use crate::{guard, VERSION};

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    let pure = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    db.create_scalar_function(c"uq_version", 0, pure, |_| {
        guard("uq_version", || Ok(VERSION))
    })?;
    db.create_scalar_function(c"uq_debug", 0, FunctionFlags::SQLITE_UTF8, |_| {
        guard("uq_debug", || Ok(debug_text()))
    })?;
    Ok(())
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
        &autostart::library_path().map_or_else(|| "(unknown)".into(), |p| p.display().to_string()),
    );
    line("sqlite version", &rusqlite::version());
    line("socket", &socket.display());
    line(
        "uqd binary",
        &match autostart::find_daemon() {
            Ok((p, how)) => format!("{} ({how})", p.display()),
            Err(e) => e.trim_start_matches("uqd binary ").to_string(),
        },
    );
    line("uqd log", &client::log_path(&socket).display());
    let notes = client::last_notes();
    line(
        "last score notes",
        &if notes.is_empty() {
            "(none)".to_string()
        } else {
            notes.join(" | ")
        },
    );
    line(
        "timeout ms",
        &client::env_ms("UQ_TIMEOUT_MS", client::DEFAULT_TIMEOUT_MS).as_millis(),
    );
    line("llm timeout ms", &client::reply_timeout(true).as_millis());
    line(
        "start timeout ms",
        &client::env_ms("UQ_START_TIMEOUT_MS", DEFAULT_START_TIMEOUT_MS).as_millis(),
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
            if let Some(n) = &p.device_note {
                line("cuda not used", n);
            }
            line("nli file", &p.nli_file.as_deref().unwrap_or("(unknown)"));
            line("precision", &p.precision.as_deref().unwrap_or("(unknown)"));
            if let Some(n) = &p.precision_note {
                line("precision note", n);
            }
            if let Some(b) = p.nli_batch {
                line("nli batch", &b);
            }
            for (i, e) in p.nli_endpoints.iter().flatten().enumerate() {
                let state = if e.healthy { "up" } else { "down" };
                let last = e
                    .last_error
                    .as_deref()
                    .map(|l| format!(", last error: {l}"));
                line(
                    &format!("nli server {}", i + 1),
                    &format!(
                        "{} ({state}, {} requests served, {} failures{})",
                        e.url,
                        e.served,
                        e.failures,
                        last.unwrap_or_default()
                    ),
                );
            }
            line("threads", &p.threads);
            if let Some(n) = p.nli_sessions {
                line("nli sessions", &n);
            }
            line("labels", &p.labels.join(", "));
            line("nli cache entries", &p.nli_cache_entries);
            line("embed cache entries", &p.embed_cache_entries);
            line("local llm", &p.local_llm.as_deref().unwrap_or("(none)"));
            line("local llm loaded", &p.local_llm_loaded);
            line("llm cache", &p.llm_cache.as_deref().unwrap_or("(none)"));
        }
    }
    s.truncate(s.trim_end().len());
    s
}
