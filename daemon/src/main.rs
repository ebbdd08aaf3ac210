//! `uqd`: the uqlite daemon. `serve` runs the models behind the Unix socket the extension
//! talks to; `status` and `stop` manage a running daemon; `bench` prints benchmark figures.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use uq_core::protocol::Request;
use uqd::config::{CliOverrides, Config};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;
use uqd::{bench, server};

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
    Serve(ConfigArgs),
    /// Print the running daemon's state as JSON; exit 1 when none answers.
    Status(SocketArgs),
    /// Ask the running daemon to exit and wait until it has.
    Stop(SocketArgs),
    /// Write an HTML report (index.html + SVG figures) of the scores and labels stored in DB:
    /// unit-level AUROC/AUPRC/calibration, response-level correlations, UAD accuracy vs
    /// percentile threshold, AUROC vs number of samples.
    Report {
        /// SQLite database holding the uqlite schema (uq_run, uq_unit_score, uq_label, ...).
        db: PathBuf,
        /// Output directory (default: <DB stem>-report/ beside DB).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Score a whole table into DB in the foreground, with a progress bar (as the SQL function
    /// uq_score_table does in the background): results go to the uqlite tables of DB
    /// (uq_answer, uq_unit, uq_unit_score, …; progress in the view uq_jobs).
    Score {
        /// SQLite database file holding TABLE.
        db: PathBuf,
        /// Table of answers (columns answer/response, samples, prompt/question, …).
        table: Option<String>,
        /// Job options as JSON: scoring options plus id_column, prompt_column, answer_column,
        /// samples_column, reference_column, generate, grade, objectivity, uad, chunk_size,
        /// concurrency, prices.
        #[arg(long, default_value = "{}")]
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
        config: ConfigArgs,
    },
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

#[derive(Subcommand)]
enum ModelsCommand {
    /// Download an NLI (or embedding) model in ONNX form (model.onnx or onnx/model.onnx,
    /// tokenizer.json, config.json) into the models directory, verify it, and print its
    /// directory (for UQ_NLI_MODEL).
    Pull {
        /// Repository id on the hub, e.g. cross-encoder/nli-deberta-v3-xsmall.
        repo: String,
        /// Branch, tag or commit hash; also UQ_MODEL_REVISION (default main).
        #[arg(long)]
        revision: Option<String>,
        /// nli or embedding; also UQ_MODEL_KIND (default nli).
        #[arg(long)]
        kind: Option<String>,
        /// Where models go; also UQ_MODELS_DIR (default $XDG_CACHE_HOME/uqlite/models, else
        /// ~/.cache/uqlite/models).
        #[arg(long)]
        models_dir: Option<PathBuf>,
        /// The repository's ONNX file to take, e.g. onnx/model_quantized.onnx; also
        /// UQ_MODEL_ONNX_FILE (default model.onnx, else onnx/model.onnx).
        #[arg(long)]
        onnx_file: Option<String>,
    },
    /// Write the optimized variants of the NLI model in DIR: model_opt.onnx (fp32, fused by ONNX
    /// Runtime's transformer optimizer for the family in config.json `model_type`),
    /// model_opt_int8.onnx (dynamic int8) and model_opt_fp16.onnx, with variants.json. They go to
    /// --out, else to <variants dir>/<model key>, where `--precision` finds them.
    Optimize {
        /// Model directory (model.onnx, tokenizer.json, config.json).
        dir: PathBuf,
        /// Output directory (e.g. DIR itself to write beside model.onnx).
        #[arg(long)]
        out: Option<PathBuf>,
        /// python3 with onnxruntime, onnx and sympy; also UQ_MODEL_PYTHON
        /// (default: the environment `make setup` makes in .cache/model-tools).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Directory of the variants of every model; also UQ_VARIANTS_DIR
        /// (default: <exe dir>/models/variants).
        #[arg(long)]
        variants_dir: Option<PathBuf>,
        /// Only check: print where up-to-date variants of DIR are and exit 0, else exit 1.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Load test of a daemon over its socket: N connections in several processes sending a mix
    /// of uq_unit_scores requests (WikiBio passages) for S seconds; throughput, p50/p95/p99
    /// latency, errors, the daemon's peak RSS and open fds. Starts a daemon on --socket (with
    /// this environment) when none answers there, and stops it afterwards.
    Load {
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
    },
    /// One worker process of `bench load` (internal).
    #[command(hide = true)]
    LoadWorker {
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
    },
    /// A whole-table job (as uq_score_table runs it) over the SelfCheckGPT WikiBio passages
    /// loaded into a fresh database: rows/s, NLI pairs/s, peak RSS, and the speed-up of a second
    /// job on the warm caches.
    Table {
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
        config: ConfigArgs,
    },
    /// Sentence-level scorers on SelfCheckGPT WikiBio (shared/data/selfcheck_wikibio_dev.jsonl).
    Selfcheck {
        #[arg(long)]
        data: PathBuf,
        /// Number of sampled responses per passage (m).
        #[arg(long, default_value_t = 5)]
        samples: usize,
        /// Concurrent clients submitting passages (default: 8 on the CPU, 32 on CUDA).
        #[arg(long)]
        clients: Option<usize>,
        /// Only the first N passages.
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
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Claim-level scorers on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// response's claims as units, AUROC/AUC-PR/ECE/Brier against the claim labels, and with
    /// --uad the UAD accuracy per percentile threshold.
    Claims {
        #[arg(long)]
        data: PathBuf,
        /// Number of sampled responses per answer (m; the data holds 10).
        #[arg(long, default_value_t = 5)]
        samples: usize,
        /// Concurrent clients submitting answers (default: 8 on the CPU, 32 on CUDA).
        #[arg(long)]
        clients: Option<usize>,
        /// Only the first N answers.
        #[arg(long)]
        limit: Option<usize>,
        /// Premise settings, one run each, compared in a last line (comma-separated: whole, topK,
        /// topK_embedding; default: the default premise).
        #[arg(long)]
        premise: Option<String>,
        /// NLI pairs the raw-model ceiling is measured on (0: skip it).
        #[arg(long, default_value_t = bench::DEFAULT_RAW_PAIRS)]
        raw_pairs: usize,
        /// Print the UAD accuracy per percentile threshold (10..90) for every scorer.
        #[arg(long)]
        uad: bool,
        /// Also run the matched-claim scorers, with each sample's sentences standing in for its
        /// claims (an approximation: the data has no claims per sample).
        #[arg(long, value_parser = ["sentences"])]
        sample_units: Option<String>,
        /// Only these scorers (comma-separated names; default: every scorer the benchmark runs).
        #[arg(long)]
        scorers: Option<String>,
        /// An LLM that judges the NLI pairs instead of the NLI model: an LLM config object
        /// (JSON), e.g. '{"backend":"local"}' (option nli_llm). Prints its calls and tokens.
        #[arg(long)]
        nli_llm: Option<String>,
        /// The judge's prompt: binary (yes/no) or ternary (default; option nli_prompt).
        #[arg(long)]
        nli_prompt: Option<String>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Decomposition coverage on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// share of sentences the decomposition LLM's claims do not entail, and the false labelled
    /// claims that the uncovered sentences bring under scoring.
    Coverage {
        #[arg(long)]
        data: PathBuf,
        /// Only the first N answers.
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// A long run of mixed work (score, nli, small jobs) from several clients against a child
    /// daemon restarted now and then: prints the daemon's RSS, open fds, cache sizes and errors
    /// over time, and compares the results with a fresh daemon's.
    Soak {
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
        config: ConfigArgs,
    },
    /// Calibration and tuned ensembles across models: fitted on the claims of one graph-uq
    /// FActScore file, tested on the other's (both directions): ECE and Brier before and after
    /// calibration per scorer, and the ensemble's AUROC against the best single scorer.
    Calibration {
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
        #[command(flatten)]
        config: ConfigArgs,
    },
}

#[derive(Args)]
struct SocketArgs {
    /// Socket path (default: UQ_SOCKET, else the per-user default).
    #[arg(long)]
    socket: Option<PathBuf>,
}

#[derive(Args, Clone)]
struct ConfigArgs {
    /// JSON config file (keys as the flags, in snake_case); also UQ_CONFIG.
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long)]
    socket: Option<PathBuf>,
    /// NLI model directory (model.onnx, tokenizer.json, config.json); also UQ_NLI_MODEL.
    #[arg(long)]
    nli_model: Option<PathBuf>,
    /// Embedding model directory (model.onnx, tokenizer.json); also UQ_EMBED_MODEL.
    #[arg(long)]
    embed_model: Option<PathBuf>,
    /// Path of libonnxruntime.so; also UQ_ORT_LIB.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// auto (default: CUDA when it loads, else the CPU, saying why), cpu or cuda (falls back to
    /// the CPU, saying why); also UQ_DEVICE.
    #[arg(long)]
    device: Option<String>,
    /// NLI model file: auto (int8 on the CPU, fp16 on CUDA, when `uqd models optimize` wrote
    /// them), fp32 (the optimized graph), int8, fp16 or original (model.onnx); also UQ_PRECISION.
    /// `uqd bench selfcheck` takes a comma-separated list and runs once per precision.
    #[arg(long)]
    precision: Option<String>,
    /// Directory of the models' optimized variants (`uqd models optimize`); also UQ_VARIANTS_DIR.
    #[arg(long)]
    variants_dir: Option<PathBuf>,
    /// ONNX Runtime threads of the NLI model on the CPU (default: the cores); also UQ_THREADS.
    #[arg(long)]
    threads: Option<usize>,
    /// NLI sessions on the CPU, sharing --threads and running batches side by side (default 2
    /// for the int8 model when --threads is at least 2, else 1); also UQ_NLI_SESSIONS.
    #[arg(long)]
    nli_sessions: Option<usize>,
    #[arg(long)]
    max_batch: Option<usize>,
    #[arg(long)]
    max_wait_ms: Option<u64>,
    #[arg(long)]
    nli_max_tokens: Option<usize>,
    #[arg(long)]
    embed_max_tokens: Option<usize>,
    /// Completion cache of the LLM layer (SQLite file); also UQ_CACHE_DB.
    /// Default: $XDG_CACHE_HOME/uqlite/completions.sqlite, else ~/.cache/uqlite/completions.sqlite.
    #[arg(long)]
    cache_db: Option<PathBuf>,
    /// GGUF file of the local LLM (default LLM); also UQ_LOCAL_LLM.
    /// Default: <exe dir>/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf.
    #[arg(long)]
    local_llm: Option<PathBuf>,
    /// NLI on an inference server: KServe v2 / Triton base URL(s), comma-separated, used in turn
    /// with health checks (the tokenizer and labels still come from --nli-model); also UQ_NLI_BACKEND.
    #[arg(long, value_name = "URL[,URL...]")]
    nli_backend: Option<String>,
    /// The model's name on the inference server (default nli); also UQ_NLI_BACKEND_MODEL.
    #[arg(long)]
    nli_backend_model: Option<String>,
    /// Time limit of one inference request (default 30000); also UQ_NLI_BACKEND_TIMEOUT_MS.
    #[arg(long)]
    nli_backend_timeout_ms: Option<u64>,
    /// Retries of a failed inference request, each on the next endpoint (default 2); also
    /// UQ_NLI_BACKEND_RETRIES.
    #[arg(long)]
    nli_backend_retries: Option<usize>,
    /// Interval of the endpoints' health checks (default 2000); also UQ_NLI_BACKEND_HEALTH_MS.
    #[arg(long)]
    nli_backend_health_ms: Option<u64>,
}

impl ConfigArgs {
    fn resolve(self) -> Result<Config, String> {
        Config::resolve(CliOverrides {
            config: self.config,
            socket: self.socket,
            nli_model: self.nli_model,
            embed_model: self.embed_model,
            ort_lib: self.ort_lib,
            device: self.device,
            precision: self.precision,
            variants_dir: self.variants_dir,
            threads: self.threads,
            nli_sessions: self.nli_sessions,
            max_batch: self.max_batch,
            max_wait_ms: self.max_wait_ms,
            nli_max_tokens: self.nli_max_tokens,
            embed_max_tokens: self.embed_max_tokens,
            cache_db: self.cache_db,
            local_llm: self.local_llm,
            nli_backend: self.nli_backend,
            nli_backend_model: self.nli_backend_model,
            nli_backend_timeout_ms: self.nli_backend_timeout_ms,
            nli_backend_retries: self.nli_backend_retries,
            nli_backend_health_ms: self.nli_backend_health_ms,
        })
    }
}

fn socket_path(args: SocketArgs) -> PathBuf {
    args.socket
        .unwrap_or_else(uq_core::paths::default_socket_path)
}

fn main() -> ExitCode {
    // A file-size limit (RLIMIT_FSIZE) reached, like a full disk, is an error on that write
    // (SQLite's "database or disk is full"), not the end of the daemon.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    match run(Cli::parse().command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("uqd: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Serve(args) => {
            let config = args.resolve()?;
            uq_core::paths::check_socket_path(&config.socket)?;
            if server::ping(&config.socket, Duration::from_secs(2)).is_ok() {
                return Err(format!(
                    "another uqd is already serving {}; stop it with `uqd stop`",
                    config.socket.display()
                ));
            }
            let t = Instant::now();
            let engine = Engine::load(&config)?;
            let info = engine.info();
            eprintln!(
                "uqd: loaded NLI {} and embeddings {} on {} in {:.1}s",
                info.nli_model,
                info.embed_model.as_deref().unwrap_or("(none)"),
                info.device,
                t.elapsed().as_secs_f64()
            );
            let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
            eprintln!(
                "uqd: LLM completion cache {}, local LLM {} (loaded on first use)",
                config.cache_db.display(),
                config.local_llm.display()
            );
            Arc::new(server::Server::new(
                Arc::new(engine),
                Arc::new(llm),
                config.socket,
            ))
            .run()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Score {
            db,
            table,
            options,
            resume,
            retry_errors,
            config,
        } => {
            let target = match (&table, resume) {
                (Some(t), None) => uqd::jobs::cli::Target::Table {
                    table: t,
                    options: &options,
                },
                (None, Some(job)) => uqd::jobs::cli::Target::Resume { job, retry_errors },
                _ => return Err("give either TABLE (a new job) or --resume JOB, not both".into()),
            };
            let config = config.resolve()?;
            let engine = Engine::load(&config)?;
            let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
            let (job, status, rows, secs) = uqd::jobs::cli::score(
                &engine,
                &llm,
                &db,
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
        Command::Models {
            which:
                ModelsCommand::Pull {
                    repo,
                    revision,
                    kind,
                    models_dir,
                    onnx_file,
                },
        } => {
            let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
            let kind = match kind.or_else(|| env("UQ_MODEL_KIND")) {
                Some(k) => uqd::models::pull::Kind::parse(&k)?,
                None => uqd::models::pull::Kind::Nli,
            };
            let args = uqd::models::pull::PullArgs {
                repo,
                revision: revision
                    .or_else(|| env("UQ_MODEL_REVISION"))
                    .unwrap_or_else(|| "main".into()),
                kind,
                endpoint: env("HF_ENDPOINT")
                    .unwrap_or_else(|| uqd::models::pull::DEFAULT_ENDPOINT.into()),
                token: env("HF_TOKEN"),
                onnx_file: onnx_file.or_else(|| env("UQ_MODEL_ONNX_FILE")),
                models_dir: match models_dir {
                    Some(d) => std::path::absolute(&d).unwrap_or(d),
                    None => uqd::models::pull::default_models_dir(&env),
                },
            };
            let dir = uqd::models::pull::pull(&args)?;
            println!("{}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Models {
            which:
                ModelsCommand::Optimize {
                    dir,
                    out,
                    python,
                    variants_dir,
                    check,
                },
        } => {
            let config = Config::resolve(CliOverrides {
                variants_dir,
                ..Default::default()
            })?;
            if check {
                let v = uqd::engine::variants::Variants::find(&dir, &config.variants_dir);
                return Ok(match v.dir {
                    Some(d) => {
                        println!("{}", d.display());
                        ExitCode::SUCCESS
                    }
                    None => {
                        eprintln!(
                            "uqd: no up-to-date variants of {}{}",
                            dir.display(),
                            v.note.map(|n| format!(" ({n})")).unwrap_or_default()
                        );
                        ExitCode::FAILURE
                    }
                });
            }
            let exe_dir = std::env::current_exe()
                .ok()
                .and_then(|p| p.canonicalize().ok())
                .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
                .unwrap_or_else(|| PathBuf::from("."));
            let python = python.or_else(|| {
                std::env::var_os("UQ_MODEL_PYTHON")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            });
            let python = uqd::models::optimize::find_python(python, &exe_dir)?;
            eprintln!(
                "uqd: optimizing {} with {}",
                dir.display(),
                python.display()
            );
            let line = uqd::models::optimize::optimize(
                &dir,
                out.as_deref(),
                &config.variants_dir,
                &python,
            )?;
            println!("{line}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { db, out } => {
            let written = uqd::report::report(&db, out.as_deref())?;
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
        Command::Status(args) => {
            let socket = socket_path(args);
            match server::ping(&socket, Duration::from_secs(5)) {
                Ok(info) => {
                    println!("{info}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("uqd: not running ({e})");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Command::Stop(args) => {
            let socket = socket_path(args);
            if server::call(&socket, &Request::Shutdown, Duration::from_secs(10)).is_err() {
                eprintln!("uqd: not running at {}", socket.display());
                return Ok(ExitCode::SUCCESS);
            }
            let t = Instant::now();
            while socket.exists() && t.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Selfcheck {
                    data,
                    samples,
                    clients,
                    limit,
                    scorers,
                    premise,
                    raw_pairs,
                    nli_llm,
                    nli_prompt,
                    config,
                },
        } => {
            let premises =
                bench::parse_premises(premise.as_deref(), uq_core::scorers::Granularity::Sentence)?;
            let judge = bench::Judge::from_flags(nli_llm.as_deref(), nli_prompt.as_deref())?;
            // --precision (or UQ_PRECISION) may list several precisions: one run each.
            let list = config.precision.clone().or_else(|| {
                std::env::var("UQ_PRECISION")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            });
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
            let mut runs = Vec::new();
            for p in precisions {
                let (_, engine, llm) = bench_setup(
                    ConfigArgs {
                        precision: p,
                        ..config.clone()
                    },
                    samples,
                )?;
                let args = bench::SelfcheckArgs {
                    data: &data,
                    samples,
                    clients: clients.unwrap_or(engine.device_defaults().bench_clients),
                    limit,
                    scorers: scorers.as_deref(),
                    premises: premises.clone(),
                    raw_pairs,
                    judge: judge.clone(),
                };
                runs.push(bench::selfcheck(&engine, &llm, &args)?);
            }
            if runs.len() > 1 {
                println!("{}", bench::compare_precisions(&runs));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Load {
                    clients,
                    seconds,
                    processes,
                    data,
                    samples,
                    socket,
                },
        } => {
            let socket = socket_path(SocketArgs { socket });
            bench::load(&bench::LoadArgs {
                socket: &socket,
                data: &data,
                clients,
                seconds,
                samples,
                processes,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::LoadWorker {
                    socket,
                    data,
                    threads,
                    seconds,
                    samples,
                    seed,
                },
        } => {
            let args = bench::LoadArgs {
                socket: &socket,
                data: &data,
                clients: threads,
                seconds,
                samples,
                processes: 1,
            };
            bench::load_worker(&args, threads, seed)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Soak {
                    minutes,
                    data,
                    clients,
                    passages,
                    samples,
                    restart_every,
                    sample_every,
                    config,
                },
        } => {
            let config = config.resolve()?;
            bench::soak(
                &config,
                &bench::SoakArgs {
                    data: &data,
                    minutes,
                    clients,
                    passages,
                    samples,
                    restart_every,
                    sample_every,
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Table {
                    data,
                    samples,
                    limit,
                    options,
                    concurrency,
                    raw_pairs,
                    config,
                },
        } => {
            let (_, engine, llm) = bench_setup(config, samples)?;
            bench::table(
                &engine,
                &llm,
                &bench::TableArgs {
                    data: &data,
                    samples,
                    limit,
                    options: &options,
                    concurrency,
                    raw_pairs,
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Claims {
                    data,
                    samples,
                    clients,
                    limit,
                    premise,
                    raw_pairs,
                    uad,
                    sample_units,
                    scorers,
                    nli_llm,
                    nli_prompt,
                    config,
                },
        } => {
            let premises =
                bench::parse_premises(premise.as_deref(), uq_core::scorers::Granularity::Claim)?;
            let judge = bench::Judge::from_flags(nli_llm.as_deref(), nli_prompt.as_deref())?;
            let (_, engine, llm) = bench_setup(config, samples)?;
            let args = bench::ClaimsArgs {
                data: &data,
                samples,
                clients: clients.unwrap_or(engine.device_defaults().bench_clients),
                limit,
                premises,
                raw_pairs,
                sample_units: sample_units.map(|_| bench::SampleUnits::Sentences),
                uad,
                scorers: scorers.as_deref(),
                judge,
            };
            bench::claims(&engine, &llm, &args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Coverage {
                    data,
                    limit,
                    config,
                },
        } => {
            let (_, engine, llm) = bench_setup(config, 1)?;
            bench::coverage_bench(&engine, &llm, &data, limit)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            which:
                BenchCommand::Calibration {
                    data,
                    samples,
                    clients,
                    limit,
                    config,
                },
        } => {
            let [a, b] = data.as_slice() else {
                return Err("--data takes two files".into());
            };
            let (_, engine, llm) = bench_setup(config, samples)?;
            let args = bench::CalibrationArgs {
                data: [a.as_path(), b.as_path()],
                samples,
                clients: clients.unwrap_or(engine.device_defaults().bench_clients),
                limit,
            };
            bench::calibration(&engine, &llm, &args)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What every benchmark needs: the resolved config, the loaded models and the LLM service.
fn bench_setup(config: ConfigArgs, samples: usize) -> Result<(Config, Engine, LlmService), String> {
    if samples == 0 {
        return Err("--samples must be at least 1".into());
    }
    let config = config.resolve()?;
    let engine = Engine::load(&config)?;
    let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
    Ok((config, engine, llm))
}
