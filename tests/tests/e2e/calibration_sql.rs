//! Calibration and tuned ensembles through the real extension and daemon: the SQL functions
//! `uq_fit_calibration`, `uq_calibrate`, `uq_fit_ensemble` and `uq_ensemble` in the stock
//! sqlite3 CLI (with GROUP BY, against values computed independently in plain Python), their
//! bad input, and whole-table jobs with option `calibration` and with the `ensemble` scorer,
//! UAD filtering on calibrated scores, end to end; prior-shift adaptation
//! (`uq_adapt_calibration`, job option `calibration.adapt`) and the notes on models fitted on
//! another setting.

use uq_fake_openai::FakeOpenAi;
use uq_integration::*;

/// A sandbox whose daemon keeps its job registry (and completion cache) inside the sandbox.
fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("cache").join("completions.sqlite");
    sb.with_env("UQ_CACHE_DB", &cache.display().to_string())
}

/// Plain-Python helpers shared by the scripts: the Platt map, `np.interp` with clipping, mean.
pub(super) const PY_HELPERS: &str = r#"
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
# The fake reconstruction ("reply N") states no kept claim: returned as written.
common = {{"granularity": "claim", "units_column": "claims", "labels_column": "labels",
          "uad": True, "threshold": 0.5, "verify": False, "reconstruction_fallback": False,
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
/// pinned in tests/golden/errors/calibration.txt by tests/tests/e2e/errors.rs).
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
base = {{"granularity": "claim", "units": {claims:?}, "verify": False, "reconstruction_fallback": False,
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

/// The EM of Saerens, Latinne & Decaestecker (2002, §2.3), written again in plain Python for the
/// tests below: the prior re-estimated from the adjusted posteriors.
pub(super) const PY_EM: &str = r#"
def shift(p, train, target):
    if p <= 0.0 or p >= 1.0:
        return p
    a = target / train * p
    b = (1.0 - target) / (1.0 - train) * (1.0 - p)
    return a / (a + b)
def em(post, train):
    prior = train
    for it in range(1, 1001):
        nxt = mean([shift(p, train, prior) for p in post])
        moved = abs(nxt - prior)
        prior = nxt
        if moved < 1e-6:
            break
    return prior, it
"#;

/// `uq_adapt_calibration` per group (GROUP BY) against the EM in Python: the training prior is
/// the model's positives/n, the target prior the EM's, the iterations the same; `uq_calibrate`
/// applies the adapted model as Bayes' re-weighting of the fitted probability; on labelled
/// target groups drawn at another base rate, the estimate lies within 0.03 of the truth and the
/// adapted ECE is below the unadapted one. The fourth argument of `uq_fit_calibration` is kept
/// as `fitted_on` (the premise written canonically).
#[test]
fn adapt_aggregate_matches_the_em_and_recovers_the_base_rate() {
    let sb = Sandbox::new("calib-adapt");
    let code = format!(
        r#"
{PY_HELPERS}
{PY_EM}
import random
rng = random.Random(2002)
def draw(n, rate):
    out = []
    for _ in range(n):
        l = 1 if rng.random() < rate else 0
        out.append((rng.gauss(0.7 if l else 0.4, 0.12), l))
    return out
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(EXT)
conn.execute("CREATE TABLE fit(s REAL, l INTEGER)")
conn.executemany("INSERT INTO fit VALUES (?, ?)", draw(6000, 0.76))
conn.execute("CREATE TABLE target(grp TEXT, s REAL, l INTEGER)")
truth = {{}}
for grp, rate in (("a", 0.5), ("b", 0.9)):
    rows = draw(6000, rate)
    truth[grp] = mean([l for _, l in rows])
    conn.executemany("INSERT INTO target VALUES (?, ?, ?)", [(grp, s, l) for s, l in rows])
conn.execute("INSERT INTO target VALUES ('a', NULL, NULL)")
problems = []
model = conn.execute("""SELECT uq_fit_calibration(s, l, 'platt',
    '{{"scorer":"Entailment","num_samples":5,"premise":{{"top_k":3}}}}') FROM fit""").fetchone()[0]
m = json.loads(model)
if m["fitted_on"] != {{"scorer": "entailment", "num_samples": 5, "premise": {{"top_k": 3, "rank": "lexical"}}}}:
    problems.append(("fitted_on", m["fitted_on"]))
train = m["positives"] / m["n"]
out = {{}}
for grp, adapted in conn.execute("SELECT grp, uq_adapt_calibration(s, ?) FROM target GROUP BY grp ORDER BY grp", (model,)):
    a = json.loads(adapted)
    scores = [s for (s,) in conn.execute("SELECT s FROM target WHERE grp = ? AND s IS NOT NULL", (grp,))]
    prior, it = em([platt(m["a"], m["b"], s) for s in scores], train)
    p = a["prior"]
    if not close(p["train"], train, 1e-15) or not close(p["target"], prior, 1e-12) or p["iterations"] != it:
        problems.append(("em", grp, p, prior, it))
    # (a and b read back from JSON: equal to rounding)
    if not close(a["a"], m["a"], 1e-12) or not close(a["b"], m["b"], 1e-12) or (a["n"], a["fitted_on"]) != (m["n"], m["fitted_on"]):
        problems.append(("model kept", grp, a))
    for (s, q) in conn.execute("SELECT s, uq_calibrate(s, ?) FROM target WHERE grp = ? AND s IS NOT NULL LIMIT 50", (adapted, grp)):
        if not close(q, shift(platt(m["a"], m["b"], s), train, prior), 1e-12):
            problems.append(("apply", grp, s, q))
    ece_raw, ece_adapted = conn.execute(
        "SELECT uq_ece(uq_calibrate(s, ?), l), uq_ece(uq_calibrate(s, ?), l) FROM target WHERE grp = ?",
        (model, adapted, grp)).fetchone()
    out[grp] = dict(prior=p["target"], truth=truth[grp], ece=ece_raw, ece_adapted=ece_adapted)
# adapting the adapted model again gives the same model
again = conn.execute("SELECT uq_adapt_calibration(s, (SELECT uq_adapt_calibration(s, ?) FROM target WHERE grp = 'a')) FROM target WHERE grp = 'a'", (model,)).fetchone()[0]
first = conn.execute("SELECT uq_adapt_calibration(s, ?) FROM target WHERE grp = 'a'", (model,)).fetchone()[0]
if json.loads(again) != json.loads(first):
    problems.append(("readapt", again, first))
print(json.dumps(dict(problems=problems, out=out)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    for grp in ["a", "b"] {
        let g = &v["out"][grp];
        let f = |k: &str| g[k].as_f64().unwrap();
        assert!((f("prior") - f("truth")).abs() < 0.03, "{grp}: {v}");
        assert!(f("ece_adapted") < f("ece"), "{grp}: {v}");
    }
}

/// Bad input of the adaptation and of the fitted-on record (full texts pinned in
/// tests/golden/errors/calibration.txt by tests/tests/e2e/errors.rs).
#[test]
fn adapt_bad_input_says_why() {
    let sb = Sandbox::new("calib-adapt-bad");
    let model = r#"'{"method":"platt","a":4,"b":-2,"n":10,"positives":7}'"#;
    let t = "CREATE TABLE t(s); INSERT INTO t VALUES (0.1), (0.8), (0.4);";
    let cases: &[(String, &[&str])] = &[
        (
            format!("CREATE TABLE e(s); SELECT uq_adapt_calibration(s, {model}) FROM e;"),
            &["uq_adapt_calibration: no target scores to adapt to"],
        ),
        (
            format!("{t} UPDATE t SET s = NULL; SELECT uq_adapt_calibration(s, {model}) FROM t;"),
            &["uq_adapt_calibration: no target scores to adapt to"],
        ),
        (
            format!(r#"{t} SELECT uq_adapt_calibration(s, '{{"method":"platt","a":4,"b":-2}}') FROM t;"#),
            &["uq_adapt_calibration: model_json has no training prior", "uq_fit_calibration"],
        ),
        (
            format!(r#"{t} SELECT uq_adapt_calibration(s, '{{"method":"platt","a":4,"b":-2,"n":5,"positives":5}}') FROM t;"#),
            &["records 5 of 5 units labelled 1", "one class only"],
        ),
        (
            format!(r#"{t} SELECT uq_adapt_calibration(s, '{{"method":"platt","a":90,"b":-5,"n":10,"positives":7}}') FROM t WHERE s > 0.3;"#),
            &["the 2 target scores all look like one class", "use the model unadapted"],
        ),
        (
            format!("{t} SELECT uq_adapt_calibration(s, NULL) FROM t;"),
            &["uq_adapt_calibration: model_json is NULL"],
        ),
        (
            format!("{t} SELECT uq_fit_calibration(s, s > 0.3, 'platt', '{{\"scorer\":\"nope\"}}') FROM t;"),
            &["uq_fit_calibration: fitted_on.scorer:"],
        ),
        (
            format!("{t} SELECT uq_fit_calibration(s, s > 0.3, 'platt', '{{\"model\":\"x\"}}') FROM t;"),
            &["fitted_on has unknown key \"model\"", "its keys are scorer, nli_model"],
        ),
    ];
    for (sql, needles) in cases {
        let e = sb.sqlite_err(sql);
        for n in *needles {
            assert!(e.contains(n), "{sql}\n→ {e}\nlacks {n:?}");
        }
    }
}

/// Jobs with `calibration.adapt` through the real daemon: the stored calibrated unit and response
/// scores are the adapted model's (recomputed in Python from the stored raw scores by the EM
/// above), the job's message gives the estimate and names the setting that differs from the
/// model's `fitted_on`; `"llm"` groups the answers by the LLM that wrote them; a target whose
/// scores all look like one class is left unadapted, with the reason in the message; a model
/// without a training prior is refused when the job is created. `uq_debug()` names the
/// difference after a scoring call.
#[test]
fn jobs_adapt_calibration_and_name_settings_that_differ() {
    let sb = sandbox("calib-adapt-jobs");
    let db = sb.dir.join("adapt.db").display().to_string();
    let n = 6;
    let code = format!(
        r#"
{PY_HELPERS}
{PY_EM}
{fill}
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
model = {{"method": "platt", "a": 6, "b": -3, "n": 40, "positives": 30,
          "fitted_on": {{"scorer": "entailment", "precision": "fp99", "num_samples": 2}}}}
sure = {{"method": "platt", "a": 60, "b": 25, "n": 40, "positives": 30}}
common = {{"granularity": "claim", "units_column": "claims", "aggregation": "mean",
          "scorers": ["entailment", "noncontradiction"]}}
opts = [dict(common, calibration={{"entailment": model, "adapt": "job"}}),
        dict(common, calibration={{"entailment": model, "adapt": "llm"}}),
        dict(common, calibration={{"noncontradiction": sure, "adapt": "job"}})]
jobs = [conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(o),)).fetchone()[0] for o in opts]
status = [conn.execute("SELECT uq_wait(?, 600)", (j,)).fetchone()[0] for j in jobs]
info = {{j: (r, msg) for (j, r, msg) in conn.execute("SELECT job_id, run_id, message FROM uq_job")}}
problems = []
for j in jobs[:2]:
    run, msg = info[j]
    units = conn.execute("SELECT answer_id, score, calibrated FROM uq_scored_units WHERE run_id = ? AND scorer = 'entailment' ORDER BY answer_id, position", (run,)).fetchall()
    prior, it = em([platt(6, -3, s) for (_, s, _) in units], 0.75)
    for (_, s, c) in units:
        if not close(c, shift(platt(6, -3, s), 0.75, prior), 1e-9):
            problems.append(("unit", j, s, c))
    for (aid, c) in conn.execute("SELECT answer_id, calibrated FROM uq_scored_answers WHERE run_id = ? AND scorer = 'entailment'", (run,)):
        want = mean([shift(platt(6, -3, s), 0.75, prior) for (a, s, _) in units if a == aid])
        if not close(c, want, 1e-9):
            problems.append(("answer", j, aid, c, want))
    if conn.execute("SELECT count(*) FROM uq_scored_units WHERE run_id = ? AND scorer = 'noncontradiction' AND calibrated IS NOT NULL", (run,)).fetchone()[0]:
        problems.append(("uncalibrated scorer got values", j))
    info[j] = (run, msg, prior, it, len(units))
run3, msg3 = info[jobs[2]]
for (s, c) in conn.execute("SELECT score, calibrated FROM uq_scored_units WHERE run_id = ? AND scorer = 'noncontradiction'", (run3,)):
    if not close(c, platt(60, 25, s), 1e-9):
        problems.append(("unadapted", s, c))
try:
    conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(dict(common, calibration={{"entailment": {{"method": "platt", "a": 6, "b": -3}}, "adapt": "job"}})),))
    no_prior = None
except sqlite3.Error as e:
    no_prior = str(e)
try:
    conn.execute("SELECT count(*) FROM uq_unit_scores(?, ?, ?)", ("A b.", json.dumps(["C d."]), json.dumps(dict(common, calibration={{"entailment": model, "adapt": "job"}})))).fetchone()
    outside = None
except sqlite3.Error as e:
    outside = str(e)
conn.execute("SELECT count(*) FROM uq_unit_scores(?, ?, ?)", ("She was born in Vienna.", json.dumps(["She was born in Warsaw."]), json.dumps(dict(scorers=["entailment"], calibration={{"entailment": model}})))).fetchone()
debug = [l for l in conn.execute("SELECT uq_debug()").fetchone()[0].splitlines() if l.startswith("last score notes")]
print(json.dumps(dict(status=status, problems=problems, info=[info[j] for j in jobs], no_prior=no_prior, outside=outside, debug=debug)))
"#,
        fill = fill(&db, n),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(
        v["status"],
        serde_json::json!(["done", "done", "done"]),
        "{v}"
    );
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    for (i, group) in [
        (0, "the job's answers (adapt \"job\")"),
        (1, "the answers uqlite did not generate (adapt \"llm\")"),
    ] {
        let msg = v["info"][i][1].as_str().unwrap();
        let (prior, it, units) = (
            v["info"][i][2].as_f64().unwrap(),
            v["info"][i][3].as_u64().unwrap(),
            v["info"][i][4].as_u64().unwrap(),
        );
        let want = format!(
            "calibration.entailment adapted to {group}: base rate 0.750 → {prior:.3} estimated from {units} unit scores ({it} EM iterations)"
        );
        assert!(msg.contains(&want), "{msg}\nlacks {want}");
        // the model records precision fp99 and 2 samples: both differences are named
        assert!(
            msg.contains("calibration.entailment: the model was fitted on scores made with another setting (precision: fitted on \"fp99\", applied to \"")
                && !msg.contains("num_samples"),
            "{msg}"
        );
    }
    let msg3 = v["info"][2][1].as_str().unwrap();
    assert!(
        msg3.starts_with("calibration.noncontradiction not adapted to the job's answers (its calibrated scores are the unadapted model's): the ")
            && msg3.contains("target scores all look like one class"),
        "{msg3}"
    );
    let e = v["no_prior"].as_str().unwrap();
    assert!(
        e.contains("option calibration.adapt = \"job\": option calibration.entailment has no training prior"),
        "{e}"
    );
    let e = v["outside"].as_str().unwrap();
    assert!(
        e.contains("option calibration.adapt adapts the models to a job's answers"),
        "{e}"
    );
    let d = v["debug"][0].as_str().unwrap();
    assert!(
        d.contains("calibration.entailment: the model was fitted on scores made with another setting (precision: fitted on \"fp99\", applied to \"")
            && d.contains("num_samples: fitted on 2, applied to 1"),
        "{d}"
    );
}
