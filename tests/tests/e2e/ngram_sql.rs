//! The model-free n-gram scorers (`unigram_avg`, `unigram_max`; SelfCheckGPT's unigram variant)
//! from SQL against the real daemon: unit scores at sentence and claim granularity, the response
//! confidence, a whole-table job, and the errors of bad input. Every expected value is worked by
//! hand below.
//!
//! Response "The cat sat. A dog ran!", samples "The cat ran." and "A dog sat.". Tokens:
//! the cat sat . a dog ran ! | the cat ran . | a dog sat .  → N = 16; counts the, cat, sat, a,
//! dog, ran 2 each, . 3, ! 1 → 8 types + <unk>: V = 9, N + V = 25. With add-one smoothing
//! p = 3/25 for the six words, 4/25 for ".", 2/25 for "!", 1/25 for an unseen token.

use uq_integration::*;

const RESPONSE: &str = "The cat sat. A dog ran!";
const SAMPLES: [&str; 2] = ["The cat ran.", "A dog sat."];

/// "The cat sat.": p = 3/25, 3/25, 3/25, 4/25. Max: the lowest p; avg: the geometric mean.
const SENT0_MAX: f64 = 3.0 / 25.0;
fn sent0_avg() -> f64 {
    (0.12f64.powi(3) * 0.16).powf(0.25) // 0.00027648^(1/4) = 0.1289484
}
/// "A dog ran!": p = 3/25, 3/25, 3/25, 2/25.
const SENT1_MAX: f64 = 2.0 / 25.0;
fn sent1_avg() -> f64 {
    (0.12f64.powi(3) * 0.08).powf(0.25) // 0.00013824^(1/4) = 0.1084322
}

fn num(s: &str, what: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{what}: not a number: {s:?}"))
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-12, "{what}: got {got}, want {want}");
}

