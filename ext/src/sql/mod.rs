//! Every SQL object of the extension: its scalar functions, aggregates, table-valued functions
//! and virtual tables, one file each (or one file for a family, named after it), all listed
//! in [`OBJECTS`], the one registration table that `lib.rs` walks when the extension is loaded
//! (in the manner of sqlite-vec's function table).

mod jobs;
mod judge;
mod metric_aggregates;
mod response_confidence;
mod uad;
mod uad_claims;
mod uad_filter;
mod uq_calibration;
mod uq_claim_union;
mod uq_claims;
mod uq_conformal;
mod uq_coverage;
mod uq_debug;
mod uq_ensemble;
mod uq_fts_query;
mod uq_generate;
mod uq_grade;
mod uq_highlight;
mod uq_init;
mod uq_llms;
mod uq_nli;
mod uq_objectivity;
mod uq_scorers;
mod uq_sentences;
mod uq_unit_scores;
mod uq_version;

#[cfg(test)]
mod reference;

use std::os::raw::c_int;
use std::sync::Arc;

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

use crate::client::Client;
use crate::glue::ScalarFn;
use crate::tvf::{self, TableFn};
use metric_aggregates::Metric;
use Runs::{Daemon, Local};

/// One SQL object: how it is called, what it does and how it is registered. docs/reference.md's
/// function index is generated from these (`reference.rs` checks it).
// Registration reads `name` and `kind`; the rest is for the reference's check, a test.
#[cfg_attr(not(test), allow(dead_code))]
pub struct SqlObject {
    pub name: &'static str,
    /// How it is called, optional arguments in brackets, e.g.
    /// `uq_highlight(response, units_json[, options_json])`. Its arguments are the registered
    /// arities (checked when `OBJECTS` is compiled) and each is named in its reference section.
    pub signature: &'static str,
    /// What it gives, in one line (the function index's summary).
    pub summary: &'static str,
    pub runs: Runs,
    pub kind: Kind,
}

/// Where an object's work is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// In the extension, from the arguments and the database.
    Local,
    /// By `uqd`: the object sends it a request (starting it on first use).
    Daemon,
}

