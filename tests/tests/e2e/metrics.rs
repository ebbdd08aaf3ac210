//! The metric aggregates (`uq_auroc`, `uq_auprc`, `uq_ece`, `uq_brier`, `uq_pearson`,
//! `uq_spearman`, `uq_best_threshold`, `uq_best_f1`) in the stock sqlite3 CLI and
//! /usr/bin/python3, checked against values computed independently in plain Python (the
//! scikit-learn definitions written out; no numpy or scikit-learn). No daemon is needed.

use uq_integration::*;

/// Plain-Python reference implementations and comparison helpers, prepended to the scripts.
const REFERENCE: &str = r#"
import math, random

def auroc(s, l):
    # probability that a positive outranks a negative, ties counting 1/2 (pair counting)
    pos = [a for a, b in zip(s, l) if b == 1]
    neg = [a for a, b in zip(s, l) if b == 0]
    if not pos or not neg:
        return None
    tot = 0.0
    for p in pos:
        for n in neg:
            tot += 1.0 if p > n else (0.5 if p == n else 0.0)
    return tot / (len(pos) * len(neg))

def average_precision(s, l):
    # sklearn: AP = sum_n (R_n - R_{n-1}) P_n over the distinct thresholds, descending,
    # predicting positive for score >= threshold
    P = sum(l)
    if P == 0:
        return None
    ap, prev_r = 0.0, 0.0
    for t in sorted(set(s), reverse=True):
        tp = sum(1 for a, b in zip(s, l) if a >= t and b == 1)
        fp = sum(1 for a, b in zip(s, l) if a >= t and b == 0)
        prec, rec = tp / (tp + fp), tp / P
        ap += (rec - prev_r) * prec
        prev_r = rec
    return ap

def ece(s, l, B=10):
    # equal-width bins [i/B, (i+1)/B), 1.0 in the last bin; sum_b (n_b/N) |acc_b - conf_b|
    n = len(s)
    if n == 0:
        return None
    seen = 0
    tot = 0.0
    for i in range(B):
        lo, hi = i / B, (i + 1) / B
        idx = [k for k in range(n) if lo <= s[k] < hi or (i == B - 1 and s[k] == 1.0)]
        seen += len(idx)
        if idx:
            conf = sum(s[k] for k in idx) / len(idx)
            acc = sum(l[k] for k in idx) / len(idx)
            tot += len(idx) / n * abs(acc - conf)
    assert seen == n, "every score in exactly one bin"
    return tot

def brier(s, l):
    if not s:
        return None
    return sum((a - b) ** 2 for a, b in zip(s, l)) / len(s)

def pearson(x, y):
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)

def avg_ranks(v):
    # 1-based rank, ties sharing the mean of the ranks they span
    return [sum(1 for b in v if b < a) + (sum(1 for b in v if b == a) + 1) / 2 for a in v]

def spearman(x, y):
    return pearson(avg_ranks(x), avg_ranks(y))

def best_f1(s, l):
    # threshold maximising F1 = 2TP/(2TP+FP+FN) for "positive iff score >= t" over the
    # distinct scores; equal F1 -> the highest threshold; NULL unless both classes occur
    if 0 not in l or 1 not in l:
        return None
    P = sum(l)
    best = None
    for t in sorted(set(s), reverse=True):
        tp = sum(1 for a, b in zip(s, l) if a >= t and b == 1)
        fp = sum(1 for a, b in zip(s, l) if a >= t and b == 0)
        f1 = 2 * tp / (2 * tp + fp + (P - tp))
        if best is None or f1 > best[1]:
            best = (t, f1)
    return best

def best_threshold(s, l):
    b = best_f1(s, l)
    return None if b is None else b[0]

def best_f1_value(s, l):
    b = best_f1(s, l)
    return None if b is None else b[1]

def close(got, want, what):
    if want is None or got is None:
        assert got is None and want is None, f"{what}: got {got!r}, want {want!r}"
        return
    assert isinstance(got, float), f"{what}: got {got!r} ({type(got).__name__}), want REAL"
    assert abs(got - want) < 1e-9, f"{what}: got {got!r}, want {want!r}"

