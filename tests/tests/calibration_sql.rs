//! Calibration and tuned ensembles through the real extension and daemon: the SQL functions
//! `uq_fit_calibration`, `uq_calibrate`, `uq_fit_ensemble` and `uq_ensemble` in the stock
//! sqlite3 CLI (with GROUP BY, against values computed independently in plain Python), their
//! bad input, and whole-table jobs with option `calibration` and with the `ensemble` scorer,
//! UAD filtering on calibrated scores, end to end.

use uq_fake_openai::FakeOpenAi;
use uq_integration::*;

/// A sandbox whose daemon keeps its job registry (and completion cache) inside the sandbox.
fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("cache").join("completions.sqlite");
    sb.with_env("UQ_CACHE_DB", &cache.display().to_string())
}

/// Plain-Python helpers shared by the scripts: the Platt map, `np.interp` with clipping, mean.
const PY_HELPERS: &str = r#"
import math
def platt(a, b, s):
    return 1.0 / (1.0 + math.exp(-(a * s + b)))
def interp(xs, ys, s):
    if s <= xs[0]:
        return ys[0]
    if s >= xs[-1]:
        return ys[-1]
    for i in range(1, len(xs)):
        if s < xs[i]:
            return ys[i - 1] + (ys[i] - ys[i - 1]) * (s - xs[i - 1]) / (xs[i] - xs[i - 1])
def mean(v):
    return sum(v) / len(v)
def close(a, b, tol=1e-9):
    return a is not None and b is not None and abs(a - b) <= tol
"#;

/// The claims of the test answers (row i adds one claim of its own) and their labels.
const CLAIMS: [&str; 3] = [
    "Marie Curie was a physicist and chemist.",
    "She won the Nobel Prize in Physics in 1903.",
    "She was born in Vienna.",
];

/// Python that creates table `answers(id, prompt, answer, samples, claims, labels)` with `n` rows
/// in `db`: stored claims (`units_column`) and their labels (`labels_column`).
fn fill(db: &str, n: usize) -> String {
    format!(
        r#"
db = sqlite3.connect({db:?})
db.execute('CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT, claims TEXT, labels TEXT)')
claims = {claims:?}
samples = {samples:?}
rows = []
for i in range(1, {n} + 1):
    extra = 'She had {{}} children.'.format(i)
    c = claims + [extra]
    rows.append((i, 'Who was Marie Curie?', ' '.join(c), json.dumps(samples), json.dumps(c), json.dumps([1, 1, 0, i % 2])))
db.executemany('INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?)', rows)
db.commit()
db.close()
"#,
        claims = CLAIMS.to_vec(),
        samples = SAMPLES.to_vec(),
    )
}

/// A reconstruction LLM on the fake OpenAI server (UAD rewrites the kept claims with it).
fn reconstruction_llm(fake: &FakeOpenAi) -> String {
    format!(
        r#"{{"backend":"openai","base_url":"{}","model":"rebuilder","api_key_env":null,"max_retries":0}}"#,
        fake.base_url
    )
}

/// Job 1: option `calibration` (an inverting Platt model of entailment, so that calibrated and
/// raw scores rank the claims in opposite orders) and UAD on the calibrated entailment. Job 2:
/// the `ensemble` scorer (with its components listed), calibrated by an isotonic model, as UAD
/// scorer. Every stored value is recomputed in Python from the stored raw scores; `uqd report`
/// then shows both calibrations.
#[test]
fn jobs_store_calibrated_scores_and_ensembles_and_uad_filters_on_them() {
    let sb = sandbox("calib-jobs");
    let fake = FakeOpenAi::scripted(vec![]);
    let db = sb.dir.join("results.db").display().to_string();
    let n = 4;
    let (a, b) = (-6.0, 3.0);
    let (xs, ys) = ([0.3, 0.5, 0.7], [0.1, 0.4, 0.9]);
    let code = format!(
        r#"
{helpers}
{fill}
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
platt_model = json.dumps({{"method": "platt", "a": {a}, "b": {b}}})
iso_model = json.dumps({{"method": "isotonic", "x": {xs:?}, "y": {ys:?}}})
common = {{"granularity": "claim", "units_column": "claims", "labels_column": "labels",
          "uad": True, "threshold": 0.5, "verify": False,
          "reconstruction_llm": json.loads({rebuild:?})}}
opts1 = dict(common, scorers=["entailment", "noncontradiction"],
             calibration={{"entailment": json.loads(platt_model)}})
opts2 = dict(common, scorers=["entailment", "noncontradiction", "ensemble"],
             ensemble_weights={{"entailment": 1, "noncontradiction": 3}},
             calibration={{"ensemble": json.loads(iso_model)}}, uad_scorer="ensemble")
jobs = [conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(o),)).fetchone()[0] for o in (opts1, opts2)]
status = [conn.execute("SELECT uq_wait(?, 600)", (j,)).fetchone()[0] for j in jobs]
errors = conn.execute("SELECT count(*) FROM uq_job_error").fetchone()[0]
run = dict(conn.execute("SELECT job_id, run_id FROM uq_job").fetchall())

