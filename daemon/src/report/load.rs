//! Reading the uqlite schema of a scored database (read-only).

use std::collections::BTreeSet;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// What to do when DB holds no scores.
pub(crate) const NO_SCHEMA: &str =
    "score a table first with uq_score_table() in SQL (extension uq0) or `uqd score`";

/// One scoring run (`uq_run`) with the m it compared.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: i64,
    pub created_at: String,
    pub granularity: String,
    pub scorers: Vec<String>,
    pub aggregation: String,
    pub num_samples: Option<i64>,
    /// `num_samples`, else the most `uq_sample` rows of one of its answers.
    pub m: Option<i64>,
    pub nli_model: Option<String>,
    pub embed_model: Option<String>,
    pub llm_model: Option<String>,
    pub device: Option<String>,
    pub n_answers: i64,
}

/// One row of `uq_scored_units`.
#[derive(Debug, Clone)]
pub struct UnitRow {
    pub run_id: i64,
    pub answer_id: i64,
    pub source_table: Option<String>,
    pub source_key: String,
    pub prompt: Option<String>,
    pub unit_id: i64,
    pub granularity: String,
    pub position: i64,
    pub unit: String,
    pub scorer: String,
    pub score: Option<f64>,
    pub label: Option<bool>,
    pub objective: Option<bool>,
    /// The score calibrated by the run's `calibration` model (schema version ≥ 3); `None`
    /// without one.
    pub calibrated: Option<f64>,
    /// The unit's span in its answer (schema version ≥ 5): `Stored(None)` for a unit that could
    /// not be placed, `Unknown` for a unit written before v5.
    pub span: SpanRow,
}

/// What the database says of a unit's place in its answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpanRow {
    Stored(Option<(usize, usize)>),
    Unknown,
}

/// One row of `uq_scored_answers`.
#[derive(Debug, Clone)]
pub struct AnswerRow {
    pub run_id: i64,
    pub answer_id: i64,
    pub scorer: String,
    pub aggregation: String,
    pub score: Option<f64>,
    pub grade: Option<f64>,
}

/// Everything the report reads.
#[derive(Debug, Default)]
pub struct Data {
    pub schema_version: i64,
    /// The distinct source rows scored (`source_table`, `source_key` of `uq_answer`), however
    /// many runs scored each.
    pub n_sources: i64,
    pub runs: Vec<Run>,
    pub units: Vec<UnitRow>,
    pub answers: Vec<AnswerRow>,
    /// `uq_answer.answer` by answer id.
    pub answer_texts: std::collections::HashMap<i64, String>,
    /// What `uqd eval` stored (schema version ≥ 7): the latest evaluation per run and
    /// granularity.
    pub evals: Vec<super::evals::EvalRow>,
}

/// Opens DB read-only and reads the schema's tables; a clear error when DB is missing, is not
/// SQLite, or holds no uqlite schema.
pub fn load(db: &Path) -> Result<Data, String> {
    let (conn, names) = open(db)?;
    let sql_err =
        |e: rusqlite::Error| format!("cannot read the uqlite tables of {}: {e}", db.display());
    let schema_version = conn
        .query_row(
            "SELECT coalesce(max(version), 0) FROM uq_migrations",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    let n_sources = conn
        .query_row(
            "SELECT count(*) FROM (SELECT DISTINCT source_table, source_key FROM uq_answer)",
            [],
            |r| r.get(0),
        )
        .map_err(sql_err)?;
    let mut runs = read_runs(&conn).map_err(sql_err)?;
    let has_samples = names.contains("uq_sample");
    for run in &mut runs {
        run.m = run
            .num_samples
            .or_else(|| has_samples.then(|| most_samples(&conn, run.id)).flatten());
    }
    let units = read_units(&conn).map_err(sql_err)?;
    let answers = read_answers(&conn).map_err(sql_err)?;
    let answer_texts = read_answer_texts(&conn).map_err(sql_err)?;
    let evals = super::evals::read(&conn, names.contains("uq_eval")).map_err(sql_err)?;
    Ok(Data {
        schema_version,
        n_sources,
        runs,
        units,
        answers,
        answer_texts,
        evals,
    })
}

/// Opens DB read-only and checks that it holds the whole uqlite schema; the connection and
/// the names of its tables and views.
fn open(db: &Path) -> Result<(Connection, BTreeSet<String>), String> {
    if !db.is_file() {
        return Err(format!(
            "database {} does not exist: give the path of a SQLite file scored by uqlite",
            db.display()
        ));
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open database {}: {e}", db.display()))?;
    let _ = conn.busy_timeout(crate::store::BUSY_TIMEOUT);
    let names: BTreeSet<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| format!("cannot read {} as a SQLite database: {e}", db.display()))?;
    const NEEDED: [&str; 8] = [
        "uq_run",
        "uq_answer",
        "uq_unit",
        "uq_unit_score",
        "uq_response_score",
        "uq_label",
        "uq_scored_units",
        "uq_scored_answers",
    ];
    let missing: Vec<&str> = NEEDED
        .iter()
        .copied()
        .filter(|n| !names.contains(*n))
        .collect();
    if missing.len() == NEEDED.len() {
        return Err(format!("no uqlite schema in {}: {NO_SCHEMA}", db.display()));
    }
    if !missing.is_empty() {
        return Err(format!(
            "incomplete uqlite schema in {} (missing {}): open it once with a current uqlite (uq_init() or `uqd score`) to apply the migrations",
            db.display(),
            missing.join(", ")
        ));
    }
    Ok((conn, names))
}

/// The runs (`uq_run`), m not yet known.
fn read_runs(conn: &Connection) -> rusqlite::Result<Vec<Run>> {
    conn.prepare(
        "SELECT run_id, created_at, granularity, scorers_json, aggregation, num_samples,
                nli_model, embed_model, llm_model, device,
                (SELECT count(*) FROM uq_answer a WHERE a.run_id = r.run_id)
         FROM uq_run r ORDER BY run_id",
    )
    .and_then(|mut st| {
        st.query_map([], |r| {
            let scorers_json: Option<String> = r.get(3)?;
            Ok(Run {
                id: r.get(0)?,
                created_at: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                granularity: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                scorers: scorers_json
                    .and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok())
                    .unwrap_or_default(),
                aggregation: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                num_samples: r.get(5)?,
                m: None,
                nli_model: r.get(6)?,
                embed_model: r.get(7)?,
                llm_model: r.get(8)?,
                device: r.get(9)?,
                n_answers: r.get(10)?,
            })
        })?
        .collect()
    })
}

