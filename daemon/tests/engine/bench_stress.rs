//! `uqd bench stress`: the real binary and the NLI model of dist/ on a hand-written suite of six
//! pairs (tests/golden/stress/stress_6.jsonl), one or two per kind: the JSON lines per kind and
//! overall, the per-item file, and the errors for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    crate::common::repo_root()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uqd-bench-stress-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `uqd bench stress --data DATA …` with the models of dist/.
fn stress(data: &Path, extra: &[&str]) -> Output {
    let dist = root().join("dist");
    Command::new(env!("CARGO_BIN_EXE_uqd"))
        .args(["bench", "stress", "--data"])
        .arg(data)
        .args(extra)
        .env("UQ_NLI_MODEL", dist.join("models/nli"))
        .env("UQ_ORT_LIB", dist.join("lib/libonnxruntime.so.1.31.1"))
        .env("UQ_VARIANTS_DIR", dist.join("models/variants"))
        .output()
        .unwrap()
}

fn prob(v: &Value, key: &str) -> f64 {
    let p = v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing: {v}"));
    assert!((0.0..=1.0).contains(&p), "{key} out of [0, 1]: {v}");
    p
}

#[test]
fn stress_bench_reports_per_kind_and_overall() {
    let dir = tmpdir("run");
    let items = dir.join("items.jsonl");
    let out = stress(
        &root().join("tests/golden/stress/stress_6.jsonl"),
        &["--items", items.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    // First-seen order of the file's kinds, then the whole suite.
    assert_eq!(
        kinds,
        [
            "paraphrase",
            "swap_negation",
            "off_topic",
            "distractors",
            "unsupported",
            "all"
        ],
        "{stdout}"
    );
    let mut n_kinds = 0;
    for l in &lines {
        assert_eq!(l["bench"], "stress", "{l}");
        assert!(l["model"].as_str().unwrap().ends_with("models/nli"), "{l}");
        assert!(l["precision"].is_string(), "{l}");
        let n = l["n"].as_u64().unwrap();
        let correct = l["correct"].as_u64().unwrap();
        let acc = prob(l, "accuracy");
        assert!(correct <= n, "{l}");
        assert!((acc * n as f64 - correct as f64).abs() < 1e-3, "{l}");
        prob(l, "mean_p_entailment");
        prob(l, "mean_p_contradiction");
        let (ne, nn) = (
            l["entailment_items"].as_u64().unwrap(),
            l["neutral_items"].as_u64().unwrap(),
        );
        assert!(ne + nn <= n, "{l}");
        for (items, share) in [
            (ne, "entailment_with_p_contradiction_over_half"),
            (nn, "neutral_with_p_contradiction_over_half"),
        ] {
            if items == 0 {
                assert!(l[share].is_null(), "{l}");
            } else {
                let s = prob(l, share);
                let count = s * items as f64;
                assert!((count - count.round()).abs() < 1e-3, "{l}");
            }
        }
        if l["kind"] == "all" {
            assert_eq!(n, 6, "{l}");
            assert_eq!(n_kinds, 6, "the kinds' n add up to all's");
            assert_eq!((ne, nn), (3, 2), "{l}");
        } else {
            n_kinds += n;
            let subs = l["subs"].as_object().unwrap();
            let sub_n: u64 = subs.values().map(|s| s["n"].as_u64().unwrap()).sum();
            assert_eq!(sub_n, n, "{l}");
            for s in subs.values() {
                prob(s, "accuracy");
            }
        }
    }
    assert_eq!(lines[0]["subs"]["identity"]["n"], 1, "{}", lines[0]);
    // The table on stderr: a header, one row per kind, the paraphrase subs, and `all`.
    assert!(stderr.contains("mean_pE"), "{stderr}");
    assert!(stderr.lines().any(|l| l.starts_with("all ")), "{stderr}");

    let items: Vec<Value> = std::fs::read_to_string(&items)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 6);
    for it in &items {
        let sum = prob(it, "p_entailment") + prob(it, "p_neutral") + prob(it, "p_contradiction");
        assert!((sum - 1.0).abs() < 1e-3, "{it}");
        assert!(
            it["predicted"].is_string() && it["label"].is_string(),
            "{it}"
        );
    }
    // Premise and hypothesis the same sentence: entailed.
    assert_eq!(items[0]["id"], "t1");
    assert!(prob(&items[0], "p_entailment") > 0.5, "{}", items[0]);
    assert_eq!(items[0]["predicted"], "entailment", "{}", items[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stress_bench_names_the_bad_line_and_the_fix() {
    let dir = tmpdir("bad");
    let ok = r#"{"id":"a","kind":"paraphrase","sub":"s","topic":"t","premise":"P.","hypothesis":"H.","label":"entailment"}"#;
    let expect_error = |file: &Path, wanted: &[&str]| {
        let out = stress(file, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(out.stdout.is_empty(), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        for w in wanted {
            assert!(stderr.contains(w), "{w:?} not in: {stderr}");
        }
    };

    let bad_label = dir.join("label.jsonl");
    std::fs::write(
        &bad_label,
        format!("{ok}\n{}\n", ok.replace("\"entailment\"", "\"entails\"")),
    )
    .unwrap();
    expect_error(
        &bad_label,
        &[
            "label.jsonl line 2",
            "unknown label \"entails\"",
            "entailment, neutral or contradiction",
        ],
    );

    let bad_json = dir.join("json.jsonl");
    std::fs::write(&bad_json, format!("{ok}\n\n{{\"kind\": \"x\"\n")).unwrap();
    expect_error(&bad_json, &["json.jsonl line 3", "fix or remove the line"]);

    expect_error(
        &dir.join("missing.jsonl"),
        &["cannot read --data", "missing.jsonl", "give --data PATH"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}
