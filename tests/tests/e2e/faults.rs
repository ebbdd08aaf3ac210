//! Fault injection with nothing lost (issue 13, item 2), through the real extension in
//! /usr/bin/python3's sqlite3 and the real daemon: mid-job, the database file becomes read-only,
//! the disk fills (a file-size limit on the daemon), another connection holds the write lock past
//! the busy timeout, the LLM server refuses connections for a while; at a restart the completion
//! cache file is corrupt, the NLI model file truncated. In each, the rows committed before the
//! fault stay as they were, no row is written twice (counts against distinct keys), the job
//! records the error, and it resumes to completion. Each test prints one line
//! `FAULT {"fault": …, "rows_before": …, "rows_after": …, "duplicates": …}` (run with
//! `--nocapture` to see them).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use uq_fake_openai::FakeOpenAi;
use uq_integration::users;
use uq_integration::*;

/// Python helpers shared by the scripts: the job table, snapshots, duplicates, the resume.
fn prelude(sb: &Sandbox, db: &str) -> String {
    format!(
        r#"
import subprocess, signal, time
DB = {db:?}
UQD = {uqd:?}
SOCK = {sock:?}
def fill(n, samples=True):
    d = sqlite3.connect(DB)
    d.execute("CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT)")
    resp = {resp:?}
    smp = {samples:?}
    d.executemany("INSERT INTO answers VALUES (?, ?, ?, ?)",
        [(i, 'Tell me about Marie Curie ({{}}).'.format(i), resp + ' She had {{}} students.'.format(i + 2),
          json.dumps([s + ' Row {{}}.'.format(i) for s in smp]) if samples else None) for i in range(1, n + 1)])
    d.commit(); d.close()
def open_db():
    c = sqlite3.connect(DB, check_same_thread=False, isolation_level=None, timeout=60)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    return c
def reader():
    return sqlite3.connect(DB, isolation_level=None, timeout=60)
def committed(c):
    return c.execute("SELECT a.source_key, u.position, s.scorer, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) JOIN uq_unit_score s USING (unit_id) ORDER BY 1, 2, 3").fetchall()
def answers(c):
    return c.execute("SELECT count(*) FROM uq_answer").fetchone()[0]
def duplicates(c):
    a = c.execute("SELECT count(*) - count(DISTINCT run_id || '/' || source_key) FROM uq_answer").fetchone()[0]
    u = c.execute("SELECT count(*) - count(DISTINCT answer_id || '/' || position) FROM uq_unit").fetchone()[0]
    return a + u
def wait_done(c, job, n, limit=180):
    t0 = time.time()
    while c.execute("SELECT done FROM uq_job WHERE job_id = ?", (job,)).fetchone()[0] < n and time.time() - t0 < limit:
        time.sleep(0.01)
def daemon_pid():
    return json.loads(subprocess.check_output([UQD, "status", "--socket", SOCK]))["pid"]
def resume(job, *extra):
    r = subprocess.run([UQD, "score", DB, "--resume", str(job), *extra], capture_output=True, text=True)
    return dict(rc=r.returncode, out=r.stdout.strip(), err=r.stderr[-2000:])
def job_row(c, job):
    return c.execute("SELECT status, done, total, errors, message FROM uq_jobs WHERE job_id = ?", (job,)).fetchone()
def log_text():
    try:
        return open(os.path.join(os.path.dirname(SOCK), 'uqd.log'), errors='replace').read()
    except OSError:
        return ''
"#,
        uqd = dist().join("uqd").display().to_string(),
        sock = sb.socket.display().to_string(),
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    )
}

/// A sandbox whose daemon keeps its completion cache and job registry inside it.
fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("cache").join("completions.sqlite");
    sb.with_env("UQ_CACHE_DB", &cache.display().to_string())
}

