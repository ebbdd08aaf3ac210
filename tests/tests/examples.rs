//! The shipped SQL examples run as documented and say what they claim.

use uq_integration::*;

fn run_example(sb: &Sandbox, path: &str) -> String {
    let sql = std::fs::read_to_string(root().join(path)).unwrap();
    // The examples load `dist/uq0` relative to the repository root; the harness loads it already.
    sb.sqlite_ok(&sql.replace(".load dist/uq0", ""))
}

#[test]
fn example_queries_flag_the_invented_sentences() {
    let sb = Sandbox::new("ex-queries");
    let out = run_example(&sb, "sql/queries.sql");
    let flagged: Vec<&str> = out
        .lines()
        .take_while(|l| l.split('|').count() == 4)
        .collect();
    assert_eq!(flagged.len(), 2, "{out}");
    assert!(flagged[0].starts_with("1|2|It is made of gold.|"), "{out}");
    assert!(
        flagged[1].starts_with("2|1|It lies in the Andes.|"),
        "{out}"
    );
}

#[test]
fn demo_runs_on_the_embedded_models() {
    let sb = Sandbox::new("ex-demo");
    let cache = sb.dir.join("completions.sqlite");
    let sb = sb.with_env("UQ_CACHE_DB", &cache.display().to_string());
    let out = run_example(&sb, "examples/demo.sql");
    for needle in [
        "cleaned_answer",
        "luq_atomic",
        "claim_confidence",
        "refined_answer",
        "She was born in Vienna",
    ] {
        assert!(out.contains(needle), "demo output lacks {needle:?}:\n{out}");
    }
}
