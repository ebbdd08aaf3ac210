//! `examples/selfcheck.sql` (the evaluation as plain SQL over the extension) and
//! `uqd bench selfcheck` agree on the same passages, scorer by scorer.

use std::collections::HashMap;

use uq_integration::*;

/// The first three passages: the smallest prefix with both factual and non-factual sentences.
const PASSAGES: usize = 3;

fn data() -> std::path::PathBuf {
    let p = root().join("../shared/data/selfcheck_wikibio_dev.jsonl");
    assert!(
        p.exists(),
        "{} is missing: the evaluation data lives in ../shared/data",
        p.display()
    );
    p
}

#[test]
fn sql_example_matches_the_benchmark() {
    let sb = Sandbox::new("selfcheck");
    let sql = std::fs::read_to_string(root().join("examples/selfcheck.sql")).unwrap();
    assert!(
        sql.contains("LIMIT -1;"),
        "the example keeps its passage limit knob"
    );
    let sql = sql
        .replace("LIMIT -1;", &format!("LIMIT {PASSAGES};"))
        .replace(
            "../shared/data/selfcheck_wikibio_dev.jsonl",
            &data().display().to_string(),
        )
        .replace(".load dist/uq0", "")
        .replace(".mode box", ".mode list\n.separator |");
    let out = sb.sqlite_ok(&sql);
    let mut sql_rows: HashMap<String, Vec<f64>> = HashMap::new();
    for line in out.lines().skip(1) {
        let f: Vec<&str> = line.split('|').collect();
        let nums = f[1..]
            .iter()
            .map(|x| x.parse::<f64>().expect(line))
            .collect();
        sql_rows.insert(f[0].to_string(), nums);
    }
    assert_eq!(sql_rows.len(), 8, "all eight sentence-level scorers: {out}");

    // The bench's lines for the example's scorers (the bench has more, e.g. the n-gram ones).
    let scorers: Vec<&str> = sql_rows.keys().map(String::as_str).collect();
    let bench = sb.uqd(&[
        "bench",
        "selfcheck",
        "--data",
        &data().display().to_string(),
        "--samples",
        "5",
        "--limit",
        &PASSAGES.to_string(),
        "--scorers",
        &scorers.join(","),
    ]);
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    let mut seen = 0;
    for line in String::from_utf8_lossy(&bench.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(scorer) = v["scorer"].as_str() else {
            continue;
        };
        let s = &sql_rows[scorer];
        let b = [
            &v["nonfact_auc_pr"],
            &v["factual_auc_pr"],
            &v["auroc"],
            &v["passage_pearson"],
        ];
        for (i, (x, y)) in s.iter().zip(b).enumerate() {
            let y = y.as_f64().unwrap();
            let tol = if i == 2 { 1e-3 } else { 0.1 }; // SQL rounds to 4 / 2 decimals
            assert!(
                (x - y).abs() <= tol,
                "{scorer} metric {i}: SQL {x} vs bench {y}"
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 8);
}
