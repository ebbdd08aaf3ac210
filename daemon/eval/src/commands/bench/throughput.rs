//! The flags of the benchmarks of the daemon's speed and steadiness (`load` and its worker,
//! `table`, `soak`) and how they become the benchmarks' arguments.

use std::path::PathBuf;

use clap::Args;

use super::setup::setup;
use crate::bench;
use uqd::commands::control::SocketArgs;
use uqd::config::{CliOverrides, Config};

#[derive(Args)]
pub struct LoadFlags {
    #[arg(long, default_value_t = 32)]
    clients: usize,
    #[arg(long, default_value_t = 30.0)]
    seconds: f64,
    /// Worker processes the connections are spread over.
    #[arg(long, default_value_t = 4)]
    processes: usize,
    #[arg(long, default_value = "../shared/data/selfcheck_wikibio_dev.jsonl")]
    data: PathBuf,
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Daemon socket (default: UQ_SOCKET, else the per-user default).
    #[arg(long)]
    socket: Option<PathBuf>,
}

#[derive(Args)]
pub struct LoadWorkerFlags {
    #[arg(long)]
    socket: PathBuf,
    #[arg(long)]
    data: PathBuf,
    #[arg(long)]
    threads: usize,
    #[arg(long)]
    seconds: f64,
    #[arg(long)]
    samples: usize,
    #[arg(long)]
    seed: usize,
}

#[derive(Args)]
pub struct TableFlags {
    #[arg(long)]
    data: PathBuf,
    /// Number of sampled responses per passage (m).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Only the first N passages.
    #[arg(long)]
    limit: Option<usize>,
    /// Scoring options of the job (JSON object).
    #[arg(long, default_value = "{}")]
    options: String,
    /// Rows scored at once (default: the device's, 4 on the CPU, 32 on CUDA).
    #[arg(long)]
    concurrency: Option<usize>,
    /// NLI pairs the raw-model ceiling is measured on (0: skip it).
    #[arg(long, default_value_t = bench::DEFAULT_RAW_PAIRS)]
    raw_pairs: usize,
    #[command(flatten)]
    config: CliOverrides,
}

#[derive(Args)]
pub struct SoakFlags {
    /// How long to run, in minutes.
    #[arg(long, default_value_t = 20.0)]
    minutes: f64,
    #[arg(long, default_value = "../shared/data/selfcheck_wikibio_dev.jsonl")]
    data: PathBuf,
    /// Client threads.
    #[arg(long, default_value_t = 3)]
    clients: usize,
    /// Passages the queries are drawn from.
    #[arg(long, default_value_t = 24)]
    passages: usize,
    /// Sampled responses per passage.
    #[arg(long, default_value_t = 3)]
    samples: usize,
    /// Seconds between daemon restarts (0: never).
    #[arg(long, default_value_t = 300.0)]
    restart_every: f64,
    /// Seconds between sample lines.
    #[arg(long, default_value_t = 60.0)]
    sample_every: f64,
    #[command(flatten)]
    config: CliOverrides,
}

/// `uqd bench load`: the load test against the daemon on `--socket`.
pub(super) fn load(f: LoadFlags) -> Result<(), String> {
    let socket = SocketArgs { socket: f.socket }.path();
    bench::load(&bench::LoadArgs {
        socket: &socket,
        data: &f.data,
        clients: f.clients,
        seconds: f.seconds,
        samples: f.samples,
        processes: f.processes,
    })
}

/// `uqd bench load-worker`: one worker process of `bench load`.
pub(super) fn load_worker(f: LoadWorkerFlags) -> Result<(), String> {
    let args = bench::LoadArgs {
        socket: &f.socket,
        data: &f.data,
        clients: f.threads,
        seconds: f.seconds,
        samples: f.samples,
        processes: 1,
    };
    bench::load_worker(&args, f.threads, f.seed)
}

/// `uqd bench table`: the whole-table job.
pub(super) fn table(f: TableFlags) -> Result<(), String> {
    let (engine, llm) = setup(f.config, f.samples)?;
    let args = bench::TableArgs {
        data: &f.data,
        samples: f.samples,
        limit: f.limit,
        options: &f.options,
        concurrency: f.concurrency,
        raw_pairs: f.raw_pairs,
    };
    bench::table(&engine, &llm, &args)
}

/// `uqd bench soak`: the long mixed run against a restarted child daemon.
pub(super) fn soak(f: SoakFlags) -> Result<(), String> {
    let config = Config::resolve(f.config)?;
    bench::soak(
        &config,
        &bench::SoakArgs {
            data: &f.data,
            minutes: f.minutes,
            clients: f.clients,
            passages: f.passages,
            samples: f.samples,
            restart_every: f.restart_every,
            sample_every: f.sample_every,
        },
    )
}
