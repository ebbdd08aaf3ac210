//! Batch jobs over a table (`uq_score_table(table, options_json)`, `uqd score DB TABLE`): the
//! job options, the column mapping, and safe SQL for reading the source table.
//!
//! A job's options are the scoring options of `uq_unit_scores` plus the job keys below; the job
//! keys are taken out and the rest is validated as scoring options.
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `id_column` | the row's stable id (stored as text in `uq_answer.source_key`) | `rowid` |
//! | `prompt_column` | the question (needed to generate, grade context, verbalized confidence) | `prompt`, else `question`, if present |
//! | `answer_column` | the original answer | `answer`, else `response` |
//! | `samples_column` | JSON array of sampled answers | `samples`, if present |
//! | `reference_column` | reference text for FactScore grading (`grade`) | — |
//! | `units_column` | JSON array of the answer's units (stored decompositions: no LLM call) | — |
//! | `claim_union_column` | JSON array: the row's union of unique claims (graph scorers) | — |
//! | `labels_column` | JSON array of 0/1/null, one per unit of `units_column`: given labels | — |
//! | `sources_column` | the row's sources for the grounded scorers: a text or a JSON array of passages (option `sources` per row) | — |
//! | `sample_when_open` | with `generate` and `grounded_fallback`: generate samples only for rows whose units the sources leave open | false |
//! | `generate` | n: generate n samples (and the answer when NULL) from the prompt where missing; 0 = never | 0 |
//! | `grade` | label every unit with FactScore grading against `reference_column` | false |
//! | `objectivity` | label every unit objective/subjective | false |
//! | `uad` | run uncertainty-aware decoding per answer: at `granularity: "claim"` the claim filter and reconstruction, at sentence granularity the LLM-free sentence filter | false |
//! | `chunk_size` | rows per committed transaction | 8 (CUDA: 64) |
//! | `concurrency` | rows scored at once | 4 (CUDA: 32) |
//! | `prices` | `{"prompt": usd, "completion": usd}` per million tokens, for `cost_usd` | — |
//!
//! Within the scoring option `calibration`, a job also takes `"adapt": "job"` or `"llm"`
//! ([`crate::options::Adapt`]) and `"refit": "job"` or `"llm"` (the models refitted on the
//! job's labelled units, [`crate::calibrate::refit`]): taken out here into [`JobSpec::adapt`]
//! and [`JobSpec::refit`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::options::{parse_options, Adapt, ScoreOptions, OPTION_NAMES};

/// The job keys (everything else is a scoring option).
pub const JOB_KEYS: &[&str] = &[
    "id_column",
    "prompt_column",
    "answer_column",
    "samples_column",
    "reference_column",
    "units_column",
    "claim_union_column",
    "labels_column",
    "sources_column",
    "sample_when_open",
    "generate",
    "grade",
    "objectivity",
    "uad",
    "chunk_size",
    "concurrency",
    "prices",
];

/// Every key of `options` must be a job key or a scoring option: an unknown one is named,
/// with the closest known key of either kind ([`crate::suggest`]) and both lists.
pub fn check_option_names(options: &Map<String, Value>) -> Result<(), String> {
    let known = || JOB_KEYS.iter().chain(OPTION_NAMES).copied();
    match options.keys().find(|k| !known().any(|n| n == k.as_str())) {
        None => Ok(()),
        Some(key) => Err(format!(
            "unknown option {key:?} in options_json: {}job options are {}; scoring options are {}",
            crate::suggest::did_you_mean(key, known()),
            JOB_KEYS.join(", "),
            OPTION_NAMES.join(", ")
        )),
    }
}

/// Largest `generate`, `chunk_size` and `concurrency` accepted.
pub const MAX_GENERATE: u64 = 100;
pub const MAX_CHUNK: u64 = 10_000;
pub const MAX_CONCURRENCY: u64 = 64;

/// Source columns of a job (`None`: not used). `id = None` means the table's rowid.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Columns {
    pub id: Option<String>,
    pub prompt: Option<String>,
    pub answer: String,
    pub samples: Option<String>,
    pub reference: Option<String>,
    /// Per-row units (JSON array), used as option `units`.
    #[serde(default)]
    pub units: Option<String>,
    /// Per-row claim union (JSON array), used as option `claim_union`.
    #[serde(default)]
    pub claim_union: Option<String>,
    /// Per-row labels of the units (JSON array of 0/1/null), written to `uq_label`.
    #[serde(default)]
    pub labels: Option<String>,
    /// Per-row sources (a text or a JSON array of passages), used as option `sources`.
    #[serde(default)]
    pub sources: Option<String>,
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub prompt: f64,
    pub completion: f64,
}

