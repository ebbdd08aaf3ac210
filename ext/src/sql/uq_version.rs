//! `uq_version()`: the extension's version.

use rusqlite::functions::Context;
use rusqlite::types::Value;

use crate::client::Client;

/// Version reported by `uq_version()`.
pub const VERSION: &str = concat!("v", env!("CARGO_PKG_VERSION"));

pub fn uq_version(_: &Client, _: &Context<'_>) -> rusqlite::Result<Value> {
    Ok(Value::Text(VERSION.into()))
}
