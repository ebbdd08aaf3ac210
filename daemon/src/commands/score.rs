//! `uqd score`: a whole-table job in the foreground, with a progress bar.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::config::{CliOverrides, Config};
use crate::engine::Engine;
use crate::jobs::cli::Target;
use crate::role_llms::LlmService;

#[derive(Args)]
pub struct ScoreArgs {
    /// SQLite database file holding TABLE.
    db: PathBuf,
    /// Table of answers (columns answer/response, samples, prompt/question, …).
    table: Option<String>,
    #[arg(long, default_value = "{}", help = options_help())]
    options: String,
    /// Resume job JOB of DB (after a kill, or a failure once its cause is fixed) instead of
    /// starting a new one.
    #[arg(long, value_name = "JOB")]
    resume: Option<i64>,
    /// With --resume: score again the rows recorded as failed in uq_job_error (e.g. after
    /// an LLM outage).
    #[arg(long, requires = "resume")]
    retry_errors: bool,
    #[command(flatten)]
    config: CliOverrides,
}

/// The help of `--options`: the job keys (uq_core::jobs::JOB_KEYS) and where the scoring
/// options are listed.
fn options_help() -> String {
    format!(
        "Job options as JSON: the job keys {} plus the scoring options of uq_unit_scores \
         (docs/reference.md, Options), e.g. '{{\"sources_column\":\"context\",\"scorers\":[\"grounded_entailment\"]}}'",
        uq_core::jobs::JOB_KEYS.join(", ")
    )
}

/// Prints `{"job_id", "status", "rows", "seconds"}`; exit status 1 unless the job is done.
pub fn run(args: ScoreArgs) -> Result<ExitCode, String> {
    let target = match (&args.table, args.resume) {
        (Some(t), None) => Target::Table {
            table: t,
            options: &args.options,
        },
        (None, Some(job)) => Target::Resume {
            job,
            retry_errors: args.retry_errors,
        },
        _ => return Err("give either TABLE (a new job) or --resume JOB, not both".into()),
    };
    let config = Config::resolve(args.config)?;
    let engine = Engine::load(&config)?;
    let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
    let (job, status, rows, secs) = crate::jobs::cli::score(
        &engine,
        &llm,
        &args.db,
        target,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    )?;
    println!(
        "{}",
        serde_json::json!({"job_id": job, "status": status, "rows": rows, "seconds": (secs * 100.0).round() / 100.0})
    );
    Ok(if status == "done" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use clap::{Args, Command};

    #[test]
    fn help_lists_every_job_key() {
        let help = super::ScoreArgs::augment_args(Command::new("score"))
            .render_help()
            .to_string();
        for key in uq_core::jobs::JOB_KEYS {
            assert!(help.contains(key), "{key} missing from:\n{help}");
        }
    }
}
