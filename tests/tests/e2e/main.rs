//! The end-to-end tests of uqlite, one binary with a module per feature (so one release link):
//! the built extension in the stock `/usr/bin/sqlite3` and `/usr/bin/python3` against the real
//! daemon and models, real servers where a feature has one. Run one feature with
//! `cargo test --release -p uq-integration --test e2e errors::`. `metrics` and `registered` start
//! no daemon: `make check` runs them.

mod bad_input;
mod boundary;
mod calibration_sql;
mod conformal_sql;
mod errors;
mod eval_sql;
mod examples;
mod faults;
mod first_run;
mod fuzz_protocol;
mod fuzz_sql;
mod graph_sql;
mod grounded_jobs_sql;
mod grounded_sql;
mod highlight_sql;
mod jobs_sql;
mod lifecycle;
mod llm_sql;
mod metrics;
mod models_pull;
mod ngram_sql;
mod nli_judge_sql;
mod openai_server;
mod python;
mod python_pkg;
mod rag_sql;
mod refit_sql;
mod registered;
mod selfcheck_example;
mod soak;
mod sqlite_cli;
mod stand_in;
mod triton;
mod trust_sql;
mod unit_qa_sql;
