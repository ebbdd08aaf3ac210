//! `uqd report`: builds a database in the uqlite schema (two labelled claim-level runs over the
//! same answers with m = 3 and m = 5, one unlabelled sentence-level run, a hostile scorer name
//! and prompt), runs the real `uqd report`, and checks the files, the SVGs' structure, the
//! metric numbers (recomputed here with uq_core::metrics), the escaping, and, when a headless
//! Chromium is on PATH (`uq_browser` finds it and says which), that the page renders to a
//! non-blank screenshot.
//!
//! `UQ_REQUIRE_BROWSER=1` (CI) makes a missing Chromium or an undecodable screenshot a failure.
//! `UQ_REPORT_SCREENSHOT=FILE` copies the screenshot to FILE (docs/report-screenshot.png) and
//! keeps the report directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::{params, Connection};
use uq_core::aggregate::{aggregate, Aggregation};
use uq_core::metrics::{
    auroc, average_precision, best_f1_threshold, brier, ece, pearson, spearman,
};

/// The analyst's two runs of the same answers: the header's counts and the page's layout.
mod layout;

const HOSTILE_SCORER: &str = "<script>alert('x')</script>";
const HOSTILE_PROMPT: &str = "Who was <img src=x onerror=alert(1)> & \"friends\"?";
const SCORERS: [&str; 3] = ["entailment", "noncontradiction", HOSTILE_SCORER];

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uq-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small deterministic generator (xorshift), so the data looks real but never changes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One unit as the test knows it.
#[derive(Clone)]
struct Unit {
    answer: usize,
    label: Option<bool>,
    objective: Option<bool>,
    scores: Vec<Option<f64>>, // per SCORERS
}

struct RunSpec {
    run_id: i64,
    granularity: &'static str,
    num_samples: Option<i64>,
    units: Vec<Unit>,
    answers: usize,
}

fn migrated_db(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("bio.db");
    Connection::open(&path).unwrap();
    let mut conn = uqd::store::open(&path).unwrap();
    uqd::store::migrate(&mut conn).unwrap();
    (path, conn)
}

/// Claims of 6 answers × 5 claims; scores separate factual from non-factual better with more
/// samples (`sharp`), one scorer is noisier.
fn claim_units(rng: &mut Rng, labels: &[bool], sharp: f64, objective: bool) -> Vec<Unit> {
    labels
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let scores = (0..SCORERS.len())
                .map(|k| {
                    let centre = if l {
                        0.55 + 0.25 * sharp
                    } else {
                        0.45 - 0.2 * sharp
                    };
                    let noise = (rng.next() - 0.5) * (0.7 + 0.25 * k as f64);
                    let s = ((centre + noise) * 100.0).round() / 100.0;
                    Some(s.clamp(0.0, 1.0))
                })
                .collect();
            Unit {
                answer: i / 5,
                label: Some(l),
                objective: objective.then_some(i % 11 != 3),
                scores,
            }
        })
        .collect()
}

fn build(conn: &Connection) -> Vec<RunSpec> {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let labels: Vec<bool> = (0..30).map(|_| rng.next() < 0.7).collect();
    let mut run1 = claim_units(&mut rng, &labels, 0.3, false);
    run1[7].scores[1] = None; // an unreadable judge: NULL score
    let run2 = claim_units(&mut rng, &labels, 0.8, true);
    let run3: Vec<Unit> = (0..8)
        .map(|i| Unit {
            answer: i / 4,
            label: None,
            objective: None,
            scores: (0..SCORERS.len())
                .map(|_| Some((rng.next() * 100.0).round() / 100.0))
                .collect(),
        })
        .collect();
    let specs = vec![
        RunSpec {
            run_id: 1,
            granularity: "claim",
            num_samples: Some(3),
            units: run1,
            answers: 6,
        },
        RunSpec {
            run_id: 2,
            granularity: "claim",
            num_samples: Some(5),
            units: run2,
            answers: 6,
        },
        RunSpec {
            run_id: 3,
            granularity: "sentence",
            num_samples: None,
            units: run3,
            answers: 2,
        },
    ];
    for spec in &specs {
        insert_run(conn, spec);
    }
    specs
}

