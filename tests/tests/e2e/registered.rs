//! What loading the extension adds to a connection: its SQL functions, its virtual-table modules
//! and the tables it creates, each as `pragma_function_list`, `pragma_module_list` and
//! `sqlite_temp_master` give them, minus those of a bare connection. Pinned here so that a change
//! to the registered set (a new function, a dropped arity, a lost deterministic flag) fails.

use std::collections::BTreeSet;
use std::process::Command;

use uq_integration::*;

/// `name|narg|type|deterministic` of every function the extension adds (`type`: `s` scalar,
/// `a` aggregate, `w` window).
const FUNCTIONS: &[&str] = &[
    "claim_confidence|2|s|0",
    "claim_confidence|3|s|0",
    "response_confidence|2|s|0",
    "response_confidence|3|s|0",
    "uad_filter|2|s|0",
    "uad_filter|3|s|0",
    "uq_adapt_calibration|2|a|1",
    "uq_adapt_calibration|3|a|1",
    "uq_auprc|2|a|1",
    "uq_auroc|2|a|1",
    "uq_best_f1|2|a|1",
    "uq_best_threshold|2|a|1",
    "uq_brier|2|a|1",
    "uq_calibrate|2|s|1",
    "uq_cancel|1|s|0",
    "uq_claim_union|2|s|0",
    "uq_claim_union|3|s|0",
    "uq_debug|0|s|0",
    "uq_ece|2|a|1",
    "uq_ece|3|a|1",
    "uq_ensemble|2|s|1",
    "uq_fit_calibration|2|a|1",
    "uq_fit_calibration|3|a|1",
    "uq_fit_calibration|4|a|1",
    "uq_fit_conformal|4|a|1",
    "uq_fit_conformal|5|a|1",
    "uq_fit_ensemble|2|a|1",
    "uq_fit_ensemble|3|a|1",
    "uq_fts_query|1|s|1",
    "uq_grade|2|s|0",
    "uq_grade|3|s|0",
    "uq_highlight|2|s|1",
    "uq_highlight|3|s|1",
    "uq_highlight|4|a|1",
    "uq_highlight|5|a|1",
    "uq_init|0|s|0",
    "uq_nli|2|s|0",
    "uq_objectivity|1|s|0",
    "uq_objectivity|2|s|0",
    "uq_pearson|2|a|1",
    "uq_refit_calibration|3|a|1",
    "uq_refit_calibration|4|a|1",
    "uq_score_table|1|s|0",
    "uq_score_table|2|s|0",
    "uq_spearman|2|a|1",
    "uq_version|0|s|1",
    "uq_wait|1|s|0",
    "uq_wait|2|s|0",
];

/// The virtual-table modules the extension adds (table-valued functions and `uq_llms_module`).
const MODULES: &[&str] = &[
    "uad_claims",
    "uq_claims",
    "uq_coverage",
    "uq_generate",
    "uq_llms_module",
    "uq_scorers",
    "uq_sentences",
    "uq_unit_scores",
];

/// The tables loading the extension creates: `type|name|sql` of `sqlite_temp_master`.
const TEMP_TABLES: &[&str] = &["table|uq_llms|CREATE VIRTUAL TABLE uq_llms USING uq_llms_module()"];

const LIST: &str = "SELECT 'f|' || name || '|' || narg || '|' || type || '|' || (flags & 0x800 != 0) FROM pragma_function_list;
SELECT 'm|' || name FROM pragma_module_list;
SELECT 't|' || type || '|' || name || '|' || sql FROM sqlite_temp_master;";

/// The lines of `out` with `prefix|`, without it, sorted.
fn listed(out: &str, prefix: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_prefix('|'))
        .map(String::from)
        .collect()
}

/// What `with` lists of kind `prefix` that `bare` does not.
fn added(with: &str, bare: &str, prefix: &str) -> Vec<String> {
    let bare = listed(bare, prefix);
    listed(with, prefix).difference(&bare).cloned().collect()
}

fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn assert_registered(with: &str, bare: &str, client: &str) {
    assert_eq!(
        added(with, bare, "f"),
        owned(FUNCTIONS),
        "{client}: functions"
    );
    assert_eq!(added(with, bare, "m"), owned(MODULES), "{client}: modules");
    assert_eq!(
        added(with, bare, "t"),
        owned(TEMP_TABLES),
        "{client}: temp tables"
    );
}

#[test]
fn sqlite3_cli_registers_exactly_the_pinned_functions_and_modules() {
    let sb = Sandbox::new("registered-cli");
    let bare = Command::new(SQLITE)
        .args(["-batch", ":memory:", LIST])
        .output()
        .expect("run sqlite3");
    assert!(
        bare.status.success(),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
    let bare = String::from_utf8_lossy(&bare.stdout).to_string();
    assert!(
        listed(&bare, "f").contains("abs|1|s|1"),
        "no function list: {bare}"
    );
    let with = sb.sqlite_ok(LIST);
    assert_registered(&with, &bare, SQLITE);
    assert!(sb.daemon_pid().is_none(), "loading starts no daemon");
}

#[test]
fn python_sqlite3_registers_the_same_set() {
    let sb = Sandbox::new("registered-python");
    let out = sb.python_ok(&format!(
        r#"
LIST = {LIST:?}
def rows(c):
    return "\n".join(r[0] for q in LIST.split(";") if q.strip() for r in c.execute(q))
bare = sqlite3.connect(':memory:')
print(json.dumps([rows(conn), rows(bare)]))
"#
    ));
    let v: Vec<String> = serde_json::from_str(&out).expect("json");
    assert_registered(&v[0], &v[1], PYTHON);
}