pub enum Kind {
    /// A scalar function, registered once per number of arguments.
    Scalar {
        arities: &'static [c_int],
        flags: FunctionFlags,
        f: ScalarFn,
    },
    /// An aggregate function: `create(db, name, n, flags)` registers it with `n` arguments.
    Aggregate {
        arities: &'static [c_int],
        flags: FunctionFlags,
        create: fn(&Connection, &'static str, c_int, FunctionFlags) -> rusqlite::Result<()>,
    },
    /// A virtual-table module (a table-valued function is an eponymous one).
    Module(fn(&Connection, &Arc<Client>) -> rusqlite::Result<()>),
}

/// Computed locally from the arguments alone: deterministic, and innocuous (usable in triggers
/// and views).
const PURE: FunctionFlags = FunctionFlags::SQLITE_UTF8
    .union(FunctionFlags::SQLITE_DETERMINISTIC)
    .union(FunctionFlags::SQLITE_INNOCUOUS);
/// Daemon-backed, or with side effects: the results depend on the loaded model or the
/// database, so not deterministic.
const PLAIN: FunctionFlags = FunctionFlags::SQLITE_UTF8;

/// The name of a signature: what comes before `(`.
const fn name_of(signature: &'static str) -> &'static str {
    let b = signature.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'(' {
        i += 1;
    }
    match std::str::from_utf8(b.split_at(i).0) {
        Ok(name) => name,
        Err(_) => panic!("a signature's name is not UTF-8"),
    }
}

/// (required, all) arguments of a signature: `f(a, b[, c])` → (2, 3), `f()` → (0, 0).
const fn arg_counts(signature: &str) -> (usize, usize) {
    let b = signature.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'(' {
        i += 1;
    }
    let (mut commas, mut named, mut required) = (0, false, usize::MAX);
    while i < b.len() {
        match b[i] {
            b',' => commas += 1,
            b'[' if required == usize::MAX => required = commas + named as usize,
            c if c.is_ascii_alphanumeric() || c == b'_' => named = true,
            _ => {}
        }
        i += 1;
    }
    let all = if named { commas + 1 } else { 0 };
    (
        if required == usize::MAX {
            all
        } else {
            required
        },
        all,
    )
}

/// Whether `arities` are exactly the signature's: its required count up to all its arguments.
const fn arities_match(signature: &str, arities: &[c_int]) -> bool {
    let (required, all) = arg_counts(signature);
    if arities.len() != all - required + 1 {
        return false;
    }
    let mut i = 0;
    while i < arities.len() {
        if arities[i] < 0 || arities[i] as usize != required + i {
            return false;
        }
        i += 1;
    }
    true
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn scalar(
    signature: &'static str,
    summary: &'static str,
    runs: Runs,
    arities: &'static [c_int],
    flags: FunctionFlags,
    f: ScalarFn,
) -> SqlObject {
    assert!(
        arities_match(signature, arities),
        "a scalar's signature does not match its arities"
    );
    SqlObject {
        name: name_of(signature),
        signature,
        summary,
        runs,
        kind: Kind::Scalar { arities, flags, f },
    }
}

/// An aggregate: all of them are computed locally ([`PURE`]).
const fn aggregate(
    signature: &'static str,
    summary: &'static str,
    arities: &'static [c_int],
    create: fn(&Connection, &'static str, c_int, FunctionFlags) -> rusqlite::Result<()>,
) -> SqlObject {
    assert!(
        arities_match(signature, arities),
        "an aggregate's signature does not match its arities"
    );
    SqlObject {
        name: name_of(signature),
        signature,
        summary,
        runs: Local,
        kind: Kind::Aggregate {
            arities,
            flags: PURE,
            create,
        },
    }
}

/// The table-valued function `F`: its signature names it and has its arguments.
const fn table_fn<F: TableFn>(signature: &'static str, summary: &'static str) -> SqlObject {
    assert!(
        same(name_of(signature), F::NAME),
        "a table function's signature does not start with its name"
    );
    let (required, all) = arg_counts(signature);
    assert!(
        required == F::N_REQUIRED && all == F::N_ARGS,
        "a table function's signature does not match its N_REQUIRED and N_ARGS"
    );
    SqlObject {
        name: F::NAME,
        signature,
        summary,
        runs: if F::LOCAL { Local } else { Daemon },
        kind: Kind::Module(tvf::register::<F>),
    }
}

/// Every SQL object, in the order of registration.
pub const OBJECTS: &[SqlObject] = &[
    scalar(
        "uq_version()",
        "the extension's version",
        Local,
        &[0],
        PURE,
        uq_version::uq_version,
    ),
    scalar(
        "uq_debug()",
        "versions, paths, timeouts, the daemon's state (without starting it) and the last notes",
        Local,
        &[0],
        PLAIN,
        uq_debug::uq_debug,
    ),
    scalar(
        "uq_nli(premise, hypothesis)",
        "the NLI model's three probabilities for one pair, as JSON",
        Daemon,
        &[2],
        PLAIN,
        uq_nli::uq_nli,
    ),
    scalar(
        "response_confidence(response, samples_json[, options_json])",
        "one scorer's confidence in the whole response",
        Daemon,
        &[2, 3],
        PLAIN,
        response_confidence::response_confidence,
    ),
    scalar(
        "claim_confidence(response, samples_json[, options_json])",
        "response_confidence with the response split into claims",
        Daemon,
        &[2, 3],
        PLAIN,
        response_confidence::claim_confidence,
    ),
    aggregate(
        "uq_auroc(score, label)",
        "area under the ROC curve",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Auroc),
    ),
    aggregate(
        "uq_auprc(score, label)",
        "area under the precision-recall curve (average precision)",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Auprc),
    ),
    aggregate(
        "uq_ece(score, label[, bins])",
        "expected calibration error",
        &[2, 3],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Ece),
    ),
    aggregate(
        "uq_brier(score, label)",
        "Brier score",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Brier),
    ),
    aggregate(
        "uq_pearson(x, y)",
        "Pearson correlation",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Pearson),
    ),
    aggregate(
        "uq_spearman(x, y)",
        "Spearman rank correlation",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::Spearman),
    ),
    aggregate(
        "uq_best_threshold(score, label)",
        "the score threshold with the best F1",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::BestThreshold),
    ),
    aggregate(
        "uq_best_f1(score, label)",
        "the best F1 over thresholds",
        &[2],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, Metric::BestF1),
    ),
    aggregate(
        "uq_fit_calibration(score, label[, method[, fitted_on]])",
        "a calibration model (Platt or isotonic) fitted on labelled scores, as JSON",
        &[2, 3, 4],
        |db, name, n, flags| {
            db.create_aggregate_function(name, n, flags, uq_calibration::FitCalibration)
        },
    ),
    aggregate(
        "uq_adapt_calibration(score, model_json[, label])",
        "a calibration model adapted to new answers' base rate (prior shift), refused when \
         labels show it worse",
        &[2, 3],
        |db, name, n, flags| {
            db.create_aggregate_function(name, n, flags, uq_calibration::AdaptCalibration)
        },
    ),
    aggregate(
        "uq_refit_calibration(score, label, prior_model[, fitted_on])",
        "a Platt model refitted on a few labels of new answers, with the old model as prior",
        &[3, 4],
        |db, name, n, flags| {
            db.create_aggregate_function(name, n, flags, uq_calibration::RefitCalibration)
        },
    ),
    scalar(
        "uq_calibrate(score, model_json)",
        "a score mapped through a calibration model to a probability",
        Local,
        &[2],
        PURE,
        uq_calibration::uq_calibrate,
    ),
    aggregate(
        "uq_fit_conformal(score, label, answer_key, alpha[, options_json])",
        "a conformal factuality model: the UAD threshold with a guarantee",
        &[4, 5],
        |db, name, n, flags| {
            db.create_aggregate_function(name, n, flags, uq_conformal::FitConformal)
        },
    ),
    aggregate(
        "uq_fit_ensemble(scores_json, label[, options_json])",
        "ensemble weights fitted on labelled units' scores",
        &[2, 3],
        |db, name, n, flags| db.create_aggregate_function(name, n, flags, uq_ensemble::FitEnsemble),
    ),
    scalar(
        "uq_ensemble(scores_json, weights_json)",
        "one unit's ensemble score",
        Local,
        &[2],
        PURE,
        uq_ensemble::uq_ensemble,
    ),
    scalar(
        "uq_fts_query(text)",
        "a safe FTS5 query of the text's content words",
        Local,
        &[1],
        PURE,
        uq_fts_query::uq_fts_query,
    ),
    // One name, two forms: the units as JSON, or as an aggregate over a unit-score query's rows.
    scalar(
        "uq_highlight(response, units_json[, options_json])",
        "the response highlighted by its units' scores (HTML or text)",
        Local,
        &[2, 3],
        PURE,
        uq_highlight::uq_highlight,
    ),
    aggregate(
        "uq_highlight(response, unit, score, scorer[, options_json])",
        "the group's response highlighted by its rows' unit scores",
        &[4, 5],
        |db, name, n, flags| {
            db.create_aggregate_function(name, n, flags, uq_highlight::HighlightRows)
        },
    ),
    table_fn::<uq_sentences::Sentences>(
        "uq_sentences(text)",
        "the rule-based sentence split, with each sentence's span",
    ),
    table_fn::<uq_scorers::Scorers>("uq_scorers()", "the scorer catalogue"),
    table_fn::<uq_generate::Generate>(
        "uq_generate(prompt, n[, options_json])",
        "an answer and n sampled answers from the generation LLM",
    ),
    table_fn::<uq_claims::Claims>(
        "uq_claims(text[, options_json])",
        "the claims of a text (decomposition LLM), with their spans",
    ),
    scalar(
        "uq_claim_union(response, samples_json[, options_json])",
        "the unique claims across the response and its samples, as JSON",
        Daemon,
        &[2, 3],
        PLAIN,
        uq_claim_union::uq_claim_union,
    ),
    table_fn::<uq_coverage::Coverage>(
        "uq_coverage(response[, options_json])",
        "per sentence of the response, whether its claims entail it",
    ),
    table_fn::<uad_claims::UadClaims>(
        "uad_claims(response, samples_json[, options_json])",
        "uncertainty-aware decoding: each claim, its score and whether it is kept",
    ),
    scalar(
        "uad_filter(response, samples_json[, options_json])",
        "the response refined by uncertainty-aware decoding",
        Daemon,
        &[2, 3],
        PLAIN,
        uad_filter::uad_filter,
    ),
    scalar(
        "uq_init()",
        "applies the uqlite schema to the database; its version",
        Local,
        &[0],
        PLAIN,
        uq_init::uq_init,
    ),
    scalar(
        "uq_score_table(table[, options_json])",
        "starts a background job scoring a table; its id",
        Daemon,
        &[1, 2],
        PLAIN,
        jobs::uq_score_table,
    ),
    scalar(
        "uq_wait(job_id[, timeout_s])",
        "waits for a job to end; its status",
        Daemon,
        &[1, 2],
        PLAIN,
        jobs::uq_wait,
    ),
    scalar(
        "uq_cancel(job_id)",
        "stops a job after the rows in progress",
        Daemon,
        &[1],
        PLAIN,
        jobs::uq_cancel,
    ),
    scalar(
        "uq_grade(unit, reference_text[, options_json])",
        "FActScore grading of a unit against a reference (judge LLM)",
        Daemon,
        &[2, 3],
        PLAIN,
        uq_grade::uq_grade,
    ),
    scalar(
        "uq_objectivity(claim[, options_json])",
        "whether a claim is objective or subjective (judge LLM)",
        Daemon,
        &[1, 2],
        PLAIN,
        uq_objectivity::uq_objectivity,
    ),
    table_fn::<uq_unit_scores::UnitScores>(
        "uq_unit_scores(response, samples_json[, options_json])",
        "the response's units and each scorer's score of them",
    ),
    // Last: creates temp.uq_llms, which needs its module.
    SqlObject {
        name: uq_llms::MODULE_NAME,
        signature: "temp.uq_llms(name, config)",
        summary: "the connection's named LLM configs, for the LLM options",
        runs: Local,
        kind: Kind::Module(|db, _| uq_llms::register(db)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_registered_once_per_arity() {
        let mut seen = std::collections::BTreeSet::new();
        for o in OBJECTS {
            let arities: &[c_int] = match &o.kind {
                Kind::Scalar { arities, .. } | Kind::Aggregate { arities, .. } => arities,
                Kind::Module(_) => &[-1],
            };
            for &n in arities {
                assert!(seen.insert((o.name, n)), "{} twice with {n}", o.name);
            }
        }
        assert_eq!(OBJECTS.last().map(|o| o.name), Some("uq_llms_module"));
    }
}