fn insert_run(conn: &Connection, spec: &RunSpec) {
    let scorers_json = serde_json::to_string(&SCORERS).unwrap();
    conn.execute(
        "INSERT INTO uq_run(run_id, uqlite_version, options_json, granularity, scorers_json,
                            aggregation, num_samples, nli_model, device)
         VALUES (?1, '0.1.0', '{}', ?2, ?3, 'mean', ?4, 'nli-minilm-l6 <b>', 'cpu')",
        params![
            spec.run_id,
            spec.granularity,
            scorers_json,
            spec.num_samples
        ],
    )
    .unwrap();
    let table = if spec.granularity == "claim" {
        "bios"
    } else {
        "notes"
    };
    let mut answer_ids = Vec::new();
    for a in 0..spec.answers {
        let prompt = if a == 0 {
            HOSTILE_PROMPT.to_string()
        } else {
            format!("Tell me a bio of person {a}.")
        };
        conn.execute(
            "INSERT INTO uq_answer(run_id, source_table, source_key, prompt, answer)
             VALUES (?1, ?2, ?3, ?4, 'An answer.')",
            params![spec.run_id, table, format!("k{a}"), prompt],
        )
        .unwrap();
        let id = conn.last_insert_rowid();
        answer_ids.push(id);
        if spec.num_samples.is_none() {
            for j in 1..=4 {
                conn.execute(
                    "INSERT INTO uq_sample(answer_id, sample_idx, text) VALUES (?1, ?2, 'A sample.')",
                    params![id, j],
                )
                .unwrap();
            }
        }
    }
    let mut per_answer: BTreeMap<usize, Vec<Vec<f64>>> = BTreeMap::new();
    for (i, u) in spec.units.iter().enumerate() {
        let pos = spec.units[..i]
            .iter()
            .filter(|v| v.answer == u.answer)
            .count();
        conn.execute(
            "INSERT INTO uq_unit(answer_id, granularity, position, text) VALUES (?1, ?2, ?3, ?4)",
            params![
                answer_ids[u.answer],
                spec.granularity,
                pos as i64,
                format!("Claim {pos} of answer {}.", u.answer)
            ],
        )
        .unwrap();
        let unit_id = conn.last_insert_rowid();
        for (k, s) in u.scores.iter().enumerate() {
            conn.execute(
                "INSERT INTO uq_unit_score(unit_id, scorer, score) VALUES (?1, ?2, ?3)",
                params![unit_id, SCORERS[k], s],
            )
            .unwrap();
            let e = per_answer
                .entry(u.answer)
                .or_insert_with(|| vec![Vec::new(); SCORERS.len()]);
            if let Some(s) = s {
                e[k].push(*s);
            }
        }
        if let Some(l) = u.label {
            conn.execute(
                "INSERT INTO uq_label(unit_id, kind, grader, label) VALUES (?1, 'factual', 'factscore:test', ?2)",
                params![unit_id, l as i64],
            )
            .unwrap();
        }
        if let Some(o) = u.objective {
            conn.execute(
                "INSERT INTO uq_label(unit_id, kind, grader, label) VALUES (?1, 'objective', 'objectivity:test', ?2)",
                params![unit_id, o as i64],
            )
            .unwrap();
        }
    }
    for (a, by_scorer) in per_answer {
        for (k, scores) in by_scorer.iter().enumerate() {
            conn.execute(
                "INSERT INTO uq_response_score(answer_id, scorer, aggregation, score) VALUES (?1, ?2, 'mean', ?3)",
                params![answer_ids[a], SCORERS[k], aggregate(scores, Aggregation::Mean)],
            )
            .unwrap();
        }
    }
}

fn uqd_report(args: &[&Path]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_uqd"));
    cmd.arg("report");
    for (i, a) in args.iter().enumerate() {
        if i == 1 {
            cmd.arg("--out");
        }
        cmd.arg(a);
    }
    cmd.output().unwrap()
}

/// HTML/XML escaping, written independently of the report's.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn f3(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"))
}

/// The cell texts of each row of the table with `id`.
fn table_rows(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<table id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no table {id}"));
    let body = &html[start..start + html[start..].find("</table>").unwrap()];
    body.split("<tr>")
        .skip(2) // before the first row, the header row
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find("</td>").unwrap()].to_string()
                })
                .collect()
        })
        .collect()
}

