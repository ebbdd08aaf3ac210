//! The full text of the errors a user sees, pinned in golden files under `tests/golden/errors/`:
//! bad arguments to every function, bad options and unknown option or scorer names, bad LLM
//! configs in `temp.uq_llms`, failing LLM servers, bad job arguments, a daemon that cannot start.
//! Every SQL case runs in its own `sqlite3 -bail` process. `UQ_BLESS=1` rewrites the files.

use uq_fake_openai::{FakeOpenAi, Reply};
use uq_integration::golden::Golden;
use uq_integration::*;

/// Per-run values every file normalises.
fn golden(name: &str, what: &str, sandboxes: &[&Sandbox]) -> Golden {
    let mut g = Golden::new(
        &format!("errors/{name}"),
        &format!(
            "# {what}\n\
             # Pinned by tests/tests/e2e/errors.rs: each SQL case runs in its own `sqlite3 -bail -batch`\n\
             # whose line 1 is `.load $DIST/uq0` (the SQL starts at line 2). After an intended change:\n\
             # UQ_BLESS=1 cargo test --release -p uq-integration --test e2e errors::, then review the diff."
        ),
    );
    for sb in sandboxes {
        g.replace(sb.dir.display(), "$SANDBOX");
    }
    g.replace(dist().display(), "$DIST");
    g.replace(root().display(), "$ROOT");
    g
}

/// Runs `sql` on `db` in `sb` and adds its error.
fn sql_case(g: &mut Golden, sb: &Sandbox, db: &str, title: &str, sql: &str) {
    let err = stderr_err(&sb.sqlite_on(db, sql), sql);
    g.add(title, sql, "error", &err);
}

fn sql_cases(g: &mut Golden, sb: &Sandbox, cases: &[(&str, &str)]) {
    for (title, sql) in cases {
        sql_case(g, sb, ":memory:", title, sql);
    }
}

/// Runs `uqd ARGS --socket <sb's socket>` and adds its error and exit status.
fn uqd_case(g: &mut Golden, sb: &Sandbox, title: &str, args: &[&str]) {
    let command = format!("$ uqd {} --socket {}", args.join(" "), sb.socket.display());
    let out = sb.uqd(args);
    let err = stderr_err(&out, &command);
    let label = format!("error (exit status {})", out.status.code().unwrap_or(-1));
    g.add(title, &command, &label, &err);
}

/// A text of 2.2 MB in SQL.
const HUGE: &str = "WITH RECURSIVE r(n, t) AS (SELECT 1, 'The sky is blue. ' UNION ALL SELECT n + 1, t || t FROM r WHERE n < 18)";

#[test]
fn scoring_function_arguments_and_options() {
    let sb = Sandbox::new("errors-args");
    let mut g = golden(
        "arguments.txt",
        "Bad arguments and options of the scoring functions.",
        &[&sb],
    );
    sql_cases(
        &mut g,
        &sb,
        &[
            (
                "response_confidence: response NULL",
                r#"SELECT response_confidence(NULL, '["C d."]');"#,
            ),
            (
                "response_confidence: samples NULL",
                "SELECT response_confidence('A b.', NULL);",
            ),
            (
                "response_confidence: samples not JSON",
                "SELECT response_confidence('A b.', 'not json');",
            ),
            (
                "response_confidence: samples an object",
                r#"SELECT response_confidence('A b.', '{"a":1}');"#,
            ),
            (
                "response_confidence: a sample not text",
                r#"SELECT response_confidence('A b.', '["ok", 3]');"#,
            ),
            (
                "response_confidence: no samples",
                "SELECT response_confidence('A b.', '[]');",
            ),
            (
                "response_confidence: options not an object",
                r#"SELECT response_confidence('A b.', '["C d."]', '[1]');"#,
            ),
            (
                "response_confidence: response not UTF-8",
                r#"SELECT response_confidence(X'C328', '["C d."]');"#,
            ),
            (
                "uq_unit_scores: response NULL",
                r#"SELECT * FROM uq_unit_scores(NULL, '["C d."]', NULL);"#,
            ),
            (
                "uq_unit_scores: samples not texts",
                "SELECT * FROM uq_unit_scores('A b.', '[1,2]', NULL);",
            ),
            (
                "uq_unit_scores: an empty unit",
                r#"SELECT * FROM uq_unit_scores('', '["C d."]', '{"units":["ok",""]}');"#,
            ),
            ("uq_nli: premise NULL", "SELECT uq_nli(NULL, 'x');"),
            (
                "uq_nli: hypothesis not UTF-8",
                "SELECT uq_nli('x', X'FFFE');",
            ),
            (
                "unknown option",
                r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{"scorer":["entailment"]}');"#,
            ),
            (
                "unknown scorer",
                r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{"scorers":["bogus"]}');"#,
            ),
            (
                "unknown aggregation",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"aggregation":"median"}');"#,
            ),
            (
                "response_confidence: two scorers",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"scorers":["entailment","noncontradiction"]}');"#,
            ),
            (
                "num_samples above the samples given",
                r#"SELECT response_confidence('A b.', '["C d.", "E f.", "G h."]', '{"num_samples":7}');"#,
            ),
            (
                "premise: unknown value",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"premise":"best"}');"#,
            ),
            (
                "premise: top_k 0",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"premise":{"top_k":0}}');"#,
            ),
            (
                "premise: unknown rank",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"premise":{"top_k":3,"rank":"bm25"}}');"#,
            ),
            (
                "unknown granularity",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"granularity":"paragraph"}');"#,
            ),
            (
                "num_questions 0",
                r#"SELECT response_confidence('A b.', '["C d."]', '{"scorers":["qa_exact_match"],"num_questions":0}');"#,
            ),
            (
                "uq_claim_union: no samples",
                "SELECT uq_claim_union('a', '[]');",
            ),
            (
                "options before samples: a misspelt scorer, samples NULL",
                r#"SELECT * FROM uq_unit_scores('A b.', NULL, '{"scorers":["grounded_entailmnt"]}');"#,
            ),
            (
                "options before samples: options not JSON, samples '[]'",
                r#"SELECT * FROM uq_unit_scores('A b.', '[]', '{"scorers":["grounded_entailment"],}');"#,
            ),
            (
                "options before samples: a misspelt option, samples NULL",
                r#"SELECT response_confidence('A b.', NULL, '{"scorers":["grounded_entailment"],"source":"A b."}');"#,
            ),
            (
                "samples NULL: the default scorers compare samples",
                "SELECT * FROM uq_unit_scores('A b.', NULL);",
            ),
            (
                "samples '[]': a sample scorer beside a grounded one",
                r#"SELECT * FROM uq_unit_scores('A b.', '[]', '{"scorers":["grounded_entailment","entailment"],"sources":"A b."}');"#,
            ),
            (
                "uad_filter: samples NULL, the default scorer",
                "SELECT uad_filter('A b.', NULL);",
            ),
        ],
    );
    sql_case(
        &mut g,
        &sb,
        ":memory:",
        "response_confidence: a response of several MB",
        &format!(
            "{HUGE}\nSELECT response_confidence((SELECT t FROM r WHERE n = 18), '[\"C d.\"]');"
        ),
    );
    sql_case(
        &mut g,
        &sb,
        ":memory:",
        "response_confidence: a sample of several MB",
        &format!("{HUGE}\nSELECT response_confidence('The sky is blue.', json_array((SELECT t FROM r WHERE n = 18)));"),
    );
    g.check();
    // The daemon survived all of that (texts of several MB included) and still answers.
    let ok = sb
        .sqlite_ok("SELECT json_extract(uq_nli('It rains.', 'It rains.'), '$.entailment') > 0.5;");
    assert_eq!(ok, "1");
}