def units(run_id, scorer):
    return conn.execute("SELECT answer_id, position, score, calibrated FROM uq_scored_units "
                        "WHERE run_id = ? AND scorer = ? ORDER BY answer_id, position", (run_id, scorer)).fetchall()
problems = []
# Job 1: entailment calibrated by Platt, noncontradiction not calibrated.
r1 = run[jobs[0]]
ent1 = units(r1, "entailment")
for (_, _, s, c) in ent1:
    if not close(c, platt({a}, {b}, s)):
        problems.append(("platt", s, c))
if any(c is not None for (_, _, _, c) in units(r1, "noncontradiction")):
    problems.append("noncontradiction has calibrated scores without a model")
# The response level: the mean of the calibrated unit scores.
for (answer_id, score, cal) in conn.execute("SELECT answer_id, score, calibrated FROM uq_scored_answers WHERE run_id = ? AND scorer = 'entailment'", (r1,)):
    mine = [c for (aid, _, _, c) in ent1 if aid == answer_id]
    if not close(cal, mean(mine)):
        problems.append(("response", answer_id, cal, mean(mine)))
# UAD on the calibrated entailment: kept = calibrated >= 0.5, confidences calibrated.
uad1 = conn.execute("SELECT answer_id, scorer, threshold, pre_confidence, post_confidence, n_units, n_kept, calibrated, refined_response FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ? ORDER BY answer_id", (r1,)).fetchall()
kept_raw_would_differ = False
for (answer_id, scorer, thr, pre, post, n_units, n_kept, calibrated, refined) in uad1:
    cal = [c for (aid, _, _, c) in ent1 if aid == answer_id]
    raw = [s for (aid, _, s, _) in ent1 if aid == answer_id]
    kept = [c for c in cal if c >= 0.5]
    if (scorer, thr, calibrated, n_units) != ("entailment", 0.5, 1, len(cal)) or n_kept != len(kept):
        problems.append(("uad1", answer_id, scorer, thr, calibrated, n_units, n_kept, len(kept)))
    if not close(pre, mean(cal)) or (kept and not close(post, mean(kept))) or (not kept and post is not None):
        problems.append(("uad1 confidences", answer_id, pre, post))
    if kept and not refined.startswith("reply "):
        problems.append(("uad1 refined", refined))
    kept_raw_would_differ |= [s >= 0.5 for s in raw] != [c >= 0.5 for c in cal]

# Job 2: the ensemble is 1/4 entailment + 3/4 noncontradiction, calibrated by the isotonic model.
r2 = run[jobs[1]]
ent2, non2, ens2 = units(r2, "entailment"), units(r2, "noncontradiction"), units(r2, "ensemble")
for (e, nc, en) in zip(ent2, non2, ens2):
    want = 0.25 * e[2] + 0.75 * nc[2]
    if not close(en[2], want) or not close(en[3], interp({xs:?}, {ys:?}, want)):
        problems.append(("ensemble", e, nc, en))
    if e[3] is not None or nc[3] is not None:
        problems.append("components calibrated without a model")