impl Prices {
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.prompt + completion_tokens as f64 * self.completion) / 1e6
    }
}

/// A validated job.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub columns: Columns,
    pub generate: usize,
    pub grade: bool,
    pub objectivity: bool,
    pub uad: bool,
    /// Option `sample_when_open`: generate samples only for rows the sources leave open.
    pub sample_when_open: bool,
    /// Option `chunk_size`; `None`: the device's default (the daemon's `DeviceDefaults`).
    pub chunk_size: Option<usize>,
    /// Option `concurrency`; `None`: the device's default.
    pub concurrency: Option<usize>,
    pub prices: Option<Prices>,
    /// Option `calibration.adapt`: adapt the calibration models to the job's answers.
    pub adapt: Option<Adapt>,
    /// Option `calibration.refit`: refit the calibration models on the job's labelled units
    /// (per the same groups as `adapt`).
    pub refit: Option<Adapt>,
    /// The scoring options (job keys and `calibration.adapt` removed), as given.
    pub scoring: Value,
    /// The same, parsed.
    pub parsed: ScoreOptions,
}

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

/// Options `calibration.adapt` and `calibration.refit` of a job.
type AdaptRefit = (Option<Adapt>, Option<Adapt>);

/// The scoring options: every key but the job keys, `calibration.adapt` and `calibration.refit`
/// taken out; returned as given and parsed, with those two.
fn scoring_options(
    options: &Map<String, Value>,
) -> Result<(Value, AdaptRefit, ScoreOptions), String> {
    let mut scoring = Map::new();
    for (k, v) in options {
        if !JOB_KEYS.contains(&k.as_str()) {
            scoring.insert(k.clone(), v.clone());
        }
    }
    let (mut adapt, mut refit) = (None, None);
    if let Some(Value::Object(c)) = scoring.get_mut("calibration") {
        if let Some(a) = c.remove("adapt") {
            adapt = Some(Adapt::parse(&a)?);
        }
        if let Some(r) = c.remove("refit") {
            refit = Some(Adapt::parse_option(&r, "refit", "one refit")?);
        }
    }
    let mut checked = scoring.clone();
    stand_in_sources(options, &mut checked);
    let scoring = Value::Object(scoring);
    let parsed = parse_options(&Value::Object(checked)).map_err(|e| {
        format!(
            "{e} (job options are the scoring options plus {})",
            JOB_KEYS.join(", ")
        )
    })?;
    Ok((scoring, (adapt, refit), parsed))
}

/// A job whose `sources_column` gives each row its sources has its scoring options checked as
/// if option `sources` were given: an empty array stands in for it in `scoring` (the checked
/// copy, never the stored options) unless `sources` is there already. Returns whether it was
/// put in.
pub fn stand_in_sources(
    job_options: &Map<String, Value>,
    scoring: &mut Map<String, Value>,
) -> bool {
    let per_row = job_options
        .get("sources_column")
        .is_some_and(|v| !v.is_null());
    if !per_row || scoring.contains_key("sources") {
        return false;
    }
    scoring.insert("sources".into(), Value::Array(Vec::new()));
    true
}

