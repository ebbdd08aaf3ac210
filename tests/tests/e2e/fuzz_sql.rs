//! SQL-level harness: every function and table-valued module the extension registers (found in
//! `pragma_function_list` / `pragma_module_list`, minus a bare sqlite3's, so a new function is
//! covered without editing this file) is called with malformed arguments — NULL, numbers at the
//! edges, empty and 1 MB text, blobs, broken and hostile JSON, wrong argument counts — in child
//! `/usr/bin/sqlite3` processes with a time limit. Errors are the expected outcome; the test fails
//! on a crash of sqlite3 (a signal), a hang (the time limit), a panic message, an "internal error"
//! of the daemon, or a daemon that died (a new pid). Calls per target are printed
//! (`--nocapture`). The embedded LLM is pointed at a missing file so LLM calls fail fast.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use uq_integration::*;

/// Time limit of one batch of statements (a hang fails the test).
const BATCH_LIMIT: Duration = Duration::from_secs(240);
const BATCH: usize = 150;
/// Random calls per (function, arity).
const CALLS_PER_ARITY: usize = 40;

/// Malformed (and a few well-formed) argument values, as SQL expressions.
const VALUES: &[&str] = &[
    "NULL",
    "0",
    "-1",
    "1",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "-1e308",
    "0.5",
    "''",
    "' '",
    "'x'",
    "'The sky is blue. Grass is green.'",
    "'[\"The sky is blue.\",\"The sky is red.\"]'",
    "'[\"a\",null,3]'",
    "'[[\"a\"],[\"b\"]]'",
    "'[]'",
    "'{}'",
    "'{'",
    "'['",
    "'{\"scorers\":'",
    "'{\"scorers\":[\"nope\"]}'",
    "'{\"scorers\":\"entailment\",\"num_samples\":-1}'",
    "'{\"num_samples\":1e300}'",
    "'{\"granularity\":\"claim\",\"units\":[1,2]}'",
    "'{\"llm\":\"no_such_llm\"}'",
    "'{\"llm\":{\"backend\":\"openai\",\"base_url\":\"http://127.0.0.1:9/v1\",\"max_retries\":0,\"timeout_ms\":2000}}'",
    "'{\"scorers\":[\"ensemble\"],\"ensemble_weights\":{\"entailment\":-1e308}}'",
    "'{\"calibration\":{\"entailment\":{\"method\":\"isotonic\",\"x\":[1],\"y\":[]}}}'",
    "'{\"threshold\":2,\"threshold_percentile\":200}'",
    "'\"just a string\"'",
    "'null'",
    "'NaN'",
    "'-Infinity'",
    "char(0, 0xD800, 0xFFFF)",
    "x''",
    "x'00ff'",
    "randomblob(64)",
];

/// Large values, tried once in each argument position: deep JSON, a 100 kB blob, texts just
/// under and over the daemon's 256 KiB limit, and 1 MB texts with and without sentences.
const HUGE: &[&str] = &[
    "'[' || replace(hex(zeroblob(2000)), '00', '[') || '1'",
    "zeroblob(100000)",
    "hex(zeroblob(100000))",
    "hex(zeroblob(140000))",
    "hex(zeroblob(500000))",
    "replace(hex(zeroblob(250000)), '00', 'Ab. ')",
];

/// A small deterministic generator (the cases are the same on every run).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// `(name, narg, type)` of the functions and the names of the modules the extension adds.
fn registered(sb: &Sandbox) -> (Vec<(String, usize, String)>, Vec<String>) {
    const LIST: &str =
        "SELECT 'f|' || name || '|' || narg || '|' || type FROM pragma_function_list;
SELECT 'm|' || name FROM pragma_module_list;";
    let bare = Command::new(SQLITE)
        .args(["-batch", ":memory:", LIST])
        .output()
        .unwrap();
    let bare = String::from_utf8_lossy(&bare.stdout).to_string();
    let with = sb.sqlite_ok(LIST);
    let added: Vec<&str> = with
        .lines()
        .filter(|l| !bare.lines().any(|b| b == *l))
        .collect();
    let mut funcs = Vec::new();
    let mut modules = Vec::new();
    for l in added {
        let p: Vec<&str> = l.split('|').collect();
        match p[0] {
            "f" => funcs.push((p[1].to_string(), p[2].parse().unwrap(), p[3].to_string())),
            "m" => modules.push(p[1].to_string()),
            _ => {}
        }
    }
    (funcs, modules)
}