/// Runs `code` (after the prelude) and returns its last line as JSON; prints the FAULT line.
fn run(sb: &Sandbox, db: &str, code: &str) -> serde_json::Value {
    let out = sb.python_ok(&format!("{}\n{code}", prelude(sb, db)));
    for l in out.lines().filter(|l| l.starts_with("FAULT ")) {
        println!("{l}");
    }
    serde_json::from_str(out.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// What every fault must leave: rows committed before kept, none twice, the job done with all
/// `n` rows (4 units each) after the resume.
fn assert_nothing_lost(v: &serde_json::Value, n: i64) {
    let before = v["rows_before"].as_i64().unwrap();
    assert!(before >= 1 && before < n, "the fault landed mid-job: {v}");
    assert_eq!(
        v["kept"], true,
        "rows committed before the fault are unchanged: {v}"
    );
    assert_eq!(v["duplicates"], 0, "{v}");
    assert_eq!(v["answers"], n, "every row once: {v}");
    assert_eq!(v["distinct_keys"], n, "{v}");
    assert_eq!(v["units"], 4 * n, "{v}");
    assert_eq!(v["final"][0], "done", "{v}");
    assert_eq!(v["final"][1], n, "{v}");
    assert_eq!(v["final"][3], 0, "no row errors left: {v}");
}

/// The closing checks of every script: `before` (rows committed before the fault) against now.
const CLOSING: &str = r#"
r = reader()
after = committed(r)
print("FAULT " + json.dumps(dict(fault=FAULT, rows_before=len(set(a[0] for a in before)), rows_after=answers(r), duplicates=duplicates(r))))
res.update(kept=set(before) <= set(after), duplicates=duplicates(r), answers=answers(r),
           rows_before=len(set(a[0] for a in before)),
           distinct_keys=r.execute("SELECT count(DISTINCT source_key) FROM uq_answer").fetchone()[0],
           units=r.execute("SELECT count(*) FROM uq_unit").fetchone()[0], final=job_row(r, job))
print(json.dumps(res))
"#;

#[test]
fn disk_full_during_a_chunk_commit() {
    let sb = sandbox("fault-full");
    let db = sb.dir.join("full.db").display().to_string();
    let n = 60; // runway, so that the fault lands mid-job on a fast machine too
    let code = format!(
        r#"
FAULT = 'disk full (RLIMIT_FSIZE on the daemon)'
fill({n})
c = open_db()
job = c.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('entailment'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
wait_done(c, job, 3)
pid = daemon_pid()
# Every write past the first byte of any file fails with EFBIG: SQLite's "disk is full".
subprocess.check_call(["prlimit", "--pid", str(pid), "--fsize=1:"])
res = dict()
res['wait_during'] = c.execute("SELECT uq_wait(?, 120)", (job,)).fetchone()[0]
before = committed(reader())
res['rows_at_failure'] = answers(reader())
subprocess.check_call(["prlimit", "--pid", str(pid), "--fsize=unlimited:"])
res['same_daemon'] = daemon_pid() == pid
# Once the disk takes writes again, the failure is recorded in the job row.
c.execute("SELECT uq_wait(?, 5)", (job,)).fetchone()
res['recorded'] = job_row(reader(), job)
res['resume'] = resume(job)
{CLOSING}
"#
    );
    let v = run(&sb, &db, &code);
    assert_eq!(v["wait_during"], "failed", "the job reports the fault: {v}");
    assert_eq!(
        v["same_daemon"], true,
        "the daemon survived the full disk: {v}"
    );
    let rec = &v["recorded"];
    assert_eq!(rec[0], "failed", "{v}");
    let msg = rec[4].as_str().unwrap_or_default();
    assert!(msg.contains("full") && msg.contains("--resume"), "{v}");
    assert!(v["rows_at_failure"].as_i64().unwrap() >= 3, "{v}");
    assert_eq!(v["resume"]["rc"], 0, "{v}");
    assert_nothing_lost(&v, n);
}

#[test]
fn a_write_lock_held_past_the_busy_timeout() {
    let sb = sandbox("fault-lock").with_env("UQ_BUSY_TIMEOUT_MS", "1000");
    let db = sb.dir.join("lock.db").display().to_string();
    let n = 60; // runway, so that the fault lands mid-job on a fast machine too
    let code = format!(
        r#"
FAULT = 'write lock held past the busy timeout'
fill({n})
c = open_db()
job = c.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('entailment'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
wait_done(c, job, 3)
holder = sqlite3.connect(DB, isolation_level=None)
holder.execute("BEGIN IMMEDIATE")
res = dict()
res['wait_during'] = c.execute("SELECT uq_wait(?, 60)", (job,)).fetchone()[0]
before = committed(reader())
res['rows_at_failure'] = answers(reader())
holder.execute("ROLLBACK")
holder.close()
c.execute("SELECT uq_wait(?, 5)", (job,)).fetchone()
res['recorded'] = job_row(reader(), job)
res['resume'] = resume(job)
{CLOSING}
"#
    );
    let v = run(&sb, &db, &code);
    assert_eq!(v["wait_during"], "failed", "{v}");
    let rec = &v["recorded"];
    assert_eq!(rec[0], "failed", "{v}");
    assert!(
        rec[4].as_str().unwrap_or_default().contains("locked"),
        "{v}"
    );
    assert_eq!(v["resume"]["rc"], 0, "{v}");
    assert_nothing_lost(&v, n);
}

/// A TCP forwarder on a fixed loopback port to `upstream`: it accepts `serve_first`
/// connections, then closes its port (connections are refused) for `outage`, then listens
/// again on the same port.
struct FlakyProxy {
    port: u16,
}

impl FlakyProxy {
    fn start(upstream: u16, serve_first: usize, outage: Duration) -> FlakyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut listener = Some(listener);
            let mut served = 0;
            while let Some(l) = listener.as_ref() {
                let Ok((client, _)) = l.accept() else { break };
                forward(client, upstream);
                served += 1;
                if served == serve_first {
                    drop(listener.take());
                    std::thread::sleep(outage);
                    listener = Some(TcpListener::bind(("127.0.0.1", port)).expect("rebind"));
                }
            }
        });
        FlakyProxy { port }
    }
}

fn forward(client: TcpStream, upstream: u16) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let pipe = |mut from: TcpStream, mut to: TcpStream| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while let Ok(k) = from.read(&mut buf) {
                if k == 0 || to.write_all(&buf[..k]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(std::net::Shutdown::Write);
        });
    };
    pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
    pipe(server, client);
}