/// A structural check of an SVG: starts with <svg, ends with </svg>, every tag closed in order,
/// every `&` an entity.
fn check_svg(name: &str, svg: &str) {
    let t = svg.trim();
    assert!(
        t.starts_with("<svg") && t.ends_with("</svg>"),
        "{name}: not one <svg> element"
    );
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('<') {
        let j = rest[i..]
            .find('>')
            .unwrap_or_else(|| panic!("{name}: unterminated tag"))
            + i;
        let tag = &rest[i + 1..j];
        assert!(!tag.contains('<'), "{name}: '<' inside a tag: {tag}");
        if let Some(close) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop(),
                Some(close.trim()),
                "{name}: unbalanced </{close}>"
            );
        } else if !tag.ends_with('/') {
            let tname = tag.split_whitespace().next().unwrap_or("");
            stack.push(tname);
        }
        let text = &rest[..i];
        assert!(!text.contains('>'), "{name}: stray '>' in text {text:?}");
        rest = &rest[j + 1..];
        if stack.is_empty() {
            assert!(rest.trim().is_empty(), "{name}: content after </svg>");
        }
    }
    assert!(stack.is_empty(), "{name}: unclosed {stack:?}");
    for (i, _) in t.match_indices('&') {
        let ent: String = t[i..].chars().take(6).collect();
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                .iter()
                .any(|e| ent.starts_with(e)),
            "{name}: raw & at {ent:?}"
        );
    }
    assert!(!t.contains("<script"), "{name}: script element");
    assert!(!t.contains("href=\"http"), "{name}: external reference");
}

