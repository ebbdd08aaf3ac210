//! `uq0`: the uqlite SQLite loadable extension (`.load dist/uq0` → `sqlite3_uq_init`).
//!
//! A thin client: it never runs a model. Daemon-backed functions send newline-delimited JSON
//! to `uqd` over a per-user Unix socket (see docs/design.md) and turn the replies into SQL
//! values and rows. `uq_version`, `uq_sentences`, `uq_scorers`, the metric aggregates
//! (`uq_auroc`, …) and the calibration and ensemble functions (`uq_fit_calibration`, …) are
//! computed locally. Loading also creates `temp.uq_llms`, the connection's
//! registry of named LLM configs (sql/uq_llms.rs).
//!
//! The rooms: sql/ holds every SQL object, one file each (or one per family, named after it),
//! listed in the registration table `sql::OBJECTS`; glue.rs the Rust–SQLite glue (panic
//! guard, errors); args.rs, options.rs (`options_json`), sources.rs (option `sources` naming
//! an FTS5 table, searched on the caller's connection), llm_config.rs (LLM configs) and tvf.rs
//! (table-valued functions) the machinery the SQL objects share; client/ the daemon client
//! (connection, protocol check, auto-start, timeouts).

mod args;
mod client;
mod glue;
mod llm_config;
mod options;
mod sources;
mod sql;
mod tvf;

use std::os::raw::{c_char, c_int};
use std::panic::catch_unwind;
use std::sync::Arc;

use rusqlite::{ffi, Connection};

use crate::client::Client;
use crate::sql::{Kind, OBJECTS};

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

/// Registers every SQL object of [`OBJECTS`] on one connection, in order. The connection's
/// functions share one daemon client (one socket, reconnected on demand).
fn register(db: Connection) -> rusqlite::Result<bool> {
    let client = Arc::new(Client::new());
    for o in OBJECTS {
        match o.kind {
            Kind::Scalar { arities, flags, f } => {
                for &n in arities {
                    glue::scalar(&db, &client, o.name, n, flags, f)?;
                }
            }
            Kind::Aggregate {
                arities,
                flags,
                create,
            } => {
                for &n in arities {
                    create(&db, o.name, n, flags)?;
                }
            }
            Kind::Module(create) => create(&db, &client)?,
        }
    }
    Ok(false)
}
