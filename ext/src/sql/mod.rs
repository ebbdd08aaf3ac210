//! Every SQL object of the extension: its scalar functions, aggregates, table-valued functions
//! and virtual tables, one file each (or one file for a family, named after it), all listed
//! in [`OBJECTS`], the one registration table that `lib.rs` walks when the extension is loaded
//! (in the manner of sqlite-vec's function table). This file is one table of data (`OBJECTS`),
//! exempt from the 450-line limit; what an object is, and the constructors that check each
//! row, are in `object`.

mod jobs;
mod judge;
mod metric_aggregates;
mod object;
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

use metric_aggregates::Metric;
use object::{aggregate, scalar, table_fn, PLAIN, PURE};
pub use object::{Kind, Runs, SqlObject};
use Runs::{Daemon, Local};

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
    use std::os::raw::c_int;

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
