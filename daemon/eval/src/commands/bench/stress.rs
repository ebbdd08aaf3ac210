//! The flags of `uqd bench stress` and how they become its run (the NLI model alone).

use std::path::PathBuf;

use clap::Args;

use crate::bench;
use uqd::config::{CliOverrides, Config};
use uqd::engine::Engine;

#[derive(Args)]
pub struct StressFlags {
    /// The suite: one {"id","kind","sub","topic","premise","hypothesis","label"} per line, label
    /// entailment, neutral or contradiction.
    #[arg(long, default_value = "models/nli/stress.jsonl")]
    data: PathBuf,
    /// Also write each item's probabilities and predicted label here (JSON lines).
    #[arg(long)]
    items: Option<PathBuf>,
    #[command(flatten)]
    config: CliOverrides,
}

/// `uqd bench stress`: the NLI model on the stress suite.
pub(super) fn run(f: StressFlags) -> Result<(), String> {
    // The suite is checked before the model loads.
    let suite = bench::StressSuite::load(&f.data)?;
    let mut config = Config::resolve(f.config)?;
    // uq_nli needs the NLI model alone.
    config.embed_model = None;
    let engine = Engine::load(&config)?;
    bench::stress(&engine, &suite, f.items.as_deref())
}
