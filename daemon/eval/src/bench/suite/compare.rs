//! `uqd bench suite --compare A.json B.json`: two suite runs (two builds, models or settings)
//! in one table. Every figure is recomputed from the runs' unit scores, B − A, with the interval
//! of the paired difference: both runs on the same resampled answers, so the data's own noise
//! cancels. Per scorer, the pooled change (the mean over datasets of the AUROC change, each
//! dataset resampled on its own) and the verdict of the rule for defaults (docs/design.md): a
//! gain when the pooled interval lies above zero and no dataset's lies below.

use std::path::Path;

use serde_json::Value;
use uq_core::evaluation::{same_units, Figure, Fitted, Labelled, Transfer};
use uq_core::metrics::bootstrap::{Interval, Rng};

use super::data::ALPHA;
use super::table::{grid, header};
use super::units::read_units;

/// One run: its settings line, its labelled sets and its transfer keys (fit, test, scorer).
struct RunFile {
    settings: Value,
    sets: Vec<(String, String, Labelled)>,
    transfers: Vec<(String, String, String)>,
}

impl RunFile {
    fn read(path: &Path) -> Result<RunFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--compare: cannot read {}: {e}", path.display()))?;
        let mut run = RunFile {
            settings: Value::Null,
            sets: Vec::new(),
            transfers: Vec::new(),
        };
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let l: Value = serde_json::from_str(line).map_err(|e| {
                format!(
                    "--compare: {} line {}: {e}; pass files that `uqd bench suite --json FILE` \
                     wrote",
                    path.display(),
                    n + 1
                )
            })?;
            let s = |k: &str| l[k].as_str().unwrap_or_default().to_string();
            match l["suite"].as_str() {
                Some("settings") => run.settings = l.clone(),
                Some("units") => {
                    let set = read_units(&l).ok_or_else(|| {
                        format!("--compare: {} line {}: a units line without scores, labels and answers", path.display(), n + 1)
                    })?;
                    run.sets.push((s("dataset"), s("scorer"), set));
                }
                Some("transfer") => {
                    let key = (s("fit"), s("test"), s("scorer"));
                    if !run.transfers.contains(&key) {
                        run.transfers.push(key);
                    }
                }
                _ => {}
            }
        }
        if run.sets.is_empty() {
            return Err(format!(
                "--compare: {} holds no units lines: pass files that `uqd bench suite --json \
                 FILE` wrote",
                path.display()
            ));
        }
        Ok(run)
    }

    fn set(&self, dataset: &str, scorer: &str) -> Option<&Labelled> {
        self.sets
            .iter()
            .find(|x| x.0 == dataset && x.1 == scorer)
            .map(|x| &x.2)
    }

    fn describe(&self) -> String {
        let s = &self.settings;
        let t = |k: &str| match &s[k] {
            Value::Null => "default".to_string(),
            Value::String(x) => x.clone(),
            v => v.to_string(),
        };
        format!(
            "{} {} premise {} source_premise {} m {}",
            t("nli_file"),
            t("precision"),
            t("premise"),
            t("source_premise"),
            t("samples")
        )
    }
}

/// "+0.012 [+0.004, +0.020] *" (the star: the interval excludes zero), or "—".
fn delta(i: Option<Interval>) -> String {
    match i {
        Some(i) => format!(
            "{:+.3} [{:+.3}, {:+.3}]{}",
            i.estimate,
            i.low,
            i.high,
            if i.sign() != 0 { " *" } else { "" }
        ),
        None => "—".into(),
    }
}

fn value(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{x:.3}"))
}

/// The comparison table of runs `a` and `b` (B − A).
pub fn compare(a: &Path, b: &Path, resamples: usize, seed: u64) -> Result<String, String> {
    let (ra, rb) = (RunFile::read(a)?, RunFile::read(b)?);
    let mut out = format!(
        "uqd bench suite --compare: B − A, 95 % intervals of the paired difference over {resamples} \
         resamples of the answers (seed {seed}); * = the interval excludes 0\nA: {} ({})\nB: {} ({})\n\n",
        a.display(),
        ra.describe(),
        b.display(),
        rb.describe()
    );
    let paired = Paired::of(&ra, &rb, resamples, seed)?;
    out.push_str(&grid(&paired.rows));
    out.push_str(&transfers(&ra, &rb, resamples, seed));
    out.push_str(&verdicts(&paired, resamples, seed));
    if !paired.only.is_empty() {
        out.push_str(&format!("\nIn one run only: {}\n", paired.only.join("; ")));
    }
    Ok(out)
}

/// The sets both runs scored, figure by figure: the table's rows, and what the verdicts rest on.
struct Paired<'a> {
    /// Per dataset and scorer: both AUROCs and the paired change of every figure.
    rows: Vec<Vec<String>>,
    /// Per scorer: the datasets both runs scored.
    pooled: Vec<(String, Vec<(&'a Labelled, &'a Labelled)>)>,
    /// (scorer, dataset) where B's AUROC is worse.
    worse: Vec<(String, String)>,
    /// The sets of one run only.
    only: Vec<String>,
}

