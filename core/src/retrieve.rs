//! Sources retrieved from the same database (option `sources` as `{"fts": …}`;
//! docs/reference.md, "Grounded checking"): the top-k rows of an FTS5 table by bm25, for the
//! whole answer or for each unit. The SQL and its checks live here; each side runs them on its
//! own connection ([`SourceDb`]): the extension on the caller's, the daemon on a job's database.

use serde_json::{Map, Value};

use crate::json::type_name;
use crate::score::grounded::Passage;
use crate::words::content_words;

/// Largest `k` accepted.
pub const MAX_K: usize = 100;
/// Default `k`: passages retrieved per query.
pub const DEFAULT_K: usize = 5;
/// Content words of one FTS query at most (an answer's longest words first).
pub const MAX_QUERY_WORDS: usize = 64;
/// With `rerank`, bm25 candidates per kept passage (the daemon's embedding ranking then picks
/// the sentences).
pub const RERANK_POOL: usize = 3;

const EXAMPLE: &str = r#""sources":{"fts":"docs","column":"body","k":5}"#;

/// What one FTS query is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// One query from the whole answer's content words (default).
    Answer,
    /// One query per unit; the passages of all units are pooled.
    Unit,
}

/// Option `sources` naming an FTS5 table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsSpec {
    pub table: String,
    /// The column whose text is a passage; `None`: the table's first column.
    pub column: Option<String>,
    pub k: usize,
    pub per: Per,
    /// Retrieve k × [`RERANK_POOL`] candidates and let the embedding model rank their sentences.
    pub rerank: bool,
}

impl FtsSpec {
    /// Reads `{"fts": table, "column"?, "k"?, "per"?, "rerank"?}`.
    pub fn parse(o: &Map<String, Value>) -> Result<FtsSpec, String> {
        const KEYS: &[&str] = &["fts", "column", "k", "per", "rerank"];
        if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "option sources: unknown key {k:?}; valid keys are {}, e.g. {EXAMPLE}",
                KEYS.join(", ")
            ));
        }
        let name = |key: &str| -> Result<Option<String>, String> {
            match o.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
                Some(v) => Err(format!(
                    "option sources.{key} must be a non-empty table or column name, e.g. {EXAMPLE}; got {}",
                    type_name(v)
                )),
            }
        };
        let table = name("fts")?
            .ok_or_else(|| format!("option sources.fts must name an FTS5 table, e.g. {EXAMPLE}"))?;
        let k = match o.get("k") {
            None | Some(Value::Null) => DEFAULT_K,
            Some(v) => match v.as_u64() {
                Some(k) if (1..=MAX_K as u64).contains(&k) => k as usize,
                _ => {
                    return Err(format!(
                        "option sources.k must be an integer from 1 to {MAX_K} (passages retrieved), e.g. {EXAMPLE}; got {v}"
                    ))
                }
            },
        };
        let per = match o.get("per") {
            None | Some(Value::Null) => Per::Answer,
            Some(Value::String(s)) if s == "answer" => Per::Answer,
            Some(Value::String(s)) if s == "unit" => Per::Unit,
            Some(v) => {
                return Err(format!(
                    "option sources.per must be \"answer\" (one query from the whole answer) or \"unit\" (one per unit); got {v}"
                ))
            }
        };
        let rerank = match o.get("rerank") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(Value::String(s)) if s == "embedding" => true,
            Some(v) => {
                return Err(format!(
                    "option sources.rerank must be \"embedding\" (or true / false); got {v}"
                ))
            }
        };
        Ok(FtsSpec {
            table,
            column: name("column")?,
            k,
            per,
            rerank,
        })
    }

    /// Rows fetched per query.
    pub fn limit(&self) -> usize {
        if self.rerank {
            self.k * RERANK_POOL
        } else {
            self.k
        }
    }
}