/// One call of `name` with `args` (`kind`: `s` scalar, `a`/`w` aggregate, `m` module).
fn call(name: &str, kind: &str, args: &[&str]) -> String {
    let list = args.join(", ");
    match kind {
        "m" if name == "uq_llms_module" => match args {
            [] => "INSERT INTO temp.uq_llms VALUES (NULL, NULL);".to_string(),
            [a] => format!("INSERT OR REPLACE INTO temp.uq_llms(name, config) VALUES ({a}, {a});"),
            [a, b, ..] => format!(
                "INSERT OR REPLACE INTO temp.uq_llms(name, config) VALUES ({a}, {b}); UPDATE temp.uq_llms SET config = {b}; DELETE FROM temp.uq_llms WHERE name = {a}; CREATE VIRTUAL TABLE temp.fz USING uq_llms_module({a});"
            ),
        },
        "m" => format!("SELECT count(*) FROM (SELECT * FROM {name}({list}) LIMIT 50);"),
        "a" | "w" => {
            let cols: Vec<String> = (0..args.len()).map(|i| format!("c{i}")).collect();
            let row = |vals: &[&str]| {
                vals.iter().enumerate().map(|(i, v)| format!("{v} AS c{i}")).collect::<Vec<_>>().join(", ")
            };
            let nulls = vec!["NULL"; args.len()];
            let ones = vec!["1"; args.len()];
            format!(
                "SELECT {name}({c}) FROM (SELECT {r1} UNION ALL SELECT {r2} UNION ALL SELECT {r3});",
                c = cols.join(", "),
                r1 = row(args),
                r2 = row(&nulls),
                r3 = row(&ones)
            )
        }
        _ => format!("SELECT {name}({list});"),
    }
}

/// Runs `stmts` in one sqlite3 on `db`, errors not stopping it; returns a failure description.
fn run_batch(sb: &Sandbox, db: &str, stmts: &[(String, String)]) -> Result<usize, String> {
    let mut script = format!(".load {}\n.bail off\n.echo on\n", ext_path());
    for (_, s) in stmts {
        script.push_str(s);
        script.push('\n');
    }
    script.push_str("SELECT 'uq-fuzz-' || 'end';\n"); // its output shows sqlite3 read to the end
    let mut child = Command::new(SQLITE)
        .args(["-batch", db])
        .env("UQ_SOCKET", &sb.socket)
        .env("UQ_LOCAL_LLM", sb.dir.join("no-such-model.gguf"))
        .env("UQ_TIMEOUT_MS", "60000")
        .current_dir(&sb.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(script.as_bytes());
    });
    // Read both pipes while it runs, or a full pipe would stall it.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out_reader = drain(Box::new(child.stdout.take().unwrap()));
    let err_reader = drain(Box::new(child.stderr.take().unwrap()));
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > BATCH_LIMIT {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = writer.join();
    let _ = child.wait();
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap()).to_string();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).to_string();
    let last = stmts
        .iter()
        .rev()
        .find(|(_, s)| stdout.contains(s.as_str()))
        .map_or("(none echoed)", |(_, s)| s.as_str());
    let last: String = last.chars().take(400).collect();
    if status.is_some_and(|s| s.signal().is_none()) && !stdout.lines().any(|l| l == "uq-fuzz-end") {
        return Err(format!("sqlite3 stopped before the last statement; last statement started: {last}\nstderr tail: {}", tail(&stderr)));
    }
    match status {
        None => {
            return Err(format!(
                "sqlite3 hung for {BATCH_LIMIT:?}; last statement started: {last}"
            ))
        }
        Some(s) if s.signal().is_some() => {
            return Err(format!(
                "sqlite3 died of signal {:?}; last statement started: {last}\nstderr tail: {}",
                s.signal(),
                tail(&stderr)
            ))
        }
        _ => {}
    }
    for bad in ["panicked", "internal error", "RUST_BACKTRACE"] {
        if let Some(line) = stderr.lines().find(|l| l.contains(bad)) {
            return Err(format!("{bad:?} in sqlite3's output: {line}"));
        }
    }
    Ok(stderr
        .lines()
        .filter(|l| l.starts_with("Parse error") || l.starts_with("Runtime error"))
        .count())
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

