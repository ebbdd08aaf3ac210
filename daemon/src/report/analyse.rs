//! The report's figures of merit, computed from the loaded rows (see the module doc of
//! `report`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use uq_core::aggregate::uad_kept_accuracy;
use uq_core::metrics::{
    auroc, average_precision, best_f1_threshold, brier, ece, pearson, spearman,
};

use super::load::{AnswerRow, Data, Run, SpanRow, UnitRow, NO_SCHEMA};

/// Equal-width bins of the ECE and of the reliability diagrams.
pub const CALIBRATION_BINS: usize = 10;
/// UAD percentile thresholds (0 = nothing filtered).
pub const UAD_PERCENTILES: [u32; 10] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90];

/// (run, granularity): the units of one run at one granularity.
pub type GroupKey = (i64, String);

/// Unit-level metrics of one scorer in one (run, granularity).
#[derive(Debug, Clone)]
pub struct UnitMetrics {
    pub run_id: i64,
    pub granularity: String,
    pub scorer: String,
    pub n_units: usize,
    pub n_labelled: usize,
    /// Scored, labelled, and objective when the group has objective labels.
    pub n_evaluated: usize,
    pub objective_only: bool,
    pub factual_rate: Option<f64>,
    pub auroc: Option<f64>,
    pub auprc_factual: Option<f64>,
    pub auprc_nonfactual: Option<f64>,
    pub brier: Option<f64>,
    pub ece: Option<f64>,
    pub best_f1: Option<(f64, f64)>,
    /// Some score lies outside [0, 1]: Brier and ECE are not shown.
    pub out_of_range: bool,
    /// The evaluated (score, factual) pairs, for the reliability diagram.
    pub pairs: Vec<(f64, bool)>,
    /// Before and after calibration, when the run stored calibrated scores of this scorer.
    pub calibrated: Option<CalibratedMetrics>,
}

/// ECE and Brier of a scorer's raw and calibrated scores (column `calibrated`, a run with
/// option `calibration`), over the evaluated units that have a calibrated score.
#[derive(Debug, Clone)]
pub struct CalibratedMetrics {
    pub n_evaluated: usize,
    /// Raw scores of the same units; `None` when some lies outside [0, 1].
    pub ece_raw: Option<f64>,
    pub brier_raw: Option<f64>,
    pub ece: Option<f64>,
    pub brier: Option<f64>,
    /// The evaluated (calibrated score, factual) pairs, for the reliability diagram.
    pub pairs: Vec<(f64, bool)>,
}

