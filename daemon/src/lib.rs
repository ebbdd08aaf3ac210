//! uqd: the uqlite daemon. `engine` runs the ONNX models, `llm` the LLM layer (crate `uq-llm`),
//! `pipeline` takes one request through decompose → score → aggregate (`decompose_claims` for
//! claims, `verbalized` for the judge scorer), `generate` and `uad` answer the LLM ops, `server`
//! speaks the socket protocol, `bench` measures it all.

pub mod bench;
pub mod config;
pub mod decompose_claims;
pub mod engine;
pub mod generate;
pub mod grade;
pub mod jobs;
pub mod llm;
pub mod merge_claims;
pub mod pipeline;
pub mod report;
pub mod server;
pub mod shortform;
pub mod store;
pub mod uad;
pub mod unit_qa;
pub mod verbalized;
