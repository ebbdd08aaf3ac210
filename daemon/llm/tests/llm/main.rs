//! uq-llm's tests, one binary with a module per feature: the completion cache, the HTTP client
//! and replicas against a fake server, the reply parsers on recorded outputs and under fuzzing,
//! the embedded model. (`fuzz_gguf` stays a binary of its own: its counting global allocator must
//! see no other test's allocations.)

mod cache;
mod common;
mod fuzz_replies;
mod http_client;
mod local_model;
mod parse_fixtures;
mod replicas;