rng = random.Random(20240607)
R_S = [rng.random() for _ in range(200)]
R_L = [1 if rng.random() < 0.2 + 0.6 * a else 0 for a in R_S]
DATA = {
    # scikit-learn's documentation example: AUROC 0.75, AP 0.8333
    "sklearn": ([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]),
    # many ties, scores on bin edges, 0.0 and 1.0
    "ties": ([0.5, 0.5, 0.5, 0.2, 0.2, 0.9, 0.9, 0.1, 0.7, 0.7, 0.3, 0.5, 0.0, 1.0, 1.0, 0.3],
             [1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1]),
    # 200 seeded random rows, and the same rounded to 2 decimals (ties, bin edges)
    "random200": (R_S, R_L),
    "random200_rounded": ([round(a, 2) for a in R_S], R_L),
}
"#;

fn python_check(sb: &Sandbox, body: &str) {
    let out = sb.python_ok(&format!("{REFERENCE}\n{body}\nprint('checked')"));
    assert!(out.ends_with("checked"), "{out}");
}

#[test]
fn binary_metrics_match_plain_python_per_group() {
    let sb = Sandbox::new("metrics-binary");
    python_check(
        &sb,
        r#"
conn.execute("CREATE TABLE d(g TEXT, s REAL, l INTEGER)")
for g, (s, l) in DATA.items():
    conn.executemany("INSERT INTO d VALUES (?, ?, ?)", [(g, a, b) for a, b in zip(s, l)])
rows = conn.execute("""
    SELECT g, uq_auroc(s, l), uq_auprc(s, l), uq_ece(s, l), uq_ece(s, l, 5), uq_ece(s, l, 3),
           uq_ece(s, l, 1), uq_brier(s, l), uq_best_threshold(s, l), uq_best_f1(s, l), count(*)
    FROM d GROUP BY g ORDER BY g""").fetchall()
assert [r[0] for r in rows] == sorted(DATA), rows
for g, au, ap, e10, e5, e3, e1, br, bt, bf, n in rows:
    s, l = DATA[g]
    assert n == len(s)
    close(au, auroc(s, l), f"{g} uq_auroc")
    close(ap, average_precision(s, l), f"{g} uq_auprc")
    close(e10, ece(s, l, 10), f"{g} uq_ece default bins")
    close(e5, ece(s, l, 5), f"{g} uq_ece 5 bins")
    close(e3, ece(s, l, 3), f"{g} uq_ece 3 bins")
    close(e1, ece(s, l, 1), f"{g} uq_ece 1 bin")
    close(br, brier(s, l), f"{g} uq_brier")
    close(bt, best_threshold(s, l), f"{g} uq_best_threshold")
    close(bf, best_f1_value(s, l), f"{g} uq_best_f1")
    print(g, au, ap, e10, br, bt, bf)

# the documented sklearn values, as a check on the reference itself
close(auroc(*DATA["sklearn"]), 0.75, "reference auroc")
close(average_precision(*DATA["sklearn"]), 5 / 6, "reference AP")

# the whole table (no GROUP BY) is one group
s_all = [a for g in sorted(DATA) for a in DATA[g][0]]
l_all = [b for g in sorted(DATA) for b in DATA[g][1]]
au, ap = conn.execute("SELECT uq_auroc(s, l), uq_auprc(s, l) FROM d").fetchone()
close(au, auroc(s_all, l_all), "all uq_auroc")
close(ap, average_precision(s_all, l_all), "all uq_auprc")

# scores need not be probabilities for the ranking metrics: logits and INTEGER scores
logit = [math.log(a / (1 - a)) if 0 < a < 1 else (9.0 if a == 1 else -9.0) for a in DATA["ties"][0]]
conn.execute("CREATE TABLE z(s, l)")
conn.executemany("INSERT INTO z VALUES (?, ?)", zip(logit, DATA["ties"][1]))
got = conn.execute("SELECT uq_auroc(s, l), uq_auprc(s, l), uq_best_threshold(s, l), uq_best_f1(s, l) FROM z").fetchone()
_, l = DATA["ties"]
close(got[0], auroc(logit, l), "logit uq_auroc")
close(got[1], average_precision(logit, l), "logit uq_auprc")
close(got[2], best_threshold(logit, l), "logit uq_best_threshold")
close(got[3], best_f1_value(logit, l), "logit uq_best_f1")
ints = [int(a * 10) for a in DATA["ties"][0]]
got = conn.execute("SELECT uq_auroc(s, l), uq_best_threshold(s, l) FROM (SELECT value AS s, ? AS l FROM json_each('[0]'))", (1,)).fetchone()
assert got == (None, None), got
conn.execute("CREATE TABLE iz(s INTEGER, l)")
conn.executemany("INSERT INTO iz VALUES (?, ?)", zip(ints, l))
got = conn.execute("SELECT uq_auroc(s, l), uq_best_threshold(s, l) FROM iz").fetchone()
close(got[0], auroc(ints, l), "integer-score uq_auroc")
close(got[1], float(best_threshold(ints, l)), "integer-score uq_best_threshold (REAL)")
"#,
    );
}

