//! The flags of the scoring benchmarks (`selfcheck`, `claims`) and how they become the
//! benchmarks' arguments (`selfcheck`: one run per precision of `--precision`).

use std::path::PathBuf;

use clap::Args;

use super::setup::{clients, setup};
use crate::bench;
use uqd::config::CliOverrides;

/// The flags of the scoring benchmarks (`selfcheck`, `claims`).
#[derive(Args)]
pub struct ScoringFlags {
    #[arg(long)]
    data: PathBuf,
    /// Number of sampled responses per passage or answer (m; the FActScore data holds 10).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Concurrent clients submitting passages or answers (default: 8 on the CPU, 32 on CUDA).
    #[arg(long)]
    clients: Option<usize>,
    /// Only the first N passages or answers.
    #[arg(long)]
    limit: Option<usize>,
    /// Only these scorers (comma-separated names; default: every scorer the benchmark runs).
    #[arg(long)]
    scorers: Option<String>,
    /// Premise settings, one run each, compared in a last line (comma-separated: whole, topK,
    /// topK_embedding; default: the default premise).
    #[arg(long)]
    premise: Option<String>,
    /// NLI pairs the raw-model ceiling is measured on (0: skip it).
    #[arg(long, default_value_t = bench::DEFAULT_RAW_PAIRS)]
    raw_pairs: usize,
    /// An LLM that judges the NLI pairs instead of the NLI model: an LLM config object
    /// (JSON), e.g. '{"backend":"local"}' (option nli_llm). Prints its calls and tokens.
    #[arg(long)]
    nli_llm: Option<String>,
    /// The judge's prompt: binary (yes/no) or ternary (default; option nli_prompt).
    #[arg(long)]
    nli_prompt: Option<String>,
}

impl ScoringFlags {
    /// The premise settings at granularity `g` and the NLI judge of the flags.
    fn premises_and_judge(
        &self,
        g: uq_core::scorers::Granularity,
    ) -> Result<(Vec<uq_core::score::premise::Premise>, Option<bench::Judge>), String> {
        let premises = bench::parse_premises(self.premise.as_deref(), g)?;
        let judge = bench::Judge::from_flags(self.nli_llm.as_deref(), self.nli_prompt.as_deref())?;
        Ok((premises, judge))
    }

    /// The benchmark's arguments: these flags with `clients` resolved for `engine`'s device.
    fn args(
        &self,
        engine: &uqd::engine::Engine,
        premises: Vec<uq_core::score::premise::Premise>,
        judge: Option<bench::Judge>,
    ) -> bench::ScoringArgs<'_> {
        bench::ScoringArgs {
            data: &self.data,
            samples: self.samples,
            clients: clients(self.clients, engine),
            limit: self.limit,
            premises,
            raw_pairs: self.raw_pairs,
            judge,
            scorers: self.scorers.as_deref(),
        }
    }
}

#[derive(Args)]
pub struct SelfcheckFlags {
    #[command(flatten)]
    run: ScoringFlags,
    #[command(flatten)]
    config: CliOverrides,
}

#[derive(Args)]
pub struct ClaimsFlags {
    #[command(flatten)]
    run: ScoringFlags,
    /// Print the UAD accuracy per percentile threshold (10..90) for every scorer.
    #[arg(long)]
    uad: bool,
    /// Also run the matched-claim scorers, with each sample's sentences standing in for its
    /// claims (an approximation: the data has no claims per sample).
    #[arg(long, value_parser = ["sentences"])]
    sample_units: Option<String>,
    #[command(flatten)]
    config: CliOverrides,
}

/// One run per precision of `--precision`, then their comparison.
pub(super) fn selfcheck(f: SelfcheckFlags) -> Result<(), String> {
    let (run, granularity) = (&f.run, uq_core::scorers::Granularity::Sentence);
    let (premises, judge) = run.premises_and_judge(granularity)?;
    let mut runs = Vec::new();
    for p in precisions(&f.config)? {
        let config = CliOverrides {
            precision: p,
            ..f.config.clone()
        };
        let (engine, llm) = setup(config, run.samples)?;
        let args = run.args(&engine, premises.clone(), judge.clone());
        runs.push(bench::selfcheck(&engine, &llm, &args)?);
    }
    if runs.len() > 1 {
        println!("{}", bench::compare_precisions(&runs));
    }
    Ok(())
}

/// `uqd bench claims`: the claim-level scorers on one graph-uq file.
pub(super) fn claims(f: ClaimsFlags) -> Result<(), String> {
    let run = &f.run;
    let (premises, judge) = run.premises_and_judge(uq_core::scorers::Granularity::Claim)?;
    let (engine, llm) = setup(f.config, run.samples)?;
    let args = bench::ClaimsArgs {
        scoring: run.args(&engine, premises, judge),
        sample_units: f.sample_units.map(|_| bench::SampleUnits::Sentences),
        uad: f.uad,
    };
    bench::claims(&engine, &llm, &args)
}

/// `--precision` (or UQ_PRECISION, or the config file's) of `bench selfcheck` may list several
/// precisions: one run each (`None`: the setting's own resolution).
fn precisions(config: &CliOverrides) -> Result<Vec<Option<String>>, String> {
    let list = uqd::config::given_precision_text(config)?;
    let precisions: Vec<Option<String>> = match list {
        Some(l) => l
            .split(',')
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(|p| Some(p.to_string()))
            .collect(),
        None => vec![None],
    };
    if precisions.is_empty() {
        return Err("--precision is empty: give auto, fp32, int8, fp16 or original (or a comma-separated list)".into());
    }
    Ok(precisions)
}
