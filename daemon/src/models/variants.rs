//! Where the optimized variants of a model live and which file a precision picks.
//!
//! `uqd models optimize DIR` writes `model_opt.onnx` (fp32, fused), `model_opt_int8.onnx` and
//! `model_opt_fp16.onnx` plus `variants.json` either into `--out` (e.g. DIR itself) or into
//! `<variants dir>/<key>`, where the key names the model's `model.onnx` by its canonical path (so
//! a directory of symlinks to the same weights finds the same variants). The lookup tries DIR,
//! then the keyed directory; variants whose `variants.json` records another size or mtime of
//! `model.onnx` are stale and ignored (with a note).

use std::path::{Path, PathBuf};

use crate::config::{Device, Precision};

/// The variant file names, by precision.
pub const FP32_FILE: &str = "model_opt.onnx";
pub const INT8_FILE: &str = "model_opt_int8.onnx";
pub const FP16_FILE: &str = "model_opt_fp16.onnx";
pub const MANIFEST: &str = "variants.json";

/// The directory under `variants_dir` for the model in `model_dir`:
/// `<directory name>-<16 hex digits of the hash of model.onnx's canonical path>`.
pub fn keyed_dir(model_dir: &Path, variants_dir: &Path) -> PathBuf {
    let onnx = model_dir.join("model.onnx");
    let canon = onnx.canonicalize().unwrap_or(onnx);
    let name = canon
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "model".into());
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let h = xxhash_rust::xxh3::xxh3_64(canon.as_os_str().as_encoded_bytes());
    variants_dir.join(format!("{name}-{h:016x}"))
}

/// The variants found for one model.
#[derive(Debug, Clone, Default)]
pub struct Variants {
    /// The directory holding them (`None`: none found).
    pub dir: Option<PathBuf>,
    /// Why variants that exist were not used (stale).
    pub note: Option<String>,
}

impl Variants {
    /// Looks in `model_dir`, then in its keyed directory under `variants_dir`.
    pub fn find(model_dir: &Path, variants_dir: &Path) -> Variants {
        let mut note = None;
        for dir in [model_dir.to_path_buf(), keyed_dir(model_dir, variants_dir)] {
            if !dir.join(MANIFEST).is_file() {
                continue;
            }
            match fresh(&dir, &model_dir.join("model.onnx")) {
                Ok(()) => {
                    return Variants {
                        dir: Some(dir),
                        note,
                    }
                }
                Err(e) => note = Some(e),
            }
        }
        Variants { dir: None, note }
    }

    fn file(&self, name: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(name))
            .filter(|p| p.is_file())
    }

    /// The file `precision` runs on `device` (`Cpu` or `Cuda`) and the precision it is.
    /// An explicit precision whose variant is missing is an error naming the fix.
    pub fn pick(
        &self,
        model_dir: &Path,
        variants_dir: &Path,
        precision: Precision,
        device: Device,
    ) -> Result<(PathBuf, Precision), String> {
        let original = model_dir.join("model.onnx");
        let fp32 = || self.file(FP32_FILE).map(|f| (f, Precision::Fp32));
        let missing = |p: Precision, name: &str| {
            let stale = self
                .note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!(
                "--precision {p}: no {name} for the NLI model {} (looked in that directory and in {}){stale}: run \
                 `uqd models optimize {}` (make setup does it for the default model), or use --precision auto",
                model_dir.display(),
                keyed_dir(model_dir, variants_dir).display(),
                model_dir.display()
            )
        };
        Ok(match precision {
            Precision::Original => (original, Precision::Original),
            Precision::Fp32 => fp32().unwrap_or((original, Precision::Original)),
            Precision::Int8 => (
                self.file(INT8_FILE)
                    .ok_or_else(|| missing(precision, INT8_FILE))?,
                Precision::Int8,
            ),
            Precision::Fp16 => (
                self.file(FP16_FILE)
                    .ok_or_else(|| missing(precision, FP16_FILE))?,
                Precision::Fp16,
            ),
            Precision::Auto => {
                let preferred = match device {
                    Device::Cuda => self.file(FP16_FILE).map(|f| (f, Precision::Fp16)),
                    _ => self.file(INT8_FILE).map(|f| (f, Precision::Int8)),
                };
                preferred
                    .or_else(fp32)
                    .unwrap_or((original, Precision::Original))
            }
        })
    }
}