#[test]
fn correlations_match_plain_python_per_group() {
    let sb = Sandbox::new("metrics-corr");
    python_check(
        &sb,
        r#"
rng2 = random.Random(7)
x1 = [rng2.random() for _ in range(200)]
y1 = [a + rng2.gauss(0, 0.3) for a in x1]
x2 = [rng2.randint(0, 5) for _ in range(200)]           # heavy ties, INTEGER values
y2 = [a + rng2.randint(0, 5) for a in x2]
CORR = {
    "hand": ([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]),   # Pearson 11/sqrt(130)
    "ties": ([1.0, 2.0, 3.0, 4.0], [10.0, 30.0, 20.0, 20.0]), # Spearman 1/sqrt(10)
    "monotone": ([1, 2, 3, 4, 5], [1, 8, 27, 64, 125]),      # Spearman 1, Pearson < 1
    "random200": (x1, y1),
    "random200_ties": (x2, y2),
    "score_label": DATA["random200_rounded"],
}
conn.execute("CREATE TABLE c(g TEXT, x, y)")
for g, (x, y) in CORR.items():
    conn.executemany("INSERT INTO c VALUES (?, ?, ?)", [(g, a, b) for a, b in zip(x, y)])
rows = conn.execute("SELECT g, uq_pearson(x, y), uq_spearman(x, y) FROM c GROUP BY g").fetchall()
assert len(rows) == len(CORR), rows
for g, p, sp in rows:
    x, y = CORR[g]
    close(p, pearson(x, y), f"{g} uq_pearson")
    close(sp, spearman(x, y), f"{g} uq_spearman")
    print(g, p, sp)
close(pearson(*CORR["hand"]), 11 / math.sqrt(130), "reference pearson")
close(spearman(*CORR["ties"]), 1 / math.sqrt(10), "reference spearman")
p, sp = conn.execute("SELECT uq_pearson(x, y), uq_spearman(x, y) FROM c WHERE g = 'monotone'").fetchone()
assert abs(sp - 1.0) < 1e-12 and p < 0.99, (p, sp)
"#,
    );
}

#[test]
fn group_by_gives_each_group_its_own_value() {
    let sb = Sandbox::new("metrics-groups");
    python_check(
        &sb,
        r#"
# two scorers over the same 200 answers: a good one and a noisy one
conn.execute("CREATE TABLE ev(scorer TEXT, score REAL, correct INTEGER)")
s, l = DATA["random200"]
noisy = [min(1.0, max(0.0, a + rng.gauss(0, 0.4))) for a in s]
conn.executemany("INSERT INTO ev VALUES ('good', ?, ?)", zip(s, l))
conn.executemany("INSERT INTO ev VALUES ('noisy', ?, ?)", zip(noisy, l))
rows = conn.execute("""SELECT scorer, uq_auroc(score, correct), uq_auprc(score, correct),
    uq_ece(score, correct), uq_brier(score, correct), uq_best_threshold(score, correct),
    uq_best_f1(score, correct), uq_pearson(score, correct), uq_spearman(score, correct)
    FROM ev GROUP BY scorer ORDER BY scorer""").fetchall()
assert [r[0] for r in rows] == ["good", "noisy"], rows
fns = [auroc, average_precision, ece, brier, best_threshold, best_f1_value, pearson, spearman]
for (name, *vals), data in zip(rows, [s, noisy]):
    for v, fn in zip(vals, fns):
        close(v, fn(data, l), f"{name} {fn.__name__}")
good, noisy_row = rows
for i, fn in enumerate(fns, start=1):
    assert good[i] != noisy_row[i], f"{fn.__name__}: both groups gave {good[i]}"
assert good[1] > noisy_row[1], (good, noisy_row)
print(rows)
"#,
    );
}

