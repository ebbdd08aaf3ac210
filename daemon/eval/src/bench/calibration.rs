//! `uqd bench calibration`: does a calibration or an ensemble fitted on one model's answers carry
//! over to another's? The claims of both graph-uq FActScore-Bio files (shared/data/README.md)
//! are scored as `bench claims` scores them (NLI unit-response and graph scorers, the records'
//! `all_claims` as claim union, the first m samples); then, in both directions (fit on one file,
//! test on the other), over the claims labelled 0 or 1 (positive = supported):
//!
//! * per scorer and method (`platt`, `isotonic`): ECE (10 bins) and Brier on the test file of
//!   the raw scores, of the scores calibrated by the model fitted on the fit file, and of the
//!   same model adapted to the test file's unlabelled scores (prior shift, Saerens, Latinne &
//!   Decaestecker 2002: `uq_core::calibrate::adapt`), with the test file's base rate as the
//!   adaptation estimates it (`prior_<method>`) beside the true one (`base_rate_test`) and the
//!   fit file's (`base_rate_fit`);
//! * per objective (`auroc`, `log_loss`): the ensemble weights fitted on the fit file (over
//!   every scorer of the run), the ensemble's AUROC on the test file beside the best single
//!   scorer's there (the best in hindsight) and the single scorer that was best on the fit file
//!   (what one would pick without the test labels), and the ECE / Brier of the ensemble
//!   calibrated (Platt) on the fit file;
//! * per scorer and method, also the ECE after calibration within the test file: 5-fold
//!   cross-validation over its claims in file order (folds are runs of whole answers, but for
//!   the answer cut at a fold's edge), which separates what the method achieves from the shift
//!   between the files (their supported rates differ);
//! * a summary: the largest ECE after calibration per method against the 0.05 target, across
//!   files and within a file; per direction, the scorer and method with the lowest adapted ECE
//!   (`best_adapted`) against the target; every (scorer, method) whose adapted ECE exceeds its
//!   unadapted one (`adapted_worse`), and those whose adaptation failed (`adapt_failed`; the
//!   line's `adapt_error_<method>` says why).
//!
//! * with `--target-labels K,…` (default 0,5,10,20,40), per direction, scorer and K, what K
//!   labelled answers of the test file buy: the old Platt model, adapted, adapted with the guard,
//!   Platt on the K answers alone and the refit with the old model as the prior, over seeded
//!   random draws ([`super::refit`]); the summary adds the refit target
//!   (`target_labels_met_refit`, `target_labels_met_refit_adapted`,
//!   `target_labels_met_refit_guarded`) and the chosen refit's (`target_labels_met_chosen`,
//!   `target_labels_met_chosen_guarded`).
//!
//! Prints one JSON object per line; progress goes to stderr. No LLM call is made.

use std::path::Path;

use serde_json::{json, Value};
use uq_core::calibrate::{Calibration, Method};
use uq_core::ensemble::{Objective, Training};
use uq_core::metrics::{auroc, brier, ece};
use uq_core::scorers::Scorer;

use super::claims::{
    answer_claims, claim_scorers, claim_scores, labelled, score_file, ScoredFile, ECE_BINS,
};
use super::lines::round;
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// ECE the calibrated scores should reach on the other file.
const TARGET_ECE: f64 = 0.05;
/// Folds of the within-file cross-validation.
const FOLDS: usize = 5;

pub struct CalibrationArgs<'a> {
    /// The two files; each is fitted on and tested on the other.
    pub data: [&'a Path; 2],
    pub samples: usize,
    pub clients: usize,
    /// Only the first `limit` records of each file.
    pub limit: Option<usize>,
    /// Labelled answers of the test file for the refit runs (`--target-labels`; empty: none).
    pub target_labels: Vec<usize>,
    /// Random draws per K, and their seed.
    pub draws: usize,
    pub seed: u64,
}

/// One file's labelled claims: per scorer the scores, in the same claim order, the labels and
/// the answer (record index) each claim belongs to.
struct Labelled {
    name: String,
    scores: Vec<(Scorer, Vec<f64>)>,
    labels: Vec<bool>,
    answers: Vec<usize>,
}

impl Labelled {
    fn of(&self, s: Scorer) -> &[f64] {
        self.scores
            .iter()
            .find(|(t, _)| *t == s)
            .map_or(&[][..], |(_, v)| v.as_slice())
    }

    fn claims(&self, s: Scorer) -> super::refit::Claims<'_> {
        super::refit::Claims {
            name: &self.name,
            scores: self.of(s),
            labels: &self.labels,
            answers: &self.answers,
        }
    }
}

