//! What a user sees of verified reconstruction and decomposition coverage, in the real sqlite3
//! with the embedded SmolLM2 and the NLI model `nli-minilm-l6-v2` (pinned: the assertions read
//! its judgements): the demo's answer (examples/demo.sql) loses its invented and its false detail,
//! `uq_coverage` reports per sentence, and bad options are refused with the fix.

use uq_integration::{lit, root, Sandbox};

const ANSWER: &str = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna in 1867.";
const SAMPLES: &str = "json_array(\
    'Marie Curie was a physicist and chemist born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.', \
    'Born in Warsaw, Marie Curie was a chemist and physicist. In 1903 she won the Nobel Prize in Physics.', \
    'Marie Curie, a physicist and chemist from Warsaw, won the 1903 Nobel Prize in Physics.')";

fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("completions.sqlite").display().to_string();
    let v2 = root()
        .join("../shared/models/nli-minilm-l6-v2")
        .display()
        .to_string();
    sb.with_env("UQ_CACHE_DB", &cache)
        .with_env("UQ_NLI_MODEL", &v2)
}

#[test]
fn the_demo_answer_keeps_no_false_or_invented_fact() {
    let sb = sandbox("trust-demo");
    let opts = r#"'{"granularity":"claim","scorers":["luq_atomic"],"threshold":0.5}'"#;
    let sql = format!(
        "CREATE TABLE a(answer TEXT, samples TEXT);
         INSERT INTO a VALUES ({answer}, {SAMPLES});
         CREATE TABLE c AS SELECT u.* FROM a, uad_claims(a.answer, a.samples, {opts}) u;
         CREATE TABLE r AS SELECT uad_filter(answer, samples, {opts}) AS refined FROM a;
         -- 1. the Vienna detail is scored (as a claim or as an uncovered sentence) and dropped
         SELECT 'vienna', count(*), max(kept) FROM c WHERE claim LIKE '%Vienna%';
         -- 2. the refined answer was verified, and every sentence of it is entailed by the kept
         --    claims (checked here independently of the daemon's own check)
         SELECT 'verified', min(verified) FROM c;
         SELECT 'refined', refined FROM r;
         SELECT 'min_entailment', min(json_extract(uq_nli(
             (SELECT group_concat(claim, ' ') FROM (SELECT claim FROM c WHERE kept ORDER BY idx)),
             s.sentence), '$.entailment'))
           FROM r, uq_sentences(r.refined) s;
         -- 3. the sentence-level cleaned answer of the demo leaves out the false sentence only
         SELECT 'cleaned', group_concat(unit, ' ') FROM (
           SELECT s.unit FROM a, uq_unit_scores(a.answer, a.samples, '{{\"scorers\":[\"luq\"]}}') s
           WHERE s.score >= 0.5 ORDER BY s.unit_idx);",
        answer = lit(ANSWER)
    );
    let out = sb.sqlite_ok(&sql);
    let get = |key: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}|")))
            .unwrap_or_else(|| panic!("no {key} line in:\n{out}"))
            .to_string()
    };
    let vienna: Vec<&str> = get("vienna").leak().split('|').collect();
    assert!(vienna[0].parse::<i64>().unwrap() >= 1, "{out}");
    assert_eq!(vienna[1], "0", "the Vienna unit is not kept:\n{out}");
    assert_eq!(get("verified"), "1", "{out}");
    let refined = get("refined");
    assert!(
        !refined.is_empty() && !refined.contains("Vienna") && !refined.contains("Pierre"),
        "{out}"
    );
    let min_e: f64 = get("min_entailment").parse().unwrap();
    assert!(
        min_e >= 0.5,
        "a sentence of the refined answer is not entailed by the kept claims:\n{out}"
    );
    assert_eq!(
        get("cleaned"),
        "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903.",
        "{out}"
    );
}

#[test]
fn coverage_and_origins_in_sql() {
    let sb = sandbox("trust-coverage");
    let response = "Marie Curie was a physicist. She was born in Vienna in 1867.";
    let units = r#"'{"units":["Marie Curie was a physicist.","Marie Curie was born in 1867."]}'"#;
    let out = sb.sqlite_ok(&format!(
        "SELECT idx, sentence, covered, entailment >= 0.5, json_array_length(claims)
           FROM uq_coverage({r}, {units});
         SELECT count(*) FROM uq_coverage('');
         SELECT DISTINCT origin FROM uq_unit_scores({r}, json_array('Marie Curie, born in Warsaw.'));
         SELECT DISTINCT origin FROM uq_unit_scores({r}, json_array('Marie Curie, born in Warsaw.'),
                                                    '{{\"granularity\":\"claim\",\"units\":[\"A claim.\"]}}');",
        r = lit(response)
    ));
    assert_eq!(
        out,
        "0|Marie Curie was a physicist.|1|1|2\n\
         1|She was born in Vienna in 1867.|0|0|2\n\
         0\n\
         sentence\n\
         given"
    );
}

#[test]
fn bad_trust_options_are_refused_with_the_fix() {
    let sb = sandbox("trust-errors");
    let cases = [
        (
            r#"SELECT * FROM uq_unit_scores('A.', '["B."]', '{"coverage":"all"}');"#,
            r#"uq_unit_scores: option coverage is "all": use "add_units" (score uncovered sentences), "report" or "off""#,
        ),
        (
            r#"SELECT uad_filter('A.', '["B."]', '{"verify":1}');"#,
            r#"uad_filter: option verify must be true or false, e.g. "verify":false; got a number"#,
        ),
        (
            r#"SELECT * FROM uq_coverage('A.', '{"coverage_threshold":2}');"#,
            r#"uq_coverage: option coverage_threshold is 2, outside 0..=1 (an entailment probability): e.g. "coverage_threshold":0.5"#,
        ),
        (
            "SELECT * FROM uq_coverage(42);",
            "uq_coverage: response must be TEXT, got INTEGER; pass text (or CAST(response AS TEXT))",
        ),
    ];
    for (sql, want) in cases {
        let e = sb.sqlite_err(sql);
        assert!(e.contains(want), "{sql}\nwant: {want}\ngot:  {e}");
    }
}