uad2 = conn.execute("SELECT answer_id, scorer, n_kept, calibrated FROM uq_uad u JOIN uq_answer a USING (answer_id) WHERE a.run_id = ? ORDER BY answer_id", (r2,)).fetchall()
for (answer_id, scorer, n_kept, calibrated) in uad2:
    cal = [c for (aid, _, _, c) in ens2 if aid == answer_id]
    if (scorer, calibrated, n_kept) != ("ensemble", 1, len([c for c in cal if c >= 0.5])):
        problems.append(("uad2", answer_id, scorer, calibrated, n_kept))
print(json.dumps(dict(status=status, errors=errors, problems=problems,
    n=[len(ent1), len(ens2), len(uad1), len(uad2)],
    kept=[r[6] for r in uad1], kept_raw_would_differ=kept_raw_would_differ)))
"#,
        helpers = PY_HELPERS,
        fill = fill(&db, n),
        rebuild = reconstruction_llm(&fake),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["status"], serde_json::json!(["done", "done"]), "{v}");
    assert_eq!(v["errors"], 0, "{v}");
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    assert_eq!(v["n"], serde_json::json!([4 * n, 4 * n, n, n]), "{v}");
    assert_eq!(
        v["kept_raw_would_differ"], true,
        "the inverting model must change which claims are kept: {v}"
    );

    // The report compares raw and calibrated scores for both calibrated scorers.
    let report = sb.dir.join("report");
    let o = std::process::Command::new(dist().join("uqd"))
        .args(["report", &db, "--out", &report.display().to_string()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let table = &html[html
        .find("<table id=\"calibration-metrics\">")
        .expect("calibration table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 3, "header + 2 rows: {table}");
    assert!(
        table.contains(">entailment<") && table.contains(">ensemble<"),
        "{table}"
    );
}

/// Python that fills table `t(grp, s, l)` of `db`: per group 300 scores in [0, 1] with labels
/// drawn with P(1) = σ(slope·s + intercept), and returns the rows.
const PY_DATA: &str = r#"
import random
def make(db):
    rng = random.Random(20240611)
    rows = []
    for grp, slope, icpt in (("g1", 5.0, -2.0), ("g2", -3.0, 1.0)):
        for _ in range(300):
            s = round(rng.random(), 4)
            p = 1.0 / (1.0 + math.exp(-(slope * s + icpt)))
            rows.append((grp, s, 1 if rng.random() < p else 0))
    db.execute("CREATE TABLE t(grp TEXT, s REAL, l INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    return rows

def newton_platt(s, l):
    # Logistic regression of Platt's targets on the score, by plain Newton iterations on the
    # log-likelihood (gradient sum (t - p)(s, 1), Hessian -sum p(1-p)(s, 1)(s, 1)^T).
    npos = sum(l); nneg = len(l) - npos
    t = [(npos + 1) / (npos + 2) if y else 1 / (nneg + 2) for y in l]
    a = b = 0.0
    for _ in range(100):
        g1 = g2 = h11 = h12 = h22 = 0.0
        for x, ti in zip(s, t):
            p = 1.0 / (1.0 + math.exp(-(a * x + b)))
            g1 += (ti - p) * x; g2 += ti - p
            w = p * (1 - p)
            h11 += w * x * x; h12 += w * x; h22 += w
        det = h11 * h22 - h12 * h12
        a += (h22 * g1 - h12 * g2) / det
        b += (h11 * g2 - h12 * g1) / det
    return a, b
"#;

/// `uq_fit_calibration` per group (GROUP BY) against a Platt fit computed in Python by Newton's
/// method, `uq_calibrate` against the logistic function, isotonic fits calibrated in sample
/// (Σ p = Σ labels per group) and monotone, and the hand-worked PAV example.
#[test]
fn calibration_functions_match_independent_fits() {
    let sb = Sandbox::new("calib-fns");
    let code = format!(
        r#"
{PY_HELPERS}
{PY_DATA}
rows = make(conn)
problems = []
for grp, model in conn.execute("SELECT grp, uq_fit_calibration(s, l) FROM t GROUP BY grp ORDER BY grp"):
    m = json.loads(model)
    g = [(s, l) for (gg, s, l) in rows if gg == grp]
    a, b = newton_platt([s for s, _ in g], [l for _, l in g])
    if m["method"] != "platt" or not close(m["a"], a, 1e-7) or not close(m["b"], b, 1e-7):
        problems.append(("platt", grp, m, a, b))
    if (m["n"], m["positives"]) != (len(g), sum(l for _, l in g)):
        problems.append(("counts", grp, m))
    # applied to every row of the group
    for (s, p) in conn.execute("SELECT s, uq_calibrate(s, ?) FROM t WHERE grp = ?", (model, grp)):
        if not close(p, platt(m["a"], m["b"], s), 1e-12):
            problems.append(("apply", grp, s, p))
slopes = [json.loads(m)["a"] for (m,) in conn.execute("SELECT uq_fit_calibration(s, l, 'Platt') FROM t GROUP BY grp ORDER BY grp")]
# Isotonic per group: in-sample the calibrated scores sum to the positives, and are monotone.
iso = conn.execute('''
  WITH m AS (SELECT grp, uq_fit_calibration(s, l, 'isotonic') AS model FROM t GROUP BY grp)
  SELECT t.grp, sum(uq_calibrate(t.s, m.model)), sum(t.l), count(*) FROM t JOIN m USING (grp) GROUP BY t.grp ORDER BY t.grp''').fetchall()
for (grp, sp, sl, n) in iso:
    if not close(sp, sl, 1e-9) or n != 300:
        problems.append(("isotonic sum", grp, sp, sl, n))
for (grp, model) in conn.execute("SELECT grp, uq_fit_calibration(s, l, 'isotonic') FROM t GROUP BY grp"):
    m = json.loads(model)
    xs, ys = m["x"], m["y"]
    if any(x2 <= x1 for x1, x2 in zip(xs, xs[1:])) or any(y2 < y1 for y1, y2 in zip(ys, ys[1:])):
        problems.append(("isotonic shape", grp, m))
# The hand-worked PAV example: labels 0 1 0 1 1 0 at .1 .. .6 pool to blocks {{.1}}: 0,
# {{.2, .3}}: 1/2, {{.4, .5, .6}}: 2/3.
conn.execute("CREATE TABLE h(s REAL, l INTEGER)")
conn.executemany("INSERT INTO h VALUES (?, ?)", [(0.4, 1), (0.1, 0), (0.6, 0), (0.2, 1), (0.5, 1), (0.3, 0), (None, 1), (0.9, None)])
hm = conn.execute("SELECT uq_fit_calibration(s, l, 'isotonic') FROM h").fetchone()[0]
h = json.loads(hm)
applied = [conn.execute("SELECT uq_calibrate(?, ?)", (x, hm)).fetchone()[0] for x in (0.0, 0.15, 0.25, 0.35, 0.55, 5, None)]
print(json.dumps(dict(problems=problems, slopes=slopes, hand=h, applied=applied)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    // The groups were drawn with slopes of opposite signs.
    let slopes = v["slopes"].as_array().unwrap();
    assert!(
        slopes[0].as_f64().unwrap() > 2.0 && slopes[1].as_f64().unwrap() < -1.0,
        "{v}"
    );
    let h = &v["hand"];
    assert_eq!(h["x"], serde_json::json!([0.1, 0.2, 0.3, 0.4, 0.6]), "{v}");
    let y: Vec<f64> = serde_json::from_value(h["y"].clone()).unwrap();
    let want = [0.0, 0.5, 0.5, 2.0 / 3.0, 2.0 / 3.0];
    assert!(
        y.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-15),
        "{v}"
    );
    assert_eq!(
        (h["n"].as_u64(), h["positives"].as_u64()),
        (Some(6), Some(3)),
        "NULL rows skipped: {v}"
    );
    let applied: Vec<Option<f64>> = serde_json::from_value(v["applied"].clone()).unwrap();
    let want = [
        Some(0.0),
        Some(0.25),
        Some(0.5),
        Some(7.0 / 12.0),
        Some(2.0 / 3.0),
        Some(2.0 / 3.0),
        None,
    ];
    for (a, w) in applied.iter().zip(want) {
        match (a, w) {
            (Some(a), Some(w)) => assert!((a - w).abs() < 1e-12, "{v}"),
            (a, w) => assert_eq!(*a, w, "{v}"),
        }
    }
}

/// `uq_fit_ensemble` per group: the perfect scorer of each group takes all the weight from the
/// noise, for both objectives; `uq_ensemble` is the weighted mean, a missing component leaves
/// the others rescaled.
#[test]
fn ensemble_functions_pick_the_perfect_scorer_and_weigh_scores() {
    let sb = Sandbox::new("ens-fns");
    let code = format!(
        r#"
{PY_HELPERS}
import random
rng = random.Random(7)
rows = []
for grp in ("x", "y"):
    for i in range(200):
        l = 1 if rng.random() < 0.6 else 0
        perfect = 0.6 + 0.4 * rng.random() if l else 0.4 * rng.random()
        noise = rng.random()
        a, b = (perfect, noise) if grp == "x" else (noise, perfect)
        rows.append((grp, a, b, l))
conn.execute("CREATE TABLE u(grp TEXT, a REAL, b REAL, l INTEGER)")
conn.executemany("INSERT INTO u VALUES (?, ?, ?, ?)", rows)
fits = conn.execute('''SELECT grp, uq_fit_ensemble(json_object('a', a, 'b', b), l),
    uq_fit_ensemble(json_object('a', a, 'b', b), l, '{{"objective":"log_loss"}}')
    FROM u GROUP BY grp ORDER BY grp''').fetchall()
problems = []
for (a, b, got) in conn.execute("SELECT a, b, uq_ensemble(json_object('a', a, 'b', b), '{{\"a\":1,\"b\":3}}') FROM u"):
    if not close(got, (a + 3 * b) / 4, 1e-12):
        problems.append((a, b, got))
missing = conn.execute('''SELECT uq_ensemble('{{"a":0.2,"b":null}}', '{{"a":0.25,"b":0.75}}'),
    uq_ensemble('{{"a":null,"b":null}}', '{{"a":0.25,"b":0.75}}'),
    uq_ensemble(NULL, '{{"a":1}}'),
    uq_ensemble('{{"a":0.2,"c":0.9}}', '{{"a":1,"b":0}}')''').fetchone()
print(json.dumps(dict(fits=fits, problems=problems, missing=missing)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let fit = |i: usize, j: usize| -> serde_json::Value {
        serde_json::from_str(v["fits"][i][j].as_str().unwrap()).unwrap()
    };
    for j in [1, 2] {
        assert_eq!(fit(0, j), serde_json::json!({"a": 1.0, "b": 0.0}), "{v}");
        assert_eq!(fit(1, j), serde_json::json!({"a": 0.0, "b": 1.0}), "{v}");
    }
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    assert_eq!(
        v["missing"],
        serde_json::json!([0.2, null, null, 0.2]),
        "{v}"
    );
}

/// Bad input gives errors that name the function, the argument and the fix (the full texts are
/// pinned in tests/golden/errors/calibration.txt by tests/tests/errors.rs).
#[test]
fn bad_input_names_the_argument_and_the_fix() {
    let sb = Sandbox::new("calib-bad");
    let t = "CREATE TABLE t(s, l); INSERT INTO t VALUES (0.1, 0), (0.8, 1), (0.4, 1);";
    let cases: &[(&str, &[&str])] = &[
        (
            "CREATE TABLE e(s, l); SELECT uq_fit_calibration(s, l) FROM e;",
            &["uq_fit_calibration: no labelled rows to fit on", "of both classes"],
        ),
        (
            &format!("{t} UPDATE t SET l = NULL; SELECT uq_fit_calibration(s, l) FROM t;"),
            &["no labelled rows to fit on", "(3 rows had a NULL score or label)"],
        ),
        (
            &format!("{t} SELECT uq_fit_calibration(s, 2) FROM t;"),
            &["uq_fit_calibration: label must be 0 or 1", "got INTEGER 2"],
        ),
        (
            &format!("{t} SELECT uq_fit_calibration(s, 1) FROM t;"),
            &["all 3 labelled rows have label 1", "add rows of the other class"],
        ),
        (
            &format!("{t} SELECT uq_fit_calibration(s, l, 'beta') FROM t;"),
            &["uq_fit_calibration: method: unknown calibration method \"beta\"", "\"platt\""],
        ),
        (
            "SELECT uq_calibrate(0.5, NULL);",
            &["uq_calibrate: model_json is NULL; pass the JSON that uq_fit_calibration returns"],
        ),
        (
            r#"SELECT uq_calibrate(0.5, '{"method":"platt","a":1}');"#,
            &["uq_calibrate: model_json has no \"b\""],
        ),
        (
            r#"SELECT uq_calibrate(0.5, '{"method":"isotonic","x":[0.2,0.1],"y":[0,1]}');"#,
            &["model_json.x must be strictly increasing"],
        ),
        (
            r#"SELECT uq_calibrate('high', '{"method":"platt","a":1,"b":0}');"#,
            &["uq_calibrate: score must be a number"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble(json_object('a', s), 1) FROM t;"),
            &["uq_fit_ensemble: all 3 labelled rows have label 1"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble('{{' || s, l) FROM t;"),
            &["uq_fit_ensemble: scores_json is not valid JSON"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble(s, l) FROM t;"),
            &["uq_fit_ensemble: scores_json must be TEXT (JSON), got REAL 0.1"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble(CASE WHEN s > 0.5 THEN json_object('a', s) ELSE json_object('a', s, 'b', s) END, l) FROM t;"),
            &["scores_json must name the same scorers in every row"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble(json_object('a', s * 3), l, '{{\"objective\":\"log_loss\"}}') FROM t;"),
            &["objective log_loss takes the scores as probabilities", "use objective auroc"],
        ),
        (
            &format!("{t} SELECT uq_fit_ensemble(json_object('a', s), l, '{{\"objectiv\":\"auroc\"}}') FROM t;"),
            &["uq_fit_ensemble: unknown option \"objectiv\" in options_json"],
        ),
        (
            r#"SELECT uq_ensemble('{"a":0.5}', '{"a":-1}');"#,
            &["uq_ensemble: weights_json.a is -1: every weight must be a number >= 0"],
        ),
        (
            r#"SELECT uq_ensemble('{"a":0.5}', '{"a":0.5,"b":0.5}');"#,
            &["uq_ensemble: scores_json has no \"b\", which weights_json weights 0.5"],
        ),
        (
            r#"SELECT uq_ensemble('[0.5]', '{"a":1}');"#,
            &["uq_ensemble: scores_json must be a JSON object of scorer → score"],
        ),
    ];
    for (sql, needles) in cases {
        let e = sb.sqlite_err(sql);
        for n in *needles {
            assert!(e.contains(n), "{sql}\n→ {e}\nlacks {n:?}");
        }
    }
}

/// Where users look: `uq_unit_scores` shows the calibrated scores beside the raw ones,
/// `response_confidence` returns the calibrated confidence, and `uad_claims` / `uad_filter`
/// filter on calibrated scores, also of the ensemble as UAD scorer.
#[test]
fn scoring_and_uad_functions_use_calibrated_scores_and_the_ensemble() {
    let sb = sandbox("calib-uad");
    let fake = FakeOpenAi::scripted(vec![]);
    let claims: Vec<String> = CLAIMS.iter().map(|c| c.to_string()).collect();
    let code = format!(
        r#"
{PY_HELPERS}
response = ' '.join({claims:?})
samples = json.dumps({samples:?})
a, b = -6.0, 3.0
platt_model = {{"method": "platt", "a": a, "b": b}}
weights = {{"entailment": 1, "noncontradiction": 3}}
base = {{"granularity": "claim", "units": {claims:?}, "verify": False,
        "reconstruction_llm": json.loads({rebuild:?})}}
o_unit = dict(base, scorers=["entailment", "ensemble"], ensemble_weights=weights,
              calibration={{"entailment": platt_model}})
rows = conn.execute("SELECT unit_idx, scorer, score, calibrated FROM uq_unit_scores(?, ?, ?) ORDER BY scorer, unit_idx",
                    (response, samples, json.dumps(o_unit))).fetchall()
ent = [r for r in rows if r[1] == "entailment"]
ens = [r for r in rows if r[1] == "ensemble"]
non = [r[1] for r in conn.execute("SELECT unit_idx, score FROM uq_unit_scores(?, ?, ?) ORDER BY unit_idx",
                    (response, samples, json.dumps(dict(base, scorers=["noncontradiction"])))).fetchall()]
problems = []
for (i, _, s, c) in ent:
    if not close(c, platt(a, b, s)):
        problems.append(("unit calibrated", i, s, c))
for (i, _, s, c) in ens:
    if not close(s, 0.25 * ent[i][2] + 0.75 * non[i], 1e-12) or c is not None:
        problems.append(("ensemble", i, s, c))
o_conf = dict(base, scorers=["entailment"], calibration={{"entailment": platt_model}})
conf = conn.execute("SELECT response_confidence(?, ?, ?), claim_confidence(?, ?, ?)",
                    (response, samples, json.dumps(o_conf), response, samples, json.dumps(dict(base, scorers=["entailment"])))).fetchone()
if not close(conf[0], mean([c for (_, _, _, c) in ent])) or not close(conf[1], mean([s for (_, _, s, _) in ent])):
    problems.append(("confidence", conf))
# UAD on calibrated entailment: kept = calibrated >= 0.5.
o_uad = dict(base, scorers=["entailment"], calibration={{"entailment": platt_model}}, threshold=0.5)
uad = conn.execute("SELECT idx, score, calibrated, kept, threshold, pre_confidence, refined_response FROM uad_claims(?, ?, ?)",
                   (response, samples, json.dumps(o_uad))).fetchall()
for (i, s, c, k, thr, pre, refined) in uad:
    if not close(c, platt(a, b, s)) or k != (1 if c >= 0.5 else 0) or thr != 0.5 or not close(pre, mean([u[2] for u in uad])):
        problems.append(("uad", i, s, c, k, thr, pre))
kept = sum(u[3] for u in uad)
raw_kept_differ = [u[1] >= 0.5 for u in uad] != [u[3] == 1 for u in uad]
refined = conn.execute("SELECT uad_filter(?, ?, ?)", (response, samples, json.dumps(o_uad))).fetchone()[0]
# UAD with the ensemble as UAD scorer, calibrated by an isotonic model.
iso = {{"method": "isotonic", "x": [0.3, 0.5, 0.7], "y": [0.1, 0.4, 0.9]}}
o_ens = dict(base, uad_scorer="ensemble", ensemble_weights=weights, calibration={{"ensemble": iso}}, threshold=0.3)
uad_e = conn.execute("SELECT idx, score, calibrated, kept FROM uad_claims(?, ?, ?)",
                     (response, samples, json.dumps(o_ens))).fetchall()
for (i, s, c, k) in uad_e:
    if not close(s, ens[i][2], 1e-12) or not close(c, interp(iso["x"], iso["y"], s)) or k != (1 if c >= 0.3 else 0):
        problems.append(("uad ensemble", i, s, c, k))
print(json.dumps(dict(problems=problems, n=[len(ent), len(ens), len(uad), len(uad_e)],
                      kept=kept, raw_kept_differ=raw_kept_differ, refined=refined)))
"#,
        samples = SAMPLES.to_vec(),
        rebuild = reconstruction_llm(&fake),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    assert_eq!(v["n"], serde_json::json!([3, 3, 3, 3]), "{v}");
    let kept = v["kept"].as_i64().unwrap();
    assert_eq!(
        v["raw_kept_differ"], true,
        "the inverting model changes the kept claims: {v}"
    );
    // Some claim kept: the refined answer is the reconstruction LLM's reply; none: the response.
    let refined = v["refined"].as_str().unwrap();
    if kept > 0 {
        assert!(refined.starts_with("reply "), "{v}");
    } else {
        assert_eq!(refined, CLAIMS.join(" "), "{v}");
    }
}