/// What the summary line gathers over both directions.
#[derive(Default)]
struct Summary {
    /// per method, the largest ECE after calibration: across files, within a file
    worst: [[f64; 2]; 2],
    best: Vec<Value>,
    adapted_worse: Vec<Value>,
    adapt_failed: Vec<Value>,
    refit_target: Vec<Value>,
}

/// Runs the benchmark and prints its JSON lines.
pub fn calibration(
    engine: &Engine,
    llm: &LlmService,
    args: &CalibrationArgs,
) -> Result<(), String> {
    let scorers = claim_scorers(false);
    let run = (args.samples, args.clients, args.limit);
    let file = |path: &Path| -> Result<Labelled, String> {
        labelled_file(score_file(engine, llm, path, run, &scorers)?, &scorers)
    };
    let files = [file(args.data[0])?, file(args.data[1])?];
    let mut summary = Summary::default();
    for (fit, test) in [(&files[0], &files[1]), (&files[1], &files[0])] {
        direction(fit, test, &scorers, args, &mut summary)?;
    }
    println!("{}", summary.line(&files, args.samples));
    Ok(())
}

/// The lines of one direction (fitted on `fit`, tested on `test`): per scorer the
/// calibrations, then the ensembles, then (with `--target-labels`) the refit runs.
fn direction(
    fit: &Labelled,
    test: &Labelled,
    scorers: &[Scorer],
    args: &CalibrationArgs,
    summary: &mut Summary,
) -> Result<(), String> {
    // (ECE adapted, scorer, method) of the best in this direction
    let mut best_here: Option<(f64, Scorer, Method)> = None;
    for &s in scorers {
        let line = calibration_line(fit, test, s, &mut summary.worst)?;
        summary.adaptations(fit, test, s, &line, &mut best_here);
        println!("{line}");
    }
    if let Some((e, s, m)) = best_here {
        summary.best.push(
            json!({"fit": fit.name, "test": test.name, "scorer": s.name(),
            "method": m.as_str(), "ece_adapted": e, "target_met": e <= TARGET_ECE}),
        );
    }
    for objective in [Objective::Auroc, Objective::LogLoss] {
        println!("{}", ensemble_line(fit, test, scorers, objective)?);
    }
    if !args.target_labels.is_empty() {
        let draws = super::refit::Draws {
            ks: &args.target_labels,
            draws: args.draws,
            seed: args.seed,
        };
        for &s in scorers {
            for line in super::refit::lines(&fit.claims(s), &test.claims(s), s, &draws)? {
                summary.refit_target.extend(super::refit::target(&line));
                println!("{line}");
            }
        }
    }
    Ok(())
}

impl Summary {
    /// Notes, from scorer `s`'s calibration line, each method whose adaptation failed or raised
    /// the ECE, and keeps in `best_here` the lowest adapted ECE of the direction.
    fn adaptations(
        &mut self,
        fit: &Labelled,
        test: &Labelled,
        s: Scorer,
        line: &Value,
        best_here: &mut Option<(f64, Scorer, Method)>,
    ) {
        for m in Method::ALL {
            let get = |k: String| line[k].as_f64();
            let (cal, ada) = (
                get(format!("ece_{}", m.as_str())),
                get(format!("ece_{}_adapted", m.as_str())),
            );
            if line.get(format!("adapt_error_{}", m.as_str())).is_some() {
                self.adapt_failed
                    .push(json!({"fit": fit.name, "test": test.name,
                    "scorer": s.name(), "method": m.as_str()}));
            }
            if let (Some(cal), Some(ada)) = (cal, ada) {
                if ada > cal {
                    self.adapted_worse
                        .push(json!({"fit": fit.name, "test": test.name,
                        "scorer": s.name(), "method": m.as_str(), "ece": cal,
                        "ece_adapted": ada}));
                }
                if best_here.is_none_or(|b| ada < b.0) {
                    *best_here = Some((ada, s, m));
                }
            }
        }
    }

