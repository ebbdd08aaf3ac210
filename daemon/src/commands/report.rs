//! `uqd report`: an HTML report of the scores and labels stored in a database.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

#[derive(Args)]
pub struct ReportArgs {
    /// SQLite database holding the uqlite schema (uq_run, uq_unit_score, uq_label, ...).
    db: PathBuf,
    /// Output directory (default: <DB stem>-report/ beside DB).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<ExitCode, String> {
    let written = crate::report::report(&args.db, args.out.as_deref())?;
    for note in &written.notes {
        eprintln!("uqd report: {note}");
    }
    println!(
        "{} ({} figures)",
        written.index.display(),
        written.figures.len()
    );
    Ok(ExitCode::SUCCESS)
}
