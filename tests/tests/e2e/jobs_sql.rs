//! Whole-table jobs through the real extension and daemon: `uq_score_table`, `uq_wait`,
//! `uq_cancel`, the `uq_jobs` view; a `kill -9` of the daemon mid-job loses no committed row
//! and writes none twice; readers on other connections read while the job writes; bad and
//! hostile table or column names give clear errors and never run injected SQL; `uqd score`;
//! `uq_grade` / `uq_objectivity` on the embedded LLM.

use uq_integration::*;

/// A sandbox whose daemon keeps its job registry (and completion cache) inside the sandbox.
fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("cache").join("completions.sqlite");
    sb.with_env("UQ_CACHE_DB", &cache.display().to_string())
}

/// Python that fills table `answers` of `db` with `n` distinct rows (three sentences each, three
/// samples).
fn fill(db: &str, table: &str, n: usize) -> String {
    format!(
        r#"
db = sqlite3.connect({db:?})
db.execute('CREATE TABLE "{t}"(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT)'.replace('"{t}"', '"' + {table:?}.replace('"', '""') + '"'))
resp = {resp:?}
samples = {samples:?}
rows = [(i, 'Tell me about Marie Curie.', resp + ' She had {{}} students.'.format(i + 2), json.dumps([s + ' Row {{}}.'.format(i) for s in samples])) for i in range(1, {n} + 1)]
db.executemany('INSERT INTO "' + {table:?}.replace('"', '""') + '" VALUES (?, ?, ?, ?)', rows)
db.commit()
db.close()
"#,
        t = "T",
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    )
}

