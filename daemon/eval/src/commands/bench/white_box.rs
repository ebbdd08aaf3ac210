//! The flags of `uqd bench white-box` and how they become its arguments.

use std::path::PathBuf;

use clap::Args;

use super::setup::setup;
use crate::bench;
use uqd::config::CliOverrides;

#[derive(Args)]
pub struct WhiteBoxFlags {
    /// The generation LLM's config (JSON, as in temp.uq_llms), e.g.
    /// '{"backend":"openai","base_url":"http://127.0.0.1:8080/v1","model":"smollm2"}';
    /// logprobs are turned on, top_logprobs defaults to 5.
    #[arg(long, default_value = r#"{"backend":"local"}"#)]
    llm: String,
    /// Questions (the kinds in turn).
    #[arg(long, default_value_t = 140)]
    questions: usize,
    /// Sampled answers per question (m, temperature 1).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Seed of the questions' numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Completion tokens per answer.
    #[arg(long, default_value_t = 24)]
    max_tokens: u32,
    /// Also write each question's answer, grade and scores here (JSON lines).
    #[arg(long)]
    items: Option<PathBuf>,
    #[command(flatten)]
    config: CliOverrides,
}

/// `--llm` is checked before the models load.
pub(super) fn run(f: WhiteBoxFlags) -> Result<(), String> {
    let llm_config: serde_json::Value = serde_json::from_str(&f.llm).map_err(|e| {
        format!("--llm is not JSON ({e}): give an LLM config, e.g. '{{\"backend\":\"local\"}}'")
    })?;
    let (engine, llm) = setup(f.config, f.samples)?;
    bench::white_box(
        &engine,
        &llm,
        &bench::WhiteBoxArgs {
            llm: &llm_config,
            questions: f.questions,
            samples: f.samples,
            seed: f.seed,
            max_tokens: f.max_tokens,
            items: f.items.as_deref(),
        },
    )
}
