//! `uqd models optimize`: the real ONNX Runtime optimizer and quantizer (the Python environment
//! `make setup` makes in .cache/model-tools) on the shared NLI model, written to a temporary
//! directory; the model-type and Python errors; `--check`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    crate::common::repo_root()
}

fn python() -> PathBuf {
    let p = root().join(".cache/model-tools/bin/python3");
    assert!(p.is_file(), "{} is missing: run `make setup`", p.display());
    p
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uqd-optimize-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A model directory of symlinks to the default NLI model, with `config` as config.json.
fn model_dir(name: &str, config: Option<serde_json::Value>) -> PathBuf {
    let src = root()
        .join("dist/models/nli")
        .canonicalize()
        .expect("dist/models/nli: run make setup");
    let d = tmp_dir(name);
    for f in ["model.onnx", "tokenizer.json", "config.json"] {
        std::os::unix::fs::symlink(src.join(f), d.join(f)).unwrap();
    }
    if let Some(c) = config {
        std::fs::remove_file(d.join("config.json")).unwrap();
        std::fs::write(d.join("config.json"), c.to_string()).unwrap();
    }
    d
}

fn uqd(args: &[&str], extra: &[&Path]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_uqd"));
    c.args(["models", "optimize"]).args(args).args(extra);
    c.env_remove("UQ_MODEL_PYTHON")
        .env_remove("UQ_VARIANTS_DIR");
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn optimizes_the_shared_model_into_fused_int8_and_fp16_variants() {
    let dir = model_dir("ok", None);
    let vdir = tmp_dir("ok-variants");
    let py = python();
    // Nothing yet: --check fails.
    let o = uqd(&["--check", "--variants-dir"], &[&vdir, &dir]);
    assert!(!o.status.success(), "{}", text(&o));
    let o = uqd(
        &["--variants-dir"],
        &[&vdir, Path::new("--python"), &py, &dir],
    );
    assert!(o.status.success(), "{}", text(&o));
    let line: serde_json::Value = serde_json::from_slice(
        o.stdout
            .split(|&b| b == b'\n')
            .find(|l| l.starts_with(b"{"))
            .expect("a JSON line"),
    )
    .unwrap();
    // ONNX Runtime fused all six layers of the BERT graph.
    assert_eq!(line["fused"]["Attention"], 6, "{line}");
    assert_eq!(line["fused"]["SkipLayerNormalization"], 12, "{line}");
    assert_eq!(line["fused"]["EmbedLayerNormalization"], 1, "{line}");
    assert_eq!(line["model_type"], "bert");
    let out = PathBuf::from(line["out"].as_str().unwrap());
    assert!(
        out.starts_with(vdir.canonicalize().unwrap()),
        "{}",
        out.display()
    );
    let size = |f: &str| std::fs::metadata(out.join(f)).unwrap().len();
    let original = std::fs::metadata(dir.join("model.onnx")).unwrap().len();
    // int8 weights take about a quarter of the fp32 ones, fp16 about half.
    assert!(
        size("model_opt_int8.onnx") * 3 < original,
        "int8 {}",
        size("model_opt_int8.onnx")
    );
    assert!(
        size("model_opt_fp16.onnx") * 3 < original * 2,
        "fp16 {}",
        size("model_opt_fp16.onnx")
    );
    assert!(size("model_opt.onnx") * 10 > original * 9);
    // --check now names the directory.
    let o = uqd(&["--check", "--variants-dir"], &[&vdir, &dir]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        out.display().to_string()
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&vdir);
}

#[test]
fn a_graph_without_fusable_attention_still_gets_its_variants_with_a_warning() {
    // v1 of the shared NLI model was written by a plain exporter: no attention fuses.
    let v1 = root().join("../shared/models/nli-minilm-l6");
    assert!(
        v1.join("model.onnx").is_file(),
        "{} is missing",
        v1.display()
    );
    let out = tmp_dir("v1-out");
    let py = python();
    let o = uqd(&["--out"], &[&out, Path::new("--python"), &py, &v1]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("fused no attention") && t.contains("optimum-cli export onnx"),
        "{t}"
    );
    let line: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(line["attention_fused"], false, "{line}");
    assert_eq!(line["files"]["int8"], "model_opt_int8.onnx", "{line}");
    let original = std::fs::metadata(v1.join("model.onnx")).unwrap().len();
    let int8 = std::fs::metadata(out.join("model_opt_int8.onnx"))
        .unwrap()
        .len();
    assert!(int8 * 3 < original, "int8 {int8} of {original}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn unsupported_model_type_and_missing_python_are_clear_errors() {
    let mut cfg: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("dist/models/nli/config.json")).unwrap(),
    )
    .unwrap();
    cfg["model_type"] = "t5".into();
    let dir = model_dir("t5", Some(cfg));
    let out = tmp_dir("t5-out");
    let py = python();
    let o = uqd(&["--out"], &[&out, Path::new("--python"), &py, &dir]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("model_type 't5'") && t.contains("supported") && t.contains("deberta"),
        "{t}"
    );
    let o = uqd(&["--python", "/nonexistent/python3"], &[&dir]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("/nonexistent/python3") && t.contains("UQ_MODEL_PYTHON"),
        "{t}"
    );
    let o = uqd(&["--python"], &[&py, &out.join("no-such-model")]);
    let t = text(&o);
    assert!(!o.status.success() && t.contains("does not exist"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
}

/// A python3 with torch and transformers (to export a small DeBERTa): `UQ_TORCH_PY`, else the
/// NLI recipe's environment (.cache/nli-train, `make nli-env`). `None` skips the test, unless
/// `UQ_REQUIRE_TORCH=1` (CI after `make nli-env`), which makes it a failure.
fn torch_python() -> Option<PathBuf> {
    let p = std::env::var_os("UQ_TORCH_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".cache/nli-train/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", "import torch, transformers"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(p);
    }
    let msg = format!(
        "no python3 with torch and transformers at {} (set UQ_TORCH_PY, or run `make nli-env`)",
        p.display()
    );
    assert!(
        std::env::var("UQ_REQUIRE_TORCH").as_deref() != Ok("1"),
        "UQ_REQUIRE_TORCH=1 and {msg}"
    );
    eprintln!("skipped: {msg}");
    None
}

#[test]
fn a_deberta_graph_gets_its_disentangled_attention_fused_with_the_same_outputs() {
    let Some(torch) = torch_python() else { return };
    // DeBERTa v1 (deberta-large-mnli's architecture) at 2 layers of width 64, random weights.
    let dir = tmp_dir("deberta");
    let o = Command::new(&torch)
        .arg(root().join("scripts/make_throughput_model.py"))
        .arg(&dir)
        .args([
            "--layers", "2", "--hidden", "64", "--heads", "4", "--ffn", "128",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let py = python();
    let run = |out: &Path, fuse: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_uqd"));
        c.args(["models", "optimize"])
            .arg(&dir)
            .arg("--out")
            .arg(out)
            .arg("--python")
            .arg(&py)
            .env_remove("UQ_MODEL_PYTHON");
        if fuse {
            c.env_remove("UQ_FUSE_ATTENTION");
        } else {
            c.env("UQ_FUSE_ATTENTION", "0");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_str::<serde_json::Value>(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .rev()
                .find(|l| l.starts_with('{'))
                .unwrap(),
        )
        .unwrap()
    };
    let fused = tmp_dir("deberta-fused");
    let line = run(&fused, true);
    // Both layers' attention became MultiHeadAttention, checked against the unfused graph.
    assert_eq!(line["attention_fused"], true, "{line}");
    assert_eq!(line["fused"]["MultiHeadAttention"], 2, "{line}");
    assert_eq!(line["disentangled_attention"]["layers"], 2, "{line}");
    assert!(
        line["disentangled_attention"]["max_abs_diff"]
            .as_f64()
            .unwrap()
            <= 1e-3,
        "{line}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fused.join("variants.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["attention_fused"], true);
    for f in [
        "model_opt.onnx",
        "model_opt_int8.onnx",
        "model_opt_fp16.onnx",
    ] {
        assert!(fused.join(f).is_file(), "{f}");
    }
    // UQ_FUSE_ATTENTION=0 leaves it as ONNX Runtime's optimizer does (the unfused baseline).
    let unfused = tmp_dir("deberta-unfused");
    let line = run(&unfused, false);
    assert_eq!(line["attention_fused"], false, "{line}");
    assert!(line["fused"].get("MultiHeadAttention").is_none(), "{line}");
    for d in [&dir, &fused, &unfused] {
        let _ = std::fs::remove_dir_all(d);
    }
}
