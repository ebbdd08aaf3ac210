//! Bad input: every case is a clear SQL error naming the argument, or a documented value;
//! never a crash or a hang of sqlite3 or of the daemon.

use uq_integration::*;

fn assert_err(sb: &Sandbox, sql: &str, needles: &[&str]) {
    let err = sb.sqlite_err(sql);
    for n in needles {
        assert!(err.contains(n), "error for\n{sql}\nlacks {n:?}: {err}");
    }
}

#[test]
fn bad_arguments_give_clear_errors() {
    let sb = Sandbox::new("bad-args");
    let samples = json_lit(&SAMPLES);
    assert_err(
        &sb,
        &format!("SELECT response_confidence(NULL, {samples});"),
        &["response"],
    );
    assert_err(
        &sb,
        "SELECT response_confidence('A b.', NULL);",
        &["samples_json"],
    );
    assert_err(
        &sb,
        "SELECT response_confidence('A b.', 'not json');",
        &["samples_json", "JSON"],
    );
    assert_err(
        &sb,
        "SELECT response_confidence('A b.', '{\"a\":1}');",
        &["samples_json", "array"],
    );
    assert_err(
        &sb,
        "SELECT response_confidence('A b.', '[\"ok\", 3]');",
        &["samples_json", "1"],
    );
    assert_err(
        &sb,
        "SELECT response_confidence('A b.', '[]');",
        &["samples_json", "at least one"],
    );
    assert_err(
        &sb,
        &format!("SELECT response_confidence('A b.', {samples}, '[1]');"),
        &["options_json", "object"],
    );
    assert_err(
        &sb,
        &format!("SELECT * FROM uq_unit_scores(NULL, {samples}, NULL);"),
        &["response"],
    );
    assert_err(
        &sb,
        "SELECT * FROM uq_unit_scores('A b.', '[1,2]', NULL);",
        &["samples_json"],
    );
    assert_err(
        &sb,
        &format!("SELECT response_confidence(X'C328', {samples});"),
        &["response", "UTF-8"],
    );
    assert_err(&sb, "SELECT uq_nli(NULL, 'x');", &["premise"]);
    assert_err(
        &sb,
        "SELECT uq_nli('x', X'FFFE');",
        &["hypothesis", "UTF-8"],
    );
    assert_err(
        &sb,
        &format!("SELECT * FROM uq_unit_scores('', {samples}, '{{\"units\":[\"ok\",\"\"]}}');"),
        &["units[1]"],
    );
    // The daemon survived all of that and still answers.
    let ok = sb
        .sqlite_ok("SELECT json_extract(uq_nli('It rains.', 'It rains.'), '$.entailment') > 0.5;");
    assert_eq!(ok, "1");
}

#[test]
fn empty_response_has_no_units() {
    let sb = Sandbox::new("bad-empty");
    let samples = json_lit(&SAMPLES);
    let out = sb.sqlite_ok(&format!(
        "SELECT count(*) FROM uq_unit_scores('', {samples}, NULL);
         SELECT count(*) FROM uq_unit_scores('   \n  ', {samples}, NULL);
         SELECT response_confidence('', {samples}) IS NULL;"
    ));
    assert_eq!(out.lines().collect::<Vec<_>>(), vec!["0", "0", "1"]);
}

#[test]
fn texts_of_several_megabytes() {
    let sb = Sandbox::new("bad-huge");
    // 2.2 MB of sentences: split locally, quickly, without a crash.
    let out = sb.sqlite_ok(
        "WITH RECURSIVE r(n, t) AS (SELECT 1, 'The sky is blue. ' UNION ALL SELECT n + 1, t || t FROM r WHERE n < 18)
         SELECT count(*) FROM uq_sentences((SELECT t FROM r WHERE n = 18));",
    );
    assert_eq!(out, "131072");
    // Several MB sent for scoring: a clear error that names the limit, and the daemon lives on.
    let samples = json_lit(&SAMPLES);
    let err = sb.sqlite_err(&format!(
        "WITH RECURSIVE r(n, t) AS (SELECT 1, 'The sky is blue. ' UNION ALL SELECT n + 1, t || t FROM r WHERE n < 18)
         SELECT response_confidence((SELECT t FROM r WHERE n = 18), {samples});"
    ));
    assert!(err.contains("response") && err.contains("MB"), "{err}");
    let err = sb.sqlite_err(
        "WITH RECURSIVE r(n, t) AS (SELECT 1, 'The sky is blue. ' UNION ALL SELECT n + 1, t || t FROM r WHERE n < 18)
         SELECT response_confidence('The sky is blue.', json_array((SELECT t FROM r WHERE n = 18)));",
    );
    assert!(
        err.contains("samples_json[0]") && err.contains("MB"),
        "{err}"
    );
    assert_eq!(
        sb.sqlite_ok("SELECT uq_nli('a b', 'a b') IS NOT NULL;"),
        "1"
    );
}
