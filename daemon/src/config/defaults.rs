//! The defaults of the settings computed where `uqd` runs: paths beside the executable, the
//! completion cache under the user's cache directory, the cores.

use std::path::{Path, PathBuf};

use super::device::Device;

/// File name of the ONNX Runtime shared library that `make setup` puts in `dist/lib/`.
pub const ORT_LIB_NAME: &str = "libonnxruntime.so.1.31.1";
/// File name of the completion cache under the cache directory (`…/uqlite/completions.sqlite`).
pub const CACHE_DB_NAME: &str = "completions.sqlite";

/// The computed defaults of the settings not given (`computed` and `maybe` in [`settings`]).
pub struct Defaults<'a> {
    /// The `uqd` executable's directory.
    pub exe_dir: &'a Path,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The device given, if any.
    pub device: Option<Device>,
}

impl Defaults<'_> {
    fn models(&self) -> PathBuf {
        self.exe_dir.join("models")
    }

    pub fn socket(&self) -> PathBuf {
        uq_core::paths::default_socket_path()
    }

    pub fn nli_model(&self) -> PathBuf {
        self.models().join("nli")
    }

    pub fn embed_model(&self) -> Option<PathBuf> {
        let d = self.models().join("embed");
        d.is_dir().then_some(d)
    }

    pub fn variants_dir(&self) -> PathBuf {
        self.models().join("variants")
    }

    pub fn cache_db(&self) -> PathBuf {
        default_cache_db(self.env)
    }

    pub fn local_llm(&self) -> PathBuf {
        self.models()
            .join("smollm2")
            .join(uq_llm::local::SMOLLM2_FILE)
    }

    /// The CUDA build that `make setup` fetches on a GPU machine, unless the device is cpu.
    pub fn ort_lib(&self) -> PathBuf {
        let lib = self.exe_dir.join("lib");
        let gpu = lib.join("gpu").join(ORT_LIB_NAME);
        if self.device != Some(Device::Cpu) && gpu.is_file() {
            gpu
        } else {
            lib.join(ORT_LIB_NAME)
        }
    }

    pub fn threads(&self) -> usize {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    }
}

/// `$XDG_CACHE_HOME/uqlite/completions.sqlite`, else `$HOME/.cache/uqlite/completions.sqlite`,
/// else (no home) `/tmp/uqlite-<uid>/completions.sqlite`. Relative XDG/HOME values are ignored,
/// as the XDG spec asks.
fn default_cache_db(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let abs = |k: &str| env(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(x) = abs("XDG_CACHE_HOME") {
        return x.join("uqlite").join(CACHE_DB_NAME);
    }
    if let Some(h) = abs("HOME") {
        return h.join(".cache").join("uqlite").join(CACHE_DB_NAME);
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/tmp/uqlite-{uid}")).join(CACHE_DB_NAME)
}