#[test]
fn the_llm_server_refuses_connections_then_recovers() {
    let fake = FakeOpenAi::scripted(vec![]);
    // 4 generation calls go through, then the port refuses connections for 3 s.
    let proxy = FlakyProxy::start(fake.port(), 4, Duration::from_secs(3));
    let sb = sandbox("fault-llm");
    let db = sb.dir.join("llm.db").display().to_string();
    let n = 16;
    let llm = serde_json::json!({"backend": "openai", "base_url": format!("http://127.0.0.1:{}/v1", proxy.port),
                                 "model": "fake-model", "api_key_env": null, "max_retries": 0, "timeout_ms": 5000});
    let code = format!(
        r#"
FAULT = 'LLM server refuses connections, then recovers'
fill({n}, samples=False)
c = open_db()
opts = json.dumps(dict(scorers=['entailment'], generate=2, generation_llm=json.loads({llm:?}), chunk_size=1, concurrency=1))
job = c.execute("SELECT uq_score_table('answers', ?)", (opts,)).fetchone()[0]
res = dict()
res['first'] = c.execute("SELECT uq_wait(?, 300)", (job,)).fetchone()[0]
r = reader()
before = committed(r)
res['errors_recorded'] = r.execute("SELECT count(*) FROM uq_job_error WHERE job_id = ?", (job,)).fetchone()[0]
res['error_texts'] = [e[0] for e in r.execute("SELECT DISTINCT error FROM uq_job_error")]
res['answers_first'] = answers(r)
# The server is back: retry the failed rows.
time.sleep(3.5)
res['resume'] = resume(job, '--retry-errors')
{CLOSING}
"#,
        llm = serde_json::to_string(&llm).unwrap(),
    );
    let v = run(&sb, &db, &code);
    assert_eq!(v["first"], "done", "row errors do not stop the job: {v}");
    let errors = v["errors_recorded"].as_i64().unwrap();
    assert!(errors >= 1, "rows failed while the server refused: {v}");
    assert!(
        v["answers_first"].as_i64().unwrap() >= 1,
        "rows before the outage: {v}"
    );
    assert!(
        v["error_texts"].to_string().contains("generation_llm"),
        "each failed row's error names the LLM: {v}"
    );
    assert_eq!(v["resume"]["rc"], 0, "{v}");
    assert_nothing_lost(&v, n);
}

