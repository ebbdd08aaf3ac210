//! A job's calibration, after its rows are scored: option `calibration.adapt` adapts each model
//! to the job's answers (Saerens, Latinne & Decaestecker 2002, `uq_core::calibrate::adapt`),
//! checked on the group's labelled units when it has some (`uq_core::calibrate::guard`: refused
//! when adapting raises their ECE); option `calibration.refit` then refits the model (adapted or
//! not) on the group's labelled units with itself as the prior, its strength chosen by
//! leave-one-answer-out over the group's labelled answers (`uq_core::calibrate::refit`);
//! the calibrated unit and response scores of the run are rewritten with the resulting model.
//! Every model fitted on another setting than the job's is named. All of it goes to the job's
//! message (its notes), never silently.

use std::collections::BTreeMap;

use rusqlite::{params, Connection};
use uq_core::aggregate::{aggregate, Aggregation};
use uq_core::calibrate::Calibration;
use uq_core::jobs::JobSpec;
use uq_core::options::Adapt;

use crate::engine::Engine;
use crate::pipeline;

/// One unit score of the run: (unit id, answer id, raw score or NaN, its latest factual label).
type UnitRow = (i64, i64, f64, Option<bool>);

fn sql_err(what: &'static str) -> impl Fn(rusqlite::Error) -> String {
    move |e| format!("cannot {what}: {e}")
}

/// Adapts the job's models when it asks (`spec.adapt`) and rewrites the run's calibrated scores;
/// returns the job's calibration notes (adaptations, settings that differ).
pub fn finish_calibration(
    conn: &mut Connection,
    engine: &Engine,
    run_id: i64,
    spec: &JobSpec,
) -> Result<Vec<String>, String> {
    let mut notes =
        pipeline::calibration_notes(engine, &spec.parsed, spec.parsed.scoring.num_samples);
    let Some(groups_by) = spec.adapt.or(spec.refit) else {
        return Ok(notes);
    };
    // IMMEDIATE: the write lock is taken (waiting out the busy timeout) before the reads, so a
    // job committing a chunk meanwhile cannot make the first write fail with "database is
    // locked" (a deferred read transaction is not upgraded while another writer has committed).
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql_err("begin the adaptation"))?;
    for (scorer, model) in &spec.parsed.calibration.models {
        let groups = unit_scores_by_group(&tx, run_id, scorer.name(), groups_by)?;
        for (llm, rows) in groups {
            let group = Group::of(scorer.name(), group_name(groups_by, &llm), &rows);
            let mut current = spec
                .adapt
                .and_then(|adapt| adapted(&group, model, adapt, &mut notes));
            if let Some(refit) = spec.refit {
                let from = current.as_ref().unwrap_or(model);
                if let Some(r) = refitted(&group, from, refit, current.is_some(), &mut notes) {
                    current = Some(r);
                }
            }
            if let Some(c) = current {
                let aggregation = spec.parsed.aggregate.aggregation;
                rewrite_calibrated(&tx, scorer.name(), &c, &rows, aggregation)?;
            }
        }
    }
    tx.commit().map_err(sql_err("commit the adaptation"))?;
    Ok(notes)
}

/// One group of a scorer's unit scores, as the adaptation and the refit take them.
struct Group<'a> {
    scorer: &'a str,
    /// How the notes name the group.
    name: String,
    /// Every finite raw score.
    scores: Vec<f64>,
    /// The labelled units' (finite) scores, their labels and their answers.
    labelled: Vec<f64>,
    labels: Vec<bool>,
    answers: Vec<usize>,
}

