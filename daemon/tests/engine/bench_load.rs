//! `uqd bench load`: starts a daemon (the real models of dist/) on a private socket, drives it
//! from 3 connections in 2 worker processes with short WikiBio-shaped passages, prints one JSON
//! line, and stops the daemon it started.

use std::process::Command;

#[test]
fn load_bench_drives_a_daemon_and_reports() {
    let root = crate::common::repo_root();
    let dist = root.join("dist");
    let dir = std::env::temp_dir().join(format!("uqd-bench-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("passages.jsonl");
    let passage = |who: &str, year: u32| {
        serde_json::json!({
            "gpt3_text": format!("{who} was born in {year}. {who} was a painter."),
            "gpt3_sentences": [format!("{who} was born in {year}."), format!("{who} was a painter.")],
            "gpt3_text_samples": [
                format!("{who} was born in {year} and painted."),
                format!("{who}, born in {}, was a sculptor.", year + 3),
            ],
            "annotation": ["accurate", "accurate"],
        })
        .to_string()
    };
    std::fs::write(
        &data,
        format!(
            "{}\n{}\n",
            passage("Ann Lee", 1901),
            passage("Bo Chen", 1950)
        ),
    )
    .unwrap();
    let socket = dir.join("uqd.sock");
    let out = Command::new(env!("CARGO_BIN_EXE_uqd"))
        .args([
            "bench",
            "load",
            "--clients",
            "3",
            "--processes",
            "2",
            "--seconds",
            "2",
            "--samples",
            "2",
        ])
        .arg("--data")
        .arg(&data)
        .arg("--socket")
        .arg(&socket)
        .env("UQ_NLI_MODEL", dist.join("models/nli"))
        .env("UQ_EMBED_MODEL", dist.join("models/embed"))
        .env("UQ_ORT_LIB", dist.join("lib/libonnxruntime.so.1.31.1"))
        .env("UQ_VARIANTS_DIR", dist.join("models/variants"))
        .env("UQ_CACHE_DB", dir.join("cache.sqlite"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(line["errors"], 0, "{line}");
    assert_eq!(
        (line["clients"].as_u64(), line["processes"].as_u64()),
        (Some(3), Some(2)),
        "{line}"
    );
    assert!(line["requests"].as_u64().unwrap() >= 3, "{line}");
    let (p50, p99) = (
        line["p50_ms"].as_f64().unwrap(),
        line["p99_ms"].as_f64().unwrap(),
    );
    assert!(p50 > 0.0 && p50 <= p99, "{line}");
    // 3 client connections plus the daemon's own files were open at some point.
    assert!(line["daemon_max_open_fds"].as_u64().unwrap() >= 4, "{line}");
    assert!(
        line["daemon_peak_rss_mb"].as_f64().unwrap() > 10.0,
        "{line}"
    );
    assert_eq!(line["daemon_precision"], "int8", "{line}");
    // The daemon it started is stopped again.
    assert!(
        !socket.exists(),
        "the socket is removed when the daemon stops"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
