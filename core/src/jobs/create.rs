//! Creating a job: the connection it is created on ([`JobDb`]), the table found, the options
//! checked, the row inserted.

use serde_json::{Map, Value};

use super::keys::check_option_names;
use super::parse::parse_job;
use super::sql::{
    count_rows_sql, no_such_table, LIST_TABLES, TABLE_COLUMNS, TABLE_NAME, TEMP_TABLE_NAME,
};

/// A connection on which a job is created: the user's, in the extension (`uq_score_table`), or
/// the daemon's own (`uqd score`). Each side runs the statements with its own rusqlite build;
/// which statements, in which order, and every check and message are [`create_job`]'s.
pub trait JobDb {
    /// The first column (TEXT) of every row of `sql`, with the TEXT parameters `params`; the
    /// error is the database's message.
    fn texts(&mut self, sql: &str, params: &[&str]) -> Result<Vec<String>, String>;
    /// The INTEGER of the one-row, one-column query `sql`; the error is the database's message.
    fn integer(&mut self, sql: &str) -> Result<i64, String>;
    /// Applies the uqlite schema to the main database (each side has its own migration
    /// runner); the error is complete.
    fn migrate(&mut self) -> Result<(), String>;
    /// Runs [`INSERT_JOB`](super::INSERT_JOB) with `job`'s values and returns the new row's id; the error is the
    /// database's message.
    fn insert_job(&mut self, job: &NewJob) -> Result<i64, String>;
    /// The options to check and store, from those given: the extension resolves here the names
    /// of the LLMs registered in its connection, which the daemon cannot see. The error is
    /// complete.
    fn resolve_options(
        &mut self,
        _func: &str,
        options: Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        Ok(options)
    }
}

/// A new `uq_job` row: [`INSERT_JOB`](super::INSERT_JOB)'s parameters `?1` to `?4`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    pub source_table: String,
    pub columns_json: String,
    pub options_json: String,
    pub total: i64,
}

/// Creates a queued job over table `name` (as [`table_name`](super::table_name) returned it) of the main
/// database: finds the table, checks the options against its columns ([`parse_job`]), applies
/// the schema and inserts the job row; returns the job's id. `func` prefixes errors
/// (`uq_score_table`, `uqd score`).
pub fn create_job(
    func: &str,
    db: &mut impl JobDb,
    name: &str,
    options: Map<String, Value>,
) -> Result<i64, String> {
    check_option_names(&options).map_err(|e| format!("{func}: {e}"))?;
    let table = find_table(func, db, name)?;
    let columns = db
        .texts(TABLE_COLUMNS, &[&table])
        .map_err(|e| format!("{func}: cannot read the columns of {table:?}: {e}"))?;
    // `calibration.adapt` is a job key inside a scoring option: kept out of the scoring options'
    // resolution (which refuses it), checked and stored with the job.
    let mut options = options;
    let (adapt, refit) = match options.get_mut("calibration") {
        Some(Value::Object(c)) => (c.remove("adapt"), c.remove("refit")),
        _ => (None, None),
    };
    let mut options = db.resolve_options(func, options)?;
    if let Some(Value::Object(c)) = options.get_mut("calibration") {
        if let Some(a) = adapt {
            c.insert("adapt".into(), a);
        }
        if let Some(r) = refit {
            c.insert("refit".into(), r);
        }
    }
    let spec = parse_job(func, &options, &table, &columns)?;
    db.migrate()?;
    let total = db
        .integer(&count_rows_sql(&table, &spec.columns))
        .map_err(|e| format!("{func}: cannot count the rows of {table:?}: {e}"))?;
    let job = NewJob {
        source_table: table,
        columns_json: serde_json::to_string(&spec.columns).unwrap_or_default(),
        options_json: Value::Object(options).to_string(),
        total,
    };
    db.insert_job(&job)
        .map_err(|e| format!("{func}: cannot create the job: {e}"))
}

/// The exact name of table or view `name` of the main database, or the error naming the
/// tables there.
fn find_table(func: &str, db: &mut impl JobDb, name: &str) -> Result<String, String> {
    let found = db
        .texts(TABLE_NAME, &[name])
        .map_err(|e| format!("{func}: cannot read the schema: {e}"))?;
    if let Some(table) = found.into_iter().next() {
        return Ok(table);
    }
    let temp = db
        .texts(TEMP_TABLE_NAME, &[name])
        .is_ok_and(|t| !t.is_empty());
    let tables = db
        .texts(LIST_TABLES, &[])
        .map_err(|e| format!("{func}: {e}"))?;
    Err(no_such_table(func, name, temp, &tables))
}
