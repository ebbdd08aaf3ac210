//! `uqd eval`: the evaluation suite's figures on the labelled answers stored in a database.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

#[derive(Args)]
pub struct EvalArgs {
    /// SQLite database holding scored answers with labels (a job's labels_column, or grade).
    db: PathBuf,
    /// Only the answers of this source table (default: every table).
    table: Option<String>,
    /// Resamples of the answers per interval.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::RESAMPLES)]
    resamples: usize,
    /// Seed of the resamples.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::SEED)]
    seed: u64,
    /// Level of the conformal fit: P(all kept claims true) ≥ 1 − alpha.
    #[arg(long, default_value_t = 0.1)]
    alpha: f64,
    /// Print only; write nothing to DB.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: EvalArgs) -> Result<ExitCode, String> {
    if args.resamples == 0 {
        return Err("--resamples must be at least 1 (1000 for 95 % intervals)".into());
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(format!(
            "--alpha must be strictly between 0 and 1, got {}: e.g. --alpha 0.1 for a 90 % \
             guarantee",
            args.alpha
        ));
    }
    let (_, text) = crate::eval::eval(&crate::eval::EvalArgs {
        db: &args.db,
        table: args.table.as_deref(),
        resamples: args.resamples,
        seed: args.seed,
        alpha: args.alpha,
        write: !args.dry_run,
    })?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