/// The source columns the `*_column` options name (or their defaults), checked against the
/// table's columns.
fn columns(
    options: &Map<String, Value>,
    table: &str,
    table_columns: &[String],
) -> Result<Columns, String> {
    let listed = || {
        table_columns
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let find = |name: &str| table_columns.iter().find(|c| c.eq_ignore_ascii_case(name));
    let column = |key: &str, defaults: &[&str]| -> Result<Option<String>, String> {
        match options.get(key) {
            None | Some(Value::Null) => Ok(defaults.iter().find_map(|d| find(d)).cloned()),
            Some(Value::String(name)) => match find(name) {
                Some(c) => Ok(Some(c.clone())),
                None => Err(format!(
                    "option {key}: table {table:?} has no column {name:?}; its columns are {}",
                    listed()
                )),
            },
            Some(other) => Err(format!(
                "option {key} must be a column name (a string), got {other}"
            )),
        }
    };
    let id = match options.get("id_column") {
        Some(Value::String(s)) if s.eq_ignore_ascii_case("rowid") && find("rowid").is_none() => {
            None
        }
        _ => column("id_column", &[])?,
    };
    let columns = Columns {
        id,
        prompt: column("prompt_column", &["prompt", "question"])?,
        answer: column("answer_column", &["answer", "response"])?.ok_or_else(|| {
            format!(
                "table {table:?} has no column \"answer\" or \"response\": name the answers' column with option answer_column (its columns are {})",
                listed()
            )
        })?,
        samples: column("samples_column", &["samples"])?,
        reference: column("reference_column", &[])?,
        units: column("units_column", &[])?,
        claim_union: column("claim_union_column", &[])?,
        labels: column("labels_column", &[])?,
        sources: column("sources_column", &[])?,
    };
    check_given_columns(options, &columns)?;
    Ok(columns)
}

/// The per-row columns against the options they stand in for: labels need units, and a column
/// and its option may not both be given.
fn check_given_columns(options: &Map<String, Value>, columns: &Columns) -> Result<(), String> {
    if columns.labels.is_some() && columns.units.is_none() {
        return Err(
            "option labels_column needs option units_column: the labels are matched to the given units by position".into(),
        );
    }
    for (key, given) in [
        ("units", "units_column"),
        ("claim_union", "claim_union_column"),
        ("sources", "sources_column"),
    ] {
        if options.get(given).is_some_and(|v| !v.is_null())
            && options.get(key).is_some_and(|v| !v.is_null())
        {
            return Err(format!(
                "options {key} and {given} both give the {key}: keep one (the column gives them per row)"
            ));
        }
    }
    Ok(())
}

/// A true/false job key (absent: false).
fn flag(options: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("option {key} must be true or false, got {other}")),
    }
}

/// An integer job key in `min..=max` (absent: `None`).
fn integer(
    options: &Map<String, Value>,
    key: &str,
    min: u64,
    max: u64,
) -> Result<Option<usize>, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n as usize)),
            _ => Err(format!(
                "option {key} must be an integer from {min} to {max}, got {v}"
            )),
        },
    }
}

