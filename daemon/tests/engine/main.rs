//! The daemon's in-process tests, one binary with a module per feature (so one release link):
//! the engine with the real models, the LLM layer against a deterministic fake OpenAI server and
//! the embedded SmolLM2, jobs, the report, inference servers. Run one feature with
//! `cargo test --release -p uqd --test engine report::`.

mod bench_load;
mod bench_stress;
mod bench_suite;
mod common;
mod graph;
mod grounded;
mod jobs;
mod llm_fake_server;
mod local_llm;
mod local_llm_unit_qa;
mod matched_unit;
mod models_optimize;
mod nli_backend;
mod nli_judge;
mod report;
mod trust;
mod unit_qa;
mod uqlm_parity;
mod white_box;
