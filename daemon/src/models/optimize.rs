//! `uqd models optimize DIR`: runs ONNX Runtime's transformer optimizer and dynamic quantizer
//! (Python, `optimize.py` embedded in the binary) on a model directory, writing its variants.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::check_model_dir;
use crate::engine::variants::{content_key, hash_hex, keyed_dir, MANIFEST};

const SCRIPT: &str = include_str!("optimize.py");

/// The Python that has `onnxruntime`, `onnx` and `sympy`: `python` (`--python` /
/// UQ_MODEL_PYTHON), else the private environment `make setup` makes in `.cache/model-tools`
/// beside `dist/`, else (a pip install: uqd in `<venv>/lib/pythonX.Y/site-packages/uqlite/`)
/// the `python3` of that environment or of `$VIRTUAL_ENV`, when it has the three
/// (`pip install 'uqlite[optimize]'`).
pub fn find_python(python: Option<PathBuf>, exe_dir: &Path) -> Result<PathBuf, String> {
    if let Some(p) = python {
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "--python / UQ_MODEL_PYTHON {} does not exist",
                p.display()
            ))
        };
    }
    let default = exe_dir.join("../.cache/model-tools/bin/python3");
    if default.is_file() {
        return Ok(default);
    }
    let venvs = pip_venvs(exe_dir);
    if let Some(py) = venvs.iter().find(|p| has_model_tools(p)) {
        return Ok(py.clone());
    }
    if let Some(py) = venvs.first() {
        return Err(format!(
            "{} lacks ONNX Runtime's model tools (onnx, sympy): pip install 'uqlite[optimize]' in that \
             environment, or pass --python (UQ_MODEL_PYTHON) naming a python3 that has them",
            py.display()
        ));
    }
    Err(format!(
        "no Python with ONNX Runtime's model tools at {}: run `make setup` (it makes that environment), or \
         pass --python (UQ_MODEL_PYTHON) naming a python3 with `pip install onnxruntime==1.31.1 onnx sympy`",
        default.display()
    ))
}

/// The `python3` of the environment uqd was pip-installed into (`<venv>/lib/pythonX.Y/
/// site-packages/uqlite/uqd` → `<venv>/bin/python3`), then `$VIRTUAL_ENV/bin/python3`.
fn pip_venvs(exe_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let site = exe_dir.parent().filter(|p| {
        p.file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages")
    });
    if let Some(venv) = site.and_then(|s| s.parent()?.parent()?.parent()) {
        out.push(venv.join("bin/python3"));
    }
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(v).join("bin/python3"));
    }
    out.retain(|p| p.is_file());
    out
}

/// Whether `python` imports onnxruntime, onnx and sympy.
fn has_model_tools(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import onnxruntime, onnx, sympy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Writes the variants of the model in `model_dir` into `out` (default: its keyed directory
/// under `variants_dir`). Returns the optimizer's JSON line.
pub fn optimize(
    model_dir: &Path,
    out: Option<&Path>,
    variants_dir: &Path,
    python: &Path,
) -> Result<String, String> {
    check_model_dir(model_dir, true)?;
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| keyed_dir(model_dir, variants_dir));
    std::fs::create_dir_all(&out)
        .map_err(|e| format!("cannot create the output directory {}: {e}", out.display()))?;
    let script = out.join(".optimize.py");
    std::fs::write(&script, SCRIPT)
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let run = Command::new(python)
        .arg(&script)
        .arg(model_dir)
        .arg(&out)
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()));
    let _ = std::fs::remove_file(&script);
    let run = run?;
    let stdout = String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let ours: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("uqd models optimize:"))
            .collect();
        let tail: Vec<&str> = stderr
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(if ours.is_empty() {
            format!(
                "optimizing {} failed ({}): {}",
                model_dir.display(),
                run.status,
                tail.join("\n")
            )
        } else {
            ours.join("\n")
                .trim_start_matches("uqd models optimize: ")
                .to_string()
        });
    }
    // Warnings of ours (e.g. no attention fused) go on to the user.
    for l in String::from_utf8_lossy(&run.stderr)
        .lines()
        .filter(|l| l.starts_with("uqd models optimize:"))
    {
        eprintln!("{l}");
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "the optimizer printed no result for {}",
                model_dir.display()
            )
        })?;
    record_hash(model_dir, &out)?;
    Ok(line)
}

/// Adds `model.onnx`'s content hash (`source_xxh3`) to the `variants.json` just written: the
/// variants are found by content, wherever the model directory is reached from.
fn record_hash(model_dir: &Path, out: &Path) -> Result<(), String> {
    let path = out.join(MANIFEST);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut m: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    let (size, hash) = content_key(&model_dir.join("model.onnx"))?;
    m["source_size"] = size.into();
    m["source_xxh3"] = hash_hex(hash).into();
    let tmp = out.join(".variants.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&m).unwrap_or_default())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
