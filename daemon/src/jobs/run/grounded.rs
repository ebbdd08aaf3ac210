//! A row's grounded step: option `sources` naming an FTS5 table, searched in the job's database,
//! and job option `sample_when_open`, which scores a row on its sources first and generates its
//! samples only when they leave a unit open.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use uq_core::protocol::ScoreResult;

use crate::engine::Engine;
use crate::pipeline;
use crate::role_llms::LlmService;

/// Option `sources` naming an FTS5 table, searched in the job's database `db` (read only);
/// the retrieval's notes.
pub(super) fn resolve_sources(
    db: Option<&Path>,
    options: &mut Value,
    answer: &str,
) -> Result<Vec<String>, String> {
    if !options
        .as_object()
        .is_some_and(uq_core::retrieve::names_fts_table)
    {
        return Ok(Vec::new());
    }
    let db = db
        .ok_or("option sources names an FTS5 table, but this row is scored without its database")?;
    let conn = Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open {} to retrieve sources: {e}", db.display()))?;
    crate::sources::resolve(&conn, options, answer)
}

/// Job option `sample_when_open`, for a row without samples: the row scored on its sources alone
/// when they decide every unit (no grounded_fallback score is NULL); `None` when they leave one
/// open, and its samples must be generated.
pub(super) fn decided_by_sources(
    engine: &Engine,
    llm: &LlmService,
    answer: &str,
    options: &Value,
) -> Result<Option<ScoreResult>, String> {
    let score = pipeline::score(engine, llm, answer, &[], options)?;
    let open = score
        .scores
        .iter()
        .any(|s| s.scorer == "grounded_fallback" && s.score.is_nan());
    Ok((!open).then_some(score))
}
