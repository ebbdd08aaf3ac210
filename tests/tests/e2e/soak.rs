//! A short run of `uqd bench soak` (the soak itself is a bench, run for ≥ 20 minutes by hand;
//! docs/reference.md, "Benchmarks"): two clients, one restart of the daemon (`kill -9`), small
//! jobs resumed across it; no error, every repeated result equal to the first, and the results
//! of a fresh daemon equal to the soak's.

use uq_integration::*;

#[test]
fn soak_smoke_run_has_no_errors_and_matches_a_fresh_run() {
    let data = root().join("../shared/data/selfcheck_wikibio_dev.jsonl");
    let out = std::process::Command::new(dist().join("uqd"))
        .args([
            "bench",
            "soak",
            "--minutes",
            "0.4",
            "--restart-every",
            "8",
            "--sample-every",
            "5",
        ])
        .args(["--passages", "2", "--clients", "2", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let s = lines.last().unwrap();
    assert_eq!(s["summary"], true, "{s}");
    assert_eq!(s["errors"], 0, "{s}");
    assert!(s["restarts"].as_i64().unwrap() >= 1, "{s}");
    assert!(s["requests"].as_i64().unwrap() > 0, "{s}");
    assert_eq!(s["repeat_mismatches"], 0, "{s}");
    assert!(s["fresh_compared"].as_i64().unwrap() > 0, "{s}");
    assert_eq!(s["fresh_mismatches"], 0, "{s}");
    assert!(s["fds_end"].as_i64().unwrap() > 0, "{s}");
    // The sample lines name two daemons (one per lifetime) with their RSS and descriptors.
    let daemons: std::collections::BTreeSet<i64> =
        lines.iter().filter_map(|l| l["daemon"].as_i64()).collect();
    assert!(daemons.len() >= 2, "{stdout}");
    assert!(lines
        .iter()
        .all(|l| l["summary"] == true || l["rss_mb"].as_f64().unwrap() > 0.0));
}
