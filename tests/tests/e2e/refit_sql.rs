//! Calibration for a new LLM from a handful of its labels, through the real extension and
//! daemon: `uq_refit_calibration` (MAP with the old model as a Gaussian prior, the prior's
//! strength chosen on the labels by held-out log loss) against the same choice and MAP fit
//! written independently in plain Python, the guard on `uq_adapt_calibration` given labels (its
//! log-loss and ECE figures recomputed in Python), and jobs with `calibration.refit` and a guarded
//! `calibration.adapt` whose stored calibrated scores are recomputed from the stored raw scores
//! and labels. Bad input is pinned in tests/golden/errors/calibration.txt and jobs.txt.

use uq_integration::*;

use super::calibration_sql::{PY_EM, PY_HELPERS};

/// Plain Python beside calibration_sql's helpers (`platt`, `mean`, `close`, `shift`, `em`):
/// Platt's targets, the Fisher information, the MAP fit (plain Newton from the prior centre, the
/// 2×2 system solved by Cramer's rule, stopped when the step is below 1e-13), the choice of the
/// prior's scale c among 16 … 1/256 (leave-one-fold-out held-out log loss, clipped to
/// [1e-6, 1 − 1e-6], and the one-standard-error rule on the per-fold differences), the chosen
/// refit (the MAP at c·P), the log-loss guard, ECE in 10 bins, logit.
const PY_REFIT: &str = r#"
import random
SCALES = [16.0, 4.0, 1.0, 0.25, 0.0625, 0.015625, 0.00390625]
def targets(labels):
    npos = sum(labels); nneg = len(labels) - npos
    return [(npos + 1) / (npos + 2) if l else 1 / (nneg + 2) for l in labels]
def fisher(s, a, b):
    aa = ab = bb = 0.0
    for x in s:
        p = platt(a, b, x); w = p * (1 - p)
        aa += w * x * x; ab += w * x; bb += w
    return (aa, ab, bb)
def map_fit(s, labels, a0, b0, P):
    """The MAP (a, b): plain Newton from the prior centre, until the step is below 1e-13."""
    paa, pab, pbb = P
    t = targets(labels)
    a, b = a0, b0
    for _ in range(100):
        da, db = a - a0, b - b0
        ga, gb = paa * da + pab * db, pab * da + pbb * db
        haa, hab, hbb = paa, pab, pbb
        for x, ti in zip(s, t):
            p = platt(a, b, x)
            w = p * (1 - p)
            ga += (p - ti) * x; gb += p - ti
            haa += w * x * x; hab += w * x; hbb += w
        det = haa * hbb - hab * hab
        sa, sb = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a -= sa; b -= sb
        if abs(sa) < 1e-13 * (1 + abs(a)) and abs(sb) < 1e-13 * (1 + abs(b)):
            break
    return a, b
def held_loss(p, l):
    p = min(max(p, 1e-6), 1 - 1e-6)
    return -math.log(p if l else 1 - p)
def choose(s, labels, answers, a0, b0, P):
    """(c, folds, [[c, mean held-out loss per unit], ...]): each c of SCALES scored by the summed
    held-out log loss of leave-one-fold-out (folds: the answers, or each unit alone when
    answers is None); the first c whose per-fold differences from the lowest total's sum to at
    most sqrt(F * var) (one standard error). Fewer than 2 folds: c = 1."""
    n = len(s)
    if answers is None:
        folds = [[i] for i in range(n)]
    else:
        byid = {}
        for i, x in enumerate(answers):
            byid.setdefault(x, []).append(i)
        folds = list(byid.values())
    if len(folds) < 2:
        return 1.0, len(folds), []
    per = []
    for c in SCALES:
        Q = (c * P[0], c * P[1], c * P[2])
        fl = []
        for f in folds:
            out = set(f)
            a, b = map_fit([s[i] for i in range(n) if i not in out], [labels[i] for i in range(n) if i not in out], a0, b0, Q)
            fl.append(sum(held_loss(platt(a, b, s[i]), labels[i]) for i in f))
        per.append(fl)
    totals = [sum(v) for v in per]
    best = min(range(len(per)), key=lambda k: totals[k])
    F = len(folds)
    for k, v in enumerate(per):
        d = [x - y for x, y in zip(v, per[best])]
        md = sum(d) / F
        var = sum((x - md) ** 2 for x in d) / max(F - 1, 1)
        if sum(d) <= math.sqrt(F * var):
            return SCALES[k], F, [[c, t / n] for c, t in zip(SCALES, totals)]
