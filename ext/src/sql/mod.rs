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

use std::os::raw::c_int;
use std::sync::Arc;

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

use crate::client::Client;
use crate::glue::ScalarFn;
use crate::tvf::{self, TableFn};
use metric_aggregates::Metric;

/// One SQL object: its name and how it is registered.
pub struct SqlObject {
    pub name: &'static str,
    pub kind: Kind,
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

const fn scalar(
    name: &'static str,
    arities: &'static [c_int],
    flags: FunctionFlags,
    f: ScalarFn,
) -> SqlObject {
    SqlObject {
        name,
        kind: Kind::Scalar { arities, flags, f },
    }
}

/// An aggregate: all of them are computed locally ([`PURE`]).
const fn aggregate(
    name: &'static str,
    arities: &'static [c_int],
    create: fn(&Connection, &'static str, c_int, FunctionFlags) -> rusqlite::Result<()>,
) -> SqlObject {
    SqlObject {
        name,
        kind: Kind::Aggregate {
            arities,
            flags: PURE,
            create,
        },
    }
}

/// The table-valued function `F`.
const fn table_fn<F: TableFn>() -> SqlObject {
    SqlObject {
        name: F::NAME,
        kind: Kind::Module(tvf::register::<F>),
    }
}

/// Every SQL object, in the order of registration.
pub const OBJECTS: &[SqlObject] = &[
    scalar("uq_version", &[0], PURE, uq_version::uq_version),
    scalar("uq_debug", &[0], PLAIN, uq_debug::uq_debug),
    scalar("uq_nli", &[2], PLAIN, uq_nli::uq_nli),
    scalar(
        "response_confidence",
        &[2, 3],
        PLAIN,
        response_confidence::response_confidence,
    ),
    scalar(
        "claim_confidence",
        &[2, 3],
        PLAIN,
        response_confidence::claim_confidence,
    ),
    aggregate("uq_auroc", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Auroc)
    }),
    aggregate("uq_auprc", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Auprc)
    }),
    aggregate("uq_ece", &[2, 3], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Ece)
    }),
    aggregate("uq_brier", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Brier)
    }),
    aggregate("uq_pearson", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Pearson)
    }),
    aggregate("uq_spearman", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::Spearman)
    }),
    aggregate("uq_best_threshold", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::BestThreshold)
    }),
    aggregate("uq_best_f1", &[2], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, Metric::BestF1)
    }),
    aggregate("uq_fit_calibration", &[2, 3, 4], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_calibration::FitCalibration)
    }),
    aggregate("uq_adapt_calibration", &[2, 3], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_calibration::AdaptCalibration)
    }),
    aggregate("uq_refit_calibration", &[3, 4], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_calibration::RefitCalibration)
    }),
    scalar("uq_calibrate", &[2], PURE, uq_calibration::uq_calibrate),
    aggregate("uq_fit_conformal", &[4, 5], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_conformal::FitConformal)
    }),
    aggregate("uq_fit_ensemble", &[2, 3], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_ensemble::FitEnsemble)
    }),
    scalar("uq_ensemble", &[2], PURE, uq_ensemble::uq_ensemble),
    scalar("uq_fts_query", &[1], PURE, uq_fts_query::uq_fts_query),
    // One name, two forms: (response, units_json[, options_json]) and, as an aggregate over a
    // unit-score query's rows, (response, unit, score, scorer[, options_json]).
    scalar("uq_highlight", &[2, 3], PURE, uq_highlight::uq_highlight),
    aggregate("uq_highlight", &[4, 5], |db, name, n, flags| {
        db.create_aggregate_function(name, n, flags, uq_highlight::HighlightRows)
    }),
    table_fn::<uq_sentences::Sentences>(),
    table_fn::<uq_scorers::Scorers>(),
    table_fn::<uq_generate::Generate>(),
    table_fn::<uq_claims::Claims>(),
    scalar(
        "uq_claim_union",
        &[2, 3],
        PLAIN,
        uq_claim_union::uq_claim_union,
    ),
    table_fn::<uq_coverage::Coverage>(),
    table_fn::<uad_claims::UadClaims>(),
    scalar("uad_filter", &[2, 3], PLAIN, uad_filter::uad_filter),
    scalar("uq_init", &[0], PLAIN, uq_init::uq_init),
    scalar("uq_score_table", &[1, 2], PLAIN, jobs::uq_score_table),
    scalar("uq_wait", &[1, 2], PLAIN, jobs::uq_wait),
    scalar("uq_cancel", &[1], PLAIN, jobs::uq_cancel),
    scalar("uq_grade", &[2, 3], PLAIN, uq_grade::uq_grade),
    scalar(
        "uq_objectivity",
        &[1, 2],
        PLAIN,
        uq_objectivity::uq_objectivity,
    ),
    table_fn::<uq_unit_scores::UnitScores>(),
    // Last: creates temp.uq_llms, which needs its module.
    SqlObject {
        name: uq_llms::MODULE_NAME,
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