#[test]
fn metric_arguments() {
    let sb = Sandbox::new("errors-metrics");
    let mut g = golden(
        "metrics.txt",
        "Bad labels, scores and bins of the metric aggregates.",
        &[&sb],
    );
    let t = "CREATE TABLE t(s, l); INSERT INTO t VALUES (0.1, 0), (0.8, 1);";
    let mut case = |title: String, sql: String| sql_case(&mut g, &sb, ":memory:", &title, &sql);
    for f in [
        "uq_auroc",
        "uq_auprc",
        "uq_ece",
        "uq_brier",
        "uq_best_threshold",
        "uq_best_f1",
    ] {
        for (what, row) in [
            ("label 2", "(0.5, 2)"),
            ("label text", "(0.5, 'x')"),
            ("score text", "('high', 1)"),
            // a bad label is an error even when the score is NULL
            ("label -1, score NULL", "(NULL, -1)"),
        ] {
            case(
                format!("{f}: {what}"),
                format!("{t} INSERT INTO t VALUES {row}; SELECT {f}(s, l) FROM t;"),
            );
        }
    }
    case(
        "uq_auroc: label 0.5".into(),
        format!("{t} INSERT INTO t VALUES (0.5, 0.5); SELECT uq_auroc(s, l) FROM t;"),
    );
    case(
        "uq_auprc: score a blob".into(),
        format!("{t} INSERT INTO t VALUES (x'00', 1); SELECT uq_auprc(s, l) FROM t;"),
    );
    for f in ["uq_pearson", "uq_spearman"] {
        case(
            format!("{f}: x text"),
            format!("{t} INSERT INTO t VALUES ('a', 1); SELECT {f}(s, l) FROM t;"),
        );
        case(
            format!("{f}: y text"),
            format!("{t} INSERT INTO t VALUES (1, 'b'); SELECT {f}(s, l) FROM t;"),
        );
    }
    // probability metrics only: scores outside [0, 1]
    for f in ["uq_ece", "uq_brier"] {
        for score in ["1.5", "-0.25"] {
            case(
                format!("{f}: score {score}"),
                format!("{t} INSERT INTO t VALUES ({score}, 1); SELECT {f}(s, l) FROM t;"),
            );
        }
    }
    for bad in ["0", "-2", "2.5", "'ten'", "NULL", "1000001"] {
        case(
            format!("uq_ece: bins {bad}"),
            format!("{t} SELECT uq_ece(s, l, {bad}) FROM t;"),
        );
    }
    case(
        "uq_ece: bins that change".into(),
        format!("{t} SELECT uq_ece(s, l, CASE WHEN s < 0.5 THEN 5 ELSE 10 END) FROM t;"),
    );
    case(
        "uq_auroc: one argument".into(),
        format!("{t} SELECT uq_auroc(s) FROM t;"),
    );
    g.check();
    assert!(sb.daemon_pid().is_none(), "metrics need no daemon");
}