impl CalibratedMetrics {
    fn of(rows: &[&UnitRow], objective_only: bool) -> Option<CalibratedMetrics> {
        let (mut raw, mut cal, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for u in rows {
            if let (Some((s, l)), Some(c)) = (evaluated(u, objective_only), u.calibrated) {
                raw.push(s);
                cal.push(c);
                labels.push(l);
            }
        }
        if cal.is_empty() {
            return None;
        }
        let raw_ok = raw.iter().all(|s| (0.0..=1.0).contains(s));
        Some(CalibratedMetrics {
            n_evaluated: cal.len(),
            ece_raw: raw_ok
                .then(|| ece(&raw, &labels, CALIBRATION_BINS))
                .flatten(),
            brier_raw: raw_ok.then(|| brier(&raw, &labels)).flatten(),
            ece: ece(&cal, &labels, CALIBRATION_BINS),
            brier: brier(&cal, &labels),
            pairs: cal.into_iter().zip(labels).collect(),
        })
    }
}

/// Response-level correlations of one scorer and aggregation in one run.
#[derive(Debug, Clone)]
pub struct ResponseMetrics {
    pub run_id: i64,
    pub scorer: String,
    pub aggregation: String,
    pub n_answers: usize,
    pub n_graded: usize,
    pub pearson: Option<f64>,
    pub spearman: Option<f64>,
}

/// UAD accuracy per percentile for one scorer (index i ↔ `UAD_PERCENTILES[i]`).
#[derive(Debug, Clone)]
pub struct UadCurve {
    pub scorer: String,
    pub accuracy: Vec<Option<f64>>,
    pub kept: Vec<usize>,
}

/// UAD curves of one (run, granularity) with its baseline accuracy.
#[derive(Debug, Clone)]
pub struct UadGroup {
    pub key: GroupKey,
    pub objective_only: bool,
    pub baseline: Option<f64>,
    pub n_labelled: usize,
    pub curves: Vec<UadCurve>,
}

/// One scorer's AUROC per m: (scorer, [(m, AUROC)]).
pub type Series = (String, Vec<(i64, Option<f64>)>);

/// The units of one answer for UAD: (score, evaluated factual label) in unit order.
type UadUnits = Vec<(Option<f64>, Option<bool>)>;

/// A granularity and the sorted (source_table, source_key) of the answers a run scored.
type AnswerSet = (String, Vec<(String, String)>);

/// Runs over one set of answers at one granularity, for the AUROC-vs-m figure.
#[derive(Debug, Clone)]
pub struct AblationGroup {
    pub granularity: String,
    pub source_tables: Vec<String>,
    pub n_answers: usize,
    /// (m, run id), one run per m (the latest), ascending m.
    pub runs: Vec<(i64, i64)>,
    /// Runs left out: no m known, or a later run with the same m.
    pub skipped: Vec<(i64, String)>,
    /// Per scorer: (m, AUROC).
    pub series: Vec<Series>,
}

/// Everything computed for the page.
#[derive(Debug, Default)]
pub struct Report {
    pub db: String,
    pub data: Data,
    pub notes: Vec<String>,
    pub unit_metrics: Vec<UnitMetrics>,
    pub response_metrics: Vec<ResponseMetrics>,
    pub uad: Vec<UadGroup>,
    pub ablation: Vec<AblationGroup>,
    /// Per (run, granularity): the scorer shown and its lowest-scored units.
    pub lowest: Vec<(GroupKey, String, Vec<UnitRow>)>,
    /// Per (run, granularity): the scorer shown and its least confident answers, highlighted.
    pub highlighted: Vec<(GroupKey, String, Vec<HighlightedAnswer>)>,
}

/// An answer of the report's "least confident answers": its response score and its text as
/// `uq_core::highlight` HTML.
#[derive(Debug, Clone)]
pub struct HighlightedAnswer {
    pub source_key: String,
    pub prompt: Option<String>,
    pub score: Option<f64>,
    pub html: String,
}

/// How many answers the report highlights per run and granularity.
pub const HIGHLIGHTED_ANSWERS: usize = 5;

/// Scorers of a group in the run's `scorers_json` order, then any others by name.
fn ordered_scorers(run: Option<&Run>, present: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = run
        .map(|r| {
            r.scorers
                .iter()
                .filter(|s| present.contains(*s))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    out.dedup();
    for s in present {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// Whether a unit row is evaluated: scored, labelled factual/non-factual, and objective when
/// the group is restricted to objective units.
fn evaluated(u: &UnitRow, objective_only: bool) -> Option<(f64, bool)> {
    let label = u.label?;
    if objective_only && u.objective != Some(true) {
        return None;
    }
    Some((u.score?, label))
}

/// Unit metrics of the rows of one scorer.
pub fn unit_metrics(
    key: &GroupKey,
    scorer: &str,
    rows: &[&UnitRow],
    objective_only: bool,
) -> UnitMetrics {
    let pairs: Vec<(f64, bool)> = rows
        .iter()
        .filter_map(|u| evaluated(u, objective_only))
        .collect();
    let scores: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let labels: Vec<bool> = pairs.iter().map(|p| p.1).collect();
    let negated: Vec<f64> = scores.iter().map(|s| -s).collect();
    let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
    let out_of_range = scores.iter().any(|s| !(0.0..=1.0).contains(s));
    let n = pairs.len();
    UnitMetrics {
        run_id: key.0,
        granularity: key.1.clone(),
        scorer: scorer.to_string(),
        n_units: rows.len(),
        n_labelled: rows.iter().filter(|u| u.label.is_some()).count(),
        n_evaluated: n,
        objective_only,
        factual_rate: (n > 0).then(|| labels.iter().filter(|&&l| l).count() as f64 / n as f64),
        auroc: auroc(&scores, &labels),
        auprc_factual: average_precision(&scores, &labels),
        auprc_nonfactual: average_precision(&negated, &flipped),
        brier: if out_of_range {
            None
        } else {
            brier(&scores, &labels)
        },
        ece: if out_of_range {
            None
        } else {
            ece(&scores, &labels, CALIBRATION_BINS)
        },
        best_f1: best_f1_threshold(&scores, &labels),
        out_of_range,
        pairs,
        calibrated: CalibratedMetrics::of(rows, objective_only),
    }
}

/// The calibration bin of a score, as `uq_core::metrics::ece` bins it.
pub fn calibration_bin(s: f64, bins: usize) -> usize {
    uq_core::metrics::ece_bin(s, bins)
}

/// Per bin: (count, mean score, factual rate).
pub fn reliability(pairs: &[(f64, bool)]) -> Vec<(usize, f64, f64)> {
    let mut acc = vec![(0usize, 0.0f64, 0usize); CALIBRATION_BINS];
    for &(s, l) in pairs {
        let b = &mut acc[calibration_bin(s, CALIBRATION_BINS)];
        b.0 += 1;
        b.1 += s;
        b.2 += usize::from(l);
    }
    acc.into_iter()
        .map(|(c, sum, pos)| {
            if c == 0 {
                (0, f64::NAN, f64::NAN)
            } else {
                (c, sum / c as f64, pos as f64 / c as f64)
            }
        })
        .collect()
}

/// UAD accuracy of one scorer over answers (each a list of (score, evaluated label)), per
/// percentile of [`UAD_PERCENTILES`] (`uq_core::aggregate::uad_kept_accuracy`, as
/// `uqd bench claims --uad`).
pub(super) fn uad_curve(scorer: &str, answers: &[UadUnits]) -> UadCurve {
    let split: Vec<(Vec<f64>, Vec<Option<bool>>)> = answers
        .iter()
        .map(|units| units.iter().map(|u| (u.0.unwrap_or(f64::NAN), u.1)).unzip())
        .collect();
    let (mut accuracy, mut kept_n) = (Vec::new(), Vec::new());
    for q in UAD_PERCENTILES {
        let pooled = split.iter().map(|(s, l)| (s.as_slice(), l.as_slice()));
        let (kept, acc) = uad_kept_accuracy(pooled, f64::from(q));
        accuracy.push(acc);
        kept_n.push(kept);
    }
    UadCurve {
        scorer: scorer.to_string(),
        accuracy,
        kept: kept_n,
    }
}

/// (run, granularity) → scorer → rows.
type Groups<'a> = BTreeMap<GroupKey, BTreeMap<String, Vec<&'a UnitRow>>>;

/// Computes every table and figure's data.
pub fn analyse(db: String, data: Data) -> Report {
    let runs_by_id: HashMap<i64, &Run> = data.runs.iter().map(|r| (r.id, r)).collect();
    let groups = group_units(&data.units);
    let objective_only: BTreeMap<GroupKey, bool> = groups
        .iter()
        .map(|(k, by)| {
            (
                k.clone(),
                by.values().flatten().any(|u| u.objective.is_some()),
            )
        })
        .collect();

    let mut unit_metrics_v = Vec::new();
    let mut uad = Vec::new();
    let mut lowest = Vec::new();
    let mut highlighted = Vec::new();
    for (key, by_scorer) in &groups {
        let obj = objective_only[key];
        let present: BTreeSet<String> = by_scorer.keys().cloned().collect();
        let scorers = ordered_scorers(runs_by_id.get(&key.0).copied(), &present);
        for scorer in &scorers {
            unit_metrics_v.push(unit_metrics(key, scorer, &by_scorer[scorer], obj));
        }
        uad.extend(uad_group(key, by_scorer, &scorers, obj));
        if let Some(first) = scorers.first() {
            lowest.push((key.clone(), first.clone(), lowest_units(&by_scorer[first])));
            let answers = least_confident_answers(&data, &by_scorer[first]);
            highlighted.push((key.clone(), first.clone(), answers));
        }
    }
    let response_metrics = response_metrics(&data.answers);
    let ablation = ablation(&data.units, &unit_metrics_v, &runs_by_id);
    let notes = notes(&data, &objective_only, &unit_metrics_v);
    Report {
        db,
        data,
        notes,
        unit_metrics: unit_metrics_v,
        response_metrics,
        uad,
        ablation,
        lowest,
        highlighted,
    }
}

/// The units grouped by (run, granularity), then by scorer.
fn group_units(units: &[UnitRow]) -> Groups<'_> {
    let mut groups: Groups = BTreeMap::new();
    for u in units {
        groups
            .entry((u.run_id, u.granularity.clone()))
            .or_default()
            .entry(u.scorer.clone())
            .or_default()
            .push(u);
    }
    groups
}

/// UAD curves of one (run, granularity): per scorer, per answer, (score, evaluated label) in
/// unit order; `None` when no unit is evaluated.
fn uad_group(
    key: &GroupKey,
    by_scorer: &BTreeMap<String, Vec<&UnitRow>>,
    scorers: &[String],
    obj: bool,
) -> Option<UadGroup> {
    let mut labelled_units: BTreeMap<i64, bool> = BTreeMap::new();
    for u in by_scorer.values().flatten() {
        if let Some(l) = u.label.filter(|_| !obj || u.objective == Some(true)) {
            labelled_units.insert(u.unit_id, l);
        }
    }
    if labelled_units.is_empty() {
        return None;
    }
    let n = labelled_units.len();
    let baseline = labelled_units.values().filter(|&&l| l).count() as f64 / n as f64;
    let curves = scorers
        .iter()
        .map(|scorer| {
            let mut per_answer: BTreeMap<i64, UadUnits> = BTreeMap::new();
            for u in &by_scorer[scorer] {
                let l = u.label.filter(|_| !obj || u.objective == Some(true));
                per_answer
                    .entry(u.answer_id)
                    .or_default()
                    .push((u.score, l));
            }
            uad_curve(scorer, &per_answer.into_values().collect::<Vec<_>>())
        })
        .collect();
    Some(UadGroup {
        key: key.clone(),
        objective_only: obj,
        baseline: Some(baseline),
        n_labelled: n,
        curves,
    })
}

/// The [`HIGHLIGHTED_ANSWERS`] answers of one scorer's units with the lowest response score
/// (the mean of their unit scores when no response score is stored; ties by answer id), each
/// highlighted by its units' scores: at their stored spans, or found in the answer for units
/// written before schema v5.
fn least_confident_answers(data: &Data, rows: &[&UnitRow]) -> Vec<HighlightedAnswer> {
    use uq_core::highlight::{marks, render, Mark, Options};
    let mut by_answer: BTreeMap<i64, Vec<&UnitRow>> = BTreeMap::new();
    for u in rows {
        by_answer.entry(u.answer_id).or_default().push(u);
    }
    // The rows share one run and scorer: their stored response scores, looked up once.
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let aggregation = data
        .runs
        .iter()
        .find(|r| r.id == first.run_id)
        .map(|r| r.aggregation.as_str());
    let stored: HashMap<i64, Option<f64>> = data
        .answers
        .iter()
        .filter(|a| {
            a.run_id == first.run_id
                && a.scorer == first.scorer
                && aggregation.is_none_or(|g| g == a.aggregation)
        })
        .map(|a| (a.answer_id, a.score))
        .collect();
    let response_score = |id: i64, units: &[&UnitRow]| -> Option<f64> {
        stored.get(&id).copied().flatten().or_else(|| {
            let s: Vec<f64> = units.iter().filter_map(|u| u.score).collect();
            (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64)
        })
    };
    let mut scored: Vec<(Option<f64>, i64, Vec<&UnitRow>)> = by_answer
        .into_iter()
        .map(|(id, units)| (response_score(id, &units), id, units))
        .collect();
    scored.sort_by(|a, b| {
        a.0.unwrap_or(f64::INFINITY)
            .total_cmp(&b.0.unwrap_or(f64::INFINITY))
            .then(a.1.cmp(&b.1))
    });
    scored.truncate(HIGHLIGHTED_ANSWERS);
    let options = Options {
        legend: true,
        ..Options::default()
    };
    scored
        .into_iter()
        .filter_map(|(score, id, units)| {
            let text = data.answer_texts.get(&id)?;
            let n = text.chars().count();
            let clamp = |x: Option<f64>| x.filter(|s| (0.0..=1.0).contains(s));
            let stored: Option<Vec<Mark>> = units
                .iter()
                .map(|u| match u.span {
                    SpanRow::Stored(span) => Some(Mark {
                        unit: Some(u.unit.clone()),
                        scorer: Some(u.scorer.clone()),
                        score: clamp(u.score),
                        span: span.filter(|&(_, e)| e <= n),
                    }),
                    SpanRow::Unknown => None,
                })
                .collect();
            let m = match stored {
                Some(m) => m,
                None => {
                    let given: Vec<serde_json::Value> = units
                        .iter()
                        .map(|u| {
                            serde_json::json!({"unit": u.unit, "score": clamp(u.score), "scorer": u.scorer})
                        })
                        .collect();
                    marks(text, &serde_json::Value::Array(given)).ok()?
                }
            };
            Some(HighlightedAnswer {
                source_key: units[0].source_key.clone(),
                prompt: units[0].prompt.clone(),
                score,
                html: render(text, &m, &options),
            })
        })
        .collect()
}

/// The 8 lowest-scored units of one scorer (ties by unit id).
fn lowest_units(rows: &[&UnitRow]) -> Vec<UnitRow> {
    let mut rows: Vec<UnitRow> = rows
        .iter()
        .filter(|u| u.score.is_some())
        .map(|u| (*u).clone())
        .collect();
    rows.sort_by(|a, b| {
        a.score
            .unwrap_or(0.0)
            .total_cmp(&b.score.unwrap_or(0.0))
            .then(a.unit_id.cmp(&b.unit_id))
    });
    rows.truncate(8);
    rows
}

/// Response level: Pearson and Spearman per (run, scorer, aggregation).
fn response_metrics(answers: &[AnswerRow]) -> Vec<ResponseMetrics> {
    let mut resp: BTreeMap<(i64, String, String), Vec<&AnswerRow>> = BTreeMap::new();
    for a in answers {
        resp.entry((a.run_id, a.scorer.clone(), a.aggregation.clone()))
            .or_default()
            .push(a);
    }
    resp.into_iter()
        .map(|((run_id, scorer, aggregation), rows)| {
            let graded: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|a| Some((a.score?, a.grade?)))
                .collect();
            let x: Vec<f64> = graded.iter().map(|p| p.0).collect();
            let y: Vec<f64> = graded.iter().map(|p| p.1).collect();
            ResponseMetrics {
                run_id,
                scorer,
                aggregation,
                n_answers: rows.len(),
                n_graded: graded.len(),
                pearson: pearson(&x, &y),
                spearman: spearman(&x, &y),
            }
        })
        .collect()
}

/// Runs grouped by granularity and the exact set of (source_table, source_key) they scored.
fn answer_sets(units: &[UnitRow]) -> BTreeMap<AnswerSet, Vec<i64>> {
    let mut per_group: BTreeMap<GroupKey, BTreeSet<(String, String)>> = BTreeMap::new();
    for u in units {
        per_group
            .entry((u.run_id, u.granularity.clone()))
            .or_default()
            .insert((
                u.source_table.clone().unwrap_or_default(),
                u.source_key.clone(),
            ));
    }
    let mut answer_sets: BTreeMap<AnswerSet, Vec<i64>> = BTreeMap::new();
    for ((run_id, gran), set) in per_group {
        answer_sets
            .entry((gran, set.into_iter().collect()))
            .or_default()
            .push(run_id);
    }
    answer_sets
}

/// AUROC vs m: one group per answer set with some evaluated unit and some run of known m.
fn ablation(
    units: &[UnitRow],
    unit_metrics_v: &[UnitMetrics],
    runs_by_id: &HashMap<i64, &Run>,
) -> Vec<AblationGroup> {
    let metric_of: HashMap<(i64, &str, &str), &UnitMetrics> = unit_metrics_v
        .iter()
        .map(|m| ((m.run_id, m.granularity.as_str(), m.scorer.as_str()), m))
        .collect();
    let mut ablation = Vec::new();
    for ((gran, set), run_ids) in &answer_sets(units) {
        let labelled = run_ids.iter().any(|r| {
            metric_of
                .iter()
                .any(|((rid, g, _), m)| rid == r && *g == gran.as_str() && m.n_evaluated > 0)
        });
        if !labelled {
            continue;
        }
        let (by_m, skipped) = runs_by_m(run_ids, runs_by_id);
        if by_m.is_empty() {
            continue;
        }
        let mut scorers: Vec<String> = Vec::new();
        for r in by_m.values() {
            for m in unit_metrics_v
                .iter()
                .filter(|m| m.run_id == *r && m.granularity == *gran)
            {
                if !scorers.contains(&m.scorer) {
                    scorers.push(m.scorer.clone());
                }
            }
        }
        let series = scorers
            .iter()
            .map(|s| {
                let pts = by_m
                    .iter()
                    .map(|(&m, &r)| {
                        let auroc = metric_of.get(&(r, gran.as_str(), s.as_str()));
                        (m, auroc.and_then(|x| x.auroc))
                    })
                    .collect();
                (s.clone(), pts)
            })
            .collect();
        let tables: BTreeSet<String> = set.iter().map(|(t, _)| t.clone()).collect();
        ablation.push(AblationGroup {
            granularity: gran.clone(),
            source_tables: tables.into_iter().collect(),
            n_answers: set.len(),
            runs: by_m.into_iter().collect(),
            skipped,
            series,
        });
    }
    ablation
}

/// m → run id (the latest run of each m), and the runs left out with why.
fn runs_by_m(
    run_ids: &[i64],
    runs_by_id: &HashMap<i64, &Run>,
) -> (BTreeMap<i64, i64>, Vec<(i64, String)>) {
    let mut by_m: BTreeMap<i64, i64> = BTreeMap::new();
    let mut skipped = Vec::new();
    for &r in run_ids {
        match runs_by_id.get(&r).and_then(|run| run.m) {
            Some(m) => {
                if let Some(old) = by_m.insert(m, r) {
                    // run ids grow: keep the later run
                    let (keep, drop) = if old > r { (old, r) } else { (r, old) };
                    by_m.insert(m, keep);
                    skipped.push((drop, format!("run {keep} has the same m = {m}")));
                }
            }
            None => skipped.push((
                r,
                "no num_samples and no uq_sample rows: m unknown".to_string(),
            )),
        }
    }
    (by_m, skipped)
}

/// The notes above the tables: what is missing, objective-only groups, out-of-range scores.
fn notes(
    data: &Data,
    objective_only: &BTreeMap<GroupKey, bool>,
    unit_metrics_v: &[UnitMetrics],
) -> Vec<String> {
    let mut notes = Vec::new();
    if data.runs.is_empty() && data.units.is_empty() {
        notes.push(format!("no scored answers in the database: {NO_SCHEMA}"));
    } else if data.units.is_empty() {
        notes.push(
            "the runs have no unit scores yet (a job may still be running: see the view uq_jobs)"
                .into(),
        );
    } else if data.units.iter().all(|u| u.label.is_none()) {
        notes.push(
            "no factual labels (uq_label rows of kind 'factual'): AUROC, AUPRC, Brier, ECE, \
             calibration, UAD and the AUROC-vs-m figures need them; the tables show n/a"
                .into(),
        );
    }
    for (key, obj) in objective_only {
        if *obj {
            notes.push(format!(
                "run {} ({}): units carry 'objective' labels, so, as the paper, only units labelled objective (1) are evaluated",
                key.0, key.1
            ));
        }
    }
    if unit_metrics_v.iter().any(|m| m.out_of_range) {
        notes.push("some scorers give scores outside [0, 1]: their Brier, ECE and reliability diagram are not shown".into());
    }
    notes
}
