//! `uqd eval DB [TABLE]`: the evaluation suite's figures on a user's own labelled answers.
//! Per run and granularity of the scores stored in DB (the units with a factual label in
//! `uq_scored_units`: a job's `labels_column`, or `grade`; when some are labelled objective,
//! only those, as `uqd report`): every scorer's AUROC, AUC-PR, NonFact AUC-PR and ECE with 95 %
//! intervals over resampled answers (`uq_core::evaluation`); the recommended scorer (the
//! highest AUROC, with the paired interval of its lead over the runner-up); its Platt
//! calibration and its conformal threshold at α, fitted on all the labelled answers. Written to
//! `uq_eval` / `uq_eval_figure` (migration 7), which `uqd report` shows.
//!
//! With `--labels LABELS_TABLE` the labels come from a table of the user's own instead
//! ([`labels`]), aligned to the scored units per answer ([`relabel`]); `--json` prints
//! [`json::evaluations`].

mod evaluation;
pub mod json;
pub mod labels;
mod relabel;

pub use evaluation::{EvalArgs, Evaluation, Scored};

use std::collections::BTreeMap;

use rusqlite::params;
use uq_core::calibrate::FittedOn;
use uq_core::evaluation::{same_units, Figure, Fitted, Labelled, Transfer};
use uq_core::metrics::bootstrap::{paired, Interval};

use crate::bench::grid;
use relabel::Matching;
use uqd::report::{self, UnitRow};

/// Evaluates DB (module doc); returns the evaluations and the text printed.
pub fn eval(args: &EvalArgs) -> Result<(Vec<Evaluation>, String), String> {
    let data = report::load(args.db)?;
    let rows = match args.labels {
        Some(spec) => {
            if args.table.is_none() {
                return Err(format!(
                    "--labels {t} needs TABLE, the scored table whose rows the labels' key \
                     names: uqd eval {} TABLE --labels {t}",
                    args.db.display(),
                    t = spec.table
                ));
            }
            Some(labels::read(args.db, spec)?)
        }
        None => None,
    };
    let mut groups: BTreeMap<(i64, String), Vec<&UnitRow>> = BTreeMap::new();
    for u in data.units.iter().filter(|u| {
        args.table
            .is_none_or(|t| u.source_table.as_deref() == Some(t))
    }) {
        groups
            .entry((u.run_id, u.granularity.clone()))
            .or_default()
            .push(u);
    }
    let mut out = Vec::new();
    let mut unmatched = Vec::new();
    for ((run_id, granularity), units) in groups {
        let (by_scorer, matching) = match (&rows, args.labels) {
            (Some(rows), Some(spec)) => {
                let (labels, m) = relabel::relabel(&spec.table, &units, rows);
                let of = |u: &UnitRow| labels.get(&(u.answer_id, u.position)).copied();
                (labelled(&units, of), Some(m))
            }
            _ => {
                // as the report: only objective units when any is labelled objective
                let objective_only = units.iter().any(|u| u.objective.is_some());
                let of = |u: &UnitRow| {
                    u.label
                        .filter(|_| !objective_only || u.objective == Some(true))
                };
                (labelled(&units, of), None)
            }
        };
        if by_scorer.is_empty() {
            unmatched.extend(matching.map(|m| (run_id, granularity, m)));
            continue;
        }
        let mut e = evaluate(run_id, granularity, by_scorer, args);
        if let Some(m) = matching {
            e.notes.insert(0, m.note());
            e.matching = Some(m);
        }
        out.push(e);
    }
    if out.is_empty() {
        return Err(no_labelled_units(args, &unmatched));
    }
    if args.write {
        write(args, &out)?;
    }
    let text = render(args, &out);
    Ok((out, text))
}

/// Each scorer's units that `label_of` labels.
fn labelled(
    units: &[&UnitRow],
    label_of: impl Fn(&UnitRow) -> Option<bool>,
) -> Vec<(String, Labelled)> {
    let mut by_scorer: Vec<(String, Labelled)> = Vec::new();
    for u in units {
        let Some(label) = label_of(u) else {
            continue;
        };
        let set = match by_scorer.iter_mut().find(|x| x.0 == u.scorer) {
            Some(x) => &mut x.1,
            None => {
                by_scorer.push((u.scorer.clone(), Labelled::default()));
                &mut by_scorer.last_mut().expect("just pushed").1
            }
        };
        set.scores.push(u.score.unwrap_or(f64::NAN));
        set.labels.push(label);
        set.answers.push(u.answer_id as usize);
    }
    by_scorer
}

