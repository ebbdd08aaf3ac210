//! Bad input that is not an error: a documented value, never a crash or a hang of sqlite3 or of
//! the daemon. The errors bad input gives are pinned in full by errors.rs.

use uq_integration::*;

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
}
