//! `uqd bench …`: the benchmarks, each printing one JSON object per line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::bench;
use uqd::config::{CliOverrides, Config};
use uqd::engine::Engine;

use uqd::commands::control::SocketArgs;

mod setup;
mod suite;
use setup::setup;
pub use suite::SuiteFlags;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Load test of a daemon over its socket: N connections in several processes sending a mix
    /// of uq_unit_scores requests (WikiBio passages) for S seconds; throughput, p50/p95/p99
    /// latency, errors, the daemon's peak RSS and open fds. Starts a daemon on --socket (with
    /// this environment) when none answers there, and stops it afterwards.
    Load(LoadFlags),
    /// One worker process of `bench load` (internal).
    #[command(hide = true)]
    LoadWorker(LoadWorkerFlags),
    /// A whole-table job (as uq_score_table runs it) over the SelfCheckGPT WikiBio passages
    /// loaded into a fresh database: rows/s, NLI pairs/s, peak RSS, and the speed-up of a second
    /// job on the warm caches.
    Table(TableFlags),
    /// Sentence-level scorers on SelfCheckGPT WikiBio (shared/data/selfcheck_wikibio_dev.jsonl).
    Selfcheck(SelfcheckFlags),
    /// Claim-level scorers on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// response's claims as units, AUROC/AUC-PR/ECE/Brier against the claim labels, and with
    /// --uad the UAD accuracy per percentile threshold.
    Claims(ClaimsFlags),
    /// Decomposition coverage on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// share of sentences the decomposition LLM's claims do not entail, and the false labelled
    /// claims that the uncovered sentences bring under scoring.
    Coverage(CoverageFlags),
    /// A long run of mixed work (score, nli, small jobs) from several clients against a child
    /// daemon restarted now and then: prints the daemon's RSS, open fds, cache sizes and errors
    /// over time, and compares the results with a fresh daemon's.
    Soak(SoakFlags),
    /// Calibration and tuned ensembles across models: fitted on the claims of one graph-uq
    /// FActScore file, tested on the other's (both directions): ECE and Brier before and after
    /// calibration per scorer, and the ensemble's AUROC against the best single scorer.
    Calibration(CalibrationFlags),
    /// Conformal factuality (Mohri & Hashimoto 2024) on FActScore-Bio: the claims of a graph-uq
    /// file scored once, then seeded random half/half splits of its answers: the UAD threshold
    /// fitted on one half at alpha 0.05, 0.1, 0.2, 0.3, coverage (share of test answers whose
    /// kept claims are all true) and kept share on the other, beside threshold 1/3 and the
    /// 50th/90th percentile; with --data2 also fitted on one file, tested on the other.
    Conformal(ConformalFlags),
    /// Grounded checking (units against sources, not samples): on SelfCheckGPT WikiBio with
    /// wiki_bio_text as the source, (a) the passage's own text, (b) retrieval from an FTS5
    /// table of all passages in chunks, (c) sample entailment, (d) grounded_fallback; on
    /// grounded_dev.jsonl, (a) per task beside the whole-source uq_nli baseline. AUROC, NonFact
    /// AUC-PR, NLI pairs, tokens, wall time, LLM calls.
    Grounded(GroundedFlags),
    /// Claim spans: the alignment of FActScore-Bio claims to their answer (no model, no LLM)
    /// against hand-marked spans: character F1, overlap, same sentence, share placed.
    Spans(SpansFlags),
    /// The NLI model on a stress suite of labelled (premise, hypothesis) pairs, each judged as
    /// uq_nli judges it: per kind (distractors, paraphrase, swap_negation, …) and overall the
    /// 3-way accuracy, mean p_entailment and p_contradiction, and the share of entailed and of
    /// neutral items read as contradiction (p_contradiction > 0.5).
    Stress(StressFlags),
    /// The evaluation suite: the default scorers over every shared evaluation file (both
    /// WikiBio files, the four graph-uq claim files, grounded_dev's two tasks), each figure with
    /// a 95 % interval over resampled answers: AUROC, AUC-PR, NonFact AUC-PR; ECE and the
    /// conformal threshold fitted on one claim file and tested on the other (both pairs, both
    /// directions); the refit on K labelled answers; NLI pairs, tokens, LLM calls, wall time.
    /// With --compare A.json B.json: two runs' figures, B − A, with paired intervals.
    Suite(SuiteFlags),
    /// The white-box scorers (token log-probabilities) beside the black-box ones on questions
    /// a program grades (sums, products, weekdays, unit conversions, letter counts, the next
    /// month, the larger number), answered by the generation LLM with log-probabilities (e.g.
    /// SmolLM2 behind the llama.cpp server: scripts/bench-white-box.sh): AUROC with 95 %
    /// intervals per scorer, accuracy, seconds per answer.
    WhiteBox(WhiteBoxFlags),
}

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

