//! `uqd bench suite`: its flags and how they become the suite's arguments (or a comparison).

use std::path::PathBuf;

use clap::Args;

use super::setup::{clients, setup};
use crate::bench;
use uqd::config::CliOverrides;

#[derive(Args)]
pub struct SuiteFlags {
    /// The folder of the shared evaluation files.
    #[arg(long, default_value = "../shared/data")]
    data_dir: PathBuf,
    /// Sampled answers per answer (m) for the sample scorers.
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Only the first answers of each file (per task for grounded_dev), K ≤ 10: for development.
    #[arg(long)]
    quick: bool,
    /// Concurrent clients submitting answers (default: 8 on the CPU, 32 on CUDA).
    #[arg(long)]
    clients: Option<usize>,
    /// Option premise of every request (whole, topK, topK_embedding; default: the default).
    #[arg(long)]
    premise: Option<String>,
    /// Option source_premise of the grounded requests (whole, topK, topK_embedding,
    /// topK_sentence; default: the default).
    #[arg(long)]
    source_premise: Option<String>,
    /// Resamples of the answers per interval.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::RESAMPLES)]
    resamples: usize,
    /// Seed of the resamples and of the refit's draws.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::SEED)]
    seed: u64,
    /// Random draws of the K labelled answers per K (refit lines).
    #[arg(long, default_value_t = 50)]
    draws: usize,
    /// Also write the JSON lines (units' scores included, for --compare) here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Compare two runs' JSON files (B − A) instead of running; loads no model.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    compare: Option<Vec<PathBuf>>,
    #[command(flatten)]
    config: CliOverrides,
}

pub(super) fn run(f: SuiteFlags) -> Result<(), String> {
    if f.resamples == 0 {
        return Err(
            "--resamples must be at least 1 (1000 for the intervals the table reports)".into(),
        );
    }
    if let Some(files) = &f.compare {
        print!(
            "{}",
            bench::compare_suites(&files[0], &files[1], f.resamples, f.seed)?
        );
        return Ok(());
    }
    if f.draws == 0 {
        return Err("--draws must be at least 1".into());
    }
    let premise = match &f.premise {
        Some(p) => Some(
            uq_core::score::premise::Premise::from_label(p)
                .map_err(|e| format!("--premise: {e}"))?
                .to_json(),
        ),
        None => None,
    };
    let source_premise = match &f.source_premise {
        Some(p) => Some(
            uq_core::score::grounded::SourceSelection::from_label(p)
                .map_err(|e| format!("--source-premise: {e}"))?
                .to_json(),
        ),
        None => None,
    };
    let (engine, llm) = setup(f.config, f.samples)?;
    let args = bench::SuiteArgs {
        data_dir: &f.data_dir,
        samples: f.samples,
        quick: f.quick,
        clients: clients(f.clients, &engine),
        premise,
        source_premise,
        resamples: f.resamples,
        seed: f.seed,
        draws: f.draws,
        json: f.json.as_deref(),
    };
    bench::suite(&engine, &llm, &args)
}