#[test]
fn a_corrupt_completion_cache_at_start_is_rebuilt() {
    let fake = FakeOpenAi::scripted(vec![]);
    let sb = sandbox("fault-cache");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let db = sb.dir.join("cache.db").display().to_string();
    let n = 30;
    let code = format!(
        r#"
FAULT = 'completion cache corrupt at a restart'
fill({n}, samples=False)
c = open_db()
opts = json.dumps(dict(scorers=['entailment'], generate=2, generation_llm=json.loads({llm:?}), chunk_size=1, concurrency=1))
job = c.execute("SELECT uq_score_table('answers', ?)", (opts,)).fetchone()[0]
wait_done(c, job, 3)
os.kill(daemon_pid(), signal.SIGKILL)
time.sleep(0.3)
before = committed(reader())
CACHE = {cache:?}
for suffix in ('-wal', '-shm'):
    try: os.remove(CACHE + suffix)
    except OSError: pass
with open(CACHE, 'wb') as f:
    f.write(b'garbage, not a SQLite file ' * 200)
res = dict()
res['final_wait'] = c.execute("SELECT uq_wait(?, 300)", (job,)).fetchone()[0]
res['aside'] = sorted(n for n in os.listdir(os.path.dirname(CACHE)) if '.corrupt-' in n)
res['warning'] = [l for l in log_text().splitlines() if 'warning: completion cache' in l]
res['cache_rows'] = sqlite3.connect(CACHE).execute("SELECT count(*) FROM completions").fetchone()[0]
{CLOSING}
"#,
        llm = serde_json::to_string(&fake.config()).unwrap(),
        cache = cache.display().to_string(),
    );
    let v = run(&sb, &db, &code);
    assert_eq!(v["final_wait"], "done", "{v}");
    assert_eq!(v["aside"].as_array().map(Vec::len), Some(1), "{v}");
    let warning = v["warning"].to_string();
    assert!(
        warning.contains("corrupt") && warning.contains("moved it to"),
        "{v}"
    );
    assert!(
        v["cache_rows"].as_i64().unwrap() > 0,
        "the rebuilt cache is used: {v}"
    );
    assert_nothing_lost(&v, n);
}

