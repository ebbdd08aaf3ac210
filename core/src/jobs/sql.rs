//! A job's SQL: identifiers quoted, the source rows read page by page and counted, the table
//! looked up, and the job row inserted.

use super::columns::Columns;

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
