//! First-run errors carry their reason: when the daemon the extension starts exits before
//! answering (no model, a bad config file, a missing ONNX Runtime library), the SQL error says
//! why, from the daemon's log, with the fix the daemon names (issue 12, item 6). Pinned in
//! tests/golden/errors/first_run.txt (`UQ_BLESS=1` rewrites it).

use uq_integration::golden::Golden;
use uq_integration::*;

const SQL: &str = "SELECT uq_nli('The cat sat on the mat.', 'A cat sat.');";

/// Sandboxes for the three causes, each with its variable set.
fn causes() -> Vec<(&'static str, Sandbox, &'static str)> {
    let no_model = Sandbox::new("first-run-nomodel");
    let missing = no_model.dir.join("no-such-model");
    let no_model = no_model.with_env("UQ_NLI_MODEL", &missing.display().to_string());

    let bad_config = Sandbox::new("first-run-config");
    let file = bad_config.dir.join("uqd.json");
    std::fs::write(&file, "{\"nli_modle\": \"/models/nli\"}\n").unwrap();
    let bad_config = bad_config.with_env("UQ_CONFIG", &file.display().to_string());

    let no_lib = Sandbox::new("first-run-nolib");
    let lib = no_lib.dir.join("lib").join("libonnxruntime.so.1.31.1");
    let no_lib = no_lib.with_env("UQ_ORT_LIB", &lib.display().to_string());
    vec![
        (
            "no NLI model: UQ_NLI_MODEL names no directory",
            no_model,
            "does not exist",
        ),
        (
            "a bad config file: an unknown key",
            bad_config,
            "unknown field `nli_modle`",
        ),
        (
            "a missing library: UQ_ORT_LIB names no file",
            no_lib,
            "ONNX Runtime library",
        ),
    ]
}

#[test]
fn sql_errors_carry_the_daemons_reason() {
    let cases = causes();
    let mut g = Golden::new(
        "errors/first_run.txt",
        "# The first use of a function that needs the daemon, when the daemon it starts exits before answering:\n\
         # the error carries the daemon's own reason and fix (from its log), then the log's path.\n\
         # Pinned by tests/tests/e2e/first_run.rs: each case runs `sqlite3 -bail -batch` whose line 1 is\n\
         # `.load $DIST/uq0`. After an intended change: UQ_BLESS=1 cargo test --release -p uq-integration\n\
         # --test first_run, then review the diff.",
    );
    for (_, sb, _) in &cases {
        g.replace(sb.dir.display(), "$SANDBOX");
    }
    g.replace(dist().display(), "$DIST");
    for (title, sb, reason) in &cases {
        let err = sb.sqlite_err(SQL);
        // One line: the reason is in the message itself, not only in the log it names.
        let line = err.trim();
        assert!(
            !line.contains('\n'),
            "{title}: a one-line error expected:\n{err}"
        );
        assert!(
            line.contains(reason),
            "{title}: the reason {reason:?} is missing:\n{err}"
        );
        assert!(
            line.contains("uqd.log"),
            "{title}: the log's path is missing:\n{err}"
        );
        assert!(sb.daemon_pid().is_none(), "{title}: no daemon should run");
        g.add(title, SQL, "error", &err);
    }
    g.check();
}

/// The same reason reaches Python's sqlite3 (the exception's text), and a second call, after the
/// cause is still there, gives it again (the daemon is started anew, not a stale answer).
#[test]
fn python_sees_the_reason_too() {
    for (title, sb, reason) in causes() {
        let out = sb.python_ok(&format!(
            r#"
for attempt in range(2):
    try:
        conn.execute({SQL:?}).fetchone()
        print("no error")
    except sqlite3.OperationalError as e:
        print({reason:?} in str(e), "uqd.log" in str(e))
"#
        ));
        assert_eq!(out, "True True\nTrue True", "{title}");
    }
}
