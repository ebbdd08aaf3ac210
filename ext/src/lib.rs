//! `uq0`: the uqlite SQLite loadable extension (`.load dist/uq0` → `sqlite3_uq_init`).
//!
//! A thin client: it never runs a model. Daemon-backed functions send newline-delimited JSON
//! to `uqd` over a per-user Unix socket (see docs/design.md) and turn the replies into SQL
//! values and rows. `uq_version`, `uq_sentences` and the metric aggregates (`uq_auroc`, …)
//! are computed locally. Loading also creates `temp.uq_llms`, the connection's registry of
//! named LLM configs (llms.rs).

mod args;
mod client;
mod functions;
mod jobs;
mod llm_functions;
mod llms;
mod metrics;
mod tvf;
mod vtab_scorers;
mod vtab_sentences;
mod vtab_unit_scores;

use std::any::Any;
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use rusqlite::{ffi, Connection};

/// Version reported by `uq_version()`.
pub(crate) const VERSION: &str = concat!("v", env!("CARGO_PKG_VERSION"));

/// Entry point. SQLite derives its name from the file name `uq0.so`.
///
/// # Safety
/// Called by SQLite with a valid connection handle and API routines table.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_uq_init(
    db: *mut ffi::sqlite3,
    pz_err_msg: *mut *mut c_char,
    p_api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    catch_unwind(|| Connection::extension_init2(db, pz_err_msg, p_api, register))
        .unwrap_or(ffi::SQLITE_ERROR)
}

/// Registers every function and module on one connection. The connection's functions share
/// one daemon client (one socket, reconnected on demand).
fn register(db: Connection) -> rusqlite::Result<bool> {
    let client = Arc::new(client::Client::new());
    functions::register(&db, &client)?;
    metrics::register(&db)?;
    vtab_sentences::register(&db, Arc::clone(&client))?;
    vtab_scorers::register(&db, Arc::clone(&client))?;
    llm_functions::register(&db, &client)?;
    jobs::register(&db, &client)?;
    vtab_unit_scores::register(&db, client)?;
    // Last: creates temp.uq_llms, which needs its module.
    llms::register(&db)?;
    Ok(false)
}

/// Runs a callback body, turning a panic into an SQL error so that it never unwinds into SQLite.
pub(crate) fn guard<T>(what: &str, f: impl FnOnce() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(rusqlite::Error::ModuleError(format!(
            "{what}: internal error (panic: {}); please report it",
            panic_message(&*payload)
        ))),
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "unknown payload"
    }
}

/// An SQL error carrying `message` verbatim.
pub(crate) fn sql_err(message: impl Into<String>) -> rusqlite::Error {
    rusqlite::Error::ModuleError(message.into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn guard_turns_a_panic_into_an_error() {
        let r: rusqlite::Result<()> = super::guard("uq_x", || panic!("boom"));
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("uq_x: internal error (panic: boom)"), "{e}");
    }
}