    /// The summary line: the claims of each file and the targets met.
    fn line(&self, files: &[Labelled; 2], samples: usize) -> Value {
        let (worst, best, refit_target) = (&self.worst, &self.best, &self.refit_target);
        // whether both directions' refit targets meet `key`
        let met = |key: &str| {
            (refit_target.len() == 2).then(|| refit_target.iter().all(|t| t[key] == json!(true)))
        };
        json!({
            "summary": true,
            "claims": files.iter().map(|f| json!({"file": f.name, "labelled": f.labels.len(),
                "supported": f.labels.iter().filter(|&&l| l).count()})).collect::<Vec<_>>(),
            "samples": samples,
            "target_ece": TARGET_ECE,
            "max_ece_platt": round(worst[0][0]),
            "max_ece_isotonic": round(worst[0][1]),
            "target_met_platt": worst[0][0] <= TARGET_ECE,
            "target_met_isotonic": worst[0][1] <= TARGET_ECE,
            "max_ece_cv_platt": round(worst[1][0]),
            "max_ece_cv_isotonic": round(worst[1][1]),
            "best_adapted": best,
            "best_adapted_target_met": best.len() == 2
                && best.iter().all(|b| b["target_met"] == json!(true)),
            "adapted_worse": self.adapted_worse,
            "adapt_failed": self.adapt_failed,
            "target_labels_ece": super::refit::TARGET_ECE,
            "target_labels_k": super::refit::TARGET_K,
            "target_labels": refit_target,
            "target_labels_met_refit": met("met_refit"),
            "target_labels_met_refit_adapted": met("met_refit_adapted"),
            "target_labels_met_refit_guarded": met("met_refit_guarded"),
            "target_labels_met_chosen": met("met_chosen"),
            "target_labels_met_chosen_guarded": met("met_chosen_guarded"),
        })
    }
}

/// Keeps the labelled claims of one scored file, with each scorer's scores.
fn labelled_file(file: ScoredFile, scorers: &[Scorer]) -> Result<Labelled, String> {
    let (records, results) = (&file.records, &file.results);
    let mut labels: Option<Vec<bool>> = None;
    let mut answers = Vec::new();
    let mut scores = Vec::with_capacity(scorers.len());
    for &s in scorers {
        let per_record = claim_scores(s, records, results)?;
        let (v, l) = labelled(records, &per_record);
        // the answer of each labelled claim with a score, in `labelled`'s order
        let ids: Vec<usize> = answer_claims(records, &per_record)
            .iter()
            .enumerate()
            .flat_map(|(i, a)| {
                a.iter()
                    .filter(|(s, l)| l.is_some() && s.is_finite())
                    .map(move |_| i)
            })
            .collect();
        if labels.as_ref().is_some_and(|prev| *prev != l) || ids.len() != l.len() {
            return Err(format!(
                "internal error: {}: the labelled claims with a {} score differ from the other \
                 scorers'",
                file.name,
                s.name()
            ));
        }
        answers = ids;
        labels = Some(l);
        scores.push((s, v));
    }
    Ok(Labelled {
        name: file.name,
        scores,
        labels: labels.unwrap_or_default(),
        answers,
    })
}

/// ECE and Brier on `test` of `s`'s raw scores and of its scores calibrated on `fit`.
fn calibration_line(
    fit: &Labelled,
    test: &Labelled,
    s: Scorer,
    worst: &mut [[f64; 2]; 2],
) -> Result<Value, String> {
    let (fs, ts) = (fit.of(s), test.of(s));
    let mut line = json!({
        "scorer": s.name(),
        "fit": fit.name,
        "test": test.name,
        "auroc": auroc(ts, &test.labels).map(round),
        "ece_raw": ece(ts, &test.labels, ECE_BINS).map(round),
        "brier_raw": brier(ts, &test.labels).map(round),
    });
    let rate = |l: &[bool]| l.iter().filter(|&&x| x).count() as f64 / l.len().max(1) as f64;
    line["base_rate_fit"] = json!(round(rate(&fit.labels)));
    line["base_rate_test"] = json!(round(rate(&test.labels)));
    for (i, m) in Method::ALL.into_iter().enumerate() {
        let c = Calibration::fit(fs, &fit.labels, m, "score")
            .map_err(|e| format!("{} on {}: {e}", s.name(), fit.name))?;
        let p: Vec<f64> = ts.iter().map(|&x| c.apply(x)).collect();
        let e = ece(&p, &test.labels, ECE_BINS);
        if let Some(e) = e {
            worst[0][i] = worst[0][i].max(e);
        }
        line[format!("ece_{}", m.as_str())] = json!(e.map(round));
        line[format!("brier_{}", m.as_str())] = json!(brier(&p, &test.labels).map(round));
        // adapted to the test file's scores, without its labels
        // (an adaptation that fails, e.g. a target that looks like one class, is reported in
        // `adapt_error_<method>` with null figures: never replaced by the unadapted ones)
        let finite: Vec<f64> = ts.iter().copied().filter(|x| x.is_finite()).collect();
        match c.adapt(&finite, &format!("{} {}", s.name(), m.as_str()), "score") {
            Ok(a) => {
                let pa: Vec<f64> = ts.iter().map(|&x| a.apply(x)).collect();
                line[format!("prior_{}", m.as_str())] =
                    json!(a.prior.as_ref().map(|p| round(p.target)));
                line[format!("ece_{}_adapted", m.as_str())] =
                    json!(ece(&pa, &test.labels, ECE_BINS).map(round));
                line[format!("brier_{}_adapted", m.as_str())] =
                    json!(brier(&pa, &test.labels).map(round));
            }
            Err(e) => {
                line[format!("prior_{}", m.as_str())] = Value::Null;
                line[format!("ece_{}_adapted", m.as_str())] = Value::Null;
                line[format!("brier_{}_adapted", m.as_str())] = Value::Null;
                line[format!("adapt_error_{}", m.as_str())] = json!(e);
            }
        }
        let cv = cross_validated(ts, &test.labels, m)
            .map_err(|e| format!("{} on {} (cross-validation): {e}", s.name(), test.name))?;
        let e = ece(&cv, &test.labels, ECE_BINS);
        if let Some(e) = e {
            worst[1][i] = worst[1][i].max(e);
        }
        line[format!("ece_cv_{}", m.as_str())] = json!(e.map(round));
    }
    Ok(line)
}

