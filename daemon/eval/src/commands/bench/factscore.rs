//! The flags of the benchmarks on the FActScore-Bio claim files beyond scoring (`coverage`,
//! `calibration`, `conformal`, `spans`) and how they become the benchmarks' arguments.

use std::path::PathBuf;

use clap::Args;

use super::setup::{clients, setup};
use crate::bench;
use uqd::config::CliOverrides;

/// The answers scored from each file: samples, clients and limit (`calibration`, `conformal`).
#[derive(Args)]
pub struct AnswerFlags {
    /// Number of sampled responses per answer (m; the data holds 10).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Concurrent clients submitting answers (default: 8 on the CPU, 32 on CUDA).
    #[arg(long)]
    clients: Option<usize>,
    /// Only the first N answers of each file.
    #[arg(long)]
    limit: Option<usize>,
}

#[derive(Args)]
pub struct CoverageFlags {
    #[arg(long)]
    data: PathBuf,
    /// Only the first N answers.
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    config: CliOverrides,
}

#[derive(Args)]
pub struct ConformalFlags {
    /// The graph-uq FActScore file split into calibration and test halves.
    #[arg(long, default_value = "../shared/data/graph_uq_factscore_gpt-4.jsonl")]
    data: PathBuf,
    /// A second file: split as the first, and the cross-file runs (fit on one, test on the
    /// other).
    #[arg(long)]
    data2: Option<PathBuf>,
    /// Random half/half splits per file.
    #[arg(long, default_value_t = 500)]
    splits: usize,
    /// Seed of the splits.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    answers: AnswerFlags,
    #[command(flatten)]
    config: CliOverrides,
}

#[derive(Args)]
pub struct CalibrationFlags {
    /// The two files (default: the GPT-4 and GPT-3.5-turbo files of ../shared/data).
    #[arg(
        long,
        num_args = 2,
        value_names = ["FILE_A", "FILE_B"],
        default_values = [
            "../shared/data/graph_uq_factscore_gpt-4.jsonl",
            "../shared/data/graph_uq_factscore_gpt-3.5-turbo.jsonl",
        ]
    )]
    data: Vec<PathBuf>,
    #[command(flatten)]
    answers: AnswerFlags,
    /// Labelled answers of the test file for the refit runs: K,… (0 = none labelled).
    #[arg(long, value_delimiter = ',', default_value = "0,5,10,20,40")]
    target_labels: Vec<usize>,
    /// Random draws of the K answers per K.
    #[arg(long, default_value_t = 50)]
    draws: usize,
    /// Seed of the draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    config: CliOverrides,
}

#[derive(Args)]
pub struct SpansFlags {
    /// A graph-uq FActScore file (shared/data/graph_uq_factscore_gpt-4.jsonl).
    #[arg(long)]
    data: PathBuf,
    /// The hand-marked spans: one {line, claim_idx, start, end} per claim.
    #[arg(long, default_value = "tests/golden/spans/factscore_gpt-4_20.jsonl")]
    marks: PathBuf,
}

/// `uqd bench coverage`: what the decomposition LLM's claims leave out.
pub(super) fn coverage(f: CoverageFlags) -> Result<(), String> {
    let (engine, llm) = setup(f.config, 1)?;
    bench::coverage_bench(&engine, &llm, &f.data, f.limit)
}

/// `uqd bench conformal`: the conformal threshold over random splits (and across files).
pub(super) fn conformal(f: ConformalFlags) -> Result<(), String> {
    if f.splits == 0 {
        return Err("--splits must be at least 1".into());
    }
    let (engine, llm) = setup(f.config, f.answers.samples)?;
    let args = bench::ConformalArgs {
        data: &f.data,
        data2: f.data2.as_deref(),
        splits: f.splits,
        samples: f.answers.samples,
        clients: clients(f.answers.clients, &engine),
        limit: f.answers.limit,
        seed: f.seed,
    };
    bench::conformal(&engine, &llm, &args)
}

/// `uqd bench calibration`: calibrations and ensembles fitted on one file, tested on the other.
pub(super) fn calibration(f: CalibrationFlags) -> Result<(), String> {
    let [a, b] = f.data.as_slice() else {
        return Err("--data takes two files".into());
    };
    let (engine, llm) = setup(f.config, f.answers.samples)?;
    let args = bench::CalibrationArgs {
        data: [a.as_path(), b.as_path()],
        samples: f.answers.samples,
        clients: clients(f.answers.clients, &engine),
        limit: f.answers.limit,
        target_labels: f.target_labels,
        draws: f.draws,
        seed: f.seed,
    };
    if args.draws == 0 {
        return Err("--draws must be at least 1".into());
    }
    bench::calibration(&engine, &llm, &args)
}

/// `uqd bench spans`: the claim alignment against hand-marked spans (no model).
pub(super) fn spans(f: SpansFlags) -> Result<(), String> {
    bench::spans(&bench::SpansArgs {
        data: &f.data,
        marks: &f.marks,
    })
}
