//! `uqd report DB [--out DIR]`: an HTML report (index.html + SVG figures) of the scores stored
//! in the uqlite schema (sql/migrations) of DB, evaluated as the paper does:
//!
//! * unit level, per run, granularity and scorer: AUROC, AUPRC with factual units as the
//!   positive class and AUPRC with non-factual units as the positive class (score negated,
//!   label flipped, as SelfCheckGPT's NonFact AUC-PR), Brier, ECE (10 bins), the best-F1
//!   threshold (`uq_core::metrics`); labels are `uq_label` kind 'factual' (1 = factual, the
//!   latest grader as the view `uq_scored_units`). When any unit of a run and granularity has
//!   an 'objective' label, only units labelled objective (1) are evaluated, as the paper;
//! * response level: Pearson and Spearman between each scorer's response score (per
//!   aggregation) and the answer's grade (view `uq_scored_answers`: mean factual label);
//! * reliability diagrams (10 equal bins as the ECE), and for scorers with calibrated scores
//!   (column `calibrated`, option `calibration`) ECE and Brier before and after calibration with
//!   both curves on the diagram;
//! * UAD accuracy vs percentile threshold: q = 10..90, per answer keep the units whose score is
//!   at or above the q-th percentile of that answer's unit scores (`uq_core::aggregate`'s
//!   `uad_kept_accuracy` over `uad_retained`, as the daemon's `uad` op), accuracy = factual share of the
//!   kept evaluated units pooled over answers; q = 0 is the unfiltered baseline (the paper's
//!   figure and `uqd bench claims --uad`);
//! * AUROC vs the number of samples m over runs of the same answers (same source_table and
//!   source_key set, same granularity) with different `uq_run.num_samples` (NULL: the number of
//!   `uq_sample` rows of the run's answers);
//! * the latest `uqd eval` of each run and granularity (`uq_eval`, [`evals`]).
//!
//! The database is opened read-only. Every text from it is escaped; figure file names are
//! made of numbers only.

mod analyse;
mod evals;
mod figures;
mod html;
mod load;
pub mod svg;

pub use analyse::*;
pub use load::*;

use std::path::{Path, PathBuf};

/// What `report` wrote.
#[derive(Debug)]
pub struct Written {
    pub index: PathBuf,
    pub figures: Vec<PathBuf>,
    pub notes: Vec<String>,
}

/// `<DB stem>-report/` beside DB.
pub fn default_out_dir(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "uqlite".into());
    db.with_file_name(format!("{stem}-report"))
}

/// Writes the report of `db` into `out` (default [`default_out_dir`]).
pub fn report(db: &Path, out: Option<&Path>) -> Result<Written, String> {
    let data = load(db)?;
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_out_dir(db));
    let report = analyse(db.display().to_string(), data);
    write(&report, &out)
}

/// Writes index.html and the figures into `out`.
pub fn write(report: &Report, out: &Path) -> Result<Written, String> {
    std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create the report directory {}: {e}", out.display()))?;
    let figs = figures::all(report);
    let mut paths = Vec::new();
    for f in &figs {
        let p = out.join(&f.file);
        std::fs::write(&p, &f.svg).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        paths.push(p);
    }
    let index = out.join("index.html");
    std::fs::write(&index, html::page(report, &figs))
        .map_err(|e| format!("cannot write {}: {e}", index.display()))?;
    Ok(Written {
        index,
        figures: paths,
        notes: report.notes.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::analyse::uad_curve;
    use super::*;

    #[test]
    fn default_dir_is_beside_the_db() {
        assert_eq!(
            default_out_dir(Path::new("/x/y/bio.db")),
            PathBuf::from("/x/y/bio-report")
        );
        assert_eq!(
            default_out_dir(Path::new("bio.sqlite")),
            PathBuf::from("bio-report")
        );
    }

    #[test]
    fn bins_match_the_ece_edges() {
        assert_eq!(calibration_bin(0.0, 10), 0);
        assert_eq!(calibration_bin(0.1, 10), 1);
        assert_eq!(calibration_bin(1.0, 10), 9);
        let r = reliability(&[(0.05, false), (0.95, true), (0.91, false)]);
        assert_eq!(r[0].0, 1);
        assert_eq!(r[9].0, 2);
        assert!((r[9].2 - 0.5).abs() < 1e-12);
    }

    #[test]
    fn uad_zero_is_unfiltered_and_thresholds_keep_ties() {
        let answers = vec![
            vec![
                (Some(0.1), Some(false)),
                (Some(0.5), Some(true)),
                (Some(0.9), Some(true)),
                (None, Some(false)),
            ],
            // All tied (as graph scores often are): kept whole at every percentile.
            vec![
                (Some(0.2), Some(true)),
                (Some(0.2), Some(true)),
                (Some(0.2), Some(false)),
            ],
        ];
        let c = uad_curve("s", &answers);
        assert_eq!(c.kept[0], 7);
        assert_eq!(c.accuracy[0], Some(4.0 / 7.0));
        // q = 50 of [0.1, 0.5, 0.9] is 0.5: 0.5 and 0.9 are kept (≥), and the tied answer whole.
        assert_eq!(c.kept[5], 5);
        assert_eq!(c.accuracy[5], Some(4.0 / 5.0));
        // q = 90 of [0.1, 0.5, 0.9] is 0.82: 0.9 only; the tied answer still whole.
        assert_eq!(c.kept[9], 4);
        assert_eq!(c.accuracy[9], Some(3.0 / 4.0));
        for (q, &k) in UAD_PERCENTILES.iter().zip(&c.kept).skip(1) {
            assert!(
                k >= 4,
                "q = {q}: the tied answer's 3 claims and the top claim stay"
            );
        }
    }
}
