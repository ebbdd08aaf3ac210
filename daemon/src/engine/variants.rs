//! Where the optimized variants of a model live and which file a precision picks.
//! In `engine/` because loading the NLI model needs it; `models/` (which writes them) uses it.
//!
//! `uqd models optimize DIR` writes `model_opt.onnx` (fp32, fused), `model_opt_int8.onnx` and
//! `model_opt_fp16.onnx` plus `variants.json` either into `--out` (e.g. DIR itself) or into
//! `<variants dir>/<key>`, where the key names the model's `model.onnx` by its content (size and
//! xxh3 hash), so a moved, copied or re-linked model directory finds the same variants. The
//! lookup tries DIR, then the keyed directory; variants whose `variants.json` records another
//! size or hash of `model.onnx` are stale and ignored (with a note). When `--precision auto`
//! cannot run the variant it prefers, [`Variants::auto_note`] says why and names the fix.

use std::path::{Path, PathBuf};

use crate::config::{Device, Precision};

/// The variant file names, by precision.
pub const FP32_FILE: &str = "model_opt.onnx";
pub const INT8_FILE: &str = "model_opt_int8.onnx";
pub const FP16_FILE: &str = "model_opt_fp16.onnx";
pub const MANIFEST: &str = "variants.json";

/// `model.onnx`'s size and xxh3-64 hash of its bytes.
pub fn content_key(model: &Path) -> Result<(u64, u64), String> {
    use std::io::Read;
    let mut f =
        std::fs::File::open(model).map_err(|e| format!("cannot read {}: {e}", model.display()))?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", model.display()))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((size, h.digest()))
}

/// The directory under `variants_dir` for the model in `model_dir`: `onnx-<16 hex digits of
/// the hash>-<size>` of its `model.onnx` (`onnx-unreadable` when it cannot be read).
pub fn keyed_dir(model_dir: &Path, variants_dir: &Path) -> PathBuf {
    keyed_dir_of(
        content_key(&model_dir.join("model.onnx")).ok(),
        variants_dir,
    )
}

fn keyed_dir_of(key: Option<(u64, u64)>, variants_dir: &Path) -> PathBuf {
    match key {
        Some((size, hash)) => variants_dir.join(format!("onnx-{hash:016x}-{size}")),
        None => variants_dir.join("onnx-unreadable"),
    }
}

/// The hash as `variants.json` records it (`source_xxh3`).
pub fn hash_hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// Whether the variant `file` runs fused attention, as its directory's `variants.json` records
/// (`attention_fused`); `None` for a file that is not a variant (the original `model.onnx`, whose
/// fusions ONNX Runtime decides when it loads it) or a manifest without the field.
pub fn attention_fused(file: &Path) -> Option<bool> {
    let name = file.file_name()?.to_str()?;
    if ![FP32_FILE, INT8_FILE, FP16_FILE].contains(&name) {
        return None;
    }
    let text = std::fs::read_to_string(file.parent()?.join(MANIFEST)).ok()?;
    serde_json::from_str::<serde_json::Value>(&text).ok()?["attention_fused"].as_bool()
}

/// The variants found for one model.
#[derive(Debug, Clone, Default)]
pub struct Variants {
    /// The directory holding them (`None`: none found).
    pub dir: Option<PathBuf>,
    /// Why variants that exist were not used (stale).
    pub note: Option<String>,
    /// The model's keyed directory under the variants directory (looked in second).
    pub keyed: PathBuf,
}

impl Variants {
    /// Looks in `model_dir`, then in its keyed directory under `variants_dir`.
    pub fn find(model_dir: &Path, variants_dir: &Path) -> Variants {
        let model = model_dir.join("model.onnx");
        let key = content_key(&model).ok();
        let keyed = keyed_dir_of(key, variants_dir);
        let mut note = None;
        for dir in [model_dir.to_path_buf(), keyed.clone()] {
            if !dir.join(MANIFEST).is_file() {
                continue;
            }
            match fresh(&dir, &model, key) {
                Ok(()) => {
                    return Variants {
                        dir: Some(dir),
                        note,
                        keyed,
                    }
                }
                Err(e) => note = Some(e),
            }
        }
        Variants {
            dir: None,
            note,
            keyed,
        }
    }