#[derive(Args)]
pub struct SpansFlags {
    /// A graph-uq FActScore file (shared/data/graph_uq_factscore_gpt-4.jsonl).
    #[arg(long)]
    data: PathBuf,
    /// The hand-marked spans: one {line, claim_idx, start, end} per claim.
    #[arg(long, default_value = "tests/golden/spans/factscore_gpt-4_20.jsonl")]
    marks: PathBuf,
}

#[derive(Args)]
pub struct GroundedFlags {
    #[arg(long)]
    data: PathBuf,
    /// Sampled answers per answer for the sample-based runs (m).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Only the first N records.
    #[arg(long)]
    limit: Option<usize>,
    /// Concurrent scoring threads.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Passages retrieved per answer from the FTS5 table (run b; 2 was better than 3 on the
    /// tune half with 5-sentence rows).
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Sentences per row (chunk) of the FTS5 table (run b).
    #[arg(long, default_value_t = 5)]
    chunk: usize,
    /// source_premise settings of run (a), one run each, comma-separated (whole, topK,
    /// topK_embedding; suffix _sentence: each selected sentence alone, e.g. top5_sentence); the
    /// first is used by the other runs.
    #[arg(long, default_value = "top5")]
    source_premise: String,
    #[command(flatten)]
    config: CliOverrides,
}

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
    /// Number of sampled responses per answer (m; the data holds 10).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Concurrent clients submitting answers (default: 8 on the CPU, 32 on CUDA).
    #[arg(long)]
    clients: Option<usize>,
    /// Only the first N answers of each file.
    #[arg(long)]
    limit: Option<usize>,
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
    /// Number of sampled responses per answer (m; the data holds 10).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Concurrent clients submitting answers (default: 8 on the CPU, 32 on CUDA).
    #[arg(long)]
    clients: Option<usize>,
    /// Only the first N answers of each file.
    #[arg(long)]
    limit: Option<usize>,
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