impl<'a> Group<'a> {
    fn of(scorer: &'a str, name: String, rows: &[UnitRow]) -> Group<'a> {
        let scores: Vec<f64> = rows.iter().map(|r| r.2).filter(|s| s.is_finite()).collect();
        let ((labelled, labels), answers): ((Vec<f64>, Vec<bool>), Vec<usize>) = rows
            .iter()
            .filter_map(|r| {
                r.3.filter(|_| r.2.is_finite())
                    .map(|l| ((r.2, l), r.1 as usize))
            })
            .unzip();
        Group {
            scorer,
            name,
            scores,
            labelled,
            labels,
            answers,
        }
    }

    /// What an error names: the scorer's option.
    fn what(&self) -> String {
        format!("option calibration.{}", self.scorer)
    }
}

/// `model` adapted to the group's answers (option `calibration.adapt`), with its note; `None`
/// (and a note why) when it cannot be.
fn adapted(
    g: &Group,
    model: &Calibration,
    adapt: Adapt,
    notes: &mut Vec<String>,
) -> Option<Calibration> {
    match model.adapt_guarded(&g.scores, &g.labelled, &g.labels, &g.what(), "score") {
        Ok(adapted) => {
            if let Some(note) = adapt_note(g.scorer, &g.name, adapt, &adapted, &g.scores) {
                notes.push(note);
            }
            Some(adapted)
        }
        Err(e) => {
            notes.push(format!(
                "calibration.{} not adapted to {} (its calibrated scores are the unadapted \
                 model's): {e}",
                g.scorer, g.name
            ));
            None
        }
    }
}

/// `from` (the given model, or the adapted one: `was_adapted`) refitted on the group's labelled
/// units (option `calibration.refit`), with its note; `None` (and a note why) when it cannot be.
fn refitted(
    g: &Group,
    from: &Calibration,
    refit: Adapt,
    was_adapted: bool,
    notes: &mut Vec<String>,
) -> Option<Calibration> {
    match from.refit(&g.labelled, &g.labels, Some(&g.answers), &g.what(), "score") {
        Ok(r) => {
            let rf = r.refit.as_ref();
            notes.push(format!(
                "calibration.{} refitted on {} (refit \"{}\"): {} labelled \
                 units ({} labelled 1), {}, from the model{} \
                 fitted on {} units",
                g.scorer,
                g.name,
                refit.as_str(),
                r.n,
                r.positives,
                rf.map_or_else(String::new, |x| x.describe_prior()),
                if rf.is_some_and(|x| x.adaptation.is_some()) {
                    " adapted to these answers,"
                } else {
                    ""
                },
                rf.map_or(0, |x| x.n),
            ));
            Some(r)
        }
        Err(e) => {
            notes.push(format!(
                "calibration.{} not refitted on {} (its calibrated scores are the \
                 {} model's): {e}",
                g.scorer,
                g.name,
                if was_adapted { "adapted" } else { "given" }
            ));
            None
        }
    }
}

/// The note on an adaptation: the estimate, and the guard's figures and verdict when the group
/// had labels.
fn adapt_note(
    scorer: &str,
    group: &str,
    adapt: Adapt,
    adapted: &Calibration,
    scores: &[f64],
) -> Option<String> {
    let prior = adapted.prior.as_ref()?; // adapt always sets it
    let estimate = format!(
        "base rate {:.3} → {:.3} estimated from {} unit scores ({} EM iterations)",
        prior.train,
        prior.target,
        scores.len(),
        prior.iterations
    );
    Some(match (&prior.check, prior.applied) {
        (None, _) => format!(
            "calibration.{scorer} adapted to {group} (adapt \"{}\"): {estimate}; no labelled \
             units to check it on",
            adapt.as_str()
        ),
        (Some(c), true) => format!(
            "calibration.{scorer} adapted to {group} (adapt \"{}\"): {estimate}; on its {} \
             labelled units {}",
            adapt.as_str(),
            c.labelled,
            c.describe()
        ),
        (Some(c), false) => format!(
            "calibration.{scorer} not adapted to {group} (adapt \"{}\", refused: its \
             calibrated scores are the unadapted model's): {estimate}, but on its {} labelled \
             units adapting is worse: {}; the change between these answers is not a change of \
             base rate alone: refit on the labels (calibration.refit)",
            adapt.as_str(),
            c.labelled,
            c.describe()
        ),
    })
}

/// The run's unit scores by `scorer`, with their latest factual label, per group: the LLM that
/// wrote the answer (`"llm"`), or the whole job (`None` for `"job"`).
fn unit_scores_by_group(
    conn: &Connection,
    run_id: i64,
    scorer: &str,
    adapt: Adapt,
) -> Result<BTreeMap<Option<String>, Vec<UnitRow>>, String> {
    let mut st = conn
        .prepare(
            "SELECT s.unit_id, a.answer_id, s.score, a.model, \
             (SELECT l.label FROM uq_label l WHERE l.unit_id = s.unit_id AND \
              l.kind = 'factual' ORDER BY l.created_at DESC LIMIT 1) FROM uq_unit_score s \
             JOIN uq_unit u ON u.unit_id = s.unit_id \
             JOIN uq_answer a ON a.answer_id = u.answer_id \
             WHERE a.run_id = ?1 AND s.scorer = ?2 ORDER BY a.answer_id, u.position",
        )
        .map_err(sql_err("read the unit scores"))?;
    let rows = st
        .query_map(params![run_id, scorer], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<f64>>(2)?.unwrap_or(f64::NAN),
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i64>>(4)?.map(|l| l != 0),
            ))
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql_err("read the unit scores"))?;
    let mut groups: BTreeMap<Option<String>, Vec<UnitRow>> = BTreeMap::new();
    for (unit, answer, score, llm, label) in rows {
        let key = match adapt {
            Adapt::Job => None,
            Adapt::Llm => llm,
        };
        groups
            .entry(key)
            .or_default()
            .push((unit, answer, score, label));
    }
    Ok(groups)
}

/// How the notes name a group of answers.
fn group_name(adapt: Adapt, llm: &Option<String>) -> String {
    match (adapt, llm) {
        (Adapt::Job, _) => "the job's answers".to_string(),
        (Adapt::Llm, Some(m)) => format!("the answers of LLM {m:?}"),
        (Adapt::Llm, None) => "the answers uqlite did not generate".to_string(),
    }
}

/// Rewrites the calibrated scores of a group's units with the adapted model, then those of their
/// answers' response scores (the units' adapted values aggregated with the run's `aggregation`).
fn rewrite_calibrated(
    conn: &Connection,
    scorer: &str,
    adapted: &Calibration,
    rows: &[UnitRow],
    aggregation: Aggregation,
) -> Result<(), String> {
    let mut per_answer: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for &(unit, answer, score, _) in rows {
        let p = adapted.apply(score);
        conn.execute(
            "UPDATE uq_unit_score SET calibrated = ?3 WHERE unit_id = ?1 AND scorer = ?2",
            params![unit, scorer, p.is_finite().then_some(p)],
        )
        .map_err(sql_err("write an adapted unit score"))?;
        per_answer.entry(answer).or_default().push(p);
    }
    for (answer, values) in per_answer {
        let v = aggregate(&values, aggregation).filter(|x| x.is_finite());
        conn.execute(
            "UPDATE uq_response_score SET calibrated = ?3 WHERE answer_id = ?1 AND \
             scorer = ?2",
            params![answer, scorer, v],
        )
        .map_err(sql_err("write an adapted response score"))?;
    }
    Ok(())
}