/// The error of an evaluation with no labelled unit: how to add labels, or (with `--labels`)
/// what the matching found.
fn no_labelled_units(args: &EvalArgs, unmatched: &[(i64, String, Matching)]) -> String {
    let table = args
        .table
        .map(|t| format!(" for table {t}"))
        .unwrap_or_default();
    let Some(spec) = args.labels else {
        return format!(
            "no labelled units in {}{table}: score the table with its labels (a job with \
             \"units_column\" and \"labels_column\", e.g. uq_score_table('answers', \
             '{{\"units_column\":\"claims\",\"labels_column\":\"labels\"}}')) or with option \
             \"grade\", or give a labels table of your own with --labels TABLE, then run uqd eval \
             again",
            args.db.display()
        );
    };
    relabel::nothing_matched(
        &format!(
            "no scored unit of {}{table} matched the labels of table {}",
            args.db.display(),
            spec.table
        ),
        unmatched,
    )
}

fn evaluate(
    run_id: i64,
    granularity: String,
    by_scorer: Vec<(String, Labelled)>,
    args: &EvalArgs,
) -> Evaluation {
    let none = Fitted {
        platt: None,
        conformal: None,
    };
    let scorers: Vec<Scored> = by_scorer
        .into_iter()
        .map(|(scorer, set)| {
            let mut figures: Vec<(&'static str, Option<Interval>)> = Figure::ALL
                .iter()
                .map(|f| (f.name(), f.interval(&set, args.resamples, args.seed)))
                .collect();
            figures.push((
                "ece",
                Transfer::EceRaw.interval(&none, &set, args.resamples, args.seed),
            ));
            Scored {
                scorer,
                set,
                figures,
            }
        })
        .collect();
    let auroc = |i: usize| scorers[i].figures[0].1.map(|x| x.estimate);
    let mut order: Vec<usize> = (0..scorers.len()).filter(|&i| auroc(i).is_some()).collect();
    order.sort_by(|&x, &y| auroc(y).unwrap_or(0.0).total_cmp(&auroc(x).unwrap_or(0.0)));
    let mut notes = Vec::new();
    let (mut recommended, mut calibration, mut conformal) = (None, None, None);
    if let Some(&best) = order.first() {
        let Scored {
            scorer: name, set, ..
        } = &scorers[best];
        recommended = Some(name.clone());
        let a = auroc(best).unwrap_or(f64::NAN);
        let runner_up = order.get(1).map(|&r| (&scorers[r].scorer, &scorers[r].set));
        notes.push(lead(name, a, set, runner_up, args));
        match set.fit_platt() {
            Ok(mut c) => {
                c.fitted_on = Some(FittedOn {
                    scorer: Some(name.clone()),
                    nli_model: None,
                    precision: None,
                    premise: None,
                    num_samples: None,
                });
                calibration = Some(c);
            }
            Err(e) => notes.push(format!("no calibration for {name}: {e}")),
        }
        match set.fit_conformal(args.alpha) {
            Ok(c) => conformal = Some(c),
            Err(e) => notes.push(format!("no conformal fit for {name}: {e}")),
        }
    } else {
        notes.push(
            "no scorer has an AUROC: the labelled units are all of one class; label units of \
             both classes"
                .into(),
        );
    }
    Evaluation {
        run_id,
        granularity,
        scorers,
        recommended,
        calibration,
        conformal,
        notes,
        matching: None,
    }
}

/// The note on the recommended scorer `name` (AUROC `a`) and its lead over the runner-up.
fn lead(
    name: &str,
    a: f64,
    set: &Labelled,
    runner_up: Option<(&String, &Labelled)>,
    args: &EvalArgs,
) -> String {
    match runner_up {
        Some((other, oset)) if same_units(set, oset).is_ok() => {
            let d = paired(
                &set.clusters(),
                args.resamples,
                args.seed,
                |i| Figure::Auroc.of(set, i),
                |i| Figure::Auroc.of(oset, i),
            );
            match d {
                Some(d) if d.sign() > 0 => format!(
                    "{name} has the highest AUROC ({a:.3}), above {other} by {:.3} [{:.3}, \
                     {:.3}] (paired interval)",
                    d.estimate, d.low, d.high
                ),
                Some(d) => format!(
                    "{name} has the highest AUROC ({a:.3}), but its lead over {other}, {:.3} \
                     [{:.3}, {:.3}], is within the noise of these {} answers: either will do; \
                     label more answers to tell them apart",
                    d.estimate,
                    d.low,
                    d.high,
                    set.clusters().answers()
                ),
                None => format!("{name} has the highest AUROC ({a:.3})"),
            }
        }
        Some((other, _)) => format!(
            "{name} has the highest AUROC ({a:.3}); {other} scored other units, so no \
             paired interval"
        ),
        None => format!("{name} is the only scorer with an AUROC ({a:.3})"),
    }
}

fn write(args: &EvalArgs, evals: &[Evaluation]) -> Result<(), String> {
    let mut conn = uqd::store::open(args.db)?;
    uqd::store::migrate(&mut conn)?;
    let tx = conn
        .transaction()
        .map_err(|e| format!("cannot write uq_eval: {e}"))?;
    for e in evals {
        let (units, answers) = e.size();
        tx.execute(
            "INSERT INTO uq_eval(run_id, source_table, granularity, units, answers, resamples, \
             seed, recommended, calibration, conformal, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
             ?7, ?8, ?9, ?10, ?11)",
            params![
                e.run_id,
                args.table,
                e.granularity,
                units as i64,
                answers as i64,
                args.resamples as i64,
                args.seed as i64,
                e.recommended,
                e.calibration.as_ref().map(|c| c.to_json().to_string()),
                e.conformal.as_ref().map(|c| c.to_json().to_string()),
                e.notes.join("\n"),
            ],
        )
        .map_err(|e| format!("cannot write uq_eval: {e}"))?;
        let id = tx.last_insert_rowid();
        for Scored {
            scorer, figures, ..
        } in &e.scorers
        {
            for (f, i) in figures {
                tx.execute(
                    "INSERT INTO uq_eval_figure(eval_id, scorer, figure, estimate, low, high) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        id,
                        scorer,
                        f,
                        i.map(|x| x.estimate),
                        i.map(|x| x.low),
                        i.map(|x| x.high)
                    ],
                )
                .map_err(|e| format!("cannot write uq_eval_figure: {e}"))?;
            }
        }
    }
    tx.commit()
        .map_err(|e| format!("cannot write uq_eval: {e}"))
}

