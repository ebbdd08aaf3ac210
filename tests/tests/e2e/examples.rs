//! The shipped SQL examples run as documented and say what they claim.

use uq_integration::*;

fn run_example(sb: &Sandbox, path: &str) -> String {
    let sql = std::fs::read_to_string(root().join(path)).unwrap();
    // The examples load `dist/uq0` relative to the repository root; the harness loads it already.
    sb.sqlite_ok(&sql.replace(".load dist/uq0", ""))
}

#[test]
fn example_queries_flag_the_invented_sentences() {
    let sb = Sandbox::new("ex-queries");
    let out = run_example(&sb, "sql/queries.sql");
    let flagged: Vec<&str> = out
        .lines()
        .take_while(|l| l.split('|').count() == 4)
        .collect();
    assert_eq!(flagged.len(), 2, "{out}");
    assert!(flagged[0].starts_with("1|2|It is made of gold.|"), "{out}");
    assert!(
        flagged[1].starts_with("2|1|It lies in the Andes.|"),
        "{out}"
    );
}

#[test]
fn demo_runs_on_the_embedded_models() {
    let sb = Sandbox::new("ex-demo");
    let cache = sb.dir.join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let out = run_example(&sb, "examples/demo.sql");
    for needle in [
        "cleaned_answer",
        "luq_atomic",
        "claim_confidence",
        "refined_answer",
        "She was born in Vienna",
    ] {
        assert!(out.contains(needle), "demo output lacks {needle:?}:\n{out}");
    }
    // The grounded part: the invented sentence scores below the supported ones, the sentence
    // filter drops it, the highlight marks it.
    let invented = "Fleming later became the mayor of London.";
    let cells = |l: &str| -> Vec<String> {
        l.split('│')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let scores: Vec<(String, f64)> = out
        .lines()
        .map(cells)
        .filter(|c| c.len() == 3 && c[0].parse::<i64>().is_ok())
        .filter_map(|c| Some((c[1].clone(), c[2].parse::<f64>().ok()?)))
        .collect();
    assert_eq!(
        scores.len(),
        4,
        "the four sentences of the RAG answers:\n{out}"
    );
    let bad = scores
        .iter()
        .find(|(s, _)| s == invented)
        .expect(invented)
        .1;
    assert!(
        scores
            .iter()
            .filter(|(s, _)| s != invented)
            .all(|(_, x)| *x > bad),
        "{out}"
    );
    let filtered = out
        .lines()
        .map(cells)
        .find(|c| c.len() == 3 && c[0] == "2" && c[2].starts_with("Penicillin"))
        .unwrap_or_else(|| panic!("the filtered answer 2:\n{out}"));
    assert_eq!(
        filtered[2],
        "Penicillin was discovered by Alexander Fleming in 1928."
    );
    assert!(
        out.contains(&format!("[!{invented}]")) || out.contains(&format!("[?{invented}]")),
        "{out}"
    );
}

#[test]
fn jobs_example_scores_a_table_in_a_database_file() {
    let sb = Sandbox::new("ex-jobs");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let db = sb.dir.join("jobs.db");
    let sql = std::fs::read_to_string(root().join("examples/jobs.sql")).unwrap();
    let mut child = std::process::Command::new("/usr/bin/sqlite3")
        .args(["-bail", "-batch"])
        .arg(&db)
        .env("UQ_SOCKET", &sb.socket)
        .env("UQ_CACHE_DB", &cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let script = sql.replace(".load dist/uq0", &format!(".load {}", ext_path()));
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "job 1", "{text}");
    assert_eq!(lines[1], "status done", "{text}");
    assert_eq!(lines[2], "progress 2/2 rows, 0 errors", "{text}");
    assert!(
        lines[3].starts_with("1|It is made of gold.|entailment|"),
        "{text}"
    );
    assert!(
        lines[4].starts_with("2|It lies in the Andes.|entailment|"),
        "{text}"
    );
    // One AUROC line per scorer; entailment separates the two invented sentences perfectly.
    let auroc: Vec<&str> = lines[5..].to_vec();
    assert_eq!(auroc.len(), 3, "{text}");
    assert_eq!(auroc[0], "entailment|1.0", "{text}");
}

#[test]
fn factscore_job_example_scores_stored_claims_and_writes_the_report() {
    let sb = Sandbox::new("ex-factscore");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let db = sb.dir.join("fs.db");
    let out = std::process::Command::new("/usr/bin/python3")
        .arg(root().join("examples/factscore_job.py"))
        .arg("2")
        .arg(&db)
        .env("UQ_SOCKET", &sb.socket)
        .env("UQ_CACHE_DB", &cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "job 1 (m = 3): done, 2/2 rows, 0 errors",
        "{text}"
    );
    assert_eq!(
        lines[1], "job 2 (m = 5): done, 2/2 rows, 0 errors",
        "{text}"
    );
    // 4 scorers × 2 runs; every stored claim of the first two bios is labelled 0/1.
    let rows: Vec<Vec<&str>> = lines[3..11]
        .iter()
        .map(|l| l.split('|').collect())
        .collect();
    let labelled = rows[0][2];
    for r in &rows {
        assert_eq!(r.len(), 5, "{text}");
        assert_eq!(r[2], labelled, "{text}");
        let auroc: f64 = r[3].parse().unwrap();
        assert!((0.0..=1.0).contains(&auroc), "{text}");
    }
    let conn_check = std::process::Command::new("/usr/bin/sqlite3")
        .arg(&db)
        .arg("SELECT count(*) FROM uq_label WHERE grader = 'column:labels'; SELECT count(DISTINCT num_samples) FROM uq_run;")
        .output()
        .unwrap();
    let counts = String::from_utf8_lossy(&conn_check.stdout);
    let counts: Vec<&str> = counts.lines().collect();
    assert_eq!(
        counts[0],
        (2 * labelled.parse::<usize>().unwrap()).to_string()
    );
    assert_eq!(counts[1], "2");
    let report = sb.dir.join("fs-report").join("index.html");
    assert!(lines[11].contains("index.html"), "{text}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("AUROC vs number of samples m"),
        "report lacks the m ablation"
    );
}
