//! uqd: the uqlite daemon. The paper's three stages are folders: [`decompose`] (§3.1),
//! [`score`] (§3.3, one file per scorer family) and [`aggregate`] (§3.4, with UAD);
//! [`pipeline`] takes one request through them. `engine` runs the ONNX models, `role_llms` the
//! LLM of each role (crate `uq-llm`), `judge` routes the NLI pairs of every stage to one of
//! them, `generate` and `grade` answer the other LLM ops, `jobs` scores whole tables, `server`
//! speaks the socket protocol, `report` draws what was stored. The benchmarks and `uqd eval`
//! measure this library from their own crate (`daemon/eval`, uq-eval); the binary `uqd` is
//! `daemon/cli`.

pub mod aggregate;
pub mod client;
pub mod commands;
pub mod config;
pub mod decompose;
pub mod engine;
pub mod generate;
pub mod grade;
pub mod jobs;
pub mod judge;
pub mod models;
pub mod pipeline;
pub mod report;
pub mod role_llms;
pub mod score;
pub mod server;
pub mod sources;
pub mod store;
