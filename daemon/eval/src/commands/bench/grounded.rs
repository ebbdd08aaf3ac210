//! The flags of `uqd bench grounded` and how they become its arguments.

use std::path::PathBuf;

use clap::Args;

use super::setup::setup;
use crate::bench;
use uqd::config::CliOverrides;

#[derive(Args)]
pub struct GroundedFlags {
    #[arg(long)]
    data: PathBuf,
    /// Sampled answers per answer for the sample-based runs (m).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Only the first N records.
    #[arg(long)]
    limit: Option<usize>,
    /// Concurrent scoring threads.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Passages retrieved per answer from the FTS5 table (run b; 2 was better than 3 on the
    /// tune half with 5-sentence rows).
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Sentences per row (chunk) of the FTS5 table (run b).
    #[arg(long, default_value_t = 5)]
    chunk: usize,
    /// source_premise settings of run (a), one run each, comma-separated (whole, topK,
    /// topK_embedding; suffix _sentence: each selected sentence alone, e.g. top5_sentence); the
    /// first is used by the other runs.
    #[arg(long, default_value = "top5")]
    source_premise: String,
    #[command(flatten)]
    config: CliOverrides,
}

/// The source_premise settings are checked before the models load.
pub(super) fn run(f: GroundedFlags) -> Result<(), String> {
    let source_premises = bench::parse_source_premises(&f.source_premise)?;
    let (engine, llm) = setup(f.config, f.samples)?;
    bench::grounded(
        &engine,
        &llm,
        &bench::GroundedArgs {
            data: &f.data,
            samples: f.samples,
            limit: f.limit,
            clients: f.clients,
            k: f.k,
            chunk: f.chunk,
            source_premises,
        },
    )
}
