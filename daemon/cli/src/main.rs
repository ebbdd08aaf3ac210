//! `uqd`: the uqlite daemon. `serve` runs the models behind the Unix socket the extension
//! talks to; `status` and `stop` manage a running daemon; `bench` prints benchmark figures.
//! Each subcommand is a module of `uqd::commands` (the daemon's library) or, for `bench` and
//! `eval`, of `uq_eval::commands` (the evaluation tools); this file parses and dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use uq_eval::commands::bench::BenchCommand;
use uq_eval::commands::eval::EvalArgs;
use uq_eval::commands::{bench, eval};
use uqd::commands::control::SocketArgs;
use uqd::commands::models::ModelsCommand;
use uqd::commands::report::ReportArgs;
use uqd::commands::score::ScoreArgs;
use uqd::commands::{control, models, report, score, serve};
use uqd::config::CliOverrides;

#[derive(Parser)]
#[command(
    name = "uqd",
    version,
    about = "uqlite daemon: NLI and embedding models and LLMs for the uq SQLite extension"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load the models and serve the socket (in the foreground).
    Serve(CliOverrides),
    /// Print the running daemon's state as JSON; exit 1 when none answers.
    Status(SocketArgs),
    /// Ask the running daemon to exit and wait until it has.
    Stop(SocketArgs),
    /// Write an HTML report (index.html + SVG figures) of the scores and labels stored in DB:
    /// unit-level AUROC/AUPRC/calibration, response-level correlations, UAD accuracy vs
    /// percentile threshold, AUROC vs number of samples.
    Report(ReportArgs),
    /// Evaluate every scorer on the labelled answers stored in DB (TABLE: only that source
    /// table's): AUROC, AUC-PR, NonFact AUC-PR and ECE with 95 % intervals over resampled
    /// answers, the recommended scorer, its calibration and a conformal fit; written to uq_eval
    /// and uq_eval_figure (uqd report shows them).
    Eval(EvalArgs),
    /// Score a whole table into DB in the foreground, with a progress bar (as the SQL function
    /// uq_score_table does in the background): results go to the uqlite tables of DB
    /// (uq_answer, uq_unit, uq_unit_score, …; progress in the view uq_jobs).
    Score(ScoreArgs),
    /// Model preparation: download from a hub, optimize into fused / int8 / fp16 variants.
    Models {
        #[command(subcommand)]
        which: ModelsCommand,
    },
    /// Benchmarks that print one JSON object per line.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

fn main() -> ExitCode {
    // A file-size limit (RLIMIT_FSIZE) reached, like a full disk, is an error on that write
    // (SQLite's "database or disk is full"), not the end of the daemon.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let outcome = match Cli::parse().command {
        Command::Serve(args) => serve::run(args),
        Command::Status(args) => control::status(args),
        Command::Stop(args) => control::stop(args),
        Command::Report(args) => report::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Score(args) => score::run(args),
        Command::Models { which } => models::run(which),
        Command::Bench { which } => bench::run(which),
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("uqd: {message}");
            ExitCode::FAILURE
        }
    }
}
