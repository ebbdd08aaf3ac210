//! A grounded job through the real extension and daemon: a table whose rows carry their own
//! sources in a `context` column, scored with `grounded_entailment`; the daemon is killed with
//! SIGKILL mid-job, a new one resumes it, and no row is lost or written twice.

use uq_integration::*;

#[test]
fn a_job_over_a_context_column_survives_kill_9_without_loss_or_duplicates() {
    let sb = Sandbox::new("grounded-kill");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let db = sb.dir.join("rag.db").display().to_string();
    let n = 80;
    let code = format!(
        r#"
import subprocess, signal, time
db = sqlite3.connect({db:?})
db.execute("CREATE TABLE rag(id INTEGER PRIMARY KEY, answer TEXT, context TEXT)")
# Every row its own texts (no NLI cache hits across rows), so the job takes a while.
def row(i):
    ctx = ("Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903. "
           "She died in 1934. " + " ".join("In year {{}} the institute {{}} hired {{}} chemists.".format(1900 + j, i, j + i) for j in range(8)))
    answer = ("Marie Curie was born in Warsaw. She won the Nobel Prize in Physics. She died in {{}}. "
              "The institute {{}} hired {{}} chemists. It was founded in {{}}.").format(1934 if i % 2 else 1950, i, i + 3, 1880 + i)
    return (i, answer, json.dumps([ctx, "Row {{}} of the knowledge base lists {{}} papers.".format(i, 10 * i)]))
rows = [row(i) for i in range(1, {n} + 1)]
db.executemany("INSERT INTO rag VALUES (?, ?, ?)", rows)
db.commit()
db.close()
conn = sqlite3.connect({db:?}, check_same_thread=False, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
job = conn.execute("SELECT uq_score_table('rag', json_object('scorers', json_array('grounded_entailment', 'grounded_noncontradiction'), 'sources_column', 'context', 'chunk_size', 1, 'concurrency', 1))").fetchone()[0]
def done():
    return conn.execute("SELECT done FROM uq_job WHERE job_id = ?", (job,)).fetchone()[0]
t0 = time.time()
while done() < 3 and time.time() - t0 < 120:
    time.sleep(0.05)
pid = json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"]
os.kill(pid, signal.SIGKILL)
time.sleep(0.3)
status_after_kill, done_after_kill = conn.execute("SELECT status, done FROM uq_job").fetchone()
q = "SELECT a.source_key, u.position, s.scorer, s.score, s.evidence FROM uq_answer a JOIN uq_unit u USING (answer_id) JOIN uq_unit_score s USING (unit_id) ORDER BY 1, 2, 3"
committed = conn.execute(q).fetchall()
final = conn.execute("SELECT uq_wait(?, 600)", (job,)).fetchone()[0]
after = conn.execute(q).fetchall()
died = conn.execute("SELECT s.score, s.evidence FROM uq_scored_units s WHERE s.scorer = 'grounded_entailment' AND s.position = 2 AND s.source_key = '2'").fetchone()
ok = conn.execute("SELECT s.score FROM uq_scored_units s WHERE s.scorer = 'grounded_entailment' AND s.position = 2 AND s.source_key = '1'").fetchone()[0]
print(json.dumps(dict(
    status_after_kill=status_after_kill, done_after_kill=done_after_kill, final=final,
    answers=conn.execute("SELECT count(*) FROM uq_answer").fetchone()[0],
    distinct_keys=conn.execute("SELECT count(DISTINCT source_key) FROM uq_answer").fetchone()[0],
    scores=conn.execute("SELECT count(*) FROM uq_unit_score").fetchone()[0],
    with_evidence=conn.execute("SELECT count(*) FROM uq_unit_score WHERE json_valid(evidence)").fetchone()[0],
    job=conn.execute("SELECT status, done, total, errors FROM uq_jobs").fetchone(),
    committed_kept=set(committed) <= set(after), committed=len(committed),
    wrong_year=died[0], wrong_year_evidence=json.loads(died[1]), right_year=ok,
)))
"#,
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
    assert_eq!(v["final"], "done", "{v}");
    assert_eq!(v["answers"], n, "every row once: {v}");
    assert_eq!(v["distinct_keys"], n, "{v}");
    // 5 sentences per answer, 2 scorers, every score with its evidence.
    assert_eq!(v["scores"], 10 * n, "{v}");
    assert_eq!(v["with_evidence"], 10 * n, "{v}");
    assert_eq!(v["job"], serde_json::json!(["done", n, n, 0]), "{v}");
    assert_eq!(
        v["committed_kept"], true,
        "rows committed before the kill are unchanged: {v}"
    );
    assert!(v["committed"].as_i64().unwrap() >= 3 * 10, "{v}");
    // The right year is supported by the row's context, the wrong one not.
    assert!(v["right_year"].as_f64().unwrap() > 0.7, "{v}");
    assert!(
        v["wrong_year"].as_f64().unwrap() < v["right_year"].as_f64().unwrap(),
        "{v}"
    );
    assert_eq!(v["wrong_year_evidence"]["passage"], 0, "{v}");
}