def chosen_refit(s, labels, answers, a0, b0, P):
    """(a, b, c, folds, losses): the MAP under c*P, c chosen by `choose`."""
    c, F, losses = choose(s, labels, answers, a0, b0, P)
    a, b = map_fit(s, labels, a0, b0, (c * P[0], c * P[1], c * P[2]))
    return a, b, c, F, losses
def scale_ok(rec, c, F, losses, held_out):
    """The record's "scale" against Python's choice."""
    x = rec.get("scale") or {}
    return x.get("chosen") == c and x.get("held_out") == held_out and x.get("folds") == F \
        and len(x.get("log_loss", [])) == len(losses) \
        and all(p[0] == q[0] and close(p[1], q[1], 1e-8) for p, q in zip(x["log_loss"], losses))
def rust_num(c):
    """c as Rust's Display writes an f64 (16, 0.25)."""
    r = repr(c)
    return r[:-2] if r.endswith(".0") else r
def log_loss(p, l):
    p = min(max(p, 1e-12), 1 - 1e-12)
    return -math.log(p if l else 1 - p)
def guard(before, after, labels):
    """True when the guard lets the adaptation through: the mean log-loss change is at most two
    standard errors (+1e-9)."""
    d = [log_loss(q, l) - log_loss(p, l) for p, q, l in zip(before, after, labels)]
    k = len(d); md = sum(d) / k
    se = math.sqrt(sum((x - md) ** 2 for x in d) / (k - 1) / k) if k > 1 else 0.0
    return md <= 2 * se + 1e-9
def ece(p, labels):
    bins = {}
    for x, l in zip(p, labels):
        k = min(int(x * 10), 9)
        c = bins.setdefault(k, [0, 0.0, 0])
        c[0] += 1; c[1] += x; c[2] += l
    return sum(abs(c[1] / c[0] - c[2] / c[0]) * c[0] for c in bins.values()) / len(p)
def logit(p):
    return math.log(p / (1 - p))
"#;

/// calibration_sql's shared helpers, then this file's.
fn py() -> String {
    format!("{PY_HELPERS}\n{PY_EM}\n{PY_REFIT}")
}