#[test]
fn job_survives_kill_9_without_loss_or_duplicates_while_readers_read() {
    let sb = sandbox("jobs-kill");
    let db = sb.dir.join("results.db").display().to_string();
    let n = 40;
    let code = format!(
        r#"
import subprocess, signal, threading, time
{fill}
conn = sqlite3.connect({db:?}, check_same_thread=False, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
job = conn.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('entailment', 'matched_noncontradiction'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]

# Readers on their own connections while the job writes: never an error, counts never go down.
stop = False
problems = []
reads = [0]
def reader():
    r = sqlite3.connect({db:?}, timeout=30)
    last = 0
    while not stop:
        try:
            c = r.execute("SELECT count(*) FROM uq_unit_score").fetchone()[0]
            r.execute("SELECT status, done, total, rows_per_s, eta_s FROM uq_jobs").fetchall()
            if c < last:
                problems.append(('went down', last, c))
            last = c
            reads[0] += 1
        except Exception as e:
            problems.append(repr(e))
        time.sleep(0.01)
threads = [threading.Thread(target=reader) for _ in range(2)]
for t in threads: t.start()

def done():
    return conn.execute("SELECT done FROM uq_job WHERE job_id = ?", (job,)).fetchone()[0]
t0 = time.time()
while done() < 3 and time.time() - t0 < 120:
    time.sleep(0.05)
pid = json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"]
os.kill(pid, signal.SIGKILL)
time.sleep(0.3)
status_after_kill, done_after_kill = conn.execute("SELECT status, done FROM uq_job").fetchone()
committed = conn.execute("SELECT a.source_key, u.position, s.scorer, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) JOIN uq_unit_score s USING (unit_id) ORDER BY 1, 2, 3").fetchall()

# A new daemon (started by any call that needs it) resumes the job from its registry, with no
# uq_wait: plain reads see it finish.
conn.execute("SELECT uq_nli('A dog runs.', 'An animal moves.')").fetchone()
t0 = time.time()
while conn.execute("SELECT status FROM uq_job").fetchone()[0] != 'done' and time.time() - t0 < 600:
    time.sleep(0.2)
resumed_without_wait = conn.execute("SELECT status FROM uq_job").fetchone()[0]
final = conn.execute("SELECT uq_wait(?, 600)", (job,)).fetchone()[0]
stop = True
for t in threads: t.join()
after = conn.execute("SELECT a.source_key, u.position, s.scorer, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) JOIN uq_unit_score s USING (unit_id) ORDER BY 1, 2, 3").fetchall()
kept = set(committed) <= set(after)
print(json.dumps(dict(
    status_after_kill=status_after_kill, done_after_kill=done_after_kill, final=final,
    resumed_without_wait=resumed_without_wait,
    answers=conn.execute("SELECT count(*) FROM uq_answer").fetchone()[0],
    distinct_keys=conn.execute("SELECT count(DISTINCT source_key) FROM uq_answer").fetchone()[0],
    units=conn.execute("SELECT count(*) FROM uq_unit").fetchone()[0],
    scores=conn.execute("SELECT count(*) FROM uq_unit_score").fetchone()[0],
    job=conn.execute("SELECT status, done, total, errors FROM uq_jobs").fetchone(),
    committed_kept=kept, committed=len(committed), reads=reads[0], problems=problems,
    new_pid=json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"] != pid,
)))
"#,
        fill = fill(&db, "answers", n),
        uqd = dist().join("uqd").display().to_string(),
        sock = sb.socket.display().to_string(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["status_after_kill"], "running", "{v}");
    let done_after_kill = v["done_after_kill"].as_i64().unwrap();
    assert!(
        (3..n as i64).contains(&done_after_kill),
        "killed mid-job: {v}"
    );
    assert_eq!(v["resumed_without_wait"], "done", "{v}");
    assert_eq!(v["final"], "done", "{v}");
    assert_eq!(v["new_pid"], true, "a new daemon resumed the job: {v}");
    assert_eq!(v["answers"], n, "every row once: {v}");
    assert_eq!(v["distinct_keys"], n, "{v}");
    // RESPONSE has 3 sentences + the added one: 4 units per row, 2 scorers each.
    assert_eq!(v["units"], 4 * n, "{v}");
    assert_eq!(v["scores"], 8 * n, "{v}");
    assert_eq!(v["job"], serde_json::json!(["done", n, n, 0]), "{v}");
    assert_eq!(
        v["committed_kept"], true,
        "rows committed before the kill are unchanged: {v}"
    );
    assert!(v["committed"].as_i64().unwrap() >= 3 * 8, "{v}");
    assert!(v["reads"].as_i64().unwrap() > 10, "{v}");
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
}

#[test]
fn bad_and_hostile_names_give_clear_errors_and_run_nothing() {
    let sb = sandbox("jobs-names");
    let db = sb.dir.join("names.db").display().to_string();
    let hostile = "weird \"name\"; DROP TABLE answers; --";
    let code = format!(
        r#"
{fill_plain}
{fill_hostile}
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
def err(sql, *args):
    try:
        conn.execute(sql, args).fetchall()
        return None
    except sqlite3.Error as e:
        return str(e)
res = {{}}
res['injected_table'] = err("SELECT uq_score_table('answers; DROP TABLE answers', '{{}}')")
res['injected_column'] = err("SELECT uq_score_table('answers', json_object('answer_column', 'answer\"; DROP TABLE answers; --'))")
res['missing_column'] = err("SELECT uq_score_table('answers', json_object('samples_column', 'nope'))")
res['bad_option'] = err("SELECT uq_score_table('answers', json_object('scorerz', json_array('luq')))")
res['bad_chunk'] = err("SELECT uq_score_table('answers', json_object('chunk_size', -1))")
res['null_table'] = err("SELECT uq_score_table(NULL)")
res['empty_table'] = err("SELECT uq_score_table('')")
conn.execute("CREATE TEMP TABLE scratch(answer, samples)")
res['temp_table'] = err("SELECT uq_score_table('scratch')")
res['wait_zero'] = err("SELECT uq_wait(0)")
res['wait_text'] = err("SELECT uq_wait('1')")
res['wait_missing'] = err("SELECT uq_wait(99)")
res['cancel_missing'] = err("SELECT uq_cancel(99)")
res['wait_timeout'] = err("SELECT uq_wait(1, -5)")
# The hostile name is a real table here: quoted, it is scored like any other.
job = conn.execute("SELECT uq_score_table(?, '{{\"scorers\":[\"entailment\"]}}')", ({hostile:?},)).fetchone()[0]
res['hostile_status'] = conn.execute("SELECT uq_wait(?)", (job,)).fetchone()[0]
res['hostile_rows'] = conn.execute("SELECT count(*) FROM uq_answer WHERE job_id = ?", (job,)).fetchone()[0]
res['tables'] = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'uq%'"))
res['answers_rows'] = conn.execute("SELECT count(*) FROM answers").fetchone()[0]
mem = sqlite3.connect(':memory:')
mem.enable_load_extension(True)
mem.load_extension(EXT)
mem.execute("CREATE TABLE t(answer, samples)")
try:
    mem.execute("SELECT uq_score_table('t')").fetchall()
except sqlite3.Error as e:
    res['in_memory'] = str(e)
print(json.dumps(res))
"#,
        fill_plain = fill(&db, "answers", 2),
        fill_hostile = fill(&db, hostile, 2),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    // Each is an error (their full texts are pinned by errors.rs, golden file errors/jobs.txt).
    let errors = "injected_table injected_column missing_column bad_option bad_chunk null_table \
                  empty_table temp_table wait_zero wait_text wait_missing cancel_missing \
                  wait_timeout in_memory";
    for k in errors.split_whitespace() {
        assert!(v[k].is_string(), "{k}: no error: {v}");
    }
    assert_eq!(v["hostile_status"], "done", "{v}");
    assert_eq!(v["hostile_rows"], 2, "{v}");
    assert_eq!(v["answers_rows"], 2, "nothing dropped: {v}");
    assert_eq!(
        v["tables"],
        serde_json::json!(["answers", "weird \"name\"; DROP TABLE answers; --"]),
        "{v}"
    );
}

#[test]
fn cancel_stops_a_job_and_uqd_score_runs_one_from_the_command_line() {
    let sb = sandbox("jobs-cancel");
    let db = sb.dir.join("c.db").display().to_string();
    let code = format!(
        r#"
import time
{fill}
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
job = conn.execute("SELECT uq_score_table('answers', json_object('scorers', json_array('matched_noncontradiction'), 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
t0 = time.time()
while conn.execute("SELECT done FROM uq_job").fetchone()[0] < 1 and time.time() - t0 < 60:
    time.sleep(0.05)
cancelled = conn.execute("SELECT uq_cancel(?)", (job,)).fetchone()[0]
final = conn.execute("SELECT uq_wait(?)", (job,)).fetchone()[0]
time.sleep(1.0)
done1 = conn.execute("SELECT done FROM uq_job").fetchone()[0]
time.sleep(1.0)
done2 = conn.execute("SELECT done FROM uq_job").fetchone()[0]
answers = conn.execute("SELECT count(*) FROM uq_answer").fetchone()[0]
print(json.dumps(dict(cancelled=cancelled, final=final, done1=done1, done2=done2, answers=answers,
                      finished=conn.execute("SELECT finished_at IS NOT NULL FROM uq_job").fetchone()[0])))
"#,
        fill = fill(&db, "answers", 30),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["cancelled"], "cancelled", "{v}");
    assert_eq!(v["final"], "cancelled", "{v}");
    assert_eq!(v["done1"], v["done2"], "nothing runs after the cancel: {v}");
    assert!(v["answers"].as_i64().unwrap() < 30, "{v}");
    assert_eq!(v["answers"], v["done1"], "{v}");
    assert_eq!(v["finished"], 1, "{v}");

    // `uqd score` from the command line over the same table: a new job, run to its end.
    let out = std::process::Command::new(dist().join("uqd"))
        .args([
            "score",
            &db,
            "answers",
            "--options",
            r#"{"scorers":["entailment"]}"#,
        ])
        .env("UQ_CACHE_DB", sb.dir.join("cache2.sqlite"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "done", "{r}");
    assert_eq!(r["rows"], 30, "{r}");
    let n = sb.sqlite_ok(&format!(
        "ATTACH {} AS r; SELECT count(*) FROM r.uq_answer WHERE job_id = {};",
        lit(&db),
        r["job_id"]
    ));
    assert_eq!(n, "30");
    let bad = std::process::Command::new(dist().join("uqd"))
        .args(["score", &db, "nope"])
        .output()
        .unwrap();
    assert!(!bad.status.success(), "its error is pinned by errors.rs");
}

#[test]
fn grading_functions_on_the_embedded_llm() {
    let sb = sandbox("jobs-grade");
    // The embedded model runs and its answer parses to a grade (its value is the model's).
    let out = sb.sqlite_ok(
        "SELECT typeof(uq_grade('Paris is the capital of France.', 'Paris is the capital and largest city of France.'));",
    );
    assert_eq!(out, "integer");
    // Their errors are pinned by errors.rs (golden file errors/jobs.txt).
}

#[test]
fn grading_functions_read_the_judges_answer() {
    use uq_fake_openai::{message, FakeOpenAi, Reply, Request};
    // The judge answers are pinned by the fake server: "Yes"/"No" by the unit, objective or
    // subjective by the claim, each in a wording the parsers must read.
    let fake = FakeOpenAi::with_handler(|r: &Request| {
        let system = message(&r.body, "system");
        let user = message(&r.body, "user");
        let text = if system.contains("linguistic analyst") {
            if user.contains("most beautiful") {
                "**Subjective**"
            } else {
                "Objective."
            }
        } else if user.contains("Lyon") {
            "No, the context says Paris."
        } else {
            "Yes."
        };
        Reply::Text(text.into())
    });
    let sb = sandbox("jobs-grade-fake");
    let judge = lit(&serde_json::json!({ "judge_llm": fake.config() }).to_string());
    let out = sb.sqlite_ok(&format!(
        "SELECT uq_grade('Paris is the capital of France.', 'Paris is the capital and largest city of France.', {judge}),
                uq_grade('Lyon is the capital of France.', 'Paris is the capital and largest city of France.', {judge}),
                uq_objectivity('Paris is the capital of France.', {judge}),
                uq_objectivity('Paris is the most beautiful city.', {judge});"
    ));
    assert_eq!(out, "1|0|1|0");
    assert_eq!(fake.requests(), 4, "one judge call per grade");
}