    /// Why `--precision auto` does not run the variant it prefers on `device` (int8 on the CPU,
    /// fp16 on CUDA), naming the fix; `None` when it does.
    pub fn auto_note(&self, model_dir: &Path, device: Device) -> Option<String> {
        let (name, precision) = match device {
            Device::Cuda => (FP16_FILE, "fp16"),
            _ => (INT8_FILE, "int8"),
        };
        if self.file(name).is_some() {
            return None;
        }
        let runs = if self.file(FP32_FILE).is_some() {
            "the optimized fp32 graph"
        } else {
            "the unoptimized model.onnx"
        };
        let why = match (&self.dir, &self.note) {
            (Some(d), _) => format!("{} has no {name}", d.display()),
            (None, Some(n)) => n.clone(),
            (None, None) => format!(
                "no variants of it were found (looked in {} and in {})",
                model_dir.display(),
                self.keyed.display()
            ),
        };
        Some(format!(
            "--precision auto runs {runs} of {}, not {precision} ({why}), and may be several times slower: \
             run `uqd models optimize {}` (make setup does it for the default model)",
            model_dir.display(),
            model_dir.display()
        ))
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
                self.keyed.display(),
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

/// Whether the variants in `dir` were made from `model` as it is now: its size and content hash
/// (`key`), or, in a `variants.json` written before hashes were recorded, its size and mtime.
fn fresh(dir: &Path, model: &Path, key: Option<(u64, u64)>) -> Result<(), String> {
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
    let same = match m["source_xxh3"].as_str() {
        Some(h) => key.is_some_and(|(size, hash)| {
            m["source_size"].as_u64() == Some(size) && h == hash_hex(hash)
        }),
        None => {
            m["source_size"].as_u64() == Some(meta.len()) && m["source_mtime"].as_u64() == mtime
        }
    };
    if same {
        Ok(())
    } else {
        Err(format!(
            "the variants in {} were made from another model.onnx (size or content differ): run `uqd models \
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
        let (size, hash) = content_key(model).unwrap();
        assert_eq!(size, meta.len());
        serde_json::json!({"source_size": size, "source_mtime": mtime, "source_xxh3": hash_hex(hash)})
            .to_string()
    }

    #[test]
    fn attention_fused_comes_from_the_variants_manifest() {
        let d = tmp("fused");
        std::fs::write(d.join(MANIFEST), r#"{"attention_fused": true}"#).unwrap();
        assert_eq!(attention_fused(&d.join(FP32_FILE)), Some(true));
        assert_eq!(attention_fused(&d.join(FP16_FILE)), Some(true));
        // The original model.onnx is not a variant; nor is a file without a manifest.
        assert_eq!(attention_fused(&d.join("model.onnx")), None);
        std::fs::write(d.join(MANIFEST), r#"{"attention_fused": false}"#).unwrap();
        assert_eq!(attention_fused(&d.join(INT8_FILE)), Some(false));
        assert_eq!(attention_fused(&tmp("none").join(INT8_FILE)), None);
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
        let note = v.auto_note(&model, Device::Cpu).unwrap();
        assert!(
            note.contains("runs the unoptimized model.onnx")
                && note.contains("not int8")
                && note.contains("uqd models optimize"),
            "{note}"
        );
        let orig = (model.join("model.onnx"), Precision::Original);
        assert_eq!(v.pick(&model, Precision::Auto, Device::Cpu).unwrap(), orig);
        assert_eq!(v.pick(&model, Precision::Fp32, Device::Cpu).unwrap(), orig);
        let e = v.pick(&model, Precision::Int8, Device::Cpu).unwrap_err();
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
        assert_eq!(v.auto_note(&model, Device::Cpu), None);
        // A copy of the directory elsewhere (another path, another mtime) finds them too.
        let copy = root.join("moved");
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::copy(model.join("model.onnx"), copy.join("model.onnx")).unwrap();
        assert_eq!(
            Variants::find(&copy, &vdir).dir.as_deref(),
            Some(k.as_path())
        );
        assert_eq!(
            v.pick(&model, Precision::Auto, Device::Cpu).unwrap(),
            (k.join(INT8_FILE), Precision::Int8)
        );
        assert_eq!(
            v.pick(&model, Precision::Auto, Device::Cuda).unwrap(),
            (k.join(FP16_FILE), Precision::Fp16)
        );
        assert_eq!(
            v.pick(&model, Precision::Fp32, Device::Cpu).unwrap(),
            (k.join(FP32_FILE), Precision::Fp32)
        );
        assert_eq!(
            v.pick(&model, Precision::Original, Device::Cpu).unwrap(),
            orig
        );
        // Without int8, auto on the CPU runs the optimized fp32, and says so.
        std::fs::remove_file(k.join(INT8_FILE)).unwrap();
        assert_eq!(
            v.pick(&model, Precision::Auto, Device::Cpu).unwrap(),
            (k.join(FP32_FILE), Precision::Fp32)
        );
        let note = v.auto_note(&model, Device::Cpu).unwrap();
        assert!(
            note.contains("runs the optimized fp32 graph")
                && note.contains("has no model_opt_int8.onnx"),
            "{note}"
        );
        assert_eq!(v.auto_note(&model, Device::Cuda), None);
        // A changed model.onnx has another key: the old variants are not its own.
        std::fs::write(model.join("model.onnx"), b"other weights").unwrap();
        let v = Variants::find(&model, &vdir);
        assert!(v.dir.is_none() && v.keyed != k);
        assert_eq!(
            v.pick(&model, Precision::Auto, Device::Cpu).unwrap().1,
            Precision::Original
        );
        let e = v.pick(&model, Precision::Fp16, Device::Cuda).unwrap_err();
        assert!(
            e.contains("model_opt_fp16.onnx") && e.contains("uqd models optimize"),
            "{e}"
        );
        // Variants written into the model directory for other weights are stale, with a note.
        std::fs::write(model.join(FP16_FILE), b"x").unwrap();
        std::fs::write(model.join(MANIFEST), manifest_for(&k.join(FP32_FILE))).unwrap();
        let v = Variants::find(&model, &vdir);
        assert!(v.dir.is_none());
        let e = v.pick(&model, Precision::Fp16, Device::Cuda).unwrap_err();
        assert!(e.contains("another model.onnx"), "{e}");
        assert!(v
            .auto_note(&model, Device::Cuda)
            .unwrap()
            .contains("another model.onnx"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