#[test]
fn a_truncated_nli_model_is_a_clear_error_at_start() {
    let sb = sandbox("fault-model");
    let good = dist().join("models").join("nli");
    let bad = sb.dir.join("nli-truncated");
    std::fs::create_dir_all(&bad).unwrap();
    for f in std::fs::read_dir(&good).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_owned();
        if name == "model.onnx" {
            let bytes = std::fs::read(&f).unwrap();
            std::fs::write(bad.join(&name), &bytes[..bytes.len() / 3]).unwrap();
        } else {
            std::fs::copy(&f, bad.join(&name)).unwrap();
        }
    }
    let db = sb.dir.join("model.db").display().to_string();
    let n = 30;
    let code = format!(
        r#"
FAULT = 'NLI model file truncated at a restart'
fill({n})
c = open_db()
job = c.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('entailment'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
wait_done(c, job, 3)
os.kill(daemon_pid(), signal.SIGKILL)
time.sleep(0.3)
before = committed(reader())
os.environ['UQ_NLI_MODEL'] = {bad:?}
res = dict()
try:
    c.execute("SELECT uq_wait(?, 60)", (job,)).fetchone()
    res['error'] = None
except sqlite3.Error as e:
    res['error'] = str(e)
res['rows_while_broken'] = answers(reader())
del os.environ['UQ_NLI_MODEL']
res['final_wait'] = c.execute("SELECT uq_wait(?, 300)", (job,)).fetchone()[0]
{CLOSING}
"#,
        bad = bad.display().to_string(),
    );
    let v = run(&sb, &db, &code);
    let e = v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {v}"));
    assert!(
        e.contains(&bad.join("model.onnx").display().to_string()),
        "names the file: {e}"
    );
    assert!(
        e.contains("damaged or incomplete") && e.contains("UQ_NLI_MODEL"),
        "says the fix: {e}"
    );
    assert_eq!(v["final_wait"], "done", "{v}");
    assert_nothing_lost(&v, n);
}

/// The uid the read-only test runs its client and daemon as (root ignores file modes).
const OTHER_UID: u32 = 4242;

#[test]
fn the_database_becomes_read_only_mid_job() {
    let sb = sandbox("fault-readonly");
    let db = sb.dir.join("ro.db").display().to_string();
    let n = 60; // runway, so that the fault lands mid-job on a fast machine too
    let code = format!(
        r#"
FAULT = 'database file read-only mid-job'
fill({n})
c = open_db()
job = c.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('entailment'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
wait_done(c, job, 3)
os.chmod(DB, 0o444)
res = dict(daemon_uid=os.stat('/proc/%d' % daemon_pid()).st_uid, done_at_fault=job_row(reader(), job)[1])
res['wait_during'] = c.execute("SELECT uq_wait(?, 120)", (job,)).fetchone()[0]
before = committed(reader())
res['rows_at_failure'] = answers(reader())
os.chmod(DB, 0o644)
c.execute("SELECT uq_wait(?, 5)", (job,)).fetchone()
res['recorded'] = job_row(reader(), job)
res['resume'] = resume(job)
{CLOSING}
"#
    );
    let script = format!("{}\n{code}", prelude(&sb, &db));
    let v = python_as(&sb, OTHER_UID, &script);
    assert_eq!(v["wait_during"], "failed", "{v}");
    let rec = &v["recorded"];
    assert_eq!(rec[0], "failed", "{v}");
    assert!(
        rec[4].as_str().unwrap_or_default().contains("readonly"),
        "{v}"
    );
    assert_eq!(v["resume"]["rc"], 0, "{v}");
    assert_nothing_lost(&v, n);
}

/// Runs a Python script as `uid` (and gid), the sandbox handed over to that uid; returns its
/// last line as JSON.
fn python_as(sb: &Sandbox, uid: u32, script: &str) -> serde_json::Value {
    users::chown(&sb.dir, uid);
    let prelude = format!("import sqlite3, json, os, sys\nEXT = {:?}\n", ext_path());
    let (home, sock) = (
        sb.dir.display().to_string(),
        sb.socket.display().to_string(),
    );
    let cache = sb
        .dir
        .join("cache")
        .join("completions.sqlite")
        .display()
        .to_string();
    let env = [
        ("HOME", home.as_str()),
        ("UQ_SOCKET", sock.as_str()),
        ("UQ_CACHE_DB", cache.as_str()),
    ];
    let out = users::as_user(uid, PYTHON, &["-"], &env, &format!("{prelude}{script}\n"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The daemon runs as that uid: stop it as that uid too.
    let uqd = dist().join("uqd").display().to_string();
    let _ = users::as_user(uid, &uqd, &["stop", "--socket", &sock], &[], "");
    assert!(
        out.status.success(),
        "python as uid {uid} failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    for l in stdout.lines().filter(|l| l.starts_with("FAULT ")) {
        println!("{l}");
    }
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}