#[test]
fn calibration_and_ensemble_arguments() {
    let sb = Sandbox::new("errors-calibration");
    let mut g = golden(
        "calibration.txt",
        "Bad labels, scores, methods, models, weights and options of the calibration and ensemble functions.",
        &[&sb],
    );
    let t = "CREATE TABLE t(s, l); INSERT INTO t VALUES (0.1, 0), (0.8, 1), (0.4, 1);";
    let e = "CREATE TABLE t(s, l); INSERT INTO t VALUES (json_object('a', 0.1, 'b', 0.3), 0), (json_object('a', 0.8, 'b', 0.6), 1);";
    let platt = r#"'{"method":"platt","a":4,"b":-2}'"#;
    let weights = r#"'{"a":0.5,"b":0.5}'"#;
    let mut case = |title: &str, sql: String| sql_case(&mut g, &sb, ":memory:", title, &sql);
    // uq_fit_calibration
    case(
        "uq_fit_calibration: empty table",
        "CREATE TABLE t(s, l); SELECT uq_fit_calibration(s, l) FROM t;".into(),
    );
    case(
        "uq_fit_calibration: every label NULL",
        format!("{t} UPDATE t SET l = NULL; SELECT uq_fit_calibration(s, l) FROM t;"),
    );
    case(
        "uq_fit_calibration: one class",
        format!("{t} SELECT uq_fit_calibration(s, l) FROM t WHERE l = 1;"),
    );
    case(
        "uq_fit_calibration: one class, isotonic",
        format!("{t} SELECT uq_fit_calibration(s, 0, 'isotonic') FROM t;"),
    );
    case(
        "uq_fit_calibration: label 2",
        format!("{t} INSERT INTO t VALUES (0.5, 2); SELECT uq_fit_calibration(s, l) FROM t;"),
    );
    case(
        "uq_fit_calibration: label text, score NULL",
        format!("{t} INSERT INTO t VALUES (NULL, 'yes'); SELECT uq_fit_calibration(s, l) FROM t;"),
    );
    case(
        "uq_fit_calibration: score text",
        format!("{t} INSERT INTO t VALUES ('high', 1); SELECT uq_fit_calibration(s, l) FROM t;"),
    );
    case(
        "uq_fit_calibration: method unknown",
        format!("{t} SELECT uq_fit_calibration(s, l, 'beta') FROM t;"),
    );
    case(
        "uq_fit_calibration: method NULL",
        format!("{t} SELECT uq_fit_calibration(s, l, NULL) FROM t;"),
    );
    case("uq_fit_calibration: method that changes", format!("{t} SELECT uq_fit_calibration(s, l, CASE WHEN s < 0.5 THEN 'platt' ELSE 'isotonic' END) FROM t;"));
    // uq_calibrate
    case(
        "uq_calibrate: model NULL",
        "SELECT uq_calibrate(0.5, NULL);".into(),
    );
    case(
        "uq_calibrate: model not JSON",
        "SELECT uq_calibrate(0.5, 'platt');".into(),
    );
    case(
        "uq_calibrate: model an array",
        "SELECT uq_calibrate(0.5, '[4, -2]');".into(),
    );
    case(
        "uq_calibrate: model without method",
        r#"SELECT uq_calibrate(0.5, '{"a":4,"b":-2}');"#.into(),
    );
    case(
        "uq_calibrate: model with an unknown method",
        r#"SELECT uq_calibrate(0.5, '{"method":"beta","a":1}');"#.into(),
    );
    case(
        "uq_calibrate: platt without b",
        r#"SELECT uq_calibrate(0.5, '{"method":"platt","a":4}');"#.into(),
    );
    case(
        "uq_calibrate: platt with an unknown key",
        r#"SELECT uq_calibrate(0.5, '{"method":"platt","a":4,"b":-2,"c":1}');"#.into(),
    );
    case(
        "uq_calibrate: isotonic lengths differ",
        r#"SELECT uq_calibrate(0.5, '{"method":"isotonic","x":[0.1,0.2],"y":[0.5]}');"#.into(),
    );
    case(
        "uq_calibrate: isotonic x decreasing",
        r#"SELECT uq_calibrate(0.5, '{"method":"isotonic","x":[0.2,0.1],"y":[0.1,0.2]}');"#.into(),
    );
    case(
        "uq_calibrate: isotonic y decreasing",
        r#"SELECT uq_calibrate(0.5, '{"method":"isotonic","x":[0.1,0.2],"y":[0.3,0.2]}');"#.into(),
    );
    case(
        "uq_calibrate: isotonic y above 1",
        r#"SELECT uq_calibrate(0.5, '{"method":"isotonic","x":[0.1,0.2],"y":[0.3,1.5]}');"#.into(),
    );
    case(
        "uq_calibrate: score text",
        format!("SELECT uq_calibrate('high', {platt});"),
    );
    // uq_fit_calibration's fitted_on
    case(
        "uq_fit_calibration: fitted_on unknown scorer",
        format!(r#"{t} SELECT uq_fit_calibration(s, l, 'platt', '{{"scorer":"nope"}}') FROM t;"#),
    );
    case(
        "uq_fit_calibration: fitted_on unknown key",
        format!(r#"{t} SELECT uq_fit_calibration(s, l, 'platt', '{{"nli":"x"}}') FROM t;"#),
    );
    case(
        "uq_fit_calibration: fitted_on num_samples 0",
        format!(r#"{t} SELECT uq_fit_calibration(s, l, 'platt', '{{"num_samples":0}}') FROM t;"#),
    );
    case(
        "uq_fit_calibration: fitted_on not JSON",
        format!("{t} SELECT uq_fit_calibration(s, l, 'platt', 'entailment') FROM t;"),
    );
    // uq_adapt_calibration
    let prior = r#"'{"method":"platt","a":4,"b":-2,"n":10,"positives":7}'"#;
    case(
        "uq_adapt_calibration: empty target",
        format!("CREATE TABLE t(s); SELECT uq_adapt_calibration(s, {prior}) FROM t;"),
    );
    case(
        "uq_adapt_calibration: every score NULL",
        format!("{t} UPDATE t SET s = NULL; SELECT uq_adapt_calibration(s, {prior}) FROM t;"),
    );
    case(
        "uq_adapt_calibration: model without a prior",
        format!("{t} SELECT uq_adapt_calibration(s, {platt}) FROM t;"),
    );
    case(
        "uq_adapt_calibration: model of one class",
        format!(
            r#"{t} SELECT uq_adapt_calibration(s, '{{"method":"platt","a":4,"b":-2,"n":5,"positives":0}}') FROM t;"#
        ),
    );
    case(
        "uq_adapt_calibration: target of one class",
        format!(
            r#"{t} SELECT uq_adapt_calibration(s, '{{"method":"platt","a":90,"b":-5,"n":10,"positives":7}}') FROM t WHERE s > 0.3;"#
        ),
    );
    case(
        "uq_adapt_calibration: model NULL",
        format!("{t} SELECT uq_adapt_calibration(s, NULL) FROM t;"),
    );
    case(
        "uq_adapt_calibration: model changes within a group",
        format!("{t} SELECT uq_adapt_calibration(s, CASE WHEN s < 0.5 THEN {prior} ELSE {platt} END) FROM t;"),
    );
    case(
        "uq_calibrate: adapted model with a prior target of 1",
        format!(
            r#"{t} SELECT uq_calibrate(0.5, '{{"method":"platt","a":4,"b":-2,"prior":{{"train":0.7,"target":1}}}}');"#
        ),
    );
    case(
        "uq_adapt_calibration: score text",
        format!(
            "{t} INSERT INTO t VALUES ('high', 1); SELECT uq_adapt_calibration(s, {prior}) FROM t;"
        ),
    );
    case(
        "uq_adapt_calibration: label 2 (the guard's labels)",
        format!("{t} SELECT uq_adapt_calibration(s, {prior}, l + 1) FROM t;"),
    );
    case(
        "uq_calibrate: a prior with applied not a boolean",
        format!(
            r#"{t} SELECT uq_calibrate(0.5, '{{"method":"platt","a":4,"b":-2,"prior":{{"train":0.7,"target":0.8,"applied":"no"}}}}');"#
        ),
    );
    // uq_refit_calibration
    let old = r#"'{"method":"platt","a":4,"b":-2,"n":100,"positives":70,"refit_strength":8,"fitted_on":{"scorer":"entailment"}}'"#;
    case(
        "uq_refit_calibration: no target labels (empty table)",
        format!("CREATE TABLE t(s, l); SELECT uq_refit_calibration(s, l, {old}) FROM t;"),
    );
    case(
        "uq_refit_calibration: no target labels (every label NULL)",
        format!("{t} UPDATE t SET l = NULL; SELECT uq_refit_calibration(s, l, {old}) FROM t;"),
    );
    case(
        "uq_refit_calibration: one class",
        format!("{t} SELECT uq_refit_calibration(s, l, {old}) FROM t WHERE l = 1;"),
    );
    case(
        "uq_refit_calibration: a prior model of another scorer",
        format!(
            r#"{t} SELECT uq_refit_calibration(s, l, {old}, '{{"scorer":"noncontradiction"}}') FROM t;"#
        ),
    );
    case(
        "uq_refit_calibration: a prior model without refit_precision",
        format!("{t} SELECT uq_refit_calibration(s, l, {prior}) FROM t;"),
    );
    case(
        "uq_refit_calibration: an isotonic prior model",
        format!(
            r#"{t} SELECT uq_refit_calibration(s, l, '{{"method":"isotonic","x":[0,1],"y":[0.2,0.9]}}') FROM t;"#
        ),
    );
    case(
        "uq_refit_calibration: prior model NULL",
        format!("{t} SELECT uq_refit_calibration(s, l, NULL) FROM t;"),
    );
    case(
        "uq_refit_calibration: prior model changes within a group",
        format!("{t} SELECT uq_refit_calibration(s, l, CASE WHEN s < 0.5 THEN {old} ELSE {prior} END) FROM t;"),
    );
    case(
        "uq_refit_calibration: refit_strength 0",
        format!(
            r#"{t} SELECT uq_refit_calibration(s, l, '{{"method":"platt","a":4,"b":-2,"refit_strength":0}}') FROM t;"#
        ),
    );
    case(
        "uq_refit_calibration: refit_precision not positive definite",
        format!(
            r#"{t} SELECT uq_refit_calibration(s, l, '{{"method":"platt","a":4,"b":-2,"refit_precision":[1,3,1]}}') FROM t;"#
        ),
    );
    case(
        "uq_refit_calibration: refit_precision not three numbers",
        format!(
            r#"{t} SELECT uq_refit_calibration(s, l, '{{"method":"platt","a":4,"b":-2,"refit_precision":[1,0]}}') FROM t;"#
        ),
    );
    case(
        "uq_refit_calibration: label 2",
        format!("{t} SELECT uq_refit_calibration(s, l + 1, {old}) FROM t;"),
    );
    // uq_fit_ensemble
    case(
        "uq_fit_ensemble: empty table",
        "CREATE TABLE t(s, l); SELECT uq_fit_ensemble(s, l) FROM t;".into(),
    );
    case(
        "uq_fit_ensemble: one class",
        format!("{e} SELECT uq_fit_ensemble(s, 1) FROM t;"),
    );
    case(
        "uq_fit_ensemble: label 2",
        format!("{e} SELECT uq_fit_ensemble(s, 2) FROM t;"),
    );
    case(
        "uq_fit_ensemble: scores not JSON",
        format!("{t} SELECT uq_fit_ensemble(s, l) FROM t;"),
    );
    case(
        "uq_fit_ensemble: scores an array",
        format!("{e} SELECT uq_fit_ensemble(json_array(0.1, 0.2), l) FROM t;"),
    );
    case(
        "uq_fit_ensemble: score text",
        format!("{e} SELECT uq_fit_ensemble(json_object('a', 'high'), l) FROM t;"),
    );
    case("uq_fit_ensemble: scorers differ between rows", format!("{e} INSERT INTO t VALUES (json_object('a', 0.5), 1); SELECT uq_fit_ensemble(s, l) FROM t;"));
    case("uq_fit_ensemble: every row misses a score", format!("{e} UPDATE t SET s = json_set(s, '$.b', json('null')); SELECT uq_fit_ensemble(s, l) FROM t;"));
    case(
        "uq_fit_ensemble: log_loss with a score above 1",
        format!(
            r#"{e} INSERT INTO t VALUES (json_object('a', 1.5, 'b', 0.2), 1); SELECT uq_fit_ensemble(s, l, '{{"objective":"log_loss"}}') FROM t;"#
        ),
    );
    case(
        "uq_fit_ensemble: objective unknown",
        format!(r#"{e} SELECT uq_fit_ensemble(s, l, '{{"objective":"brier"}}') FROM t;"#),
    );
    case(
        "uq_fit_ensemble: option unknown",
        format!(r#"{e} SELECT uq_fit_ensemble(s, l, '{{"steps":5}}') FROM t;"#),
    );
    case(
        "uq_fit_ensemble: options not an object",
        format!(r#"{e} SELECT uq_fit_ensemble(s, l, '"auroc"') FROM t;"#),
    );
    // uq_ensemble
    case(
        "uq_ensemble: weights NULL",
        r#"SELECT uq_ensemble('{"a":0.5}', NULL);"#.into(),
    );
    case(
        "uq_ensemble: weights an array",
        r#"SELECT uq_ensemble('{"a":0.5}', '[0.5, 0.5]');"#.into(),
    );
    case(
        "uq_ensemble: weights empty",
        r#"SELECT uq_ensemble('{"a":0.5}', '{}');"#.into(),
    );
    case(
        "uq_ensemble: weight negative",
        r#"SELECT uq_ensemble('{"a":0.5}', '{"a":-1}');"#.into(),
    );
    case(
        "uq_ensemble: every weight 0",
        r#"SELECT uq_ensemble('{"a":0.5}', '{"a":0}');"#.into(),
    );
    case(
        "uq_ensemble: a weighted scorer missing",
        format!(r#"SELECT uq_ensemble('{{"a":0.5}}', {weights});"#),
    );
    case(
        "uq_ensemble: scores not JSON",
        format!("SELECT uq_ensemble('0.5 0.5', {weights});"),
    );
    case(
        "uq_ensemble: score text",
        format!(r#"SELECT uq_ensemble('{{"a":"x","b":0.5}}', {weights});"#),
    );
    // options of the scoring functions (checked before any daemon call)
    case(
        "options: calibration a bare model",
        format!(
            r#"SELECT response_confidence('A b.', '["C d."]', json_object('calibration', json({platt})));"#
        ),
    );
    case(
        "options: calibration of a scorer not used",
        format!(
            r#"SELECT response_confidence('A b.', '["C d."]', json_object('calibration', json_object('page_rank', json({platt}))));"#
        ),
    );
    case("options: calibration with a malformed model", r#"SELECT response_confidence('A b.', '["C d."]', '{"calibration":{"entailment":{"method":"platt"}}}');"#.into());
    case(
        "options: ensemble without weights",
        r#"SELECT response_confidence('A b.', '["C d."]', '{"scorers":["ensemble"]}');"#.into(),
    );
    case("options: ensemble_weights without ensemble", r#"SELECT response_confidence('A b.', '["C d."]', '{"ensemble_weights":{"entailment":1}}');"#.into());
    case("options: ensemble_weights naming no scorer", r#"SELECT response_confidence('A b.', '["C d."]', '{"scorers":["ensemble"],"ensemble_weights":{"entailmnt":1}}');"#.into());
    case("options: ensemble of a graph scorer at sentences", r#"SELECT response_confidence('A b.', '["C d."]', '{"scorers":["ensemble"],"ensemble_weights":{"page_rank":1}}');"#.into());
    g.check();
    assert!(sb.daemon_pid().is_none(), "these errors need no daemon");
}

#[test]
fn conformal_arguments() {
    let sb = Sandbox::new("errors-conformal");
    let mut g = golden(
        "conformal.txt",
        "Bad arguments of uq_fit_conformal and bad conformal models in option conformal.",
        &[&sb],
    );
    let t = "CREATE TABLE c(a, s, l); INSERT INTO c VALUES (1, 0.9, 1), (1, 0.4, 0), (2, 0.7, 1), (3, 0.2, 0), (4, 0.6, 1);";
    let model = r#"{"method":"conformal","threshold":0.5,"alpha":0.1,"answers":30}"#;
    let mut case = |title: &str, sql: String| sql_case(&mut g, &sb, ":memory:", title, &sql);
    case(
        "uq_fit_conformal: empty table",
        "CREATE TABLE c(a, s, l); SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;".into(),
    );
    case(
        "uq_fit_conformal: alpha 0",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 0) FROM c;"),
    );
    case(
        "uq_fit_conformal: alpha 1",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 1) FROM c;"),
    );
    case(
        "uq_fit_conformal: alpha NULL",
        format!("{t} SELECT uq_fit_conformal(s, l, a, NULL) FROM c;"),
    );
    case(
        "uq_fit_conformal: alpha text",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 'ten percent') FROM c;"),
    );
    case(
        "uq_fit_conformal: alpha differing within a group",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 0.1 + rowid / 100.0) FROM c;"),
    );
    case(
        "uq_fit_conformal: label 2",
        format!(
            "{t} INSERT INTO c VALUES (5, 0.5, 2); SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;"
        ),
    );
    case(
        "uq_fit_conformal: label text",
        format!("{t} INSERT INTO c VALUES (5, 0.5, 'yes'); SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;"),
    );
    case(
        "uq_fit_conformal: answer_key NULL",
        format!("{t} INSERT INTO c VALUES (NULL, 0.5, 1); SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;"),
    );
    case(
        "uq_fit_conformal: score text",
        format!("{t} INSERT INTO c VALUES (5, 'high', 1); SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;"),
    );
    case(
        "uq_fit_conformal: score outside [0, 1]",
        format!("{t} SELECT uq_fit_conformal(s * 10, l, a, 0.5) FROM c;"),
    );
    case(
        "uq_fit_conformal: too few answers",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 0.1) FROM c;"),
    );
    case(
        "uq_fit_conformal: too few answers, NULL labels left out",
        format!("{t} INSERT INTO c VALUES (5, 0.5, NULL), (6, 0.5, NULL); SELECT uq_fit_conformal(s, l, a, 0.15) FROM c;"),
    );
    case(
        "uq_fit_conformal: options_json not JSON",
        format!("{t} SELECT uq_fit_conformal(s, l, a, 0.5, 'beta=0.2') FROM c;"),
    );
    case(
        "uq_fit_conformal: beta 1",
        format!(r#"{t} SELECT uq_fit_conformal(s, l, a, 0.5, '{{"beta":1}}') FROM c;"#),
    );
    case(
        "uq_fit_conformal: unknown option",
        format!(r#"{t} SELECT uq_fit_conformal(s, l, a, 0.5, '{{"gamma":1}}') FROM c;"#),
    );
    case(
        "uq_fit_conformal: bad fitted_on",
        format!(
            r#"{t} SELECT uq_fit_conformal(s, l, a, 0.5, '{{"fitted_on":{{"scorer":"nope"}}}}') FROM c;"#
        ),
    );
    // option conformal (checked before any daemon call)
    case(
        "options: conformal not an object",
        r#"SELECT uad_filter('A b.', '["C d."]', '{"conformal":0.5}');"#.into(),
    );
    case(
        "options: conformal a calibration model",
        r#"SELECT uad_filter('A b.', '["C d."]', '{"conformal":{"method":"platt","a":4,"b":-2}}');"#.into(),
    );
    case(
        "options: conformal without answers",
        r#"SELECT uad_filter('A b.', '["C d."]', '{"conformal":{"method":"conformal","threshold":0.5,"alpha":0.1}}');"#.into(),
    );
    case(
        "options: conformal with threshold",
        format!(
            r#"SELECT uad_filter('A b.', '["C d."]', json_object('conformal', json('{model}'), 'threshold', 0.5));"#
        ),
    );
    case(
        "options: conformal with threshold_percentile",
        format!(
            r#"SELECT uad_filter('A b.', '["C d."]', json_object('conformal', json('{model}'), 'threshold_percentile', 50));"#
        ),
    );
    g.check();
    assert!(sb.daemon_pid().is_none(), "these errors need no daemon");
}

/// An LLM registry with two names, for the resolution errors.
const REG: &str = r#"INSERT INTO temp.uq_llms VALUES ('a', '{}'), ('b', '{"backend":"local"}');"#;

#[test]
fn llm_registry_options_and_arguments() {
    let sb = Sandbox::new("errors-llm");
    let mut g = golden(
        "llm.txt",
        "Bad LLM configs in temp.uq_llms, unresolved LLM names, bad arguments of the LLM functions.",
        &[&sb],
    );
    sql_cases(
        &mut g,
        &sb,
        &[
            ("uq_llms: an API key", r#"INSERT INTO temp.uq_llms VALUES ('gpt', '{"backend":"openai","api_key":"sk-do-not-store"}');"#),
            ("uq_llms: apiKey", r#"INSERT INTO temp.uq_llms VALUES ('gpt', '{"apiKey":"x"}');"#),
            ("uq_llms: config an array", "INSERT INTO temp.uq_llms VALUES ('x', '[1]');"),
            ("uq_llms: config a string", r#"INSERT INTO temp.uq_llms VALUES ('x', '"gpt-4o"');"#),
            ("uq_llms: config not JSON", "INSERT INTO temp.uq_llms VALUES ('x', '{');"),
            ("uq_llms: config NULL", "INSERT INTO temp.uq_llms VALUES ('x', NULL);"),
            ("uq_llms: config an integer", "INSERT INTO temp.uq_llms VALUES ('x', 42);"),
            ("uq_llms: unknown backend", r#"INSERT INTO temp.uq_llms VALUES ('x', '{"backend":"anthropic"}');"#),
            ("uq_llms: unknown key", r#"INSERT INTO temp.uq_llms VALUES ('x', '{"modle":"x"}');"#),
            ("uq_llms: max_tokens text", r#"INSERT INTO temp.uq_llms VALUES ('x', '{"max_tokens":"lots"}');"#),
            ("uq_llms: name NULL", "INSERT INTO temp.uq_llms VALUES (NULL, '{}');"),
            ("uq_llms: name blank", "INSERT INTO temp.uq_llms VALUES ('  ', '{}');"),
            ("uq_llms: name taken", "INSERT INTO temp.uq_llms VALUES ('a', '{}'); INSERT INTO temp.uq_llms VALUES ('a', '{}');"),
            ("uq_llms: an API key by UPDATE", r#"INSERT INTO temp.uq_llms VALUES ('a', '{}'); UPDATE temp.uq_llms SET config = '{"api_key":"k"}';"#),
            ("unknown LLM, none registered", r#"SELECT * FROM uq_claims('A b.', '{"llm":"nope"}');"#),
            ("registry dropped", r#"DROP TABLE temp.uq_llms; SELECT * FROM uq_claims('A b.', '{"llm":"a"}');"#),
            ("inline LLM with an API key", r#"SELECT * FROM uq_claims('A b.', '{"llm":{"api_key":"sk-x"}}');"#),
            ("inline LLM a number", r#"SELECT * FROM uq_claims('A b.', '{"llm":42}');"#),
            ("inline LLM with an unknown key", r#"SELECT * FROM uq_generate('Q?', 1, '{"llm":{"modle":"x"}}');"#),
            ("uq_objectivity: unknown judge_llm", r#"SELECT uq_objectivity('claim', '{"judge_llm": "nope"}');"#),
            ("uq_generate: n negative", "SELECT * FROM uq_generate('Q?', -1);"),
            ("uq_generate: n text", "SELECT * FROM uq_generate('Q?', '2');"),
            ("uq_generate: n real", "SELECT * FROM uq_generate('Q?', 1.5);"),
            ("uq_generate: n NULL", "SELECT * FROM uq_generate('Q?', NULL);"),
            ("uq_generate: prompt NULL", "SELECT * FROM uq_generate(NULL, 1);"),
            ("uq_generate: prompt blank", "SELECT * FROM uq_generate('  ', 1);"),
            ("uq_generate: no n", "SELECT * FROM uq_generate('Q?');"),
            ("uq_generate: options an array", "SELECT * FROM uq_generate('Q?', 1, '[1]');"),
            ("uq_claims: text an integer", "SELECT * FROM uq_claims(42);"),
            ("uq_claims: unknown option", r#"SELECT * FROM uq_claims('A.', '{"scorer":1}');"#),
            ("uq_claims: no arguments", "SELECT * FROM uq_claims();"),
            ("claim_confidence: response NULL", r#"SELECT claim_confidence(NULL, '["C d."]');"#),
            ("claim_confidence: no samples", "SELECT claim_confidence('A.', '[]');"),
            ("claim_confidence: sentence granularity", r#"SELECT claim_confidence('A.', '["C d."]', '{"granularity":"sentence"}');"#),
            ("claim_confidence: two scorers", r#"SELECT claim_confidence('A.', '["C d."]', '{"scorers":["entailment","luq"]}');"#),
            ("uad_filter: response NULL", r#"SELECT uad_filter(NULL, '["C d."]');"#),
            ("uad_filter: samples not JSON", "SELECT uad_filter('A.', 'x');"),
            ("uad_claims: no samples", "SELECT * FROM uad_claims('A.');"),
            ("uad_claims: samples not texts", "SELECT * FROM uad_claims('A.', '[1]');"),
            ("uad_claims: threshold 2", r#"SELECT * FROM uad_claims('A.', '["C d."]', '{"threshold":2}');"#),
        ],
    );
    // An unknown name: every function, every role option.
    for (func, sql) in [
        (
            "uq_claims",
            r#"SELECT * FROM uq_claims('A b.', '{"llm":"nope"}');"#,
        ),
        (
            "uq_generate",
            r#"SELECT * FROM uq_generate('Q?', 1, '{"generation_llm":"nope"}');"#,
        ),
        (
            "claim_confidence",
            r#"SELECT claim_confidence('A b.', '["C d."]', '{"decomposition_llm":"nope"}');"#,
        ),
        (
            "uad_filter",
            r#"SELECT uad_filter('A b.', '["C d."]', '{"reconstruction_llm":"nope"}');"#,
        ),
        (
            "uad_claims",
            r#"SELECT * FROM uad_claims('A b.', '["C d."]', '{"merge_llm":"nope"}');"#,
        ),
        (
            "response_confidence",
            r#"SELECT response_confidence('A b.', '["C d."]', '{"judge_llm":"nope"}');"#,
        ),
        (
            "uq_unit_scores",
            r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{"question_llm":"nope"}');"#,
        ),
    ] {
        sql_case(
            &mut g,
            &sb,
            ":memory:",
            &format!("{func}: unknown LLM name"),
            &format!("{REG}\n{sql}"),
        );
    }
    for err in g.outputs() {
        assert!(
            !err.contains("sk-do-not-store") && !err.contains("sk-x"),
            "a key is echoed: {err}"
        );
    }
    g.check();
    assert!(
        sb.daemon_pid().is_none(),
        "option errors must not start the daemon"
    );
}

const KEY_ENV: &str = "UQ_TEST_FAKE_LLM_KEY";
const KEY: &str = "sk-test-fake";

#[test]
fn llm_calls_that_fail() {
    let fake = FakeOpenAi::with_handler(|_| Reply::Error(401, "Incorrect API key provided".into()));
    let sb = Sandbox::new("errors-llm-calls").with_env(KEY_ENV, KEY);
    let mut g = golden(
        "llm_calls.txt",
        "LLM calls that fail: a server that refuses the key, no server, no key.",
        &[&sb],
    );
    g.replace(format!("127.0.0.1:{}", fake.port()), "127.0.0.1:$PORT");
    let unreachable = r#"{"backend":"openai","base_url":"http://127.0.0.1:9/v1","api_key_env":null,"max_retries":0}"#;
    sql_case(
        &mut g,
        &sb,
        ":memory:",
        "a 401 from the server",
        &format!(
            "INSERT INTO temp.uq_llms VALUES ('locked-llm', '{{\"backend\":\"openai\",\"base_url\":\"{}\",\
             \"model\":\"denied\",\"api_key_env\":\"{KEY_ENV}\",\"max_retries\":3}}');\n\
             SELECT * FROM uq_generate('Who was Marie Curie?', 0, '{{\"generation_llm\":\"locked-llm\"}}');",
            fake.base_url
        ),
    );
    assert_eq!(fake.requests(), 1, "a 401 is not retried");
    let before_judge = fake.requests();
    sql_cases(
        &mut g,
        &sb,
        &[
            (
                "the API key variable is not set",
                r#"SELECT * FROM uq_claims('A b.', '{"llm":{"backend":"openai","api_key_env":"UQ_TEST_NO_SUCH_KEY_VAR"}}');"#,
            ),
            (
                "uq_claim_union: no server",
                &format!(
                    r#"SELECT uq_claim_union('A b.', '["C d."]', '{{"llm":{unreachable}}}');"#
                ),
            ),
            (
                "uq_unit_scores: no server for the NLI judge (nli_llm)",
                &format!(
                    r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{{"scorers":["entailment"],"nli_llm":{unreachable}}}');"#
                ),
            ),
            (
                "uq_unit_scores: the NLI judge's server refuses the key",
                &format!(
                    r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{{"scorers":["entailment"],"nli_prompt":"binary","nli_llm":{{"backend":"openai","base_url":"{}","model":"denied","api_key_env":"{KEY_ENV}","max_retries":3}}}}');"#,
                    fake.base_url
                ),
            ),
            (
                "uq_unit_scores: nli_prompt without nli_llm",
                r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{"nli_prompt":"binary"}');"#,
            ),
            (
                "uq_unit_scores: no server for the claim union",
                &format!(
                    r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{{"granularity":"claim","units":["a b."],"scorers":["page_rank"],"llm":{unreachable}}}');"#
                ),
            ),
        ],
    );
    assert_eq!(
        fake.requests(),
        before_judge + 1,
        "the judge's 401 is one call, not retried"
    );
    for err in g.outputs() {
        assert!(!err.contains(KEY), "the key leaked: {err}");
    }
    g.check();
}

#[test]
fn job_arguments() {
    let sb = Sandbox::new("errors-jobs");
    let mut g = golden(
        "jobs.txt",
        "Bad arguments of the job functions and of `uqd score`.",
        &[&sb],
    );
    let db = sb.dir.join("jobs.db").display().to_string();
    let out = std::process::Command::new(SQLITE)
        .args([&db, "CREATE TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT); INSERT INTO answers VALUES (1, 'A b.', '[\"C d.\"]');"])
        .output()
        .expect("sqlite3");
    assert!(out.status.success());
    for (title, sql) in [
        (
            "uq_score_table: a table name with SQL",
            "SELECT uq_score_table('answers; DROP TABLE answers', '{}');",
        ),
        (
            "uq_score_table: a column name with SQL",
            r#"SELECT uq_score_table('answers', json_object('answer_column', 'answer"; DROP TABLE answers; --'));"#,
        ),
        (
            "uq_score_table: no such column",
            "SELECT uq_score_table('answers', json_object('samples_column', 'nope'));",
        ),
        (
            "uq_score_table: unknown option",
            "SELECT uq_score_table('answers', json_object('scorerz', json_array('luq')));",
        ),
        (
            "uq_score_table: a misspelt job key",
            "SELECT uq_score_table('answers', json_object('source_column', 'answer'));",
        ),
        (
            "uq_score_table: a job key cut short",
            "SELECT uq_score_table('answers', json_object('chunk', 4));",
        ),
        (
            "uq_score_table: calibration.adapt unknown",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2,"n":10,"positives":7},"adapt":"table"}}');"#,
        ),
        (
            "uq_score_table: calibration.adapt, a model without a prior",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2},"adapt":"job"}}');"#,
        ),
        (
            "uq_score_table: calibration.adapt without a model",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"adapt":"job"}}');"#,
        ),
        (
            "uq_score_table: calibration.refit unknown",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2,"refit_strength":8},"refit":"all"}}');"#,
        ),
        (
            "uq_score_table: calibration.refit without labels",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2,"refit_strength":8},"refit":"job"}}');"#,
        ),
        (
            "uq_score_table: calibration.refit, a model without refit_precision",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"grade":true,"reference_column":"answer","calibration":{"entailment":{"method":"platt","a":4,"b":-2},"refit":"job"}}');"#,
        ),
        (
            "uq_score_table: calibration.refit and adapt grouped differently",
            r#"SELECT uq_score_table('answers', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2,"n":10,"positives":7,"refit_strength":8},"refit":"job","adapt":"llm"}}');"#,
        ),
        (
            "uq_unit_scores: calibration.refit outside a job",
            r#"SELECT count(*) FROM uq_unit_scores('A b.', '["C d."]', '{"scorers":["entailment"],"calibration":{"entailment":{"method":"platt","a":4,"b":-2,"refit_strength":8},"refit":"job"}}');"#,
        ),
        (
            "uq_score_table: chunk_size -1",
            "SELECT uq_score_table('answers', json_object('chunk_size', -1));",
        ),
        ("uq_score_table: table NULL", "SELECT uq_score_table(NULL);"),
        ("uq_score_table: table empty", "SELECT uq_score_table('');"),
        (
            "uq_score_table: a TEMP table",
            "CREATE TEMP TABLE scratch(answer, samples); SELECT uq_score_table('scratch');",
        ),
        ("uq_wait: job 0", "SELECT uq_wait(0);"),
        ("uq_wait: job text", "SELECT uq_wait('1');"),
        ("uq_wait: no such job", "SELECT uq_wait(99);"),
        ("uq_cancel: no such job", "SELECT uq_cancel(99);"),
        ("uq_wait: timeout negative", "SELECT uq_wait(1, -5);"),
        ("uq_grade: unit NULL", "SELECT uq_grade(NULL, 'ref');"),
        (
            "uq_grade: reference NULL",
            "SELECT uq_grade('claim', NULL);",
        ),
    ] {
        sql_case(&mut g, &sb, &db, title, sql);
    }
    sql_case(
        &mut g,
        &sb,
        ":memory:",
        "uq_score_table: an in-memory database",
        "CREATE TABLE t(answer, samples); SELECT uq_score_table('t');",
    );
    uqd_case(
        &mut g,
        &sb,
        "uqd score: no such table",
        &["score", &db, "nope"],
    );
    uqd_case(
        &mut g,
        &sb,
        "uqd score: a misspelt job key",
        &[
            "score",
            &db,
            "answers",
            "--options",
            r#"{"answer_col":"answer"}"#,
        ],
    );
    g.check();
    let rows = sb.sqlite_ok(&format!(
        "ATTACH {} AS j; SELECT count(*) FROM j.answers;",
        lit(&db)
    ));
    assert_eq!(rows, "1", "nothing was dropped");
}

#[test]
fn daemons_that_cannot_start() {
    let no_binary = Sandbox::new("errors-nobin").with_env("UQ_DAEMON", "/nonexistent/uqd");
    let bad_model = Sandbox::new("errors-badmodel");
    let empty = bad_model.dir.join("empty-model");
    std::fs::create_dir_all(&empty).unwrap();
    let bad_model = bad_model.with_env("UQ_NLI_MODEL", &empty.display().to_string());
    let no_llm = Sandbox::new("errors-nollm").with_env(
        "UQ_LOCAL_LLM",
        "/nonexistent/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    );
    let mut g = golden(
        "daemon.txt",
        "A daemon that cannot start, or cannot load a model.",
        &[&no_binary, &bad_model, &no_llm],
    );
    sql_case(
        &mut g,
        &no_binary,
        ":memory:",
        "UQ_DAEMON names no file",
        "SELECT uq_nli('a', 'b');",
    );
    sql_case(
        &mut g,
        &bad_model,
        ":memory:",
        "UQ_NLI_MODEL names an empty directory",
        "SELECT uq_nli('a', 'b');",
    );
    uqd_case(
        &mut g,
        &bad_model,
        "uqd serve: an empty model directory",
        &["serve", "--nli-model", &empty.display().to_string()],
    );
    sql_case(
        &mut g,
        &no_llm,
        ":memory:",
        "UQ_LOCAL_LLM names no file",
        "SELECT * FROM uq_claims('Marie Curie was a physicist.');",
    );
    g.check();
}

/// A fake `uqd` listening on `sb`'s socket: it answers every ping with `info` and every other
/// request with an error (the extension must not get that far).
fn fake_daemon(sb: &Sandbox, info: serde_json::Value) {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::fs::DirBuilderExt;
    use std::os::unix::net::UnixListener;

    let dir = sb.socket.parent().expect("socket dir");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .expect("create the socket dir");
    let listener = UnixListener::bind(&sb.socket).expect("bind the fake daemon's socket");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let info = info.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().expect("clone the stream");
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let reply = if line.contains("\"ping\"") {
                        serde_json::json!({"ok": true, "result": info})
                    } else {
                        serde_json::json!({"ok": false, "error": "fake uqd: not a ping"})
                    };
                    if writeln!(writer, "{reply}").is_err() {
                        break;
                    }
                }
            });
        }
    });
}

#[test]
fn a_daemon_of_another_protocol_version() {
    let other = Sandbox::new("errors-protocol");
    let old = Sandbox::new("errors-noprotocol");
    fake_daemon(
        &other,
        serde_json::json!({"version": "9.9.9", "protocol": 999}),
    );
    fake_daemon(&old, serde_json::json!({"version": "0.0.1"}));
    let mut g = golden(
        "protocol.txt",
        "A daemon from another build: its protocol version is not the extension's.",
        &[&other, &old],
    );
    sql_case(
        &mut g,
        &other,
        ":memory:",
        "a daemon of another protocol version",
        "SELECT uq_nli('a', 'b');",
    );
    sql_case(
        &mut g,
        &old,
        ":memory:",
        "a daemon that sends no protocol version",
        "SELECT * FROM uq_claims('Marie Curie was a physicist.');",
    );
    let texts: Vec<&str> = g.outputs().collect();
    assert!(
        texts[0].contains("uq_nli: uqd at ") && texts[0].contains("protocol version 999"),
        "{}",
        texts[0]
    );
    assert!(
        texts[1].contains("uq_claims: uqd at ") && texts[1].contains("uqd stop"),
        "{}",
        texts[1]
    );
    g.check();
}

#[test]
fn grounded_checking_arguments() {
    let sb = Sandbox::new("errors-grounded");
    let mut g = golden(
        "grounded.txt",
        "Bad sources of the grounded scorers: given passages, FTS5 tables, job columns.",
        &[&sb],
    );
    let db = sb.dir.join("grounded.db").display().to_string();
    let out = std::process::Command::new(SQLITE)
        .args([
            &db,
            "CREATE TABLE plain(body TEXT); CREATE VIRTUAL TABLE docs USING fts5(body); \
             INSERT INTO docs(body) VALUES ('Marie Curie was born in Warsaw.'); \
             CREATE TABLE rag(id INTEGER PRIMARY KEY, answer TEXT, context TEXT);",
        ])
        .output()
        .expect("sqlite3");
    assert!(out.status.success());
    let g_opts = |rest: &str| {
        format!(
            "SELECT * FROM uq_unit_scores('Marie Curie was born in Warsaw.', NULL, '{{\"scorers\":[\"grounded_entailment\"]{rest}}}');"
        )
    };
    let cases: Vec<(&str, String)> = vec![
        ("a grounded scorer without sources", g_opts("")),
        ("sources a number", g_opts(r#","sources":3"#)),
        ("sources[1] a number", g_opts(r#","sources":["a",2]"#)),
        ("sources[0] without text", g_opts(r#","sources":[{"id":"x"}]"#)),
        ("sources an object without fts", g_opts(r#","sources":{"table":"docs"}"#)),
        ("sources.fts: no such table", g_opts(r#","sources":{"fts":"nope"}"#)),
        ("sources.fts: a plain table", g_opts(r#","sources":{"fts":"plain"}"#)),
        ("sources.column: no such column", g_opts(r#","sources":{"fts":"docs","column":"text"}"#)),
        ("sources.k: 0", g_opts(r#","sources":{"fts":"docs","k":0}"#)),
        ("sources.per: unknown", g_opts(r#","sources":{"fts":"docs","per":"doc"}"#)),
        ("source_premise: unknown", g_opts(r#","sources":"x","source_premise":"all""#)),
        ("source_entailment_threshold: 2", g_opts(r#","sources":"x","source_entailment_threshold":2"#)),
        ("fallback_scorer: not a sample scorer", g_opts(r#","sources":"x","fallback_scorer":"page_rank""#)),
        (
            "sources without a grounded scorer",
            r#"SELECT * FROM uq_unit_scores('A b.', '["C d."]', '{"sources":"x"}');"#.into(),
        ),
        (
            "samples NULL with a sample scorer",
            r#"SELECT * FROM uq_unit_scores('A b.', NULL, '{"scorers":["entailment"]}');"#.into(),
        ),
        ("uq_fts_query: an integer", "SELECT uq_fts_query(3);".into()),
        (
            "uq_score_table: sources_column not a column",
            r#"SELECT uq_score_table('rag', '{"scorers":["grounded_entailment"],"sources_column":"ctx"}');"#.into(),
        ),
        (
            "uq_score_table: sources and sources_column",
            r#"SELECT uq_score_table('rag', '{"scorers":["grounded_entailment"],"sources_column":"context","sources":"x"}');"#.into(),
        ),
        (
            "uq_score_table: sample_when_open without generate",
            r#"SELECT uq_score_table('rag', '{"scorers":["grounded_fallback"],"sources_column":"context","sample_when_open":true}');"#.into(),
        ),
        (
            "uq_score_table: sample_when_open without grounded_fallback's band",
            r#"SELECT uq_score_table('rag', '{"scorers":["grounded_fallback"],"sources_column":"context","sample_when_open":true,"generate":3}');"#.into(),
        ),
    ];
    for (title, sql) in &cases {
        sql_case(&mut g, &sb, &db, title, sql);
    }
    g.check();
}

#[test]
fn highlight_arguments() {
    let sb = Sandbox::new("errors-highlight");
    let mut g = golden(
        "highlight.txt",
        "Bad arguments of uq_highlight (scalar and aggregate forms).",
        &[&sb],
    );
    let r = "'Marie Curie was a physicist. She was born in 1867.'";
    let rows = "CREATE TABLE u(unit, score, scorer); INSERT INTO u VALUES ('She was born in 1867.', 0.2, 'entailment');";
    let mut case = |title: &str, sql: String| sql_case(&mut g, &sb, ":memory:", title, &sql);
    case(
        "units not a JSON array",
        format!(r#"SELECT uq_highlight({r}, '{{"unit":"She was born in 1867.","score":0.2}}');"#),
    );
    case(
        "units not JSON",
        format!("SELECT uq_highlight({r}, 'unit, score');"),
    );
    case("units NULL", format!("SELECT uq_highlight({r}, NULL);"));
    case(
        "unit not an object",
        format!(r#"SELECT uq_highlight({r}, '["She was born in 1867."]');"#),
    );
    case(
        "span outside the answer",
        format!(r#"SELECT uq_highlight({r}, '[{{"start":29,"end":80,"score":0.2}}]');"#),
    );
    case(
        "span reversed",
        format!(r#"SELECT uq_highlight({r}, '[{{"start":12,"end":4,"score":0.2}}]');"#),
    );
    case(
        "only start",
        format!(r#"SELECT uq_highlight({r}, '[{{"start":12,"score":0.2}}]');"#),
    );
    case(
        "neither span nor unit",
        format!(r#"SELECT uq_highlight({r}, '[{{"score":0.2}}]');"#),
    );
    case(
        "score outside [0, 1]",
        format!(r#"SELECT uq_highlight({r}, '[{{"unit":"She was born in 1867.","score":1.7}}]');"#),
    );
    case(
        "no score",
        format!(r#"SELECT uq_highlight({r}, '[{{"unit":"She was born in 1867."}}]');"#),
    );
    case(
        "options unknown key",
        format!(r#"SELECT uq_highlight({r}, '[]', '{{"threshold":0.5}}');"#),
    );
    case(
        "options unsupported above doubtful",
        format!(r#"SELECT uq_highlight({r}, '[]', '{{"unsupported":0.7}}');"#),
    );
    case(
        "options format",
        format!(r#"SELECT uq_highlight({r}, '[]', '{{"format":"markdown"}}');"#),
    );
    case(
        "aggregate: score outside [0, 1]",
        format!("{rows} SELECT uq_highlight({r}, unit, score * 10, scorer) FROM u;"),
    );
    case(
        "aggregate: score text",
        format!("{rows} SELECT uq_highlight({r}, unit, 'high', scorer) FROM u;"),
    );
    case(
        "aggregate: two answers in one group",
        format!("{rows} INSERT INTO u VALUES ('x', 0.5, 'e'); SELECT uq_highlight(CASE WHEN unit = 'x' THEN 'Other.' ELSE {r} END, unit, score, scorer) FROM u;"),
    );
    case(
        "aggregate: unit NULL",
        format!("{rows} SELECT uq_highlight({r}, NULL, score, scorer) FROM u;"),
    );
    g.check();
}

/// The `uq_debug()` line of the last call's notes, cut out in SQL.
const DEBUG_NOTES: &str =
    "WITH d(t) AS (SELECT substr(uq_debug(), instr(uq_debug(), 'last score notes: '))) \
    SELECT substr(t, 1, instr(t, char(10)) - 1) FROM d;";

/// What UAD warns of, and the errors of its option: a reconstruction (the fake server's, which
/// states the first of two kept claims only) that loses a kept claim, with and without the
/// fallback, in `uad_claims`' column `warnings` and `uq_debug()`; claims written by the bundled
/// SmolLM2 (the real one), on stderr once per connection.
#[test]
fn uad_warnings() {
    let fake = FakeOpenAi::with_handler(|_| Reply::Text("Rome is the capital of Italy.".into()));
    let sb = Sandbox::new("errors-uad");
    let mut g = golden(
        "uad.txt",
        "UAD's warnings (a reconstruction that loses a kept claim; claims by the bundled SmolLM2) and its options' errors.",
        &[&sb],
    );
    g.replace(format!("127.0.0.1:{}", fake.port()), "127.0.0.1:$PORT");
    sql_case(
        &mut g,
        &sb,
        ":memory:",
        "uad_filter: reconstruction_fallback not a boolean",
        r#"SELECT uad_filter('A b.', '["C d."]', '{"reconstruction_fallback":"no"}');"#,
    );
    let register = format!(
        "INSERT INTO temp.uq_llms VALUES ('rebuilder', '{{\"backend\":\"openai\",\"base_url\":\"{}\",\
         \"model\":\"rebuilder\",\"api_key_env\":null,\"max_retries\":0}}');",
        fake.base_url
    );
    let uad_args = |extra: &str| {
        format!(
            "'Rome is the capital of Italy. Rome has ten moons. Rome has the Colosseum.', \
             '[\"Rome, the capital of Italy, has the Colosseum.\"]', \
             '{{\"units\":[\"Rome is the capital of Italy.\",\"Rome has ten moons.\",\"Rome has the Colosseum.\"],\
             \"scorers\":[\"entailment\"],\"reconstruction_llm\":\"rebuilder\"{extra}}}'"
        )
    };
    for (title, extra) in [
        ("a reconstruction that loses a kept claim", ""),
        (
            "a reconstruction that loses a kept claim, without the fallback",
            ",\"reconstruction_fallback\":false",
        ),
    ] {
        let args = uad_args(extra);
        let sql = format!(
            "{register}\n\
             SELECT DISTINCT refined_response, warnings FROM uad_claims({args});\n\
             SELECT uad_filter({args});\n\
             {DEBUG_NOTES}"
        );
        let out = sb.sqlite(&sql);
        assert!(
            String::from_utf8_lossy(&out.stderr).is_empty(),
            "only the bundled SmolLM2's warning goes to stderr: {out:?}"
        );
        g.add(title, &sql, "output", &stdout_ok(&out, &sql));
    }
    // The bundled SmolLM2 decomposes the demo's answer (examples/demo.sql) when claims are
    // asked for: the warning once on this connection, not at each call. Without option
    // granularity the sentences are filtered instead, and that is said once too.
    let call = |options: &str| {
        format!(
            "SELECT length(uad_filter('Marie Curie was a physicist and chemist. She won the \
             Nobel Prize in Physics in 1903. She was born in Vienna in 1867.', '[\"Marie Curie \
             was a physicist and chemist born in Warsaw in 1867. She won the Nobel Prize in \
             Physics in 1903.\"]'{options})) > 0;"
        )
    };
    for (title, options) in [
        (
            "uad_filter: claims by the bundled SmolLM2, on stderr once per connection",
            ", '{\"granularity\":\"claim\"}'",
        ),
        (
            "uad_filter: no capable LLM, no granularity: the sentences, said once per connection",
            "",
        ),
    ] {
        let sql = &format!("{}\n{}", call(options), call(options));
        let out = sb.sqlite(sql);
        assert_eq!(stdout_ok(&out, sql), "1\n1", "{out:?}");
        g.add(
            title,
            sql,
            "stderr (the queries succeed)",
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    g.check();
}