/// `unit_idx|unit|scorer|score` rows of `uq_unit_scores` with `options`, by scorer then unit.
fn unit_rows(sb: &Sandbox, options: &str) -> Vec<Vec<String>> {
    let out = sb.sqlite_ok(&format!(
        "SELECT unit_idx || '|' || unit || '|' || scorer || '|' || score FROM uq_unit_scores({}, {}, {}) ORDER BY scorer, unit_idx;",
        lit(RESPONSE),
        json_lit(&SAMPLES),
        lit(options)
    ));
    out.lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

#[test]
fn unigram_scores_at_sentence_and_claim_granularity_and_response_confidence() {
    let sb = Sandbox::new("ngram-sql");

    // Sentences, beside an NLI scorer: the families combine in one request.
    let rows = unit_rows(
        &sb,
        r#"{"scorers":["unigram_max","entailment","unigram_avg"]}"#,
    );
    assert_eq!(rows.len(), 6, "3 scorers x 2 sentences: {rows:?}");
    let want = [
        ("entailment", "The cat sat.", None),
        ("entailment", "A dog ran!", None),
        ("unigram_avg", "The cat sat.", Some(sent0_avg())),
        ("unigram_avg", "A dog ran!", Some(sent1_avg())),
        ("unigram_max", "The cat sat.", Some(SENT0_MAX)),
        ("unigram_max", "A dog ran!", Some(SENT1_MAX)),
    ];
    for (row, (scorer, unit, value)) in rows.iter().zip(want) {
        assert_eq!(
            (row[1].as_str(), row[2].as_str()),
            (unit, scorer),
            "{rows:?}"
        );
        let got = num(&row[3], scorer);
        match value {
            Some(v) => assert_close(got, v, &format!("{scorer} of {unit:?}")),
            None => assert!((0.0..=1.0).contains(&got), "{rows:?}"),
        }
    }

    // Claims given as option units (no decomposition call). "A cat sat": p = 3/25 three times;
    // "A bird flew": p = 3/25, 1/25, 1/25 (bird and flew are unseen).
    let rows = unit_rows(
        &sb,
        r#"{"granularity":"claim","units":["A cat sat","A bird flew"],"scorers":["unigram_avg","unigram_max"]}"#,
    );
    let want = [
        ("unigram_avg", "A cat sat", 0.12),
        ("unigram_avg", "A bird flew", (0.12f64 * 0.04 * 0.04).cbrt()), // 0.000192^(1/3) = 0.0576900
        ("unigram_max", "A cat sat", 0.12),
        ("unigram_max", "A bird flew", 0.04),
    ];
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for (row, (scorer, unit, value)) in rows.iter().zip(want) {
        assert_eq!(
            (row[1].as_str(), row[2].as_str()),
            (unit, scorer),
            "{rows:?}"
        );
        assert_close(
            num(&row[3], scorer),
            value,
            &format!("{scorer} of {unit:?}"),
        );
    }

    // Response confidence: the mean of the sentence confidences (default aggregation), and
    // their minimum with aggregation min.
    let out = sb.sqlite_ok(&format!(
        "SELECT response_confidence({r}, {s}, '{{\"scorers\":[\"unigram_max\"]}}');
         SELECT response_confidence({r}, {s}, '{{\"scorers\":[\"unigram_avg\"],\"aggregation\":\"min\"}}');",
        r = lit(RESPONSE),
        s = json_lit(&SAMPLES),
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_close(
        num(lines[0], "mean"),
        (SENT0_MAX + SENT1_MAX) / 2.0,
        "mean of unigram_max",
    );
    assert_close(num(lines[1], "min"), sent1_avg(), "min of unigram_avg");
}

#[test]
fn unigram_bad_input_gives_clear_errors() {
    let sb = Sandbox::new("ngram-errors");
    // No samples: the model would be fitted on the response alone.
    let e = sb.sqlite_err(
        r#"SELECT * FROM uq_unit_scores('The cat sat.', '[]', '{"scorers":["unigram_max"]}');"#,
    );
    assert!(
        e.contains("samples_json holds no sampled answer, but scorer unigram_max compares"),
        "{e}"
    );
    let e = sb.sqlite_err(
        r#"SELECT response_confidence('The cat sat.', '[]', '{"scorers":["unigram_avg"]}');"#,
    );
    assert!(
        e.contains("samples_json holds no sampled answer, but scorer unigram_avg compares"),
        "{e}"
    );
    // A misspelt name lists the real ones.
    let e = sb.sqlite_err(
        r#"SELECT * FROM uq_unit_scores('The cat sat.', '["A dog."]', '{"scorers":["unigram"]}');"#,
    );
    assert!(
        e.contains("unknown scorer \"unigram\"")
            && e.contains("unigram_avg")
            && e.contains("unigram_max"),
        "{e}"
    );
    // An empty caller-given unit is refused by index.
    let e = sb.sqlite_err(
        r#"SELECT * FROM uq_unit_scores('The cat sat.', '["A dog."]', '{"granularity":"claim","units":["A cat"," "],"scorers":["unigram_max"]}');"#,
    );
    assert!(e.contains("units[1] is empty"), "{e}");
}

#[test]
fn a_job_scores_a_table_with_unigram_max() {
    let sb = Sandbox::new("ngram-job");
    let cache = sb.dir.join("cache").join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let db = sb.dir.join("results.db").display().to_string();
    let code = format!(
        r#"
conn = sqlite3.connect({db:?}, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(EXT)
conn.execute("CREATE TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
conn.execute("INSERT INTO answers VALUES (1, ?, ?)", ({resp:?}, json.dumps({samples:?})))
conn.execute("INSERT INTO answers VALUES (2, ?, ?)", ('Cats purr. Dogs bark.', json.dumps(['Cats purr.'])))
job = conn.execute("SELECT uq_score_table('answers', '{{\"scorers\":[\"unigram_max\"]}}')").fetchone()[0]
status = conn.execute("SELECT uq_wait(?, 600)", (job,)).fetchone()[0]
rows = conn.execute("SELECT a.source_key, u.position, u.text, s.scorer, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) JOIN uq_unit_score s USING (unit_id) ORDER BY 1, 2").fetchall()
resp = conn.execute("SELECT a.source_key, r.aggregation, r.score FROM uq_answer a JOIN uq_response_score r USING (answer_id) WHERE r.scorer = 'unigram_max' ORDER BY 1").fetchall()
print(json.dumps(dict(status=status, rows=rows, resp=resp)))
"#,
        resp = RESPONSE,
        samples = SAMPLES.to_vec(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or("")).unwrap();
    assert_eq!(v["status"], "done", "{v}");
    // Row 2: "cats purr . dogs bark ." + "cats purr ." → N = 9; cats 2, purr 2, . 3, dogs 1,
    // bark 1 → V = 6, N + V = 15. "Cats purr.": lowest p = 3/15; "Dogs bark.": 2/15.
    let want = [
        ("1", 0, "The cat sat.", SENT0_MAX),
        ("1", 1, "A dog ran!", SENT1_MAX),
        ("2", 0, "Cats purr.", 3.0 / 15.0),
        ("2", 1, "Dogs bark.", 2.0 / 15.0),
    ];
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), want.len(), "{v}");
    for (row, (key, pos, text, value)) in rows.iter().zip(want) {
        assert_eq!(row[0], key, "{v}");
        assert_eq!(row[1], pos, "{v}");
        assert_eq!(row[2], text, "{v}");
        assert_eq!(row[3], "unigram_max", "{v}");
        assert_close(row[4].as_f64().unwrap_or(f64::NAN), value, text);
    }
    let resp = v["resp"].as_array().cloned().unwrap_or_default();
    assert_eq!(resp.len(), 2, "{v}");
    assert_eq!(resp[0][1], "mean", "{v}");
    assert_close(
        resp[0][2].as_f64().unwrap_or(f64::NAN),
        (SENT0_MAX + SENT1_MAX) / 2.0,
        "answer 1",
    );
    assert_close(
        resp[1][2].as_f64().unwrap_or(f64::NAN),
        (3.0 / 15.0 + 2.0 / 15.0) / 2.0,
        "answer 2",
    );
}