/// The most `uq_sample` rows of one answer of run `run_id`.
fn most_samples(conn: &Connection, run_id: i64) -> Option<i64> {
    conn.query_row(
        "SELECT max(c) FROM (SELECT count(*) AS c FROM uq_sample s
           JOIN uq_answer a ON a.answer_id = s.answer_id
           WHERE a.run_id = ?1 GROUP BY s.answer_id)",
        [run_id],
        |r| r.get::<_, Option<i64>>(0),
    )
    .ok()
    .flatten()
}

/// The rows of `uq_scored_units`.
fn read_units(conn: &Connection) -> rusqlite::Result<Vec<UnitRow>> {
    // Column `calibrated` came with migration 3; an older database (opened read-only, so not
    // migrated) has none.
    let calibrated = if conn
        .prepare("SELECT calibrated FROM uq_scored_units LIMIT 0")
        .is_ok()
    {
        "calibrated"
    } else {
        "NULL"
    };
    // Columns start, end came with migration 5.
    let spans = conn
        .prepare("SELECT start, end FROM uq_scored_units LIMIT 0")
        .is_ok();
    let span_cols = if spans { "start, end" } else { "NULL, NULL" };
    conn.prepare(&format!(
        "SELECT run_id, answer_id, source_table, source_key, prompt, unit_id, granularity,
                position, unit, scorer, score, label, objective, {calibrated}, {span_cols}
         FROM uq_scored_units ORDER BY run_id, granularity, answer_id, position, scorer"
    ))
    .and_then(|mut st| {
        st.query_map([], |r| {
            Ok(UnitRow {
                run_id: r.get(0)?,
                answer_id: r.get(1)?,
                source_table: r.get(2)?,
                source_key: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                prompt: r.get(4)?,
                unit_id: r.get(5)?,
                granularity: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                position: r.get::<_, Option<i64>>(7)?.unwrap_or(0),
                unit: r.get::<_, Option<String>>(8)?.unwrap_or_default(),
                scorer: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
                score: r.get::<_, Option<f64>>(10)?.filter(|s| !s.is_nan()),
                label: r.get::<_, Option<i64>>(11)?.map(|l| l != 0),
                objective: r.get::<_, Option<i64>>(12)?.map(|l| l != 0),
                calibrated: r.get::<_, Option<f64>>(13)?.filter(|s| !s.is_nan()),
                span: if spans {
                    let (s, e): (Option<i64>, Option<i64>) = (r.get(14)?, r.get(15)?);
                    SpanRow::Stored(match (s, e) {
                        (Some(s), Some(e)) if 0 <= s && s < e => Some((s as usize, e as usize)),
                        _ => None,
                    })
                } else {
                    SpanRow::Unknown
                },
            })
        })?
        .collect()
    })
}

/// The answers' texts, by id.
fn read_answer_texts(
    conn: &Connection,
) -> rusqlite::Result<std::collections::HashMap<i64, String>> {
    conn.prepare("SELECT answer_id, answer FROM uq_answer")
        .and_then(|mut st| {
            st.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                ))
            })?
            .collect()
        })
}

/// The rows of `uq_scored_answers`.
fn read_answers(conn: &Connection) -> rusqlite::Result<Vec<AnswerRow>> {
    conn.prepare(
        "SELECT run_id, answer_id, scorer, aggregation, score, grade
         FROM uq_scored_answers ORDER BY run_id, scorer, aggregation, answer_id",
    )
    .and_then(|mut st| {
        st.query_map([], |r| {
            Ok(AnswerRow {
                run_id: r.get(0)?,
                answer_id: r.get(1)?,
                scorer: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                aggregation: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                score: r.get::<_, Option<f64>>(4)?.filter(|s| !s.is_nan()),
                grade: r.get(5)?,
            })
        })?
        .collect()
    })
}