#[test]
fn null_rows_are_skipped() {
    let sb = Sandbox::new("metrics-null");
    python_check(
        &sb,
        r#"
s, l = DATA["ties"]
conn.execute("CREATE TABLE d(s, l)")
conn.executemany("INSERT INTO d VALUES (?, ?)", zip(s, l))
# rows with a NULL score, a NULL label, or both: skipped (also when the other value is valid)
conn.executemany("INSERT INTO d VALUES (?, ?)", [(None, 1), (None, 0), (0.99, None), (0.01, None), (None, None)])
got = conn.execute("""SELECT uq_auroc(s, l), uq_auprc(s, l), uq_ece(s, l), uq_ece(s, l, 4),
    uq_brier(s, l), uq_best_threshold(s, l), uq_best_f1(s, l), uq_pearson(s, l), uq_spearman(s, l)
    FROM d""").fetchone()
fns = [auroc, average_precision, ece, lambda a, b: ece(a, b, 4), brier, best_threshold,
       best_f1_value, pearson, spearman]
for v, fn in zip(got, fns):
    close(v, fn(s, l), f"NULL rows skipped: {fn.__name__}")
only_valid = conn.execute("""SELECT uq_auroc(s, l), uq_auprc(s, l), uq_ece(s, l), uq_ece(s, l, 4),
    uq_brier(s, l), uq_best_threshold(s, l), uq_best_f1(s, l), uq_pearson(s, l), uq_spearman(s, l)
    FROM d WHERE s IS NOT NULL AND l IS NOT NULL""").fetchone()
assert got == only_valid, (got, only_valid)
# a group of NULL rows only is an empty group: NULL
got = conn.execute("SELECT uq_auroc(s, l), uq_brier(s, l), uq_pearson(s, l) FROM d WHERE s IS NULL OR l IS NULL").fetchone()
assert got == (None, None, None), got
"#,
    );
}

#[test]
fn labels_may_be_true_false_or_real_zero_one() {
    let sb = Sandbox::new("metrics-bool");
    let out = sb.sqlite_ok(
        "CREATE TABLE t(s, l);
         INSERT INTO t VALUES (0.1, FALSE), (0.4, FALSE), (0.35, TRUE), (0.8, TRUE);
         CREATE TABLE r(s REAL, l REAL);
         INSERT INTO r SELECT s, l FROM t;
         SELECT uq_auroc(s, l), uq_auprc(s, l) = (SELECT uq_auprc(s, l) FROM r),
                uq_auroc(s, l) = (SELECT uq_auroc(s, l) FROM r) FROM t;",
    );
    assert_eq!(out, "0.75|1|1");
}

