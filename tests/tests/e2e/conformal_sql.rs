//! Conformal factuality (Mohri & Hashimoto 2024) through the real extension and daemon: the
//! aggregate `uq_fit_conformal` on the hand-worked example of docs/reference.md (GROUP BY α,
//! NULL labels, ties, answers with no false claim, β, fitted_on), its bad input, and
//! `uad_claims` / `uad_filter` with option `conformal`: the model's threshold, the kept claims,
//! and the notes in `uq_debug()` (the guarantee, a model fitted on another setting).

use uq_fake_openai::FakeOpenAi;
use uq_integration::*;

/// The hand-worked example (docs/reference.md, "Conformal factuality"), rows (answer, score,
/// label): r per answer 0, –, 0.3⁺, 0.5⁺, 0.5⁺, 0.6⁺, 0.2⁺, 0, 0.8⁺, 0.4⁺ (x⁺ the float just
/// above x). Answer 2 has only an unlabelled claim (no answer: 9 answers), answer 4 ties a true
/// and a false claim at 0.5, answer 6 has a false claim with a NULL score (never kept).
const PY_EXAMPLE: &str = r#"
import math
rows = [
    (1, 0.9, 1), (1, 0.5, 1),
    (2, 0.7, None),
    (3, 0.3, 0), (3, 0.7, 1),
    (4, 0.5, 0), (4, 0.5, 1), (4, 0.1, 0),
    ('five', 0.5, 0),
    (6, 0.6, 0), (6, 0.9, 1), (6, None, 0),
    (7, 0.2, 0),
    (8, 0.4, 1), (8, 0.3, None),
    (9, 0.8, 0), (9, 0.95, 1),
    (10, 0.4, 0), (10, 0.6, 1),
]
conn.execute("CREATE TABLE c(answer, score REAL, label INTEGER)")
conn.executemany("INSERT INTO c VALUES (?, ?, ?)", rows)
conn.execute("CREATE TABLE a(alpha REAL)")
conn.executemany("INSERT INTO a VALUES (?)", [(0.1,), (0.2,), (0.5,)])
up = lambda x: math.nextafter(x, 2.0)
"#;

