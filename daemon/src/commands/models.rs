//! `uqd models pull|optimize`: model preparation.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use crate::config::settings::ModelsVars;
use crate::config::{CliOverrides, Config};
use crate::engine::variants;
use crate::models::{optimize, pull};

#[derive(Subcommand)]
pub enum ModelsCommand {
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

pub fn run(which: ModelsCommand) -> Result<ExitCode, String> {
    match which {
        ModelsCommand::Pull {
            repo,
            revision,
            kind,
            models_dir,
            onnx_file,
        } => pull_model(repo, revision, kind, models_dir, onnx_file),
        ModelsCommand::Optimize {
            dir,
            out,
            python,
            variants_dir,
            check,
        } => {
            let config = Config::resolve(CliOverrides {
                variants_dir,
                ..Default::default()
            })?;
            if check {
                return Ok(check_variants(&dir, &config.variants_dir));
            }
            optimize_model(&dir, out.as_deref(), python, &config.variants_dir)
        }
    }
}

/// `models pull`: each flag, else its variable, else its default.
fn pull_model(
    repo: String,
    revision: Option<String>,
    kind: Option<String>,
    models_dir: Option<PathBuf>,
    onnx_file: Option<String>,
) -> Result<ExitCode, String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let vars = ModelsVars::read(&env)?;
    let kind = match kind.or(vars.kind) {
        Some(k) => pull::Kind::parse(&k)?,
        None => pull::Kind::Nli,
    };
    let args = pull::PullArgs {
        repo,
        revision: revision.or(vars.revision).unwrap_or_else(|| "main".into()),
        kind,
        endpoint: env("HF_ENDPOINT").unwrap_or_else(|| pull::DEFAULT_ENDPOINT.into()),
        token: env("HF_TOKEN"),
        onnx_file: onnx_file.or(vars.onnx_file),
        models_dir: match models_dir.or(vars.models_dir) {
            Some(d) => std::path::absolute(&d).unwrap_or(d),
            None => pull::default_models_dir(&env),
        },
    };
    let dir = pull::pull(&args)?;
    println!("{}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `models optimize --check`: where up-to-date variants of `dir` are.
fn check_variants(dir: &Path, variants_dir: &Path) -> ExitCode {
    let v = variants::Variants::find(dir, variants_dir);
    match v.dir {
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
    }
}

fn optimize_model(
    dir: &Path,
    out: Option<&Path>,
    python: Option<PathBuf>,
    variants_dir: &Path,
) -> Result<ExitCode, String> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let python = python.or(ModelsVars::read(&env)?.python);
    let python = optimize::find_python(python, &exe_dir)?;
    eprintln!(
        "uqd: optimizing {} with {}",
        dir.display(),
        python.display()
    );
    let line = optimize::optimize(dir, out, variants_dir, &python)?;
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}