/// Each claim's score calibrated by a model fitted on the other [`FOLDS`] − 1 folds (contiguous
/// runs of claims in file order).
fn cross_validated(scores: &[f64], labels: &[bool], m: Method) -> Result<Vec<f64>, String> {
    let n = scores.len();
    let mut out = vec![f64::NAN; n];
    for f in 0..FOLDS {
        let (lo, hi) = (f * n / FOLDS, (f + 1) * n / FOLDS);
        let (mut s, mut l) = (Vec::with_capacity(n), Vec::with_capacity(n));
        s.extend_from_slice(&scores[..lo]);
        s.extend_from_slice(&scores[hi..]);
        l.extend_from_slice(&labels[..lo]);
        l.extend_from_slice(&labels[hi..]);
        let c = Calibration::fit(&s, &l, m, "score")?;
        for i in lo..hi {
            out[i] = c.apply(scores[i]);
        }
    }
    Ok(out)
}

/// The ensemble fitted on `fit` for `objective`, evaluated on `test`.
fn ensemble_line(
    fit: &Labelled,
    test: &Labelled,
    scorers: &[Scorer],
    objective: Objective,
) -> Result<Value, String> {
    let training = |f: &Labelled| -> Result<Training, String> {
        let mut t = Training::default();
        for (i, &l) in f.labels.iter().enumerate() {
            let row = scorers
                .iter()
                .map(|&s| {
                    (
                        s.name().to_string(),
                        Some(f.of(s)[i]).filter(|x| !x.is_nan()),
                    )
                })
                .collect();
            t.push(row, l, "scores")?;
        }
        Ok(t)
    };
    let (train, held_out) = (training(fit)?, training(test)?);
    let weights = train
        .fit(objective)
        .map_err(|e| format!("ensemble on {}: {e}", fit.name))?;
    let ensemble = |t: &Training| -> Vec<f64> {
        t.rows
            .iter()
            .map(|r| r.iter().zip(&weights.values).map(|(s, w)| s * w).sum())
            .collect()
    };
    let (fit_scores, test_scores) = (ensemble(&train), ensemble(&held_out));
    let best = |f: &Labelled| {
        scorers
            .iter()
            .filter_map(|&s| auroc(f.of(s), &f.labels).map(|a| (s, a)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let best_on_test = best(test);
    let chosen = best(fit).map(|(s, _)| s);
    let platt = Calibration::fit(&fit_scores, &train.labels, Method::Platt, "score")?;
    let calibrated: Vec<f64> = test_scores.iter().map(|&x| platt.apply(x)).collect();
    let nonzero: serde_json::Map<String, Value> = weights
        .names
        .iter()
        .zip(&weights.values)
        .filter(|(_, &w)| w > 0.0)
        .map(|(n, &w)| (n.clone(), json!(round(w))))
        .collect();
    Ok(json!({
        "ensemble": objective.as_str(),
        "fit": fit.name,
        "test": test.name,
        "weights": nonzero,
        "auroc": auroc(&test_scores, &held_out.labels).map(round),
        "best_single": best_on_test.map(|(s, _)| s.name()),
        "best_single_auroc": best_on_test.map(|(_, a)| round(a)),
        "chosen_on_fit": chosen.map(|s| s.name()),
        "chosen_on_fit_auroc": chosen.and_then(|s| auroc(test.of(s), &test.labels)).map(round),
        "ece_raw": ece(&test_scores, &held_out.labels, ECE_BINS).map(round),
        "ece_platt": ece(&calibrated, &held_out.labels, ECE_BINS).map(round),
        "brier_platt": brier(&calibrated, &held_out.labels).map(round),
        "claims": held_out.rows.len(),
    }))
}