#[test]
fn every_function_survives_malformed_arguments() {
    let sb = Sandbox::new("fuzz-sql");
    let no_model = sb.dir.join("no-such-model.gguf").display().to_string();
    let sb = sb.with_env("UQ_LOCAL_LLM", &no_model);
    let (funcs, modules) = registered(&sb);
    assert!(
        funcs.len() >= 30 && modules.len() >= 7,
        "found {funcs:?} {modules:?}"
    );
    let db = sb.dir.join("fuzz.db").display().to_string();
    // A small table for uq_score_table, so a job that does start ends quickly.
    let out = Command::new(SQLITE)
        .arg(&db)
        .arg("CREATE TABLE t(id INTEGER PRIMARY KEY, response TEXT, samples TEXT); INSERT INTO t VALUES (1, 'A b.', '[\"A b.\"]'), (2, NULL, 'x');")
        .output()
        .unwrap();
    assert!(out.status.success());

    let mut rng = Lcg(0x005e_ed0f_f022);
    let mut stmts: Vec<(String, String)> = Vec::new(); // (target, statement)
    let mut arities: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (name, narg, kind) in &funcs {
        arities
            .entry((name.clone(), kind.clone()))
            .or_default()
            .push(*narg);
    }
    for m in &modules {
        arities.insert((m.clone(), "m".into()), (0..=4).collect());
    }
    // `uq_score_table` on the table above, not only on garbage names.
    let mut values: Vec<&str> = VALUES.to_vec();
    values.push("'t'");
    for ((name, kind), nargs) in &arities {
        let max = *nargs.iter().max().unwrap();
        // Wrong argument counts.
        for n in 0..=max + 1 {
            if !nargs.contains(&n) {
                stmts.push((name.clone(), call(name, kind, &vec!["NULL"; n])));
            }
        }
        for &n in nargs {
            // Each value, and each huge value, in each position, the others well-formed text.
            for pos in 0..n {
                for v in values.iter().chain(HUGE) {
                    let mut args = vec!["'The sky is blue.'"; n];
                    args[pos] = v;
                    stmts.push((name.clone(), call(name, kind, &args)));
                }
            }
            // Random combinations.
            for _ in 0..CALLS_PER_ARITY {
                let args: Vec<&str> = (0..n).map(|_| values[rng.next(values.len())]).collect();
                stmts.push((name.clone(), call(name, kind, &args)));
            }
        }
    }
    // The table-valued functions as the right side of a join over malformed rows.
    for m in modules.iter().filter(|m| *m != "uq_llms_module") {
        stmts.push((m.clone(), format!(
            "SELECT count(*) FROM (SELECT NULL AS a UNION ALL SELECT x'00' UNION ALL SELECT '{{' UNION ALL SELECT 1e308) v, {m}(v.a, v.a) LIMIT 10;"
        )));
    }

    let pid_before = {
        sb.sqlite_ok("SELECT uq_nli('a', 'b') IS NOT NULL;");
        sb.daemon_pid().expect("a daemon runs")
    };
    let mut failures = Vec::new();
    let mut errors = 0;
    for (i, chunk) in stmts.chunks(BATCH).enumerate() {
        let t = Instant::now();
        match run_batch(&sb, &db, chunk) {
            Ok(n) => errors += n,
            Err(e) => failures.push(e),
        }
        eprintln!(
            "fuzz sql: batch {i} ({} calls, {} to {}) in {:.1} s",
            chunk.len(),
            chunk[0].0,
            chunk[chunk.len() - 1].0,
            t.elapsed().as_secs_f64()
        );
    }
    let mut per_target: BTreeMap<&str, usize> = BTreeMap::new();
    for (t, _) in &stmts {
        *per_target.entry(t.as_str()).or_default() += 1;
    }
    for (t, n) in &per_target {
        println!("fuzz sql {t}: {n} calls");
    }
    println!(
        "fuzz sql: {} calls over {} targets; {errors} SQL errors (the expected outcome), no crash, hang or panic",
        stmts.len(),
        per_target.len()
    );
    assert!(
        errors > stmts.len() / 2,
        "most malformed calls must be refused: {errors} errors"
    );
    assert!(
        failures.is_empty(),
        "{} failing batches:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert_eq!(
        sb.daemon_pid(),
        Some(pid_before),
        "the daemon died (or was restarted) during the harness"
    );
}