/// Option `prices` (absent: `None`).
fn prices(options: &Map<String, Value>) -> Result<Option<Prices>, String> {
    let v = match options.get("prices") {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let p: Prices = serde_json::from_value(v.clone()).map_err(|_| {
        format!(
            "option prices must be {{\"prompt\": usd_per_million_tokens, \"completion\": usd_per_million_tokens}}, got {v}"
        )
    })?;
    if !(p.prompt >= 0.0 && p.completion >= 0.0 && p.prompt.is_finite() && p.completion.is_finite())
    {
        return Err("option prices: prices must be finite and ≥ 0".into());
    }
    Ok(Some(p))
}

/// Option `calibration.adapt` needs calibration models that carry their training prior.
fn check_adapt(spec: &JobSpec) -> Result<(), String> {
    let models = &spec.parsed.calibration.models;
    if spec.adapt.is_some() && models.is_empty() {
        return Err(
            "option calibration.adapt has no model to adapt: add a model per scorer, e.g. \
             \"calibration\":{\"entailment\":<uq_fit_calibration's JSON>,\"adapt\":\"job\"}"
                .into(),
        );
    }
    if let (Some(a), Some((s, c))) = (
        spec.adapt,
        models.iter().find(|(_, c)| c.training_prior("").is_err()),
    ) {
        let e = c
            .training_prior(&format!("option calibration.{}", s.name()))
            .unwrap_err();
        return Err(format!(
            "option calibration.adapt = \"{}\": {e}",
            a.as_str()
        ));
    }
    Ok(())
}

/// Option `calibration.refit` needs Platt models with a prior strength, labels of the job's units
/// (`labels_column` or `grade`), and the same groups as `calibration.adapt` when both are given.
fn check_refit(spec: &JobSpec) -> Result<(), String> {
    let Some(refit) = spec.refit else {
        return Ok(());
    };
    let models = &spec.parsed.calibration.models;
    if models.is_empty() {
        return Err(
            "option calibration.refit has no model to refit: add a model per scorer, e.g. \
             \"calibration\":{\"entailment\":<uq_fit_calibration's JSON>,\"refit\":\"job\"}"
                .into(),
        );
    }
    if let Some(a) = spec.adapt.filter(|&a| a != refit) {
        return Err(format!(
            "option calibration.refit = \"{}\" and calibration.adapt = \"{}\" group the answers \
             differently: give both the same value (the refit starts from the adaptation of \
             its group)",
            refit.as_str(),
            a.as_str()
        ));
    }
    if spec.columns.labels.is_none() && !spec.grade {
        return Err(
            "option calibration.refit refits on labelled units, but the job has no labels: set \
             labels_column (a JSON array of 0/1/null per unit of units_column) or grade"
                .into(),
        );
    }
    for (s, c) in models {
        c.refit_prior(&format!("option calibration.{}", s.name()))
            .map_err(|e| format!("option calibration.refit = \"{}\": {e}", refit.as_str()))?;
    }
    Ok(())
}

/// What the job's settings need from the table and the scoring options: UAD claims, grading a
/// reference, the scorers samples, generation the prompts.
fn check_needs(spec: &JobSpec, table: &str) -> Result<(), String> {
    let (parsed, columns) = (&spec.parsed, &spec.columns);
    if spec.grade && columns.reference.is_none() {
        return Err(
            "option grade needs the reference text: name its column with option reference_column"
                .into(),
        );
    }
    if columns.samples.is_none() && spec.generate == 0 && parsed.scoring.needs_samples() {
        return Err(format!(
            "table {table:?} has no samples column: name it with option samples_column, or set option generate to the number of samples to generate"
        ));
    }
    if spec.sample_when_open {
        if !(spec.generate > 0
            && parsed
                .scoring
                .scorers
                .contains(&crate::scorers::Scorer::GroundedFallback))
        {
            return Err(
                "option sample_when_open generates samples only for the rows the sources leave \
                 open: it needs scorer grounded_fallback and option generate (the samples per \
                 row), e.g. \"scorers\":[\"grounded_fallback\"],\"generate\":5"
                    .into(),
            );
        }
        if let Some(s) = parsed
            .scoring
            .computed()
            .into_iter()
            .find(|s| s.needs_samples())
        {
            return Err(format!(
                "option sample_when_open leaves out the samples of the rows the sources decide, \
                 but scorer {} compares samples in every row: score it in another job, or drop \
                 sample_when_open",
                s.name()
            ));
        }
    }
    if spec.generate > 0 && columns.prompt.is_none() {
        return Err(format!(
            "option generate needs the prompts: table {table:?} has no column \"prompt\" or \"question\"; name it with option prompt_column"
        ));
    }
    Ok(())
}

/// `name` as an SQL identifier: in double quotes, inner quotes doubled. Only ever applied to
/// names checked against the schema first.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The SELECT reading the next `?3` of a job's source rows as (key, prompt, answer, samples,
/// reference, units, claim union, labels, sources), keyed and ordered by the id column (or rowid). Rows already answered in run `?1`
/// or failed in job `?2` are skipped, so a resumed job picks up where it stopped, and reading
/// page after page needs no cursor.
pub fn pending_rows_sql(table: &str, c: &Columns) -> String {
    let id = c.id.as_deref().map_or("rowid".to_string(), quote_ident);
    let col = |x: &Option<String>| x.as_deref().map_or("NULL".to_string(), quote_ident);
    format!(
        "SELECT CAST({id} AS TEXT) AS k, {p}, {a}, {s}, {r}, {u}, {cu}, {l}, {src} FROM main.{t} AS src \
         WHERE {id} IS NOT NULL \
           AND NOT EXISTS (SELECT 1 FROM uq_answer x WHERE x.run_id = ?1 AND x.source_key = CAST(src.{id} AS TEXT)) \
           AND NOT EXISTS (SELECT 1 FROM uq_job_error e WHERE e.job_id = ?2 AND e.source_key = CAST(src.{id} AS TEXT)) \
         ORDER BY {id} LIMIT ?3",
        p = col(&c.prompt),
        a = quote_ident(&c.answer),
        s = col(&c.samples),
        r = col(&c.reference),
        u = col(&c.units),
        cu = col(&c.claim_union),
        l = col(&c.labels),
        src = col(&c.sources),
        t = quote_ident(table),
    )
}

/// The SELECT counting a job's source rows: distinct non-NULL ids (rows sharing an id are one
/// row of results).
pub fn count_rows_sql(table: &str, c: &Columns) -> String {
    let id = c.id.as_deref().map_or("rowid".to_string(), quote_ident);
    format!(
        "SELECT count(DISTINCT CAST({id} AS TEXT)) FROM main.{} WHERE {id} IS NOT NULL",
        quote_ident(table)
    )
}

/// Reads the table name argument: a non-empty name, optionally `main.`-qualified.
pub fn table_name(func: &str, name: &str) -> Result<String, String> {
    let t = name.strip_prefix("main.").unwrap_or(name);
    if t.trim().is_empty() {
        return Err(format!(
            "{func}: table is empty: pass the name of the table of answers, e.g. 'answers'"
        ));
    }
    Ok(t.to_string())
}

/// Job status values (`uq_job.status`).
pub const QUEUED: &str = "queued";
pub const RUNNING: &str = "running";
pub const DONE: &str = "done";
pub const FAILED: &str = "failed";
pub const CANCELLED: &str = "cancelled";

/// True for a status that no longer changes.
pub fn is_final(status: &str) -> bool {
    matches!(status, DONE | FAILED | CANCELLED)
}

/// The SQL creating a job row (parameters: source table, columns JSON, options JSON, total).
pub const INSERT_JOB: &str =
    "INSERT INTO uq_job(source_table, columns_json, options_json, total) VALUES (?1, ?2, ?3, ?4)";

/// The table's columns: `SELECT name FROM pragma_table_info(?1, 'main')` (bound, never spliced).
pub const TABLE_COLUMNS: &str = "SELECT name FROM pragma_table_info(?1, 'main')";

/// The exact name of table or view `?1` of the main database (matched case-insensitively, as
/// SQLite matches identifiers).
pub const TABLE_NAME: &str = "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE";

/// The same in the temp database: a TEMP table the daemon's connection cannot see.
pub const TEMP_TABLE_NAME: &str = "SELECT name FROM temp.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE";

/// The user's tables and views of the main database (uqlite's and SQLite's own left out), for
/// error messages.
pub const LIST_TABLES: &str = "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'uq\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";

/// The error for a table not in the main database (`temp_exists`: a TEMP table of that name exists).
pub fn no_such_table(func: &str, table: &str, temp_exists: bool, tables: &[String]) -> String {
    if temp_exists {
        return format!(
            "{func}: {table:?} is a TEMP table, which only this connection can see: the daemon writes results from its own connection, so copy it into a regular table (CREATE TABLE t AS SELECT * FROM temp.{})",
            quote_ident(table)
        );
    }
    format!(
        "{func}: no table or view named {table:?} in the main database; its tables are {}",
        if tables.is_empty() {
            "none".to_string()
        } else {
            tables
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    )
}

// ---------------------------------------------------------------------------------------------
// Creating a job

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
    /// Runs [`INSERT_JOB`] with `job`'s values and returns the new row's id; the error is the
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

/// A new `uq_job` row: [`INSERT_JOB`]'s parameters `?1` to `?4`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    pub source_table: String,
    pub columns_json: String,
    pub options_json: String,
    pub total: i64,
}

/// Creates a queued job over table `name` (as [`table_name`] returned it) of the main
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn parse(v: Value, names: &[&str]) -> Result<JobSpec, String> {
        parse_job("f", v.as_object().unwrap(), "t", &cols(names))
    }

    #[test]
    fn default_columns_are_found_by_name() {
        let j = parse(
            json!({"scorers": ["luq"]}),
            &["id", "Question", "response", "samples"],
        )
        .unwrap();
        assert_eq!(j.columns.id, None);
        assert_eq!(j.columns.prompt.as_deref(), Some("Question"));
        assert_eq!(j.columns.answer, "response");
        assert_eq!(j.columns.samples.as_deref(), Some("samples"));
        assert_eq!((j.chunk_size, j.concurrency, j.generate), (None, None, 0));
        assert_eq!(j.scoring, json!({"scorers": ["luq"]}));
    }

    #[test]
    fn unknown_job_keys_suggest_the_closest_and_list_both_kinds() {
        for (given, meant) in [("source_column", "sources_column"), ("chunk", "chunk_size")] {
            let e = parse(json!({given: "x"}), &["answer"]).unwrap_err();
            assert!(
                e.starts_with(&format!("f: unknown option {given:?} in options_json: did you mean {meant:?}? job options are id_column,")),
                "{e}"
            );
            assert!(
                e.contains("; scoring options are granularity, scorers"),
                "{e}"
            );
        }
        let e = parse(json!({"scorerz": ["luq"]}), &["answer"]).unwrap_err();
        assert!(e.contains("did you mean \"scorers\"?"), "{e}");
        let e = parse(json!({"zzzz_nothing": 1}), &["answer"]).unwrap_err();
        assert!(e.contains("options_json: job options are"), "{e}");
    }

    #[test]
    fn calibration_adapt_is_a_job_option() {
        let model = json!({"method": "platt", "a": 4, "b": -2, "n": 10, "positives": 7});
        let cal = |adapt: Value, m: Value| {
            parse(
                json!({"scorers": ["entailment"], "calibration": {"entailment": m, "adapt": adapt}}),
                &["answer", "samples"],
            )
        };
        for (given, want) in [("job", Adapt::Job), ("LLM", Adapt::Llm)] {
            let j = cal(json!(given), model.clone()).unwrap();
            assert_eq!(j.adapt, Some(want));
            // taken out of the scoring options that each row is scored with
            assert_eq!(j.scoring["calibration"], json!({"entailment": model}));
            assert!(j
                .parsed
                .calibration
                .model(crate::scorers::Scorer::Entailment)
                .is_some());
        }
        let j = parse(json!({"scorers": ["entailment"]}), &["answer", "samples"]).unwrap();
        assert_eq!(j.adapt, None);
        let e = cal(json!("table"), model.clone()).unwrap_err();
        assert!(
            e.starts_with("f: option calibration.adapt must be \"job\""),
            "{e}"
        );
        let e = cal(json!("job"), json!({"method": "platt", "a": 4, "b": -2})).unwrap_err();
        assert!(
            e.starts_with("f: option calibration.adapt = \"job\": option calibration.entailment has no training prior"),
            "{e}"
        );
        let e = parse(
            json!({"scorers": ["entailment"], "calibration": {"adapt": "job"}}),
            &["answer", "samples"],
        )
        .unwrap_err();
        assert!(
            e.contains("option calibration.adapt has no model to adapt"),
            "{e}"
        );
    }

    #[test]
    fn bad_options_name_the_option_and_the_fix() {
        let e = parse(json!({"answer_column": "nope"}), &["answer", "samples"]).unwrap_err();
        assert!(
            e.contains("answer_column") && e.contains("\"answer\", \"samples\""),
            "{e}"
        );
        let e = parse(json!({}), &["text", "samples"]).unwrap_err();
        assert!(e.contains("answer_column"), "{e}");
        let e = parse(json!({}), &["answer"]).unwrap_err();
        assert!(
            e.contains("samples_column") && e.contains("generate"),
            "{e}"
        );
        let e = parse(json!({"generate": 3}), &["answer"]).unwrap_err();
        assert!(e.contains("prompt_column"), "{e}");
        let e = parse(json!({"grade": true}), &["answer", "samples"]).unwrap_err();
        assert!(e.contains("reference_column"), "{e}");
        let e = parse(json!({"labels_column": "answer"}), &["answer", "samples"]).unwrap_err();
        assert!(e.contains("units_column"), "{e}");
        let e = parse(
            json!({"units_column": "samples", "units": ["a"]}),
            &["answer", "samples"],
        )
        .unwrap_err();
        assert!(e.contains("units_column"), "{e}");
        // UAD at the job's granularity: claims, or sentences (the LLM-free filter).
        for g in ["sentence", "claim"] {
            let j = parse(
                json!({"uad": true, "granularity": g}),
                &["answer", "samples"],
            )
            .unwrap();
            assert!(j.uad && j.parsed.decompose.granularity.as_str() == g);
        }
        let e = parse(json!({"chunk_size": 0}), &["answer", "samples"]).unwrap_err();
        assert!(e.contains("chunk_size"), "{e}");
        let e = parse(json!({"scorer": ["luq"]}), &["answer", "samples"]).unwrap_err();
        assert!(e.contains("scorer"), "{e}");
        let e = parse(
            json!({"prices": {"prompt": -1, "completion": 1}}),
            &["answer", "samples"],
        )
        .unwrap_err();
        assert!(e.contains("prices"), "{e}");
    }

    #[test]
    fn identifiers_are_quoted_not_spliced() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        let c = Columns {
            id: Some("x\"; DROP TABLE t; --".into()),
            answer: "a".into(),
            ..Columns::default()
        };
        let sql = pending_rows_sql("t\"", &c);
        assert!(sql.contains("\"x\"\"; DROP TABLE t; --\""), "{sql}");
        assert!(sql.contains("main.\"t\"\"\""), "{sql}");
    }

    /// A database of tables (name, columns) for [`create_job`].
    #[derive(Default)]
    struct FakeDb {
        tables: Vec<(&'static str, Vec<String>)>,
        temp: Vec<&'static str>,
        rows: i64,
        migrated: bool,
        inserted: Vec<NewJob>,
        fail_insert: bool,
    }

    impl JobDb for FakeDb {
        fn texts(&mut self, sql: &str, params: &[&str]) -> Result<Vec<String>, String> {
            let named = |names: &mut dyn Iterator<Item = &str>| -> Vec<String> {
                names
                    .filter(|t| t.eq_ignore_ascii_case(params[0]))
                    .map(str::to_string)
                    .collect()
            };
            Ok(match sql {
                TABLE_NAME => named(&mut self.tables.iter().map(|t| t.0)),
                TEMP_TABLE_NAME => named(&mut self.temp.iter().copied()),
                LIST_TABLES => self.tables.iter().map(|t| t.0.to_string()).collect(),
                TABLE_COLUMNS => self
                    .tables
                    .iter()
                    .find(|t| t.0 == params[0])
                    .map(|t| t.1.clone())
                    .unwrap_or_default(),
                other => return Err(format!("unexpected query {other}")),
            })
        }
        fn integer(&mut self, sql: &str) -> Result<i64, String> {
            assert!(sql.starts_with("SELECT count(DISTINCT"), "{sql}");
            Ok(self.rows)
        }
        fn migrate(&mut self) -> Result<(), String> {
            self.migrated = true;
            Ok(())
        }
        fn insert_job(&mut self, job: &NewJob) -> Result<i64, String> {
            if self.fail_insert {
                return Err("disk I/O error".into());
            }
            self.inserted.push(job.clone());
            Ok(self.inserted.len() as i64)
        }
    }

    fn answers_db() -> FakeDb {
        FakeDb {
            tables: vec![("Answers", cols(&["id", "answer", "samples"]))],
            rows: 3,
            ..FakeDb::default()
        }
    }

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn create_job_inserts_the_checked_job() {
        let mut db = answers_db();
        let options = json!({"scorers": ["luq"], "id_column": "id"});
        let id = create_job("f", &mut db, "answers", object(options.clone())).unwrap();
        assert_eq!(id, 1);
        assert!(db.migrated);
        let job = &db.inserted[0];
        assert_eq!((job.source_table.as_str(), job.total), ("Answers", 3));
        let columns: Columns = serde_json::from_str(&job.columns_json).unwrap();
        let id_answer = (columns.id.as_deref(), columns.answer.as_str());
        assert_eq!(id_answer, (Some("id"), "answer"));
        let stored: Value = serde_json::from_str(&job.options_json).unwrap();
        assert_eq!(stored, options);
    }

    #[test]
    fn create_job_errors_name_the_table_and_the_fix() {
        let mut db = answers_db();
        let e = create_job("f", &mut db, "nope", Map::new()).unwrap_err();
        let tables = "its tables are \"Answers\"";
        assert!(e.starts_with("f: no table or view named \"nope\"") && e.ends_with(tables));
        db.temp.push("scratch");
        let e = create_job("f", &mut db, "scratch", Map::new()).unwrap_err();
        assert!(e.starts_with("f: \"scratch\" is a TEMP table"), "{e}");
        let e = create_job("f", &mut db, "answers", object(json!({"chunk_size": 0}))).unwrap_err();
        assert!(e.starts_with("f: option chunk_size"), "{e}");
        assert!(!db.migrated && db.inserted.is_empty());
        db.fail_insert = true;
        let e = create_job("f", &mut db, "answers", Map::new()).unwrap_err();
        assert_eq!(e, "f: cannot create the job: disk I/O error");
    }

    #[test]
    fn prices_cost() {
        let p = Prices {
            prompt: 0.15,
            completion: 0.6,
        };
        assert!((p.cost(1_000_000, 500_000) - 0.45).abs() < 1e-12);
    }
}
