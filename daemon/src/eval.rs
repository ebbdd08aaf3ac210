//! `uqd eval DB [TABLE]`: the evaluation suite's figures on a user's own labelled answers.
//! Per run and granularity of the scores stored in DB (the units with a factual label in
//! `uq_scored_units`: a job's `labels_column`, or `grade`; when some are labelled objective,
//! only those, as `uqd report`): every scorer's AUROC, AUC-PR, NonFact AUC-PR and ECE with 95 %
//! intervals over resampled answers (`uq_core::evaluation`); the recommended scorer (the
//! highest AUROC, with the paired interval of its lead over the runner-up); its Platt
//! calibration and its conformal threshold at α, fitted on all the labelled answers. Written to
//! `uq_eval` / `uq_eval_figure` (migration 7), which `uqd report` shows.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::params;
use uq_core::calibrate::conformal::Conformal;
use uq_core::calibrate::{Calibration, FittedOn};
use uq_core::evaluation::{same_units, Figure, Fitted, Labelled, Transfer};
use uq_core::metrics::bootstrap::{paired, Interval};

use crate::bench::grid;
use crate::report::{self, UnitRow};

pub struct EvalArgs<'a> {
    pub db: &'a Path,
    /// Only the answers of this source table (`None`: all).
    pub table: Option<&'a str>,
    pub resamples: usize,
    pub seed: u64,
    /// The conformal level.
    pub alpha: f64,
    /// Write `uq_eval` / `uq_eval_figure` (else print only).
    pub write: bool,
}

/// One scorer's labelled units and figures (name, interval).
pub struct Scored {
    pub scorer: String,
    pub set: Labelled,
    pub figures: Vec<(&'static str, Option<Interval>)>,
}

/// One run and granularity evaluated.
pub struct Evaluation {
    pub run_id: i64,
    pub granularity: String,
    pub scorers: Vec<Scored>,
    pub recommended: Option<String>,
    pub calibration: Option<Calibration>,
    pub conformal: Option<Conformal>,
    pub notes: Vec<String>,
}

impl Evaluation {
    /// (labelled units, answers) of the scorer that scored the most.
    fn size(&self) -> (usize, usize) {
        self.scorers
            .iter()
            .map(|s| (s.set.labels.len(), s.set.clusters().answers()))
            .max()
            .unwrap_or((0, 0))
    }
}

/// Evaluates DB (module doc); returns the evaluations and the text printed.
pub fn eval(args: &EvalArgs) -> Result<(Vec<Evaluation>, String), String> {
    let data = report::load(args.db)?;
    let rows: Vec<&UnitRow> = data
        .units
        .iter()
        .filter(|u| {
            args.table
                .is_none_or(|t| u.source_table.as_deref() == Some(t))
        })
        .collect();
    let mut groups: BTreeMap<(i64, String), Vec<&UnitRow>> = BTreeMap::new();
    for u in rows {
        groups
            .entry((u.run_id, u.granularity.clone()))
            .or_default()
            .push(u);
    }
    let mut out = Vec::new();
    for ((run_id, granularity), units) in groups {
        // as the report: only objective units when any is labelled objective
        let objective_only = units.iter().any(|u| u.objective.is_some());
        let mut by_scorer: Vec<(String, Labelled)> = Vec::new();
        for u in units
            .iter()
            .filter(|u| u.label.is_some() && (!objective_only || u.objective == Some(true)))
        {
            let set = match by_scorer.iter_mut().find(|x| x.0 == u.scorer) {
                Some(x) => &mut x.1,
                None => {
                    by_scorer.push((u.scorer.clone(), Labelled::default()));
                    &mut by_scorer.last_mut().expect("just pushed").1
                }
            };
            set.scores.push(u.score.unwrap_or(f64::NAN));
            set.labels.push(u.label == Some(true));
            set.answers.push(u.answer_id as usize);
        }
        if by_scorer.is_empty() {
            continue;
        }
        out.push(evaluate(run_id, granularity, by_scorer, args));
    }
    if out.is_empty() {
        return Err(format!(
            "no labelled units in {}{}: score the table with its labels (a job with \
             \"units_column\" and \"labels_column\", e.g. uq_score_table('answers', \
             '{{\"units_column\":\"claims\",\"labels_column\":\"labels\"}}')) or with option \
             \"grade\", then run uqd eval again",
            args.db.display(),
            args.table
                .map(|t| format!(" for table {t}"))
                .unwrap_or_default()
        ));
    }
    if args.write {
        write(args, &out)?;
    }
    let text = render(args, &out);
    Ok((out, text))
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
        match order.get(1).map(|&r| (&scorers[r].scorer, &scorers[r].set)) {
            Some((other, oset)) if same_units(set, oset).is_ok() => {
                let d = paired(
                    &set.clusters(),
                    args.resamples,
                    args.seed,
                    |i| Figure::Auroc.of(set, i),
                    |i| Figure::Auroc.of(oset, i),
                );
                notes.push(match d {
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
                });
            }
            Some((other, _)) => notes.push(format!(
                "{name} has the highest AUROC ({a:.3}); {other} scored other units, so no \
                 paired interval"
            )),
            None => notes.push(format!("{name} is the only scorer with an AUROC ({a:.3})")),
        }
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
    }
}

fn write(args: &EvalArgs, evals: &[Evaluation]) -> Result<(), String> {
    let mut conn = crate::store::open(args.db)?;
    crate::store::migrate(&mut conn)?;
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
