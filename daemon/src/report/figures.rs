//! The report's figures, built with the primitives of `svg.rs`. File names are made of
//! numbers only (never of scorer names or other text from the database).

use super::analyse::{
    reliability, AblationGroup, Report, UnitMetrics, CALIBRATION_BINS, UAD_PERCENTILES,
};
use super::svg::{color, fmt3, nice_ticks, tick_label, Chart, LegendItem};

/// Which section of the page a figure belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Calibration,
    Uad,
    Ablation,
}

/// One SVG file.
#[derive(Debug, Clone)]
pub struct Figure {
    pub section: Section,
    pub file: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

const GREY: &str = "#777777";

pub fn all(report: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    calibration(report, &mut out);
    uad(report, &mut out);
    ablation(report, &mut out);
    out
}

/// Lower and upper y limits at multiples of 0.1 around `values`, within [0, 1] and
/// including `always`.
fn unit_range(values: impl Iterator<Item = f64>, always: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values
        .chain(always.iter().copied())
        .filter(|v| v.is_finite())
    {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let mut lo = ((lo * 10.0 - 1e-9).floor() / 10.0).max(0.0);
    let mut hi = ((hi * 10.0 + 1e-9).ceil() / 10.0).min(1.0);
    if hi - lo < 0.2 {
        lo = (lo - 0.1).max(0.0);
        hi = (hi + 0.1).min(1.0);
    }
    (lo, hi)
}

/// A reliability curve: the bins' (mean score, factual rate), empty bins left out.
fn reliability_points(pairs: &[(f64, bool)]) -> Vec<(f64, f64)> {
    reliability(pairs)
        .iter()
        .filter(|b| b.0 > 0)
        .map(|b| (b.1, b.2))
        .collect()
}

/// One reliability diagram per scorer with evaluated units in [0, 1] or calibrated scores.
fn calibration(report: &Report, out: &mut Vec<Figure>) {
    for (i, m) in report.unit_metrics.iter().enumerate() {
        if m.n_evaluated == 0 || (m.out_of_range && m.calibrated.is_none()) {
            continue;
        }
        out.push(reliability_diagram(i, m));
    }
}

/// The reliability diagram of one scorer: bars of units per bin, the diagonal, the raw
/// (scores in [0, 1]) and calibrated curves.
fn reliability_diagram(i: usize, m: &UnitMetrics) -> Figure {
    let cal = m.calibrated.as_ref();
    let bins = reliability(if m.out_of_range {
        cal.map_or(&m.pairs[..], |c| &c.pairs[..])
    } else {
        &m.pairs
    });
    let title = format!(
        "Reliability: {} (run {}, {})",
        m.scorer, m.run_id, m.granularity
    );
    let mut c = Chart::new(520.0, 440.0, (0.0, 1.0), (0.0, 1.0), 0.0).with_legend_below();
    let max_count = bins.iter().map(|b| b.0).max().unwrap_or(1).max(1) as f64;
    let w = 1.0 / bins.len() as f64;
    for (b, &(count, _, _)) in bins.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let h = 0.25 * count as f64 / max_count;
        let x0 = b as f64 * w;
        c.bar(x0 + 0.08 * w, x0 + 0.92 * w, 0.0, h, GREY, 0.28);
        c.text_at(x0 + w / 2.0, h, -3.0, &count.to_string(), 10.0, "#444");
    }
    c.line(
        &[(0.0, Some(0.0)), (1.0, Some(1.0))],
        GREY,
        Some("5 4"),
        1.2,
    );
    let calibrated_name = format!("{} calibrated", m.scorer);
    reliability_curves(&mut c, m, &calibrated_name);
    let ticks = nice_ticks(0.0, 1.0, 5);
    c.axes(
        &title,
        "mean confidence score in bin",
        "observed factual rate",
        &ticks,
        &ticks,
        None,
    );
    reliability_legend(&mut c, m, calibrated_name);
    Figure {
        section: Section::Calibration,
        file: format!("calibration-{i}.svg"),
        caption: format!(
            "{} equal-width bins; each point is a bin's mean score (x) and its share of factual units (y); bars and numbers: units per bin{}.",
            CALIBRATION_BINS,
            if cal.is_some() {
                " (of the raw scores). The second line: the same units' calibrated scores (the run's calibration model)"
            } else {
                ""
            }
        ),
        title,
        svg: c.finish(),
    }
}

/// The raw curve (scores in [0, 1]), the calibrated one, and the ECE and Brier note.
fn reliability_curves(c: &mut Chart, m: &UnitMetrics, calibrated_name: &str) {
    if !m.out_of_range {
        let pts = reliability_points(&m.pairs);
        let line: Vec<(f64, Option<f64>)> = pts.iter().map(|&(x, y)| (x, Some(y))).collect();
        c.line(&line, color(0), None, 2.0);
        c.points(&pts, color(0), 4.0, &m.scorer);
    }
    if let Some(cal) = &m.calibrated {
        let pts = reliability_points(&cal.pairs);
        let line: Vec<(f64, Option<f64>)> = pts.iter().map(|&(x, y)| (x, Some(y))).collect();
        c.line(&line, color(1), None, 2.0);
        c.points(&pts, color(1), 4.0, calibrated_name);
        c.note(&format!(
            "ECE {} → {} · Brier {} → {} · {} units",
            fmt3(cal.ece_raw),
            fmt3(cal.ece),
            fmt3(cal.brier_raw),
            fmt3(cal.brier),
            cal.n_evaluated
        ));
    } else {
        c.note(&format!(
            "ECE {} · Brier {} · {} units",
            fmt3(m.ece),
            fmt3(m.brier),
            m.n_evaluated
        ));
    }
}

/// The legend of a reliability diagram.
fn reliability_legend(c: &mut Chart, m: &UnitMetrics, calibrated_name: String) {
    if !m.out_of_range {
        c.legend_item(LegendItem {
            color: color(0).into(),
            dash: None,
            marker: true,
            name: m.scorer.clone(),
        });
    }
    if m.calibrated.is_some() {
        c.legend_item(LegendItem {
            color: color(1).into(),
            dash: None,
            marker: true,
            name: calibrated_name,
        });
    }
    c.legend_item(LegendItem {
        color: GREY.into(),
        dash: Some("5 4"),
        marker: false,
        name: "ideal (diagonal)".into(),
    });
    c.legend_item(LegendItem {
        color: "#bbbbbb".into(),
        dash: None,
        marker: false,
        name: "units per bin".into(),
    });
}

fn uad(report: &Report, out: &mut Vec<Figure>) {
    for (i, g) in report.uad.iter().enumerate() {
        let title = format!("UAD accuracy vs threshold (run {}, {})", g.key.0, g.key.1);
        let (lo, hi) = unit_range(
            g.curves
                .iter()
                .flat_map(|c| c.accuracy.iter().flatten().copied()),
            &g.baseline.into_iter().collect::<Vec<_>>(),
        );
        let mut c = Chart::new(680.0, 420.0, (-4.0, 94.0), (lo, hi), 210.0);
        if let Some(b) = g.baseline {
            c.line(&[(-4.0, Some(b)), (94.0, Some(b))], GREY, Some("6 4"), 1.5);
        }
        for (k, curve) in g.curves.iter().enumerate() {
            let pts: Vec<(f64, Option<f64>)> = UAD_PERCENTILES
                .iter()
                .zip(&curve.accuracy)
                .map(|(&q, &a)| (f64::from(q), a))
                .collect();
            c.line(&pts, color(k), None, 2.0);
            let dots: Vec<(f64, f64)> = pts.iter().filter_map(|&(x, y)| Some((x, y?))).collect();
            c.points(&dots, color(k), 3.5, &curve.scorer);
            c.legend_item(LegendItem {
                color: color(k).into(),
                dash: None,
                marker: true,
                name: curve.scorer.clone(),
            });
        }
        c.legend_item(LegendItem {
            color: GREY.into(),
            dash: Some("6 4"),
            marker: false,
            name: format!(
                "baseline {}",
                g.baseline.map(tick_label).unwrap_or_default()
            ),
        });
        let xt: Vec<f64> = UAD_PERCENTILES.iter().map(|&q| f64::from(q)).collect();
        c.axes(
            &title,
            "percentile threshold q of each answer's unit scores (0 = nothing filtered)",
            "accuracy of kept units",
            &xt,
            &nice_ticks(lo, hi, 5),
            None,
        );
        out.push(Figure {
            section: Section::Uad,
            file: format!("uad-{i}.svg"),
            caption: format!(
                "Per answer, units with score ≥ the q-th percentile of that answer's scores are kept; accuracy = factual share of the kept labelled{} units over all answers ({} labelled units). Dashed: the baseline accuracy with nothing filtered.",
                if g.objective_only { " objective" } else { "" },
                g.n_labelled
            ),
            title,
            svg: c.finish(),
        });
    }
}

fn ablation(report: &Report, out: &mut Vec<Figure>) {
    for (i, g) in report.ablation.iter().enumerate() {
        let ms: Vec<f64> = g.runs.iter().map(|&(m, _)| m as f64).collect();
        let (mlo, mhi) = (ms[0], ms[ms.len() - 1]);
        let pad = ((mhi - mlo) * 0.06).max(0.5);
        let (lo, hi) = unit_range(
            g.series.iter().flat_map(|s| s.1.iter().filter_map(|p| p.1)),
            &[0.5],
        );
        let title = format!(
            "AUROC vs number of samples m ({}, {} answers of {})",
            g.granularity,
            g.n_answers,
            g.source_tables.join(", ")
        );
        let mut c = Chart::new(680.0, 420.0, (mlo - pad, mhi + pad), (lo, hi), 210.0);
        c.line(
            &[(mlo - pad, Some(0.5)), (mhi + pad, Some(0.5))],
            GREY,
            Some("3 4"),
            1.0,
        );
        for (k, (scorer, pts)) in g.series.iter().enumerate() {
            let line: Vec<(f64, Option<f64>)> = pts.iter().map(|&(m, a)| (m as f64, a)).collect();
            c.line(&line, color(k), None, 2.0);
            let dots: Vec<(f64, f64)> = line.iter().filter_map(|&(x, y)| Some((x, y?))).collect();
            c.points(&dots, color(k), 4.0, scorer);
            c.legend_item(LegendItem {
                color: color(k).into(),
                dash: None,
                marker: true,
                name: scorer.clone(),
            });
        }
        c.legend_item(LegendItem {
            color: GREY.into(),
            dash: Some("3 4"),
            marker: false,
            name: "random (0.5)".into(),
        });
        if g.runs.len() == 1 {
            c.note(
                "one m only: more runs with other num_samples over the same answers fill the curve",
            );
        }
        let labels: Vec<String> = g
            .runs
            .iter()
            .map(|&(m, r)| format!("{m} (run {r})"))
            .collect();
        c.axes(
            &title,
            "m, sampled answers per answer",
            "unit-level AUROC",
            &ms,
            &nice_ticks(lo, hi, 5),
            Some(&labels),
        );
        out.push(Figure {
            section: Section::Ablation,
            file: format!("ablation-{i}.svg"),
            title,
            caption: ablation_caption(g),
            svg: c.finish(),
        });
    }
}

/// The caption of an AUROC-vs-m figure: its runs, and those left out.
fn ablation_caption(g: &AblationGroup) -> String {
    let mut caption = format!(
        "Runs over the same {} answers at {} granularity, one per m: {}.",
        g.n_answers,
        g.granularity,
        g.runs
            .iter()
            .map(|(m, r)| format!("m = {m}: run {r}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if g.runs.len() == 1 {
        caption.push_str(" Only one m so far: score the same answers again with other `num_samples` (new runs) to fill the curve.");
    }
    for (r, why) in &g.skipped {
        caption.push_str(&format!(" Run {r} left out: {why}."));
    }
    caption
}
