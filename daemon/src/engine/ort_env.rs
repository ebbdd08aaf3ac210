//! The process-wide ONNX Runtime environment (one per process) and session construction.

use std::path::{Path, PathBuf};

use once_cell::sync::OnceCell;
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;

use crate::config::Device;

static ENV: OnceCell<(PathBuf, Environment)> = OnceCell::new();

/// Loads ONNX Runtime from `lib` and creates the environment, once per process. A later call with
/// the same library returns the existing environment; with another library it is an error.
pub fn init(lib: &Path) -> Result<Environment, String> {
    let (path, env) = ENV.get_or_try_init(|| -> Result<(PathBuf, Environment), String> {
        if !lib.is_file() {
            return Err(format!(
                "ONNX Runtime library {} not found: run `make setup` (it puts libonnxruntime.so.1.31.1 in dist/lib/) \
                 or set UQ_ORT_LIB / --ort-lib to the library's path",
                lib.display()
            ));
        }
        let builder = ort::init_from(lib).map_err(|e| {
            format!(
                "cannot load ONNX Runtime from {}: {e} (use libonnxruntime.so.1.31.1 from the PyPI onnxruntime wheel: \
                 `make setup`, or set UQ_ORT_LIB)",
                lib.display()
            )
        })?;
        let env = builder
            .with_name("uqd")
            .with_telemetry(false)
            .build()
            .map_err(|e| format!("cannot create the ONNX Runtime environment: {e}"))?;
        Ok((lib.to_path_buf(), env))
    })?;
    if path != lib {
        let same = match (path.canonicalize(), lib.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same {
            return Err(format!(
                "ONNX Runtime is already loaded from {} in this process; cannot load {} as well",
                path.display(),
                lib.display()
            ));
        }
    }
    Ok(env.clone())
}

/// A session, the device it actually runs on (`Cpu` or `Cuda`) and, when CUDA was asked for
/// (`Auto` or `Cuda`) but not used, why.
pub struct LoadedSession {
    pub session: Session,
    pub device: Device,
    pub cuda_not_used: Option<String>,
}

/// Why the CUDA execution provider cannot be used with the loaded ONNX Runtime, or `None` when
/// the library has it (whether it then loads is known only when a session is built).
pub fn cuda_missing(lib: &Path) -> Option<String> {
    use ort::ep::ExecutionProvider;
    match ort::ep::CUDA::is_available() {
        Ok(true) => None,
        Ok(false) => Some(format!(
            "the ONNX Runtime library {} has no CUDA execution provider (it is the CPU build): on a machine where \
             nvidia-smi works, `make setup` fetches onnxruntime-gpu and the CUDA libraries; or set UQ_ORT_LIB to \
             the libonnxruntime.so of onnxruntime-gpu",
            lib.display()
        )),
        Err(e) => Some(format!("cannot list ONNX Runtime's execution providers: {e}")),
    }
}

/// Builds a session for `model` with `threads` intra-op threads. `Device::Cuda` and `Device::Auto`
/// try the CUDA execution provider and fall back to the CPU, saying why in `cuda_not_used`.
pub fn build_session(
    env: &Environment,
    model: &Path,
    threads: usize,
    device: Device,
) -> Result<LoadedSession, String> {
    let err = |e: String| {
        format!(
            "cannot create an ONNX Runtime session for {}: {e}",
            model.display()
        )
    };
    let base = || -> Result<ort::session::builder::SessionBuilder, String> {
        Session::builder(env)
            .map_err(|e| err(e.to_string()))?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(|e| err(e.to_string()))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| err(e.to_string()))?
            .with_inter_threads(1)
            .map_err(|e| err(e.to_string()))?
            // No busy-waiting between batches: the daemon shares its cores with its clients.
            .with_intra_op_spinning(false)
            .map_err(|e| err(e.to_string()))
    };
    let commit = |mut b: ort::session::builder::SessionBuilder| -> Result<Session, String> {
        b.commit_from_file(model)
            .map_err(|e| format!("cannot load ONNX model {}: {e}", model.display()))
    };

    let mut cuda_not_used = None;
    if device != Device::Cpu {
        let b = base()?;
        let cuda = ort::ep::CUDA::default().build().error_on_failure();
        let why = match b.with_execution_providers([cuda]) {
            Ok(b) => match commit(b) {
                Ok(session) => {
                    return Ok(LoadedSession {
                        session,
                        device: Device::Cuda,
                        cuda_not_used: None,
                    })
                }
                Err(e) => e,
            },
            Err(e) => format!("the CUDA execution provider did not load: {}", e.message()),
        };
        eprintln!("uqd: CUDA not used ({why}); running on the CPU");
        cuda_not_used = Some(why);
    }
    let session = commit(base()?)?;
    Ok(LoadedSession {
        session,
        device: Device::Cpu,
        cuda_not_used,
    })
}