#[test]
fn report_of_two_runs_matches_independent_metrics_and_renders() {
    let dir = tmp_dir("full");
    let (db, conn) = migrated_db(&dir);
    let specs = build(&conn);
    drop(conn);
    let out = dir.join("out");
    let o = uqd_report(&[&db, &out]);
    assert!(
        o.status.success(),
        "uqd report failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();

    // Answers are source rows: bios k0..k5 (runs 1 and 2) and notes k0, k1 (run 3), their
    // keys shared across tables.
    assert!(
        html.contains(" · 8 answers · 3 runs · 14 scored answers · "),
        "{html}"
    );

    // The highlighted answers' colour key appears once per table (run and granularity), under
    // its first answer, not under every answer.
    let tables = html.matches("<table class=\"highlighted\">").count();
    let answers = html.matches("<td class=\"answer\">").count();
    assert!(
        tables > 0 && answers > tables,
        "{tables} tables, {answers} answers"
    );
    assert_eq!(
        html.matches("class=\"uq-legend\"").count(),
        tables,
        "{html}"
    );

    // Every referenced figure exists and parses; every SVG written is referenced.
    let mut referenced = Vec::new();
    for (i, _) in html.match_indices("<img src=\"") {
        let rest = &html[i + 10..];
        referenced.push(rest[..rest.find('"').unwrap()].to_string());
    }
    let written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    // 2 labelled runs × 3 scorers reliability diagrams, 2 UAD, 1 ablation.
    assert_eq!(written.len(), 6 + 2 + 1, "{written:?}");
    for f in &written {
        assert!(referenced.contains(f), "{f} not in index.html");
    }
    for f in &referenced {
        let svg = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        check_svg(f, &svg);
        assert!(svg.contains("</text>"), "{f}: no text (ticks, title)");
    }
    let all_svgs: String = referenced
        .iter()
        .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
        .collect();

    // Escaping: the hostile scorer name and prompt appear only escaped.
    assert!(!html.contains("<script"), "unescaped scorer name in HTML");
    assert!(!html.contains("<img src=x"), "unescaped prompt in HTML");
    assert!(html.contains(&escape(HOSTILE_SCORER)));
    assert!(html.contains(&escape(HOSTILE_PROMPT)));
    // (The model's name may break after each '-'.)
    assert!(!html.contains("l6 <b>") && html.contains("nli-<wbr>minilm-<wbr>l6 &lt;b&gt;"));
    assert!(all_svgs.contains(&escape(HOSTILE_SCORER)));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "external resource in HTML"
    );

    // Unit-level metrics, recomputed here.
    let rows = table_rows(&html, "unit-metrics");
    assert_eq!(rows.len(), 9, "3 runs × 3 scorers");
    let mut auroc_by_m: BTreeMap<(i64, usize), Option<f64>> = BTreeMap::new();
    for spec in &specs {
        let objective_only = spec.units.iter().any(|u| u.objective.is_some());
        for (k, scorer) in SCORERS.iter().enumerate() {
            let (scores, labels): (Vec<f64>, Vec<bool>) = spec
                .units
                .iter()
                .filter(|u| !objective_only || u.objective == Some(true))
                .filter_map(|u| Some((u.scores[k]?, u.label?)))
                .unzip();
            let neg: Vec<f64> = scores.iter().map(|s| 1.0 - s).collect();
            let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
            let n = labels.len();
            let expected = vec![
                spec.run_id.to_string(),
                spec.granularity.to_string(),
                escape(scorer),
                spec.units.len().to_string(),
                spec.units
                    .iter()
                    .filter(|u| u.label.is_some())
                    .count()
                    .to_string(),
                n.to_string(),
                if objective_only { "yes" } else { "no" }.to_string(),
                f3((n > 0).then(|| labels.iter().filter(|&&l| l).count() as f64 / n as f64)),
                f3(auroc(&scores, &labels)),
                f3(average_precision(&scores, &labels)),
                f3(average_precision(&neg, &flipped)),
                f3(brier(&scores, &labels)),
                f3(ece(&scores, &labels, 10)),
                f3(best_f1_threshold(&scores, &labels).map(|b| b.0)),
                f3(best_f1_threshold(&scores, &labels).map(|b| b.1)),
            ];
            let row = rows
                .iter()
                .find(|r| r[0] == expected[0] && r[2] == expected[2])
                .unwrap_or_else(|| panic!("no row for run {} {scorer}", spec.run_id));
            assert_eq!(row, &expected, "run {} scorer {scorer}", spec.run_id);
            if let Some(m) = spec.num_samples {
                auroc_by_m.insert((m, k), auroc(&scores, &labels));
            }
        }
    }
    // The claim runs are labelled and objective-filtered; the sentence run is all n/a.
    assert!(rows
        .iter()
        .filter(|r| r[0] == "2")
        .all(|r| r[6] == "yes" && r[5] != r[4]));
    assert!(rows
        .iter()
        .filter(|r| r[0] == "3")
        .all(|r| r[8] == "n/a" && r[5] == "0"));

    // Response-level correlations against the mean factual label of each answer.
    let resp = table_rows(&html, "response-metrics");
    assert_eq!(resp.len(), 9);
    for spec in &specs {
        for (k, scorer) in SCORERS.iter().enumerate() {
            let mut x = Vec::new();
            let mut y = Vec::new();
            for a in 0..spec.answers {
                let units: Vec<&Unit> = spec.units.iter().filter(|u| u.answer == a).collect();
                let scores: Vec<f64> = units.iter().filter_map(|u| u.scores[k]).collect();
                let labels: Vec<f64> = units
                    .iter()
                    .filter_map(|u| u.label.map(f64::from))
                    .collect();
                if let (Some(s), false) = (aggregate(&scores, Aggregation::Mean), labels.is_empty())
                {
                    x.push(s);
                    y.push(labels.iter().sum::<f64>() / labels.len() as f64);
                }
            }
            let row = resp
                .iter()
                .find(|r| r[0] == spec.run_id.to_string() && r[1] == escape(scorer))
                .unwrap();
            assert_eq!(
                row[2..],
                [
                    "mean".to_string(),
                    spec.answers.to_string(),
                    x.len().to_string(),
                    f3(pearson(&x, &y)),
                    f3(spearman(&x, &y))
                ],
                "run {} {scorer}",
                spec.run_id
            );
        }
    }

    // The AUROC-vs-m figure has both m and the AUROC of each point as a tooltip.
    let ablation = std::fs::read_to_string(out.join("ablation-0.svg")).unwrap();
    assert!(ablation.contains("3 (run 1)") && ablation.contains("5 (run 2)"));
    for ((m, k), a) in &auroc_by_m {
        let a = a.unwrap();
        let tip = format!("{} ({m}, {})", escape(SCORERS[*k]), tick(a));
        assert!(ablation.contains(&tip), "missing point {tip}");
    }
    // Run 3 took m from its uq_sample rows (4 per answer).
    let runs = table_rows(&html, "runs");
    assert_eq!(runs[2][5..7], ["all".to_string(), "4".to_string()]);

    render(&out.join("index.html"), &dir);
    if std::env::var_os("UQ_REPORT_SCREENSHOT").is_some() {
        eprintln!("report kept in {}", out.display());
    } else {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The report's tick label of a value (3 decimals, trailing zeros cut).
fn tick(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Renders the page with a headless Chromium (`uq_browser`), when one is on PATH, and checks the
/// screenshot is not blank.
fn render(index: &Path, dir: &Path) {
    let Some(browser) = uq_browser::find_or_skip("render check") else {
        return;
    };
    let png = dir.join("report.png");
    browser.run(
        &dir.join("chromium-profile"),
        &[
            "--window-size=1200,3000".to_string(),
            format!("--screenshot={}", png.display()),
        ],
        &format!("file://{}", index.display()),
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 30_000,
        "screenshot {} by {} is {size} bytes: blank page?",
        png.display(),
        browser.name
    );
    let frac = non_white_fraction(&png);
    assert!(
        frac.is_some() || !uq_browser::required(),
        "UQ_REQUIRE_BROWSER=1 and the screenshot's pixels could not be checked (python3 could not decode the PNG)"
    );
    if let Some(frac) = frac {
        eprintln!(
            "render ({}): {} bytes, {:.1}% non-white pixels",
            browser.name,
            size,
            frac * 100.0
        );
        assert!(
            frac > 0.02,
            "screenshot nearly blank: {:.2}% non-white",
            frac * 100.0
        );
    }
    if let Ok(keep) = std::env::var("UQ_REPORT_SCREENSHOT") {
        std::fs::copy(&png, &keep).unwrap();
    }
}

/// Share of pixels that are not (near) white, decoding the PNG with python3's zlib (no PNG
/// crate in the build); `None` without python3.
fn non_white_fraction(png: &Path) -> Option<f64> {
    const DECODE: &str = r#"
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n'
i, idat = 8, b''
while i < len(d):
    n, t = struct.unpack('>I4s', d[i:i+8]); c = d[i+8:i+8+n]; i += 12 + n
    if t == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', c[:10])
    elif t == b'IDAT': idat += c
assert depth == 8 and ctype in (2, 6)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat); stride = w * bpp
prev = bytearray(stride); pos = 0; nonwhite = 0
for y in range(h):
    f = raw[pos]; line = bytearray(raw[pos+1:pos+1+stride]); pos += 1 + stride
    for x in range(stride):
        a = line[x-bpp] if x >= bpp else 0; b = prev[x]; c = prev[x-bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p-a), abs(p-b), abs(p-c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        if min(line[x], line[x+1], line[x+2]) < 235: nonwhite += 1
    prev = line
print(nonwhite / (w * h))
"#;
    let o = match Command::new("python3")
        .arg("-c")
        .arg(DECODE)
        .arg(png)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("python3 could not be run to decode the PNG: {e}");
            return None;
        }
    };
    if !o.status.success() {
        eprintln!(
            "python3 could not decode the PNG: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        return None;
    }
    String::from_utf8_lossy(&o.stdout).trim().parse().ok()
}

#[test]
fn empty_database_and_missing_schema_give_clear_messages() {
    let dir = tmp_dir("empty");
    // Schema, no rows: a page that says so, in the default directory beside the DB.
    let (db, conn) = migrated_db(&dir);
    drop(conn);
    let o = uqd_report(&[&db]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(dir.join("bio-report/index.html")).unwrap();
    assert!(html.contains("no scored answers"), "{html}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("uq_score_table"));

    // A SQLite file without the schema: an error that says what to do, no panic.
    let plain = dir.join("plain.db");
    Connection::open(&plain)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    let o = uqd_report(&[&plain, &dir.join("plain-out")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("no uqlite schema") && err.contains("uqd score"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // Not a database, and no file at all.
    let junk = dir.join("junk.db");
    std::fs::write(
        &junk,
        b"this is not sqlite, just text that is long enough to be a header",
    )
    .unwrap();
    let o = uqd_report(&[&junk, &dir.join("junk-out")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && !err.contains("panicked") && err.contains("junk.db"),
        "{err}"
    );
    let o = uqd_report(&[&dir.join("missing.db")]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("does not exist"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unlabelled_scores_give_tables_with_na_and_a_note() {
    let dir = tmp_dir("nolabels");
    let (db, conn) = migrated_db(&dir);
    let mut rng = Rng(7);
    let units: Vec<Unit> = (0..6)
        .map(|i| Unit {
            answer: i / 3,
            label: None,
            objective: None,
            scores: (0..SCORERS.len()).map(|_| Some(rng.next())).collect(),
        })
        .collect();
    insert_run(
        &conn,
        &RunSpec {
            run_id: 1,
            granularity: "sentence",
            num_samples: Some(5),
            units,
            answers: 2,
        },
    );
    drop(conn);
    let out = dir.join("r");
    let o = uqd_report(&[&db, &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("no factual labels"));
    let rows = table_rows(&html, "unit-metrics");
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r[3] == "3" || r[3] == "6"));
    assert!(rows.iter().all(|r| r[8..].iter().all(|c| c == "n/a")));
    let svgs = std::fs::read_dir(&out).unwrap().filter(|e| {
        e.as_ref()
            .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "svg"))
    });
    assert_eq!(svgs.count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Calibrated scores (column `calibrated`, migration 3) give a before/after table with ECE and
/// Brier recomputed here, and a second curve on the scorer's reliability diagram; scorers
/// without calibrated scores are not in the table.
#[test]
fn calibrated_scores_are_compared_with_the_raw_ones() {
    let dir = tmp_dir("calibrated");
    let (db, conn) = migrated_db(&dir);
    let specs = build(&conn);
    // Run 1's entailment scores calibrated by a fixed monotone map (any map in [0, 1] will do:
    // the report reads the stored values), one unit left without a calibrated score.
    let map = |s: f64| (0.1 + 0.8 * s * s).min(1.0);
    conn.execute_batch(
        "UPDATE uq_unit_score SET calibrated = 0.1 + 0.8 * score * score
         WHERE scorer = 'entailment' AND unit_id IN (
           SELECT u.unit_id FROM uq_unit u JOIN uq_answer a ON a.answer_id = u.answer_id
           WHERE a.run_id = 1);
         UPDATE uq_unit_score SET calibrated = NULL
         WHERE scorer = 'entailment' AND unit_id = (SELECT min(unit_id) FROM uq_unit);",
    )
    .unwrap();
    drop(conn);
    let out = dir.join("out");
    let o = uqd_report(&[&db, &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let rows = table_rows(&html, "calibration-metrics");
    assert_eq!(
        rows.len(),
        1,
        "only run 1's entailment is calibrated: {rows:?}"
    );
    let run1 = &specs[0];
    let (raw, labels): (Vec<f64>, Vec<bool>) = run1
        .units
        .iter()
        .skip(1) // the unit without a calibrated score
        .filter_map(|u| Some((u.scores[0]?, u.label?)))
        .unzip();
    let cal: Vec<f64> = raw.iter().map(|&s| map(s)).collect();
    assert_eq!(
        rows[0],
        vec![
            "1".to_string(),
            "claim".to_string(),
            "entailment".to_string(),
            raw.len().to_string(),
            f3(ece(&raw, &labels, 10)),
            f3(ece(&cal, &labels, 10)),
            f3(brier(&raw, &labels)),
            f3(brier(&cal, &labels)),
        ]
    );
    // The diagram of run 1's entailment has both curves; the others have one.
    let svgs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("calibration-"))
        .map(|n| std::fs::read_to_string(out.join(n)).unwrap())
        .collect();
    assert_eq!(svgs.len(), 6);
    let with_both: Vec<&String> = svgs
        .iter()
        .filter(|s| s.contains("entailment calibrated"))
        .collect();
    assert_eq!(with_both.len(), 1);
    assert!(with_both[0].contains("(run 1, claim)"));
    assert!(with_both[0].contains(&format!(
        "ECE {} → {}",
        f3(ece(&raw, &labels, 10)),
        f3(ece(&cal, &labels, 10))
    )));
    for s in &svgs {
        check_svg("calibration", s);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