impl<'a> Paired<'a> {
    fn of(
        ra: &'a RunFile,
        rb: &'a RunFile,
        resamples: usize,
        seed: u64,
    ) -> Result<Paired<'a>, String> {
        let mut p = Paired {
            rows: vec![header(&[
                "dataset",
                "scorer",
                "AUROC A",
                "AUROC B",
                "Δ AUROC",
                "Δ AUC-PR",
                "Δ NonFact AUC-PR",
                "Δ NonFact* AUC-PR",
            ])],
            pooled: Vec::new(),
            worse: Vec::new(),
            only: Vec::new(),
        };
        for (dataset, scorer, sa) in &ra.sets {
            let Some(sb) = rb.set(dataset, scorer) else {
                p.only.push(format!("{dataset} {scorer} (A only)"));
                continue;
            };
            same_units(sa, sb).map_err(|e| format!("--compare: {dataset}, {scorer}: {e}"))?;
            let mut row = vec![
                dataset.clone(),
                scorer.clone(),
                value(Figure::Auroc.of(sa, &sa.clusters().all())),
                value(Figure::Auroc.of(sb, &sb.clusters().all())),
            ];
            for f in Figure::ALL.into_iter().chain([Figure::NonfactStarAucPr]) {
                let d = f.paired(sa, sb, resamples, seed)?;
                if f == Figure::Auroc && d.is_some_and(|d| d.sign() < 0) {
                    p.worse.push((scorer.clone(), dataset.clone()));
                }
                row.push(delta(d));
            }
            p.rows.push(row);
            match p.pooled.iter_mut().find(|x| &x.0 == scorer) {
                Some(x) => x.1.push((sa, sb)),
                None => p.pooled.push((scorer.clone(), vec![(sa, sb)])),
            }
        }
        for (dataset, scorer, _) in &rb.sets {
            if ra.set(dataset, scorer).is_none() {
                p.only.push(format!("{dataset} {scorer} (B only)"));
            }
        }
        Ok(p)
    }
}

/// The transfer figures of A's pairs of files that both runs scored: the change of ECE after
/// Platt, conformal coverage and kept share (none: "").
fn transfers(ra: &RunFile, rb: &RunFile, resamples: usize, seed: u64) -> String {
    let mut rows = vec![header(&[
        "fit → test",
        "scorer",
        "Δ ECE Platt",
        "Δ conformal coverage",
        "Δ kept share",
    ])];
    for (fit, test, scorer) in &ra.transfers {
        let (Some(fa), Some(ta), Some(fb), Some(tb)) = (
            ra.set(fit, scorer),
            ra.set(test, scorer),
            rb.set(fit, scorer),
            rb.set(test, scorer),
        ) else {
            continue;
        };
        let (xa, xb) = (Fitted::on(fa, ALPHA), Fitted::on(fb, ALPHA));
        let mut row = vec![format!("{fit} → {test}"), scorer.clone()];
        for t in [
            Transfer::EcePlatt,
            Transfer::ConformalCoverage,
            Transfer::ConformalKept,
        ] {
            let d = uq_core::metrics::bootstrap::paired(
                &ta.clusters(),
                resamples,
                seed,
                |i| t.of(&xb, tb, i),
                |i| t.of(&xa, ta, i),
            );
            row.push(delta(d));
        }
        rows.push(row);
    }
    if rows.len() == 1 {
        return String::new();
    }
    format!(
        "\nFitted on one file, tested on the other (alpha {ALPHA}; lower ECE is better)\n{}",
        grid(&rows)
    )
}

/// Per scorer: the pooled AUROC change and the verdict of the rule for defaults.
fn verdicts(paired: &Paired, resamples: usize, seed: u64) -> String {
    let mut out = String::from(
        "\nPooled AUROC change per scorer (mean over its datasets) and the rule for defaults\n",
    );
    let mut rows = vec![header(&["scorer", "datasets", "Δ AUROC pooled", "verdict"])];
    for (scorer, sets) in &paired.pooled {
        let p = pooled_auroc(sets, resamples, seed);
        let worse_here: Vec<&str> = paired
            .worse
            .iter()
            .filter(|w| &w.0 == scorer)
            .map(|w| w.1.as_str())
            .collect();
        let verdict = match p.map(|p| p.sign()) {
            Some(1) if worse_here.is_empty() => "B better: the rule allows the change".to_string(),
            Some(1) => format!(
                "B better pooled, worse on {}: no change",
                worse_here.join(", ")
            ),
            Some(-1) => "B worse".to_string(),
            _ if !worse_here.is_empty() => format!("B worse on {}", worse_here.join(", ")),
            _ => "no difference shown: no change".to_string(),
        };
        rows.push(vec![
            scorer.clone(),
            sets.len().to_string(),
            delta(p),
            verdict,
        ]);
    }
    out.push_str(&grid(&rows));
    out
}

/// The mean over datasets of B's AUROC − A's, each dataset's answers resampled on their own.
fn pooled_auroc(sets: &[(&Labelled, &Labelled)], resamples: usize, seed: u64) -> Option<Interval> {
    let clusters: Vec<_> = sets.iter().map(|(a, _)| a.clusters()).collect();
    let diff = |k: usize, idx: &[usize]| {
        let (a, b) = sets[k];
        Some(Figure::Auroc.of(b, idx)? - Figure::Auroc.of(a, idx)?)
    };
    let mean = |v: Vec<Option<f64>>| -> Option<f64> {
        let v: Vec<f64> = v.into_iter().collect::<Option<_>>()?;
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let estimate = mean(
        clusters
            .iter()
            .enumerate()
            .map(|(k, c)| diff(k, &c.all()))
            .collect(),
    )?;
    let mut rng = Rng(seed);
    let values: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            mean(
                clusters
                    .iter()
                    .enumerate()
                    .map(|(k, c)| diff(k, &c.resample(&mut rng)))
                    .collect(),
            )
        })
        .collect();
    Interval::percentile(estimate, &values)
}
