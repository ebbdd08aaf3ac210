//! The glue between Rust and SQLite that every SQL object uses: a panic never unwinds into
//! SQLite ([`guard`]), errors carry their text verbatim ([`sql_err`]), and a scalar function is
//! registered with the connection's daemon client ([`scalar`]); a virtual table's cursor steps
//! over the rows its `filter` computed (`step_over_rows!`).

use std::any::Any;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::Value;
use rusqlite::Connection;

use crate::client::Client;

/// The body of a scalar function: the connection's daemon client (unused by the functions
/// computed locally) and the call's context; the result as an SQL value.
pub type ScalarFn = fn(&Client, &Context<'_>) -> rusqlite::Result<Value>;

/// Registers the scalar function `name` with `n` arguments: `f` runs under [`guard`] with the
/// connection's daemon client.
pub fn scalar(
    db: &Connection,
    client: &Arc<Client>,
    name: &'static str,
    n: c_int,
    flags: FunctionFlags,
    f: ScalarFn,
) -> rusqlite::Result<()> {
    let c = Arc::clone(client);
    db.create_scalar_function(name, n, flags, move |ctx| guard(name, || f(&c, ctx)))
}

/// Runs a callback body, turning a panic into an SQL error so that it never unwinds into SQLite.
pub fn guard<T>(what: &str, f: impl FnOnce() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
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
pub fn sql_err(message: impl Into<String>) -> rusqlite::Error {
    rusqlite::Error::ModuleError(message.into())
}

/// `VTabCursor::next` and `VTabCursor::eof` of a cursor over the rows its `filter` computed:
/// `self.rows`, the current one at `self.pos`.
macro_rules! step_over_rows {
    () => {
        fn next(&mut self) -> rusqlite::Result<()> {
            self.pos += 1;
            Ok(())
        }

        fn eof(&self) -> bool {
            self.pos >= self.rows.len()
        }
    };
}
pub(crate) use step_over_rows;

#[cfg(test)]
mod tests {
    #[test]
    fn guard_turns_a_panic_into_an_error() {
        let r: rusqlite::Result<()> = super::guard("uq_x", || panic!("boom"));
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("uq_x: internal error (panic: boom)"), "{e}");
    }
}