/// Old answers (true units N(0.65, 0.12), false N(0.45, 0.12), 75 % true, each fifth of the rows
/// a little offset: answers drift) in table `fit(s, l)`; new answers in `target(grp, k, s, l)`:
/// group `shifted`, whose false units score much higher and true ones a little (55 % true: not a
/// change of base rate alone), and group `rate`, a change of base rate alone (45 % true); `k` = 1
/// on the first 300 units of each group (the handful of labels), 0 on the 3000 others.
const PY_DATA: &str = r#"
rng = random.Random(33)
def draw(n, rate, mu1, mu0, offsets=(0.0,)):
    out = []
    for i in range(n):
        l = 1 if rng.random() < rate else 0
        g = offsets[i * len(offsets) // n]
        out.append((rng.gauss((mu1 if l else mu0) + g, 0.12), l))
    return out
conn.execute("CREATE TABLE fit(s REAL, l INTEGER)")
conn.executemany("INSERT INTO fit VALUES (?, ?)", draw(3000, 0.75, 0.65, 0.45, (0.06, -0.04, 0.02, -0.06, 0.04)))
conn.execute("CREATE TABLE target(grp TEXT, k INTEGER, s REAL, l INTEGER)")
for grp, rate, mu1, mu0 in (("shifted", 0.55, 0.70, 0.57), ("rate", 0.45, 0.65, 0.45)):
    rows = draw(3300, rate, mu1, mu0)
    conn.executemany("INSERT INTO target VALUES (?, ?, ?, ?)", [(grp, int(i < 300), s, l) for i, (s, l) in enumerate(rows)])
model = conn.execute("""SELECT uq_fit_calibration(s, l, 'platt', '{"scorer":"entailment"}') FROM fit""").fetchone()[0]
m = json.loads(model)
def rows(grp, k):
    return conn.execute("SELECT s, l FROM target WHERE grp = ? AND k = ? ORDER BY rowid", (grp, k)).fetchall()
"#;

/// `uq_refit_calibration` per group (GROUP BY): the fitted model records its Fisher information
/// as `refit_precision` (recomputed in Python); the prior's scale c is Python's choice by
/// leave-one-unit-out over the 300 labelled units (the aggregate has no answer ids), and the new
/// (a, b) is, within 1e-8, the MAP of Python's Newton at the old model's (a, b) with precision
/// c·`refit_precision`; the model records the prior, its unscaled precision, the `scale` (chosen
/// c, `held_out` "unit", 300 folds, each scale's mean held-out loss within 1e-8), no drift, the
/// number of target labels and `fitted_on` (the prior's, or argument 4). Both groups moved, and
/// the labels weaken the prior (c = 1/64 on both); on the 3000 held-out units of each group the
/// refit's ECE is under a third of the old model's and within 0.03 of a Platt fit on those very
/// units (measured: shifted 0.028 against old 0.256 and that fit's 0.009; rate 0.020 against
/// 0.174 and 0.017). Refitted from the adapted model, the centre is the adapted map.
/// `uq_debug()` says what the refit started from and the scale chosen.
#[test]
fn refit_aggregate_matches_an_independent_map_fit_and_recovers_a_shift() {
    let sb = Sandbox::new("refit-sql");
    let py = py();
    let code = format!(
        r#"
{py}
{PY_DATA}
problems = []
fit_rows = conn.execute("SELECT s FROM fit").fetchall()
lam = fisher([x for (x,) in fit_rows], m["a"], m["b"])
if not all(close(x, y, 1e-9 * (1 + abs(y))) for x, y in zip(m.get("refit_precision", []), lam)) or len(m.get("refit_precision", [])) != 3:
    problems.append(("refit_precision", m, lam))
lam = tuple(m["refit_precision"])
out = {{}}
for grp, refit in conn.execute("SELECT grp, uq_refit_calibration(s, CASE WHEN k THEN l END, ?) FROM target GROUP BY grp ORDER BY grp", (model,)):
    r = json.loads(refit)
    ks = rows(grp, 1)
    a, b, c, F, losses = chosen_refit([s for s, _ in ks], [l for _, l in ks], None, m["a"], m["b"], lam)
    if not close(r["a"], a, 1e-8) or not close(r["b"], b, 1e-8) or "drift" in r["refit"] or not scale_ok(r["refit"], c, F, losses, "unit") or F != 300:
        problems.append(("map", grp, r["a"], r["b"], r["refit"], a, b, c, F, losses))
    # (numbers read back from JSON: equal to rounding)
    rp = r["refit"]["prior"]
    if not close(rp["a"], m["a"], 1e-12) or not close(rp["b"], m["b"], 1e-12) or (rp["n"], rp["positives"], rp["fitted_on"]) != (3000, m["positives"], {{"scorer": "entailment"}}) \
            or set(rp) != {{"a", "b", "n", "positives", "fitted_on"}} or not all(close(x, y, 1e-12 * y) for x, y in zip(r["refit"]["precision"] + r["refit_precision"], lam + lam)) or r["refit"]["target_labels"] != 300 \
            or (r["n"], r["positives"]) != (300, sum(l for _, l in ks)) or r["fitted_on"] != {{"scorer": "entailment"}}:
        problems.append(("record", grp, r))
    held = rows(grp, 0)
    oracle = conn.execute("SELECT uq_fit_calibration(s, l) FROM target WHERE grp = ? AND k = 0", (grp,)).fetchone()[0]
    e = {{}}
    for name, mj in (("old", model), ("refit", refit), ("oracle", oracle)):
        e[name] = conn.execute("SELECT uq_ece(uq_calibrate(s, ?), l) FROM target WHERE grp = ? AND k = 0", (mj, grp)).fetchone()[0]
        mine = ece([platt(json.loads(mj)["a"], json.loads(mj)["b"], s) for s, _ in held], [l for _, l in held])
        if not close(e[name], mine, 1e-9):
            problems.append(("ece", grp, name, e[name], mine))
    out[grp] = dict(e, scale=c, log_loss=losses)
debug = conn.execute("SELECT uq_debug()").fetchone()[0]
note = [l for l in debug.splitlines() if l.startswith("last score notes")]
# fitted_on given: it replaces the prior's
r4 = json.loads(conn.execute("""SELECT uq_refit_calibration(s, l, ?, '{{"scorer":"entailment","num_samples":5}}') FROM target WHERE grp = 'rate' AND k = 1""", (model,)).fetchone()[0])
if r4["fitted_on"] != {{"scorer": "entailment", "num_samples": 5}}:
    problems.append(("fitted_on", r4["fitted_on"]))
# from the adapted model: centred on b + logit(target) - logit(train)
adapted = conn.execute("SELECT uq_adapt_calibration(s, ?) FROM target WHERE grp = 'rate'", (model,)).fetchone()[0]
p = json.loads(adapted)["prior"]
ra = json.loads(conn.execute("SELECT uq_refit_calibration(s, l, ?) FROM target WHERE grp = 'rate' AND k = 1", (adapted,)).fetchone()[0])
centre = m["b"] + logit(p["target"]) - logit(p["train"])
ks = rows("rate", 1)
a, b, c, F, losses = chosen_refit([s for s, _ in ks], [l for _, l in ks], None, m["a"], centre, lam)
pa = ra["refit"]["prior"].get("adaptation", {{}})
if not close(ra["a"], a, 1e-8) or not close(ra["b"], b, 1e-8) or not close(ra["refit"]["prior"]["b"], centre, 1e-12) or not scale_ok(ra["refit"], c, F, losses, "unit") \
        or not close(pa.get("target"), p["target"], 1e-12) or not close(pa.get("train"), p["train"], 1e-12) or "prior" in ra:
    problems.append(("from adapted", ra, a, b, centre))
print(json.dumps(dict(problems=problems, out=out, note=note)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    eprintln!(
        "refit_sql: ECE and chosen scales on the held-out units: {}",
        v["out"]
    );
    let e = |g: &str, k: &str| v["out"][g][k].as_f64().unwrap();
    assert!(
        e("shifted", "old") > 0.1,
        "the shift must hurt the old model: {v}"
    );
    for g in ["shifted", "rate"] {
        assert!(
            e(g, "refit") < e(g, "old") / 3.0,
            "{g}: the refit must be far better calibrated than the old model: {v}"
        );
        assert!(
            e(g, "refit") <= e(g, "oracle") + 0.03,
            "{g}: refit within 0.03 of a fit on the held-out units themselves: {v}"
        );
        assert!(
            e(g, "scale") < 1.0,
            "{g}: the labels show the answers moved, the prior is weakened: {v}"
        );
    }
    let note = v["note"][0].as_str().unwrap();
    assert!(
        note.contains("uq_refit_calibration: refitted on 300 target labels")
            && note.contains("(leave-one-unit-out over 300 units) × prior precision ["),
        "{note}"
    );
}

/// `uq_adapt_calibration(score, model_json, label)`: on the shifted group, EM moves the base rate
/// up while the truth went down, and the labelled units show it: the adaptation is kept in the
/// model (`applied` false, with the log-loss and ECE figures that Python recomputes; the verdict
/// is the log loss's, within two standard errors), `uq_calibrate` maps
/// scores unadapted and `uq_debug()` says why. On a change of base rate alone the guard lets it
/// through. Without labels (two arguments, or every label NULL) the model carries both base
/// rates and no check.
#[test]
fn adapt_guard_refuses_when_the_labels_say_worse() {
    let sb = Sandbox::new("refit-guard");
    let py = py();
    let code = format!(
        r#"
{py}
{PY_DATA}
problems = []
out = {{}}
train = m["positives"] / m["n"]
for grp in ("shifted", "rate"):
    g = json.loads(conn.execute("SELECT uq_adapt_calibration(s, ?, CASE WHEN k THEN l END) FROM target WHERE grp = ?", (model, grp)).fetchone()[0])
    debug = [l for l in conn.execute("SELECT uq_debug()").fetchone()[0].splitlines() if l.startswith("last score notes")][0]
    p = g["prior"]
    scores = [s for (s,) in conn.execute("SELECT s FROM target WHERE grp = ?", (grp,))]
    target, _ = em([platt(m["a"], m["b"], s) for s in scores], train)
    ks = rows(grp, 1)
    kl = [l for _, l in ks]
    p0 = [platt(m["a"], m["b"], s) for s, _ in ks]
    p1 = [shift(x, train, target) for x in p0]
    before, after = ece(p0, kl), ece(p1, kl)
    ll0, ll1 = mean([log_loss(x, l) for x, l in zip(p0, kl)]), mean([log_loss(x, l) for x, l in zip(p1, kl)])
    c = p.get("check", {{}})
    if not close(p["target"], target, 1e-9) or c.get("labelled") != 300 or not close(c.get("ece_unadapted"), before) or not close(c.get("ece_adapted"), after) \
            or not close(c.get("log_loss_unadapted"), ll0) or not close(c.get("log_loss_adapted"), ll1) or not c.get("log_loss_se", 0) > 0:
        problems.append(("check", grp, p, target, before, after, ll0, ll1))
    if p["applied"] != guard(p0, p1, kl):
        problems.append(("verdict", grp, p))
    q = conn.execute("SELECT uq_calibrate(0.6, ?)", (json.dumps(g),)).fetchone()[0]
    want = shift(platt(m["a"], m["b"], 0.6), train, target) if p["applied"] else platt(m["a"], m["b"], 0.6)
    if not close(q, want, 1e-12):
        problems.append(("apply", grp, q, want))
    two = json.loads(conn.execute("SELECT uq_adapt_calibration(s, ?) FROM target WHERE grp = ?", (model, grp)).fetchone()[0])
    nulls = json.loads(conn.execute("SELECT uq_adapt_calibration(s, ?, NULL) FROM target WHERE grp = ?", (model, grp)).fetchone()[0])
    if two != nulls or set(two["prior"]) != {{"train", "target", "iterations"}} or not close(two["prior"]["target"], target, 1e-9):
        problems.append(("unchecked", grp, two, nulls))
    out[grp] = dict(applied=p["applied"], target=target, before=before, after=after, note=debug)
print(json.dumps(dict(problems=problems, out=out, train=train)))
"#
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    let s = &v["out"]["shifted"];
    assert_eq!(s["applied"], false, "{v}");
    assert!(
        s["target"].as_f64().unwrap() > v["train"].as_f64().unwrap(),
        "EM moves the base rate the wrong way (up, for 55 % true against 75 %): {v}"
    );
    let note = s["note"].as_str().unwrap();
    assert!(
        note.contains("uq_adapt_calibration: not adapted: on the 300 labelled units adapting is worse: the mean log loss goes from"),
        "{note}"
    );
    assert_eq!(v["out"]["rate"]["applied"], true, "{v}");
    assert!(
        v["out"]["rate"]["note"]
            .as_str()
            .unwrap()
            .contains("uq_adapt_calibration: adapted (base rate"),
        "{v}"
    );
}

/// Jobs through the real daemon, over stored claims and their labels (`labels_column`):
/// `calibration.refit` stores the chosen refit's calibrated unit and response scores (recomputed
/// in Python from the stored raw scores and labels: the scale chosen by leave-one-answer-out over
/// the 8 labelled answers, then the MAP at that scale) and its message names the scale and the
/// folds ("prior scale 1 (leave-one-answer-out over 8 answers) × prior precision …", the scale
/// Python's); `calibration.adapt` with labels checks the adaptation on them and the message
/// gives the figures and the verdict, which the stored scores follow; both at once refit from the
/// guarded adaptation. A job with `refit` but no labels is refused when it is created.
#[test]
fn jobs_refit_on_their_labels_and_guard_the_adaptation() {
    let sb = Sandbox::new("refit-jobs");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let db = sb.dir.join("refit.db").display().to_string();
    let py = py();
    let code = format!(
        r#"
{py}
db = sqlite3.connect({db:?})
db.execute('CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT, claims TEXT, labels TEXT)')
claims = {claims:?}
samples = {samples:?}
for i in range(1, 9):
    c = claims + ['She had {{}} children.'.format(i)]
    db.execute('INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?)', (i, 'Who was Marie Curie?', ' '.join(c), json.dumps(samples), json.dumps(c), json.dumps([1, 1, 0, i % 2])))
db.commit()
db.close()
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
model = {{"method": "platt", "a": 6, "b": -3, "n": 40, "positives": 30, "refit_strength": 4}}
common = {{"granularity": "claim", "units_column": "claims", "labels_column": "labels",
          "aggregation": "mean", "scorers": ["entailment"]}}
opts = [dict(common, calibration={{"entailment": model, "refit": "job"}}),
        dict(common, calibration={{"entailment": model, "adapt": "job"}}),
        dict(common, calibration={{"entailment": model, "adapt": "job", "refit": "job"}})]
jobs = [conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(o),)).fetchone()[0] for o in opts]
status = [conn.execute("SELECT uq_wait(?, 600)", (j,)).fetchone()[0] for j in jobs]
info = {{j: (r, msg) for (j, r, msg) in conn.execute("SELECT job_id, run_id, message FROM uq_job")}}
problems = []
out = []
for i, j in enumerate(jobs):
    run, msg = info[j]
    units = conn.execute("SELECT answer_id, score, label, calibrated FROM uq_scored_units WHERE run_id = ? AND scorer = 'entailment' ORDER BY answer_id, position", (run,)).fetchall()
    s = [u[1] for u in units]; l = [u[2] for u in units]
    a, b = 6.0, -3.0
    applied = None
    if i >= 1:
        train = 0.75
        target, _ = em([platt(a, b, x) for x in s], train)
        before = [platt(a, b, x) for x in s]
        after = [shift(platt(a, b, x), train, target) for x in s]
        applied = guard(before, after, l)
        if applied:
            want_fn = lambda x: shift(platt(6.0, -3.0, x), train, target)
        else:
            want_fn = lambda x: platt(6.0, -3.0, x)
        figures = "on its {{}} labelled units".format(len(s))
        if figures not in msg or ("calibration.entailment not adapted" in msg) == applied:
            problems.append(("adapt message", i, msg, applied))
        if applied:
            b = b + logit(target) - logit(train)
    if i != 1:
        ra, rb, scale, F, losses = chosen_refit(s, l, [u[0] for u in units], a, b, (4.0, 0.0, 4.0))
        want_fn = lambda x: platt(ra, rb, x)
        head = "calibration.entailment refitted on the job's answers (refit \"job\"): {{}} labelled units ({{}} labelled 1), prior scale {{}} (leave-one-answer-out over {{}} answers) × prior precision [4.0000, 0.0000, 4.0000]".format(len(s), sum(l), rust_num(scale), F)
        if F != 8:
            problems.append(("folds", i, F))
        if head not in msg:
            problems.append(("refit message", i, msg, head))
    for (aid, x, _, c) in units:
        if not close(c, want_fn(x), 1e-9):
            problems.append(("unit", i, x, c, want_fn(x)))
    for (aid, c) in conn.execute("SELECT answer_id, calibrated FROM uq_scored_answers WHERE run_id = ? AND scorer = 'entailment'", (run,)):
        want = mean([want_fn(x) for (a2, x, _, _) in units if a2 == aid])
        if not close(c, want, 1e-9):
            problems.append(("answer", i, aid, c, want))
    out.append(dict(msg=msg, applied=applied, n=len(units), scale=scale if i != 1 else None))
try:
    conn.execute("SELECT uq_score_table('answers', ?)", (json.dumps(dict({{k: x for k, x in common.items() if k != "labels_column"}}, calibration={{"entailment": model, "refit": "job"}})),))
    no_labels = None
except sqlite3.Error as e:
    no_labels = str(e)
print(json.dumps(dict(status=status, problems=problems, out=out, no_labels=no_labels)))
"#,
        claims = [
            "Marie Curie was a physicist and chemist.",
            "She won the Nobel Prize in Physics in 1903.",
            "She was born in Vienna."
        ],
        samples = SAMPLES.to_vec(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(
        v["status"],
        serde_json::json!(["done", "done", "done"]),
        "{v}"
    );
    assert_eq!(v["problems"], serde_json::json!([]), "{v}");
    assert_eq!(v["out"][0]["n"], 32, "{v}");
    eprintln!(
        "refit_sql: jobs' chosen scales (refit, adapt, adapt + refit): {}, {}, {}",
        v["out"][0]["scale"], v["out"][1]["scale"], v["out"][2]["scale"]
    );
    let e = v["no_labels"].as_str().unwrap();
    assert!(
        e.contains("option calibration.refit refits on labelled units, but the job has no labels"),
        "{e}"
    );
}
