//! The process-wide ONNX Runtime environment (one per process) and session construction.

use std::path::{Path, PathBuf};

use once_cell::sync::OnceCell;
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;

use crate::config::Device;

static ENV: OnceCell<(PathBuf, Environment)> = OnceCell::new();
/// What went wrong preloading the CUDA libraries beside the ONNX Runtime library, if anything.
static PRELOAD_NOTE: OnceCell<Option<String>> = OnceCell::new();

/// The CUDA libraries `make setup` puts in `dist/lib/cuda/` on a GPU machine, in load order
/// (each after what it needs); other `lib*.so*` files there are loaded after them.
const CUDA_LIBS: &[&str] = &[
    "libcudart.so.13",
    "libcublasLt.so.13",
    "libcublas.so.13",
    "libcurand.so.10",
    "libcufft.so.12",
    "libcudnn_graph.so.9",
    "libcudnn_ops.so.9",
    "libcudnn.so.9",
];

/// Loads every shared library of `dir` with RTLD_GLOBAL, so that ONNX Runtime's CUDA provider
/// finds them by name without LD_LIBRARY_PATH. Libraries that fail are retried after the others
/// (dependency order); what still fails is returned.
fn preload_cuda(dir: &Path) -> Option<String> {
    let mut files: Vec<PathBuf> = CUDA_LIBS
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .collect();
    let mut rest: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".so"))
                && !files.contains(p)
        })
        .collect();
    rest.sort();
    files.extend(rest);
    let mut failed: Vec<(PathBuf, String)> = Vec::new();
    for _pass in 0..3 {
        failed.clear();
        for f in &files {
            let c = match std::ffi::CString::new(f.as_os_str().as_encoded_bytes()) {
                Ok(c) => c,
                Err(_) => continue,
            };
            // SAFETY: dlopen with a valid NUL-terminated path; the handle is kept for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if h.is_null() {
                // SAFETY: dlerror returns a thread-local message or null.
                let e = unsafe { libc::dlerror() };
                let msg = if e.is_null() {
                    "unknown error".to_string()
                } else {
                    unsafe { std::ffi::CStr::from_ptr(e) }
                        .to_string_lossy()
                        .to_string()
                };
                failed.push((f.clone(), msg));
            }
        }
        if failed.is_empty() {
            return None;
        }
        files = failed.iter().map(|(f, _)| f.clone()).collect();
    }
    Some(format!(
        "cannot load the CUDA libraries of {}: {}",
        dir.display(),
        failed
            .iter()
            .map(|(_, e)| e.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

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
        // A `cuda/` directory beside the library's (dist/lib/cuda for dist/lib/gpu/...): preload it.
        if let Some(cuda) = lib.parent().and_then(Path::parent).map(|d| d.join("cuda")).filter(|d| d.is_dir()) {
            let _ = PRELOAD_NOTE.set(preload_cuda(&cuda));
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

/// Why the CUDA libraries beside the ONNX Runtime library did not all load, if they did not.
pub fn preload_note() -> Option<String> {
    PRELOAD_NOTE.get().cloned().flatten()
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
            .map_err(|e| {
                let size = std::fs::metadata(model).map_or(0, |m| m.len());
                format!(
                    "cannot load ONNX model {} ({size} bytes): {e}. The file is damaged or incomplete \
                     (an interrupted download or copy): fetch it again (make setup, or the model's README), \
                     or point --nli-model/UQ_NLI_MODEL (--embed-model/UQ_EMBED_MODEL) at a complete model directory",
                    model.display()
                )
            })
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
        let why = match preload_note() {
            Some(n) => format!("{why} ({n})"),
            None => why,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_preload_failure_names_the_library() {
        let d = std::env::temp_dir().join(format!("uqd-preload-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        // Not a shared object: dlopen refuses it, and the note says which file and why.
        std::fs::write(d.join("libcudart.so.13"), b"not an ELF file").unwrap();
        let note = preload_cuda(&d).expect("a note");
        assert!(
            note.contains("libcudart.so.13") && note.contains(&d.display().to_string()),
            "{note}"
        );
        // An empty directory loads nothing and fails nothing.
        std::fs::remove_file(d.join("libcudart.so.13")).unwrap();
        assert_eq!(preload_cuda(&d), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