/// The threshold is the ⌈(n + 1)(1 − α)⌉-th smallest nonconformity score, per α (GROUP BY);
/// NULL labels are left out and counted, an answer with only unlabelled claims is no answer,
/// a NULL score is a claim never kept; β and fitted_on are recorded.
#[test]
fn fit_conformal_matches_the_hand_worked_example() {
    let sb = Sandbox::new("conformal-fit");
    let code = format!(
        r#"
{PY_EXAMPLE}
fits = {{alpha: json.loads(m) for (alpha, m) in conn.execute(
    "SELECT a.alpha, uq_fit_conformal(c.score, c.label, c.answer, a.alpha) FROM a, c GROUP BY a.alpha ORDER BY a.alpha")}}
want = {{0.1: up(0.8), 0.2: up(0.6), 0.5: up(0.4)}}
problems = []
for alpha, m in fits.items():
    if m["threshold"] != want[alpha] or m["alpha"] != alpha or m["method"] != "conformal":
        problems.append(("threshold", alpha, m, want[alpha]))
    if (m["answers"], m["claims"], m["null_labels"]) != (9, 17, 2) or "beta" in m:
        problems.append(("counts", alpha, m))
beta = json.loads(conn.execute(
    "SELECT uq_fit_conformal(score, label, answer, 0.5, ?) FROM c",
    (json.dumps({{"beta": 0.5, "fitted_on": {{"scorer": "Entailment", "num_samples": 5}}}}),)).fetchone()[0])
print(json.dumps(dict(problems=problems, beta=beta)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    // β = 0.5 (false share of the kept claims ≤ 1/2): r = 0 but for answer 4 (2/3 at 0.1 →
    // 0.1⁺), 'five' (0.5⁺) and 7 (0.2⁺); the 5th of the 9 sorted is 0.
    let b = &v["beta"];
    assert_eq!(b["beta"], 0.5, "{v}");
    assert_eq!(
        b["fitted_on"],
        serde_json::json!({"scorer": "entailment", "num_samples": 5}),
        "{v}"
    );
    assert_eq!(b["threshold"], 0.0, "{v}");
}

/// Bad input names the argument and the fix.
#[test]
fn fit_conformal_bad_input_says_what_to_pass() {
    let sb = Sandbox::new("conformal-bad");
    let code = format!(
        r#"
{PY_EXAMPLE}
errors = []
for sql in [
    "SELECT uq_fit_conformal(score, label, answer, 0) FROM c",
    "SELECT uq_fit_conformal(score, label, answer, 1.5) FROM c",
    "SELECT uq_fit_conformal(score, label, answer, NULL) FROM c",
    "SELECT uq_fit_conformal(score, 2, answer, 0.1) FROM c",
    "SELECT uq_fit_conformal(score, label, NULL, 0.1) FROM c",
    "SELECT uq_fit_conformal(score, label, answer, 0.05) FROM c",
    "SELECT uq_fit_conformal(score, label, answer, 0.1, '{{\"beta\":1}}') FROM c",
    "SELECT uq_fit_conformal(score * 2, label, answer, 0.1) FROM c",
    "SELECT uq_fit_conformal(score, label, answer, 0.1) FROM c WHERE 0",
]:
    try:
        conn.execute(sql).fetchone()
        errors.append(None)
    except sqlite3.Error as e:
        errors.append(str(e))
print(json.dumps(errors))
"#
    );
    let out = sb.python_ok(&code);
    let v: Vec<Option<String>> = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let want = [
        "alpha must be strictly between 0 and 1, got 0",
        "alpha must be strictly between 0 and 1, got 1.5",
        "alpha is NULL",
        "label must be 1 (the claim is supported), 0 (it is not) or NULL",
        "answer_key is NULL",
        "too few labelled answers: alpha = 0.05 needs at least 19",
        "options_json.beta must be a number from 0 up to, not including, 1",
        "score must be a claim score in [0, 1]",
        "uq_fit_conformal: no rows",
    ];
    for (got, want) in v.iter().zip(want) {
        let got = got.as_deref().unwrap_or("no error");
        assert!(
            got.starts_with("uq_fit_conformal: ") && got.contains(want),
            "{got:?} should contain {want:?}"
        );
    }
}

/// `uad_claims` / `uad_filter` with option `conformal`: the threshold is the model's, a claim is
/// kept iff its score is ≥ it, the refined answer follows; `uq_debug()` states the guarantee
/// and warns of a model fitted on another setting; `conformal` with `threshold` is refused.
#[test]
fn uad_filters_at_the_conformal_threshold_and_says_so() {
    let sb = Sandbox::new("conformal-uad");
    let fake = FakeOpenAi::scripted(vec![]);
    let rebuild = format!(
        r#"{{"backend":"openai","base_url":"{}","model":"rebuilder","api_key_env":null,"max_retries":0}}"#,
        fake.base_url
    );
    let claims = [
        "Marie Curie was a physicist and chemist.",
        "She won the Nobel Prize in Physics in 1903.",
        "She was born in Vienna.",
    ];
    let code = format!(
        r#"
response = ' '.join({claims:?})
samples = json.dumps({samples:?})
base = {{"granularity": "claim", "units": {claims:?}, "verify": False, "reconstruction_fallback": False,
        "scorers": ["entailment"], "reconstruction_llm": json.loads({rebuild:?})}}
scores = [r[0] for r in conn.execute("SELECT score FROM uad_claims(?, ?, ?) ORDER BY idx",
                                     (response, samples, json.dumps(base)))]
# A model whose threshold lies between the scores: the middle of the two lowest distinct ones.
s = sorted(set(scores))
thr = (s[0] + s[1]) / 2 if len(s) > 1 else s[0]
model = {{"method": "conformal", "threshold": thr, "alpha": 0.1, "answers": 30, "claims": 90,
         "null_labels": 0}}
o = dict(base, conformal=model)
rows = conn.execute("SELECT idx, score, kept, threshold, post_confidence FROM uad_claims(?, ?, ?) ORDER BY idx",
                    (response, samples, json.dumps(o))).fetchall()
problems = [r for r in rows if r[3] != thr or r[2] != (1 if r[1] >= thr else 0)]
refined = conn.execute("SELECT uad_filter(?, ?, ?)", (response, samples, json.dumps(o))).fetchone()[0]
notes = [l for l in conn.execute("SELECT uq_debug()").fetchone()[0].splitlines() if "conformal" in l]
other = dict(model, fitted_on={{"precision": "fp64", "num_samples": 9}})
conn.execute("SELECT uad_filter(?, ?, ?)", (response, samples, json.dumps(dict(base, conformal=other)))).fetchone()
notes_other = [l for l in conn.execute("SELECT uq_debug()").fetchone()[0].splitlines() if "conformal" in l]
try:
    conn.execute("SELECT uad_filter(?, ?, ?)", (response, samples, json.dumps(dict(o, threshold=0.5)))).fetchone()
    both = None
except sqlite3.Error as e:
    both = str(e)
print(json.dumps(dict(problems=problems, kept=[r[2] for r in rows], refined=refined, notes=notes,
                      notes_other=notes_other, both=both)))
"#,
        samples = SAMPLES.to_vec(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    let kept: Vec<i64> = serde_json::from_value(v["kept"].clone()).unwrap();
    assert!(kept.contains(&1), "{v}");
    assert!(v["refined"].as_str().unwrap().starts_with("reply "), "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "conformal: P(all kept claims true) ≥ 0.9 for answers exchangeable with the 30 \
             calibration answers"
        ),
        "{v}"
    );
    assert!(!notes.contains("another setting"), "{v}");
    let other = v["notes_other"].to_string();
    assert!(
        other.contains("another setting")
            && other.contains("precision: fitted on \\\"fp64\\\"")
            && other.contains("num_samples: fitted on 9, applied to 3"),
        "{v}"
    );
    assert!(
        v["both"]
            .as_str()
            .unwrap_or("")
            .contains("options conformal and threshold both given"),
        "{v}"
    );
}

/// The loop in a job: a first job scores labelled answers, `uq_fit_conformal` fits on its
/// stored unit scores and labels (`uq_scored_units`), a second job with `uad` and option
/// `conformal` filters every answer at the model's threshold (`uq_uad.threshold`, `n_kept`); the
/// fake reconstruction loses the kept claims, which `uq_uad.warnings` records.
#[test]
fn jobs_fit_on_stored_labels_and_filter_at_the_conformal_threshold() {
    let sb = Sandbox::new("conformal-jobs");
    let fake = FakeOpenAi::scripted(vec![]);
    let rebuild = format!(
        r#"{{"backend":"openai","base_url":"{}","model":"rebuilder","api_key_env":null,"max_retries":0}}"#,
        fake.base_url
    );
    let db = sb.dir.join("results.db").display().to_string();
    let claims = [
        "Marie Curie was a physicist and chemist.",
        "She won the Nobel Prize in Physics in 1903.",
        "She was born in Vienna.",
    ];
    let code = format!(
        r#"
db = sqlite3.connect({db:?})
db.execute('CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT, claims TEXT, labels TEXT)')
rows = []
for i in range(1, 7):
    c = {claims:?} + ['She had {{}} children.'.format(i)]
    rows.append((i, 'Who was Marie Curie?', ' '.join(c), json.dumps({samples:?}), json.dumps(c), json.dumps([1, 1, 0, i % 2])))
db.executemany('INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?)', rows)
db.commit()
db.close()
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
common = {{"granularity": "claim", "units_column": "claims", "labels_column": "labels",
          "scorers": ["entailment"], "verify": False, "reconstruction_llm": json.loads({rebuild:?})}}
j1 = conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(common),)).fetchone()[0]
s1 = conn.execute("SELECT uq_wait(?, 600)", (j1,)).fetchone()[0]
r1 = conn.execute("SELECT run_id FROM uq_job WHERE job_id = ?", (j1,)).fetchone()[0]
model = conn.execute("SELECT uq_fit_conformal(score, label, answer_id, 0.5) FROM uq_scored_units WHERE run_id = ? AND scorer = 'entailment'", (r1,)).fetchone()[0]
m = json.loads(model)
j2 = conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(dict(common, uad=True, conformal=m)),)).fetchone()[0]
s2 = conn.execute("SELECT uq_wait(?, 600)", (j2,)).fetchone()[0]
r2 = conn.execute("SELECT run_id FROM uq_job WHERE job_id = ?", (j2,)).fetchone()[0]
problems = []
for (aid, thr, n_kept) in conn.execute("SELECT u.answer_id, u.threshold, u.n_kept FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ?", (r2,)).fetchall():
    scores = [s for (s,) in conn.execute("SELECT score FROM uq_scored_units WHERE answer_id = ? AND scorer = 'entailment'", (aid,))]
    if thr != m["threshold"] or n_kept != sum(1 for s in scores if s >= thr):
        problems.append((aid, thr, n_kept, scores))
n_uad = conn.execute("SELECT count(*) FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ?", (r2,)).fetchone()[0]
# the fake reconstruction states none of the kept claims: each answer that kept one stores the
# warning (uq_uad.warnings, migration 8) and falls back to the answer's own text
for (n_kept, warnings, refined) in conn.execute("SELECT u.n_kept, u.warnings, u.refined_response FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ?", (r2,)).fetchall():
    lost = n_kept > 0 and warnings is not None and any(w.startswith("the reconstruction lost") for w in json.loads(warnings))
    if lost != (n_kept > 0):
        problems.append(("warnings", n_kept, warnings, refined))
n_warned = conn.execute("SELECT count(*) FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ? AND u.warnings IS NOT NULL", (r2,)).fetchone()[0]
message = conn.execute("SELECT message FROM uq_job WHERE job_id = ?", (j2,)).fetchone()[0]
print(json.dumps(dict(status=[s1, s2], model=m, problems=problems, n_uad=n_uad, n_warned=n_warned, message=message)))
"#,
        samples = SAMPLES.to_vec(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["status"], serde_json::json!(["done", "done"]), "{v}");
    assert_eq!(
        (
            v["model"]["answers"].as_u64(),
            v["model"]["claims"].as_u64()
        ),
        (Some(6), Some(24)),
        "{v}"
    );
    assert_eq!(v["n_uad"], 6, "{v}");
    assert!(v["n_warned"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    // The job's message says which guarantee its UAD threshold carries.
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("conformal: P(all kept claims true) ≥ 0.5 for answers exchangeable with the 6 calibration answers"),
        "{v}"
    );
}