/// A safe FTS5 query for `text`: its distinct content words (lowercase, no stop words), each a
/// quoted string, joined by OR, at most [`MAX_QUERY_WORDS`] (the longest first, then in text
/// order). `None` when it has no content word. Quoting makes FTS5 syntax in the text
/// (`AND`, `NEAR`, `*`, `"`, `:`, `-`) plain words (SQL function `uq_fts_query`).
pub fn fts_query(text: &str) -> Option<String> {
    let words = content_words(text);
    if words.is_empty() {
        return None;
    }
    // In text order, each once.
    let mut ordered: Vec<String> = Vec::new();
    for t in crate::words::tokenize(text) {
        if words.contains(&t) && !ordered.contains(&t) {
            ordered.push(t);
        }
    }
    if ordered.len() > MAX_QUERY_WORDS {
        let mut by_len: Vec<usize> = (0..ordered.len()).collect();
        by_len.sort_by(|&a, &b| {
            ordered[b]
                .chars()
                .count()
                .cmp(&ordered[a].chars().count())
                .then(a.cmp(&b))
        });
        by_len.truncate(MAX_QUERY_WORDS);
        by_len.sort_unstable();
        ordered = by_len.into_iter().map(|i| ordered[i].clone()).collect();
    }
    Some(
        ordered
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// `name` as an SQL identifier in double quotes.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The query of the top rows of `table` by bm25: parameters ?1 the FTS query, ?2 the limit.
pub fn search_sql(table: &str, column: &str) -> String {
    let t = quote_ident(table);
    format!(
        "SELECT rowid, {} FROM {t} WHERE {t} MATCH ?1 ORDER BY rank LIMIT ?2",
        quote_ident(column)
    )
}

/// The statement that reads a table's definition: ?1 the table name.
pub const TABLE_SQL: &str =
    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE";

/// The statement that reads a table's column names, in order: ?1 the table name.
pub const COLUMNS_SQL: &str = "SELECT name FROM pragma_table_info(?1)";

/// Whether `options` names an FTS5 table as its sources (`"sources":{"fts": …}`): only then is
/// there anything to retrieve.
pub fn names_fts_table(options: &Map<String, Value>) -> bool {
    matches!(options.get("sources"), Some(Value::Object(o)) if o.contains_key("fts"))
}

/// A database that sources are retrieved from.
pub trait SourceDb {
    /// The `CREATE` statement of table `name`, `None` when there is no such table.
    fn table_sql(&mut self, name: &str) -> Result<Option<String>, String>;
    /// The columns of table `name`, in order.
    fn columns(&mut self, name: &str) -> Result<Vec<String>, String>;
    /// Runs [`search_sql`] with the query and the limit: (rowid, text) rows, best first.
    fn search(
        &mut self,
        sql: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(i64, Option<String>)>, String>;
}

/// Passages retrieved for one answer, and notes on what found nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retrieved {
    /// Distinct rows, in the order first retrieved; id = the rowid.
    pub passages: Vec<Passage>,
    pub notes: Vec<String>,
}

/// The table's passage column: `spec.column` checked against its columns, else the first.
fn passage_column(db: &mut dyn SourceDb, spec: &FtsSpec) -> Result<String, String> {
    let t = &spec.table;
    let create = db.table_sql(t)?.ok_or_else(|| {
        format!(
            "option sources.fts: there is no table {} in this database: create an FTS5 table of \
             the passages, e.g. CREATE VIRTUAL TABLE {} USING fts5(body); INSERT INTO {} (body) \
             VALUES ('…')",
            quote_ident(t),
            quote_ident(t),
            quote_ident(t)
        )
    })?;
    if !create
        .to_ascii_lowercase()
        .replace([' ', '\n', '\t'], "")
        .contains("usingfts5")
    {
        return Err(format!(
            "option sources.fts: table {} is not an FTS5 table, so it has no full-text index: \
             index it, e.g. CREATE VIRTUAL TABLE {} USING fts5(body, content={}); INSERT INTO {}({}) \
             VALUES('rebuild'); and name that table",
            quote_ident(t),
            quote_ident(&format!("{t}_fts")),
            quote_ident(t),
            quote_ident(&format!("{t}_fts")),
            quote_ident(&format!("{t}_fts")),
        ));
    }
    let cols = db.columns(t)?;
    match &spec.column {
        Some(c) => cols
            .iter()
            .find(|x| x.eq_ignore_ascii_case(c))
            .cloned()
            .ok_or_else(|| {
                format!(
                    "option sources.column: the FTS5 table {} has no column {}: its columns are {}",
                    quote_ident(t),
                    quote_ident(c),
                    cols.join(", ")
                )
            }),
        None => cols.first().cloned().ok_or_else(|| {
            format!(
                "option sources.fts: the FTS5 table {} has no column",
                quote_ident(t)
            )
        }),
    }
}

/// Short form of a unit for notes.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// Retrieves the passages of one answer: the top `spec.limit()` rows for the answer's query
/// (`per: answer`), or for each unit's, pooled (`per: unit`; `units` `None`, e.g. claims the
/// daemon has yet to decompose: the answer's). A query that finds nothing is a note, not an error.
pub fn retrieve(
    db: &mut dyn SourceDb,
    spec: &FtsSpec,
    answer: &str,
    units: Option<&[String]>,
) -> Result<Retrieved, String> {
    let column = passage_column(db, spec)?;
    let sql = search_sql(&spec.table, &column);
    let mut out = Retrieved::default();
    let queries: Vec<(String, String)> = match (spec.per, units) {
        (Per::Unit, Some(units)) => units
            .iter()
            .enumerate()
            .map(|(i, u)| (format!("unit {i} ({:?})", clip(u)), u.clone()))
            .collect(),
        (Per::Unit, None) => {
            out.notes.push(
                "sources.per = \"unit\": the units are not known before the daemon decomposes \
                 the answer into claims, so the passages were retrieved for the whole answer; \
                 pass the units (option units) to retrieve per unit"
                    .into(),
            );
            vec![("the answer".into(), answer.to_string())]
        }
        (Per::Answer, _) => vec![("the answer".into(), answer.to_string())],
    };
    let mut seen = std::collections::HashSet::new();
    for (what, text) in queries {
        let Some(q) = fts_query(&text) else {
            out.notes.push(format!(
                "sources.fts: {what} has no content word to search {} with; no passage retrieved for it",
                quote_ident(&spec.table)
            ));
            continue;
        };
        let rows = db.search(&sql, &q, spec.limit()).map_err(|e| {
            format!(
                "option sources.fts: searching {} failed: {e}",
                quote_ident(&spec.table)
            )
        })?;
        if rows.is_empty() {
            out.notes.push(format!(
                "sources.fts: no row of {} matches {what}; the sources are silent on it",
                quote_ident(&spec.table)
            ));
        }
        for (rowid, text) in rows {
            let text = text.unwrap_or_default();
            if !text.trim().is_empty() && seen.insert(rowid) {
                out.passages.push(Passage {
                    id: Some(rowid.to_string()),
                    text,
                });
            }
        }
    }
    Ok(out)
}

/// The resolved form of option `sources` sent to the daemon: `[{"id": …, "text": …}, …]`.
pub fn passages_json(passages: &[Passage]) -> Value {
    Value::Array(
        passages
            .iter()
            .map(|p| {
                let mut m = Map::new();
                if let Some(id) = &p.id {
                    m.insert("id".into(), Value::String(id.clone()));
                }
                m.insert("text".into(), Value::String(p.text.clone()));
                Value::Object(m)
            })
            .collect(),
    )
}

/// Resolves option `sources` of `options` in place when it names an FTS5 table: the passages
/// retrieved from `db` for `answer` replace it ([`passages_json`]), and with `rerank` the
/// sentences are ranked by the embedding model (`source_premise` rank `embedding`, unless
/// given). The units a per-unit retrieval queries with are option `units`, else the answer's
/// sentences; claims the daemon has yet to decompose are not known (the answer is queried).
/// Returns the retrieval's notes (queries that found nothing); nothing to do: no notes.
pub fn resolve_sources(
    db: &mut dyn SourceDb,
    options: &mut Map<String, Value>,
    answer: &str,
) -> Result<Vec<String>, String> {
    let spec = match options.get("sources") {
        Some(Value::Object(o)) if names_fts_table(options) => FtsSpec::parse(o)?,
        _ => return Ok(Vec::new()),
    };
    let units: Option<Vec<String>> = match options.get("units") {
        Some(Value::Array(a)) => Some(
            a.iter()
                .filter_map(|u| u.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => {
            let claims = options
                .get("granularity")
                .and_then(Value::as_str)
                .is_some_and(|g| g.trim().eq_ignore_ascii_case("claim"));
            (!claims).then(|| crate::decompose::split_sentences(answer))
        }
    };
    let got = retrieve(db, &spec, answer, units.as_deref())?;
    options.insert("sources".into(), passages_json(&got.passages));
    if spec.rerank {
        let k = match options.get("source_premise") {
            Some(Value::Object(p)) => p.get("top_k").and_then(Value::as_u64),
            Some(_) => None,
            None => Some(3),
        };
        if let (Some(k), false) = (
            k,
            options
                .get("source_premise")
                .is_some_and(|p| p.get("rank").is_some()),
        ) {
            // Any other key (join) is kept.
            let mut premise = match options.get("source_premise") {
                Some(Value::Object(p)) => p.clone(),
                _ => Map::new(),
            };
            premise.insert("top_k".into(), k.into());
            premise.insert("rank".into(), "embedding".into());
            options.insert("source_premise".into(), Value::Object(premise));
        }
    }
    Ok(got.notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fts_queries_quote_every_word() {
        assert_eq!(
            fts_query("Marie Curie was born in Warsaw.").unwrap(),
            r#""marie" OR "curie" OR "born" OR "warsaw""#
        );
        // FTS5 syntax in the text is quoted, never run.
        let q = fts_query(r#"NEAR(a b) AND "x" * c:d -e"#).unwrap();
        assert!(
            q.split(" OR ")
                .all(|w| w.starts_with('"') && w.ends_with('"')),
            "{q}"
        );
        assert_eq!(fts_query("the and of"), None);
        assert_eq!(fts_query(""), None);
        let long: String = (0..200).map(|i| format!("word{i} ")).collect();
        assert_eq!(
            fts_query(&long).unwrap().split(" OR ").count(),
            MAX_QUERY_WORDS
        );
    }

    #[test]
    fn specs_parse_and_errors_name_the_key() {
        let o = |v: Value| v.as_object().unwrap().clone();
        let s = FtsSpec::parse(&o(json!({"fts": "docs"}))).unwrap();
        assert_eq!(
            (s.k, s.per, s.rerank, s.column.clone()),
            (5, Per::Answer, false, None)
        );
        let s = FtsSpec::parse(&o(
            json!({"fts": "docs", "k": 2, "per": "unit", "rerank": "embedding", "column": "body"}),
        ))
        .unwrap();
        assert_eq!((s.limit(), s.per), (6, Per::Unit));
        for (bad, needle) in [
            (json!({"fts": ""}), "sources.fts must be a non-empty"),
            (json!({"k": 3}), "sources.fts must name an FTS5 table"),
            (
                json!({"fts": "d", "k": 0}),
                "sources.k must be an integer from 1 to 100",
            ),
            (json!({"fts": "d", "per": "doc"}), "sources.per must be"),
            (json!({"fts": "d", "rerank": 1}), "sources.rerank"),
            (json!({"fts": "d", "top": 1}), "unknown key \"top\""),
        ] {
            let e = FtsSpec::parse(&o(bad.clone())).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    /// A database of one FTS5 table `docs(body, title)` whose search returns the rows sharing a
    /// quoted word with the query, in rowid order.
    struct Fake {
        rows: Vec<(i64, &'static str)>,
        searches: Vec<(String, usize)>,
    }

    impl SourceDb for Fake {
        fn table_sql(&mut self, name: &str) -> Result<Option<String>, String> {
            Ok(match name {
                "docs" => Some("CREATE VIRTUAL TABLE docs USING fts5(body, title)".into()),
                "plain" => Some("CREATE TABLE plain(body)".into()),
                _ => None,
            })
        }
        fn columns(&mut self, _: &str) -> Result<Vec<String>, String> {
            Ok(vec!["body".into(), "title".into()])
        }
        fn search(
            &mut self,
            sql: &str,
            query: &str,
            limit: usize,
        ) -> Result<Vec<(i64, Option<String>)>, String> {
            assert!(
                sql.contains("\"docs\" MATCH ?1 ORDER BY rank LIMIT ?2"),
                "{sql}"
            );
            self.searches.push((query.to_string(), limit));
            let words: Vec<String> = query
                .split(" OR ")
                .map(|w| w.trim_matches('"').to_string())
                .collect();
            Ok(self
                .rows
                .iter()
                .filter(|(_, t)| words.iter().any(|w| t.to_lowercase().contains(w.as_str())))
                .take(limit)
                .map(|(id, t)| (*id, Some(t.to_string())))
                .collect())
        }
    }

    fn fake() -> Fake {
        Fake {
            rows: vec![
                (7, "Curie was born in Warsaw."),
                (9, "Einstein was born in Ulm."),
                (12, "Paris is big."),
            ],
            searches: vec![],
        }
    }

    #[test]
    fn resolve_pools_per_unit_rows_once_and_notes_what_found_nothing() {
        let mut db = fake();
        let mut o = json!({"sources": {"fts": "docs", "k": 2, "per": "unit"},
                           "units": ["Curie was born in Warsaw.", "Einstein lived in Ulm.", "Zebras run."]})
            .as_object()
            .unwrap()
            .clone();
        let notes = resolve_sources(&mut db, &mut o, "ignored").unwrap();
        // Unit 0 finds 7 and 9 ("born"), unit 1 finds 9 again: each row once, in order found.
        assert_eq!(
            o["sources"],
            json!([{"id": "7", "text": "Curie was born in Warsaw."}, {"id": "9", "text": "Einstein was born in Ulm."}])
        );
        assert_eq!(db.searches.len(), 3);
        assert_eq!(notes, vec!["sources.fts: no row of \"docs\" matches unit 2 (\"Zebras run.\"); the sources are silent on it".to_string()]);
        assert!(o.get("source_premise").is_none());
    }

    #[test]
    fn resolve_by_answer_with_rerank_and_the_errors() {
        let mut db = fake();
        let mut o = json!({"sources": {"fts": "docs", "k": 1, "rerank": "embedding"}})
            .as_object()
            .unwrap()
            .clone();
        resolve_sources(&mut db, &mut o, "Paris is big. Curie too.").unwrap();
        // One query from the whole answer, 3 × k candidates; the sentences ranked by embedding.
        assert_eq!(
            db.searches,
            vec![(r#""paris" OR "big" OR "curie" OR "too""#.to_string(), 3)]
        );
        assert_eq!(
            o["source_premise"],
            json!({"top_k": 3, "rank": "embedding"})
        );
        // A given K and join are kept.
        let mut o = json!({"sources": {"fts": "docs", "k": 1, "rerank": "embedding"},
                           "source_premise": {"top_k": 2, "join": "sentence"}})
        .as_object()
        .unwrap()
        .clone();
        resolve_sources(&mut fake(), &mut o, "Paris is big.").unwrap();
        assert_eq!(
            o["source_premise"],
            json!({"top_k": 2, "rank": "embedding", "join": "sentence"})
        );
        // Claims not yet decomposed: the answer is queried, with a note for per = unit.
        let mut o = json!({"sources": {"fts": "docs", "per": "unit"}, "granularity": "claim"})
            .as_object()
            .unwrap()
            .clone();
        let notes = resolve_sources(&mut fake(), &mut o, "Paris.").unwrap();
        assert!(
            notes[0].contains("retrieved for the whole answer"),
            "{notes:?}"
        );
        // Passages given: nothing to do.
        let mut o = json!({"sources": ["a"]}).as_object().unwrap().clone();
        assert!(resolve_sources(&mut fake(), &mut o, "x")
            .unwrap()
            .is_empty());
        assert_eq!(o["sources"], json!(["a"]));
        for (spec, needle) in [
            (
                json!({"fts": "nope"}),
                "there is no table \"nope\" in this database",
            ),
            (
                json!({"fts": "plain"}),
                "table \"plain\" is not an FTS5 table",
            ),
            (
                json!({"fts": "docs", "column": "text"}),
                "has no column \"text\": its columns are body, title",
            ),
        ] {
            let mut o = json!({"sources": spec}).as_object().unwrap().clone();
            let e = resolve_sources(&mut fake(), &mut o, "Paris.").unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
    }
}
