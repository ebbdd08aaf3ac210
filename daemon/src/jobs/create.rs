//! Creating a job from the command line (`uqd score DB TABLE`): `uq_core::jobs::create_job`,
//! the same checks and statements as the extension's `uq_score_table`, run on the daemon's own
//! connection.

use rusqlite::Connection;
use serde_json::{Map, Value};
use uq_core::jobs;

use crate::store;

/// Checks `table` and `options` and inserts a queued job; returns its id.
pub fn create_job(
    func: &str,
    conn: &mut Connection,
    table: &str,
    options: &Map<String, Value>,
) -> Result<i64, String> {
    let name = jobs::table_name(func, table)?;
    jobs::create_job(func, &mut Db(conn), &name, options.clone())
}

/// The daemon's connection as a [`JobDb`](jobs::JobDb).
struct Db<'a>(&'a mut Connection);

uq_core::impl_job_db! {
    impl JobDb for Db<'_> {
        fn migrate(&mut self) -> Result<(), String> {
            store::migrate(self.0).map(drop)
        }
    }
}
