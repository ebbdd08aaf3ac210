//! The AUROC-vs-m figure: runs over the same answers at the same granularity with different
//! numbers of sampled answers m, one line per scorer.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::groups::GroupKey;
use super::units::UnitMetrics;
use crate::report::load::{Run, UnitRow};

/// One scorer's AUROC per m: (scorer, [(m, AUROC)]).
pub type Series = (String, Vec<(i64, Option<f64>)>);

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
pub(super) fn ablation(
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
