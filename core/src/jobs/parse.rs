//! Parsing a job's options: the scoring options, the columns, the job settings, then the checks
//! across them.

use serde_json::{Map, Value};

use super::calibration::{check_adapt, check_refit};
use super::columns::columns;
use super::keys::{
    check_option_names, flag, integer, prices, MAX_CHUNK, MAX_CONCURRENCY, MAX_GENERATE,
};
use super::needs::check_needs;
use super::scoring::scoring_options;
use super::spec::JobSpec;

/// Parses and checks a job's options against the source table's columns (`table_columns`, in
/// table order). `func` prefixes errors (`uq_score_table`, `uqd score`).
pub fn parse_job(
    func: &str,
    options: &Map<String, Value>,
    table: &str,
    table_columns: &[String],
) -> Result<JobSpec, String> {
    job(options, table, table_columns).map_err(|m| format!("{func}: {m}"))
}

/// [`parse_job`] without the error prefix: the scoring options, the columns, the job settings,
/// then the checks across them, in that order.
fn job(
    options: &Map<String, Value>,
    table: &str,
    table_columns: &[String],
) -> Result<JobSpec, String> {
    check_option_names(options)?;
    let (scoring, (adapt, refit), parsed) = scoring_options(options)?;
    let spec = JobSpec {
        columns: columns(options, table, table_columns)?,
        generate: integer(options, "generate", 0, MAX_GENERATE)?.unwrap_or(0),
        grade: flag(options, "grade")?,
        objectivity: flag(options, "objectivity")?,
        uad: flag(options, "uad")?,
        sample_when_open: flag(options, "sample_when_open")?,
        chunk_size: integer(options, "chunk_size", 1, MAX_CHUNK)?,
        concurrency: integer(options, "concurrency", 1, MAX_CONCURRENCY)?,
        prices: prices(options)?,
        adapt,
        refit,
        scoring,
        parsed,
    };
    check_adapt(&spec)?;
    check_refit(&spec)?;
    check_needs(&spec, table)?;
    Ok(spec)
}
