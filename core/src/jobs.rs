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
//! | `sample_when_open` | with `generate` and `grounded_fallback` as the band (a `source_*_threshold` option given): generate samples only for rows whose units the sources leave open | false |
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

mod calibration;
mod columns;
mod create;
mod keys;
mod needs;
mod parse;
mod scoring;
mod spec;
mod sql;
mod status;

pub use columns::Columns;
pub use create::{create_job, JobDb, NewJob};
pub use keys::{check_option_names, Prices, JOB_KEYS, MAX_CHUNK, MAX_CONCURRENCY, MAX_GENERATE};
pub use parse::parse_job;
pub use scoring::stand_in_sources;
pub use spec::JobSpec;
pub use sql::{
    count_rows_sql, no_such_table, pending_rows_sql, quote_ident, table_name, INSERT_JOB,
    LIST_TABLES, TABLE_COLUMNS, TABLE_NAME, TEMP_TABLE_NAME,
};
pub use status::{is_final, CANCELLED, DONE, FAILED, QUEUED, RUNNING};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Adapt;
    use serde_json::{json, Map, Value};

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
        // sample_when_open saves samples only with grounded_fallback's band
        let opts = json!({"scorers": ["grounded_fallback"], "sources_column": "context",
                          "generate": 3, "sample_when_open": true});
        let e = parse(opts.clone(), &["prompt", "answer", "context"]).unwrap_err();
        assert!(
            e.contains("which grounded_fallback does only with its band")
                && e.contains("source_entailment_threshold"),
            "{e}"
        );
        let mut band = opts;
        band["source_entailment_threshold"] = json!(0.7);
        assert!(parse(band, &["prompt", "answer", "context"]).is_ok());
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
