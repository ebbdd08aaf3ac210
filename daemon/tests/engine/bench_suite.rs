//! `uqd bench suite`: `--compare` on two fixed JSON files (tests/golden/suite/a.jsonl, b.jsonl:
//! synthetic units, B's scores better on two datasets and equal on the third) against its golden
//! table (rewrite with `UQ_BLESS=1`), its errors, and a `--quick` run of the real binary and
//! model over the shared evaluation files whose JSON lines compare with themselves as no change.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    crate::common::repo_root()
}

fn golden(name: &str) -> PathBuf {
    root().join("tests/golden/suite").join(name)
}

/// `uqd bench suite ARGS` with the models of dist/.
fn suite(args: &[&str]) -> Output {
    let dist = root().join("dist");
    Command::new(env!("CARGO_BIN_EXE_uqd"))
        .args(["bench", "suite"])
        .args(args)
        .env("UQ_NLI_MODEL", dist.join("models/nli"))
        .env("UQ_ORT_LIB", dist.join("lib/libonnxruntime.so.1.31.1"))
        .env("UQ_VARIANTS_DIR", dist.join("models/variants"))
        .output()
        .unwrap()
}

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--compare", a.to_str().unwrap(), b.to_str().unwrap()];
    args.extend_from_slice(extra);
    suite(&args)
}

#[test]
fn compare_prints_paired_changes_and_the_rule() {
    let out = compare(
        &golden("a.jsonl"),
        &golden("b.jsonl"),
        &["--resamples", "200", "--seed", "1"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout.replace(&root().display().to_string(), "<root>");
    let path = golden("compare.txt");
    if std::env::var("UQ_BLESS").is_ok_and(|b| b == "1") {
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        text,
        want,
        "the --compare table changed; if on purpose, rewrite it with UQ_BLESS=1 cargo test \
         --release -p uqd --test engine bench_suite:: and review the diff of {}",
        path.display()
    );
    // what the golden holds, stated: B better on the two claim sets, equal on the third
    assert!(
        text.contains("B better: the rule allows the change"),
        "{text}"
    );
    assert!(
        text.contains("sentences noncontradiction (B only)"),
        "{text}"
    );
}

#[test]
fn compare_refuses_bad_files() {
    let dir = std::env::temp_dir().join(format!("uqd-bench-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = |out: Output| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = err(compare(&dir.join("none.json"), &golden("b.jsonl"), &[]));
    assert!(
        e.contains("--compare: cannot read") && e.contains("none.json"),
        "{e}"
    );
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"suite\": \"settings\"}\nnot json\n").unwrap();
    let e = err(compare(&junk, &golden("b.jsonl"), &[]));
    assert!(
        e.contains("junk.json line 2") && e.contains("uqd bench suite --json FILE"),
        "{e}"
    );
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "{\"suite\": \"settings\"}\n").unwrap();
    let e = err(compare(&empty, &golden("b.jsonl"), &[]));
    assert!(e.contains("holds no units lines"), "{e}");
    // other units under the same names: no paired interval
    let other = dir.join("other.json");
    let text = std::fs::read_to_string(golden("a.jsonl")).unwrap();
    std::fs::write(&other, text.replacen("\"labels\": [1", "\"labels\": [0", 1)).unwrap();
    let e = err(compare(&other, &golden("b.jsonl"), &[]));
    assert!(e.contains("scored different units"), "{e}");
    let e = err(compare(
        &golden("a.jsonl"),
        &golden("b.jsonl"),
        &["--resamples", "0"],
    ));
    assert!(e.contains("--resamples must be at least 1"), "{e}");
}

#[test]
fn quick_suite_over_the_shared_files() {
    let data = root().join("../shared/data");
    let dir = std::env::temp_dir().join(format!("uqd-bench-suite-q-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("quick.json");
    let out = suite(&[
        "--quick",
        "--data-dir",
        data.to_str().unwrap(),
        "--resamples",
        "200",
        "--draws",
        "5",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for d in [
        "wikibio_dev",
        "wikibio_dev2",
        "factscore_gpt4",
        "factscore_gpt35",
        "popqa_llama3",
        "factscore_llama3",
        "grounded_qa",
        "grounded_summaries",
    ] {
        assert!(stdout.contains(d), "{d} missing: {stdout}");
    }
    let lines: Vec<Value> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let figures: Vec<&Value> = lines.iter().filter(|l| l["suite"] == "figure").collect();
    assert!(figures.len() >= 8 * 3, "{}", figures.len());
    for f in &figures {
        if let (Some(e), Some(lo), Some(hi)) = (
            f["estimate"].as_f64(),
            f["low"].as_f64(),
            f["high"].as_f64(),
        ) {
            assert!(
                lo <= e + 1e-9 && e <= hi + 1e-9 && (0.0..=1.0).contains(&e),
                "{f}"
            );
        }
    }
    let wiki = figures
        .iter()
        .find(|f| {
            f["dataset"] == "wikibio_dev" && f["scorer"] == "entailment" && f["figure"] == "auroc"
        })
        .unwrap();
    assert!(wiki["estimate"].as_f64().unwrap() > 0.6, "{wiki}");
    assert_eq!(wiki["answers"], 20, "{wiki}");
    for kind in ["transfer", "refit", "cost"] {
        assert!(lines.iter().any(|l| l["suite"] == kind), "no {kind} line");
    }
    // a run compared with itself: no change anywhere
    let out = compare(&json, &json, &["--resamples", "50"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.lines().any(|l| l.contains("] *")), "{text}");
    assert!(text.contains("no difference shown: no change"), "{text}");
}