pub fn run(which: BenchCommand) -> Result<ExitCode, String> {
    match which {
        BenchCommand::Load(f) => load(f)?,
        BenchCommand::LoadWorker(f) => load_worker(f)?,
        BenchCommand::Table(f) => table(f)?,
        BenchCommand::Selfcheck(f) => selfcheck(f)?,
        BenchCommand::Claims(f) => claims(f)?,
        BenchCommand::Coverage(f) => {
            let (engine, llm) = setup(f.config, 1)?;
            bench::coverage_bench(&engine, &llm, &f.data, f.limit)?;
        }
        BenchCommand::Soak(f) => soak(f)?,
        BenchCommand::Calibration(f) => calibration(f)?,
        BenchCommand::Conformal(f) => {
            if f.splits == 0 {
                return Err("--splits must be at least 1".into());
            }
            let (engine, llm) = setup(f.config, f.samples)?;
            let args = bench::ConformalArgs {
                data: &f.data,
                data2: f.data2.as_deref(),
                splits: f.splits,
                samples: f.samples,
                clients: f.clients.unwrap_or(engine.device_defaults().bench_clients),
                limit: f.limit,
                seed: f.seed,
            };
            bench::conformal(&engine, &llm, &args)?;
        }
        BenchCommand::Spans(f) => bench::spans(&bench::SpansArgs {
            data: &f.data,
            marks: &f.marks,
        })?,
        BenchCommand::Stress(f) => {
            // The suite is checked before the model loads.
            let suite = bench::StressSuite::load(&f.data)?;
            let mut config = Config::resolve(f.config)?;
            // uq_nli needs the NLI model alone.
            config.embed_model = None;
            let engine = Engine::load(&config)?;
            bench::stress(&engine, &suite, f.items.as_deref())?;
        }
        BenchCommand::Suite(f) => suite::run(f)?,
        BenchCommand::WhiteBox(f) => {
            let llm_config: serde_json::Value = serde_json::from_str(&f.llm).map_err(|e| {
                format!(
                    "--llm is not JSON ({e}): give an LLM config, e.g. '{{\"backend\":\"local\"}}'"
                )
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
            )?;
        }
        BenchCommand::Grounded(f) => {
            let source_premises = bench::parse_source_premises(&f.source_premise)?;
            let (engine, llm) = setup(f.config, f.samples)?;
            bench::grounded(
                &engine,
                &llm,
                &bench::GroundedArgs {
                    data: &f.data,
                    samples: f.samples,
                    limit: f.limit,
                    clients: f.clients,
                    k: f.k,
                    chunk: f.chunk,
                    source_premises,
                },
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn load(f: LoadFlags) -> Result<(), String> {
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

fn load_worker(f: LoadWorkerFlags) -> Result<(), String> {
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

fn table(f: TableFlags) -> Result<(), String> {
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

/// One run per precision of `--precision`, then their comparison.
fn selfcheck(f: SelfcheckFlags) -> Result<(), String> {
    let (run, granularity) = (&f.run, uq_core::scorers::Granularity::Sentence);
    let (premises, judge) = run.premises_and_judge(granularity)?;
    let mut runs = Vec::new();
    for p in precisions(&f.config)? {
        let config = CliOverrides {
            precision: p,
            ..f.config.clone()
        };
        let (engine, llm) = setup(config, run.samples)?;
        let args = bench::SelfcheckArgs {
            data: &run.data,
            samples: run.samples,
            clients: run
                .clients
                .unwrap_or(engine.device_defaults().bench_clients),
            limit: run.limit,
            scorers: run.scorers.as_deref(),
            premises: premises.clone(),
            raw_pairs: run.raw_pairs,
            judge: judge.clone(),
        };
        runs.push(bench::selfcheck(&engine, &llm, &args)?);
    }
    if runs.len() > 1 {
        println!("{}", bench::compare_precisions(&runs));
    }
    Ok(())
}

fn claims(f: ClaimsFlags) -> Result<(), String> {
    let run = &f.run;
    let (premises, judge) = run.premises_and_judge(uq_core::scorers::Granularity::Claim)?;
    let (engine, llm) = setup(f.config, run.samples)?;
    let args = bench::ClaimsArgs {
        data: &run.data,
        samples: run.samples,
        clients: run
            .clients
            .unwrap_or(engine.device_defaults().bench_clients),
        limit: run.limit,
        premises,
        raw_pairs: run.raw_pairs,
        sample_units: f.sample_units.map(|_| bench::SampleUnits::Sentences),
        uad: f.uad,
        scorers: run.scorers.as_deref(),
        judge,
    };
    bench::claims(&engine, &llm, &args)
}

fn soak(f: SoakFlags) -> Result<(), String> {
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

fn calibration(f: CalibrationFlags) -> Result<(), String> {
    let [a, b] = f.data.as_slice() else {
        return Err("--data takes two files".into());
    };
    let (engine, llm) = setup(f.config, f.samples)?;
    let args = bench::CalibrationArgs {
        data: [a.as_path(), b.as_path()],
        samples: f.samples,
        clients: f.clients.unwrap_or(engine.device_defaults().bench_clients),
        limit: f.limit,
        target_labels: f.target_labels,
        draws: f.draws,
        seed: f.seed,
    };
    if args.draws == 0 {
        return Err("--draws must be at least 1".into());
    }
    bench::calibration(&engine, &llm, &args)
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