/// Whether the variants in `dir` were made from `model` as it is now (size and mtime).
fn fresh(dir: &Path, model: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join(MANIFEST))
        .map_err(|e| format!("cannot read {}: {e}", dir.join(MANIFEST).display()))?;
    let m: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", dir.join(MANIFEST).display()))?;
    let meta =
        std::fs::metadata(model).map_err(|e| format!("cannot stat {}: {e}", model.display()))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let same = m["source_size"].as_u64() == Some(meta.len()) && m["source_mtime"].as_u64() == mtime;
    if same {
        Ok(())
    } else {
        Err(format!(
            "the variants in {} were made from another model.onnx (size or mtime differ): run `uqd models \
             optimize` again",
            dir.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("uqd-variants-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn manifest_for(model: &Path) -> String {
        let meta = std::fs::metadata(model).unwrap();
        let mtime = meta
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        serde_json::json!({"source_size": meta.len(), "source_mtime": mtime}).to_string()
    }

    #[test]
    fn pick_by_precision_and_device() {
        let root = tmp("pick");
        let model = root.join("m");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(model.join("model.onnx"), b"weights").unwrap();
        let vdir = root.join("variants");
        // Nothing optimized: auto and fp32 run the original; int8/fp16 are errors naming the fix.
        let v = Variants::find(&model, &vdir);
        assert!(v.dir.is_none());
        let orig = (model.join("model.onnx"), Precision::Original);
        assert_eq!(
            v.pick(&model, &vdir, Precision::Auto, Device::Cpu).unwrap(),
            orig
        );
        assert_eq!(
            v.pick(&model, &vdir, Precision::Fp32, Device::Cpu).unwrap(),
            orig
        );
        let e = v
            .pick(&model, &vdir, Precision::Int8, Device::Cpu)
            .unwrap_err();
        assert!(
            e.contains("--precision int8") && e.contains("uqd models optimize"),
            "{e}"
        );
        // Variants in the keyed directory (a symlinked directory finds the same ones).
        let k = keyed_dir(&model, &vdir);
        std::fs::create_dir_all(&k).unwrap();
        for f in [FP32_FILE, INT8_FILE, FP16_FILE] {
            std::fs::write(k.join(f), b"x").unwrap();
        }
        std::fs::write(k.join(MANIFEST), manifest_for(&model.join("model.onnx"))).unwrap();
        let link = root.join("link");
        std::fs::create_dir_all(&link).unwrap();
        std::os::unix::fs::symlink(model.join("model.onnx"), link.join("model.onnx")).unwrap();
        assert_eq!(keyed_dir(&link, &vdir), k);
        let v = Variants::find(&model, &vdir);
        assert_eq!(v.dir.as_deref(), Some(k.as_path()));
        assert_eq!(
            v.pick(&model, &vdir, Precision::Auto, Device::Cpu).unwrap(),
            (k.join(INT8_FILE), Precision::Int8)
        );
        assert_eq!(
            v.pick(&model, &vdir, Precision::Auto, Device::Cuda)
                .unwrap(),
            (k.join(FP16_FILE), Precision::Fp16)
        );
        assert_eq!(
            v.pick(&model, &vdir, Precision::Fp32, Device::Cpu).unwrap(),
            (k.join(FP32_FILE), Precision::Fp32)
        );
        assert_eq!(
            v.pick(&model, &vdir, Precision::Original, Device::Cpu)
                .unwrap(),
            orig
        );
        // Without int8, auto on the CPU runs the optimized fp32.
        std::fs::remove_file(k.join(INT8_FILE)).unwrap();
        assert_eq!(
            v.pick(&model, &vdir, Precision::Auto, Device::Cpu).unwrap(),
            (k.join(FP32_FILE), Precision::Fp32)
        );
        // A changed model.onnx makes them stale: ignored, with a note in the error.
        std::fs::write(model.join("model.onnx"), b"other weights").unwrap();
        let v = Variants::find(&model, &vdir);
        assert!(v.dir.is_none());
        assert_eq!(
            v.pick(&model, &vdir, Precision::Auto, Device::Cpu)
                .unwrap()
                .1,
            Precision::Original
        );
        let e = v
            .pick(&model, &vdir, Precision::Fp16, Device::Cuda)
            .unwrap_err();
        assert!(
            e.contains("another model.onnx") && e.contains("model_opt_fp16.onnx"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