fn render(args: &EvalArgs, evals: &[Evaluation]) -> String {
    let cell = |i: &Option<Interval>| match i {
        Some(i) => format!("{:.3} [{:.3}, {:.3}]", i.estimate, i.low, i.high),
        None => "—".into(),
    };
    let mut out = String::new();
    for e in evals {
        let (units, answers) = e.size();
        out.push_str(&format!(
            "run {}, {} level{}: {units} labelled units of {answers} answers; 95 % intervals \
             over {} resampled answers (seed {})\n",
            e.run_id,
            e.granularity,
            args.table
                .map(|t| format!(", table {t}"))
                .unwrap_or_default(),
            args.resamples,
            args.seed
        ));
        let mut rows = vec![vec![
            "scorer".to_string(),
            "AUROC".into(),
            "AUC-PR".into(),
            "NonFact AUC-PR".into(),
            "ECE".into(),
        ]];
        for s in &e.scorers {
            let mut row = vec![s.scorer.clone()];
            row.extend(s.figures.iter().map(|f| cell(&f.1)));
            rows.push(row);
        }
        out.push_str(&grid(&rows));
        if let Some(r) = &e.recommended {
            out.push_str(&format!("recommended: {r}\n"));
        }
        for n in &e.notes {
            out.push_str(&format!("  {n}\n"));
        }
        if let Some(c) = &e.calibration {
            out.push_str(&format!(
                "calibration (uq_calibrate(score, model)): {}\n",
                c.to_json()
            ));
        }
        if let Some(c) = &e.conformal {
            out.push_str(&format!(
                "conformal (option \"conformal\" of uad_filter): {}\n  {}\n",
                c.to_json(),
                c.guarantee()
            ));
        }
        out.push('\n');
    }
    if args.write {
        out.push_str("written to uq_eval and uq_eval_figure; `uqd report DB` shows them\n");
    }
    out
}