#[test]
fn degenerate_inputs_give_null() {
    let sb = Sandbox::new("metrics-degenerate");
    let q = |sql: &str| sb.sqlite_ok(sql);
    let setup = "CREATE TABLE t(g, s, l);
        INSERT INTO t VALUES ('pos', 0.2, 1), ('pos', 0.7, 1), ('pos', 0.9, 1),
                             ('neg', 0.2, 0), ('neg', 0.7, 0),
                             ('one', 0.6, 1),
                             ('flat', 0.5, 0), ('flat', 0.5, 1), ('flat', 0.5, 1);";
    let all = "quote(uq_auroc(s, l)), quote(uq_auprc(s, l)), quote(uq_ece(s, l)), quote(uq_ece(s, l, 3)), \
               quote(uq_brier(s, l)), quote(uq_pearson(s, l)), quote(uq_spearman(s, l)), \
               quote(uq_best_threshold(s, l)), quote(uq_best_f1(s, l))";
    // no rows at all: every metric is NULL
    assert_eq!(
        q(&format!("{setup} SELECT {all} FROM t WHERE 0;")),
        "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"
    );
    assert_eq!(
        q(&format!(
            "SELECT {all} FROM (SELECT 0.5 AS s, 1 AS l) WHERE 0;"
        )),
        "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"
    );
    // only positives: AUROC and the threshold are NULL; AP is 1 (sklearn); correlations NULL
    // (a constant label has zero variance)
    assert_eq!(
        q(&format!(
            "{setup} SELECT quote(uq_auroc(s, l)), uq_auprc(s, l), quote(uq_best_threshold(s, l)), \
             quote(uq_best_f1(s, l)), quote(uq_pearson(s, l)), quote(uq_spearman(s, l)) FROM t WHERE g = 'pos';"
        )),
        "NULL|1.0|NULL|NULL|NULL|NULL"
    );
    // only negatives: AUROC, AP (no positives) and the threshold are NULL
    assert_eq!(
        q(&format!(
            "{setup} SELECT quote(uq_auroc(s, l)), quote(uq_auprc(s, l)), quote(uq_best_threshold(s, l)), \
             quote(uq_best_f1(s, l)) FROM t WHERE g = 'neg';"
        )),
        "NULL|NULL|NULL|NULL"
    );
    // one row: fewer than 2 points for the correlations; Brier and ECE are defined
    assert_eq!(
        q(&format!(
            "{setup} SELECT quote(uq_pearson(s, l)), quote(uq_spearman(s, l)), quote(uq_auroc(s, l)), \
             round(uq_brier(s, l), 12), round(uq_ece(s, l), 12) FROM t WHERE g = 'one';"
        )),
        "NULL|NULL|NULL|0.16|0.4"
    );
    // zero variance: constant x (and constant y) for Pearson and Spearman
    assert_eq!(
        q(&format!(
            "{setup} SELECT quote(uq_pearson(s, l)), quote(uq_spearman(s, l)), \
             quote(uq_pearson(l, s)), quote(uq_spearman(l, s)), uq_auroc(s, l) FROM t WHERE g = 'flat';"
        )),
        "NULL|NULL|NULL|NULL|0.5"
    );
    // GROUP BY: degenerate groups are NULL beside defined ones
    assert_eq!(
        q(&format!(
            "{setup} SELECT g, quote(uq_auroc(s, l)) FROM t GROUP BY g ORDER BY g;"
        )),
        "flat|0.5\nneg|NULL\none|NULL\npos|NULL"
    );
}

#[test]
fn out_of_range_scores_rank_and_errors_reach_python() {
    let sb = Sandbox::new("metrics-errors");
    // The errors themselves are pinned in full by errors.rs (golden file errors/metrics.txt).
    let t = "CREATE TABLE t(s, l); INSERT INTO t VALUES (0.1, 0), (0.8, 1);";
    // Scores outside [0, 1] are fine for the ranking metrics.
    assert_eq!(
        sb.sqlite_ok(&format!(
            "{t} INSERT INTO t VALUES (1.5, 1), (-3, 0); SELECT uq_auroc(s, l), uq_auprc(s, l), uq_best_threshold(s, l) FROM t;"
        )),
        "1.0|1.0|0.8"
    );
    // the error reaches Python as an exception with the same message
    let out = sb.python_ok(
        r#"
conn.execute("CREATE TABLE t(s, l)")
conn.executemany("INSERT INTO t VALUES (?, ?)", [(0.2, 0), (0.9, 'yes')])
try:
    conn.execute("SELECT uq_auroc(s, l) FROM t").fetchone()
    print("no error")
except sqlite3.Error as e:
    print(type(e).__name__, e)
"#,
    );
    assert!(
        out.contains("uq_auroc: label must be 0 or 1") && out.contains("TEXT 'yes'"),
        "{out}"
    );
}

#[test]
fn large_groups_aggregate() {
    let sb = Sandbox::new("metrics-large");
    let t = std::time::Instant::now();
    let out = sb.sqlite_ok(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199999)
         SELECT i % 2, round(uq_auroc((i % 1000) / 1000.0, (i % 7) < 3), 6) IS NOT NULL,
                uq_ece((i % 1000) / 1000.0, i % 2, 20) >= 0,
                round(uq_spearman(i, i % 1000), 6) BETWEEN -1 AND 1
         FROM n GROUP BY i % 2;",
    );
    assert_eq!(out, "0|1|1|1\n1|1|1|1");
    // The time is a figure, not a check (a loaded machine is no regression).
    eprintln!("200k-row groups aggregated in {:?}", t.elapsed());
}

#[test]
fn filter_clause_selects_rows() {
    let sb = Sandbox::new("metrics-filter");
    let out = sb.sqlite_ok(
        "CREATE TABLE t(s, l); INSERT INTO t VALUES (0.1, 0), (0.8, 1), (0.9, 0);
         SELECT uq_auroc(s, l) FILTER (WHERE s < 0.85), uq_auroc(s, l) FROM t;",
    );
    assert_eq!(out, "1.0|0.5");
}
