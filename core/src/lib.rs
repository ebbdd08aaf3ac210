//! uq-core: the pure part of uqlite. Decomposition (stage 1), unit scoring (stage 2) and
//! aggregation (stage 3) of the paper's pipeline, plus the evaluation metrics and the socket
//! protocol. No models and no I/O live here.

pub mod paths;
pub mod protocol;

pub mod aggregate;
pub mod calibrate;
pub mod decompose;
pub mod ensemble;
pub mod evaluation;
pub mod generated_docs;
pub mod highlight;
pub mod jobs;
pub mod json;
pub mod limits;
pub mod logprobs;
pub mod metrics;
pub mod options;
pub mod retrieve;
mod rusqlite_impls;
pub mod schema;
pub mod score;
pub mod scorers;
pub mod suggest;
pub mod words;

#[cfg(test)]
mod test_util;
