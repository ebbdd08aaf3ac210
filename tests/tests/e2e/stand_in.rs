//! The stand-in NLI model (`--nli-stand-in-ms`) through the real daemon and benches: a fixed
//! time per batch on one device, fixed logits, the CUDA defaults, and the NLI path's figures per
//! stage. Counts and bounds are asserted, never a speed: the machine may be busy.

use serde_json::Value;
use uq_integration::*;

fn data() -> String {
    root()
        .join("../shared/data/selfcheck_wikibio_dev.jsonl")
        .display()
        .to_string()
}

/// The JSON lines a `uqd bench` run printed (it must succeed).
fn bench_lines(sb: &Sandbox, args: &[&str]) -> Vec<Value> {
    let out = sb.uqd(args);
    assert!(
        out.status.success(),
        "uqd {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What every stand-in bench line says: the CUDA batch, the bound of 128 windows per `ms`
/// respected by the path and the raw model, every stage's host figure, a device time per batch
/// of at least the stand-in's, and `overlap` batches in flight at most.
fn check_line(v: &Value, ms: f64, overlap: u64) {
    assert_eq!(v["device"], "stand-in", "{v}");
    assert_eq!(v["max_batch"], 128, "the CUDA batch: {v}");
    assert_eq!(v["stand_in_ms"], ms, "{v}");
    assert_eq!(v["nli_overlap"], overlap, "{v}");
    let bound = v["stand_in_pairs_per_s"].as_f64().unwrap();
    assert!((bound - 128_000.0 / ms).abs() < 0.01, "{v}");
    for rate in ["nli_pairs_per_s", "raw_nli_pairs_per_s"] {
        let r = v[rate].as_f64().unwrap();
        assert!(
            r > 0.0 && r <= bound * 1.02,
            "{rate} {r} above the bound {bound}: {v}"
        );
    }
    for stage in [
        "tokenise",
        "cache",
        "batching",
        "pad_copy",
        "device",
        "scatter",
        "queue_wait",
    ] {
        let us = v["host_us_per_pair"][stage].as_f64();
        assert!(us.is_some_and(|x| x >= 0.0), "{stage}: {v}");
    }
    assert!(
        v["host_us_per_pair"]["tokenise"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    assert!(v["process_cpu_us_per_pair"].as_f64().unwrap() > 0.0, "{v}");
    assert!(
        v["device_ms_per_batch"].as_f64().unwrap() >= ms * 0.99,
        "{v}"
    );
    let in_flight = v["max_batches_in_flight"].as_u64().unwrap();
    assert!(in_flight >= 1 && in_flight <= overlap, "{v}");
}

/// `bench selfcheck` with the stand-in: the CUDA defaults (32 clients, batch 128), every figure,
/// fixed logits (every pair scores the same, so AUROC 0.5); with the overlap off one batch is in
/// flight at a time, with it on two (20 passages queue more than two batches at once).
#[test]
fn selfcheck_prints_the_stand_in_figures() {
    let sb = Sandbox::new("stand-in-selfcheck");
    for overlap in [1u64, 2] {
        let lines = bench_lines(
            &sb,
            &[
                "bench",
                "selfcheck",
                "--data",
                &data(),
                "--samples",
                "5",
                "--limit",
                "20",
                "--scorers",
                "entailment",
                "--premise",
                "whole",
                "--raw-pairs",
                "300",
                "--nli-stand-in-ms",
                "10",
                "--nli-overlap",
                &overlap.to_string(),
            ],
        );
        let summary = lines.iter().find(|l| l["summary"] == true).unwrap();
        check_line(summary, 10.0, overlap);
        assert_eq!(summary["clients"], 32, "the CUDA clients: {summary}");
        assert_eq!(summary["max_batches_in_flight"], overlap, "{summary}");
        let scorer = lines.iter().find(|l| l["scorer"] == "entailment").unwrap();
        assert_eq!(scorer["auroc"], 0.5, "fixed logits: {scorer}");
    }
}

/// `bench table` with the stand-in: a real job at the CUDA rows in flight (32), the same
/// figures; at 0 ms the bound is none.
#[test]
fn table_prints_the_stand_in_figures() {
    let sb = Sandbox::new("stand-in-table");
    let args = |ms: &'static str| {
        [
            "bench",
            "table",
            "--data",
            Box::leak(data().into_boxed_str()),
            "--samples",
            "3",
            "--limit",
            "20",
            "--raw-pairs",
            "300",
            "--nli-stand-in-ms",
            ms,
        ]
    };
    let v = &bench_lines(&sb, &args("5"))[0];
    check_line(v, 5.0, 2);
    assert_eq!(v["concurrency"], 32, "the CUDA rows in flight: {v}");
    assert_eq!(v["status"][0], "done", "{v}");
    let v = &bench_lines(&sb, &args("0"))[0];
    assert_eq!(v["stand_in_pairs_per_s"], Value::Null, "{v}");
    assert_eq!(v["device"], "stand-in", "{v}");
}

/// A daemon serving with the stand-in answers `uq_nli` through the socket with the stand-in's
/// fixed logits (−i for label i: contradiction, entailment, neutral), and `uqd status` says so.
#[test]
fn daemon_serves_the_stand_in() {
    let sb = Sandbox::new("stand-in-daemon").with_env("UQ_NLI_STAND_IN_MS", "1");
    let out = sb.sqlite_ok("SELECT uq_nli('A man plays a guitar.', 'A person plays music.');");
    let p: Value = serde_json::from_str(out.trim()).unwrap();
    let z = 1.0 + (-1f64).exp() + (-2f64).exp();
    assert!(
        (p["contradiction"].as_f64().unwrap() - 1.0 / z).abs() < 1e-6,
        "{p}"
    );
    assert!(
        (p["entailment"].as_f64().unwrap() - (-1f64).exp() / z).abs() < 1e-6,
        "{p}"
    );
    let status = stdout_ok(&sb.uqd(&["status"]), "uqd status");
    let s: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(s["device"], "stand-in", "{s}");
    assert_eq!(s["nli_batch"], 128, "{s}");
    let _ = sb.uqd(&["stop"]);
}
