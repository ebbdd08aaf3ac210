//! Aggregate SQL functions for evaluation metrics: `uq_auroc`, `uq_auprc`, `uq_ece`,
//! `uq_brier`, `uq_pearson`, `uq_spearman`, `uq_best_threshold`, `uq_best_f1`.
//!
//! Each aggregate collects its group's rows and, at the end, calls the maths in
//! `uq_core::metrics` (nothing is re-derived here). This module only checks the arguments and
//! applies the SQL conventions (docs/reference.md, "Metric conventions"):
//! * a row whose score / label (x / y for the correlations) is NULL is skipped;
//! * labels are 0 or 1 (INTEGER, TRUE/FALSE, or REAL 0.0/1.0); anything else is an error;
//! * scores must be finite numbers (INTEGER or REAL); `uq_ece` and `uq_brier` also require
//!   them to lie in [0, 1];
//! * an undefined value (no rows, a single class, no positives, zero variance, fewer than two
//!   points) is NULL.

use rusqlite::functions::{Aggregate, Context};
use rusqlite::types::ValueRef;
use uq_core::metrics;

use crate::args::same_in_group;
use crate::glue::{guard, sql_err};

/// `uq_ece`'s number of bins when the third argument is omitted.
pub(crate) const DEFAULT_ECE_BINS: usize = 10;
/// Largest accepted `bins` (the bins are allocated up front).
pub(crate) const MAX_ECE_BINS: i64 = 1_000_000;

/// One metric aggregate (its SQL name: [`Metric::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Auroc,
    Auprc,
    Ece,
    Brier,
    Pearson,
    Spearman,
    BestThreshold,
    BestF1,
}

impl Metric {
    #[cfg(test)]
    const ALL: [Metric; 8] = [
        Metric::Auroc,
        Metric::Auprc,
        Metric::Ece,
        Metric::Brier,
        Metric::Pearson,
        Metric::Spearman,
        Metric::BestThreshold,
        Metric::BestF1,
    ];

    fn name(self) -> &'static str {
        match self {
            Metric::Auroc => "uq_auroc",
            Metric::Auprc => "uq_auprc",
            Metric::Ece => "uq_ece",
            Metric::Brier => "uq_brier",
            Metric::Pearson => "uq_pearson",
            Metric::Spearman => "uq_spearman",
            Metric::BestThreshold => "uq_best_threshold",
            Metric::BestF1 => "uq_best_f1",
        }
    }

    /// Whether the second argument is a 0/1 label (else a number, for the correlations).
    fn binary(self) -> bool {
        !matches!(self, Metric::Pearson | Metric::Spearman)
    }

    /// Whether the score must be a probability in [0, 1].
    fn probability(self) -> bool {
        matches!(self, Metric::Ece | Metric::Brier)
    }

    fn arg_names(self) -> (&'static str, &'static str) {
        if self.binary() {
            ("score", "label")
        } else {
            ("x", "y")
        }
    }

    /// Reads one row into `rows`: arguments are checked first (a bad value is an error even when
    /// the other one is NULL), then a row with a NULL is skipped.
    fn step(self, ctx: &Context<'_>, rows: &mut Rows) -> Result<(), String> {
        let f = self.name();
        if ctx.len() > 2 {
            same_in_group(f, "bins", &mut rows.bins, bins(f, ctx.get_raw(2))?)?;
        }
        let (a_name, b_name) = self.arg_names();
        let a = number(f, a_name, ctx.get_raw(0))?;
        if let (Some(s), true) = (a, self.probability()) {
            if !(0.0..=1.0).contains(&s) {
                return Err(format!(
                    "{f}: {a_name} must be a probability in [0, 1], got {s}; {f} is a calibration \
                     metric (uq_auroc, uq_auprc and uq_best_threshold accept any real score)"
                ));
            }
        }
        if self.binary() {
            let l = label(f, b_name, ctx.get_raw(1))?;
            if let (Some(s), Some(l)) = (a, l) {
                rows.a.push(s);
                rows.labels.push(l);
            }
        } else {
            let y = number(f, b_name, ctx.get_raw(1))?;
            if let (Some(x), Some(y)) = (a, y) {
                rows.a.push(x);
                rows.b.push(y);
            }
        }
        Ok(())
    }

    /// The metric over the collected rows; `None` (SQL NULL) when it is undefined.
    fn compute(self, rows: &Rows) -> Option<f64> {
        if rows.a.is_empty() {
            return None;
        }
        let (s, l) = (&rows.a[..], &rows.labels[..]);
        let one_class = || l.iter().all(|&v| v) || l.iter().all(|&v| !v);
        let v = match self {
            Metric::Auroc => metrics::auroc(s, l),
            Metric::Auprc => metrics::average_precision(s, l),
            Metric::Ece => metrics::ece(s, l, rows.bins.unwrap_or(DEFAULT_ECE_BINS)),
            Metric::Brier => metrics::brier(s, l),
            Metric::Pearson => metrics::pearson(s, &rows.b),
            Metric::Spearman => metrics::spearman(s, &rows.b),
            // A threshold needs both classes to separate (all positives would give the
            // lowest score with F1 = 1, a meaningless "threshold").
            Metric::BestThreshold if one_class() => None,
            Metric::BestF1 if one_class() => None,
            Metric::BestThreshold => metrics::best_f1_threshold(s, l).map(|(t, _)| t),
            Metric::BestF1 => metrics::best_f1_threshold(s, l).map(|(_, f1)| f1),
        }?;
        v.is_finite().then_some(v)
    }
}

/// One group's rows: scores (or x), labels (binary metrics) or y (correlations), and
/// `uq_ece`'s bins when given.
#[derive(Default, Debug)]
pub struct Rows {
    a: Vec<f64>,
    labels: Vec<bool>,
    b: Vec<f64>,
    bins: Option<usize>,
}

impl Aggregate<Rows, Option<f64>> for Metric {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Rows> {
        Ok(Rows::default())
    }

    fn step(&self, ctx: &mut Context<'_>, rows: &mut Rows) -> rusqlite::Result<()> {
        let m = *self;
        guard(m.name(), || m.step(ctx, rows).map_err(sql_err))
    }

    fn finalize(&self, _: &mut Context<'_>, rows: Option<Rows>) -> rusqlite::Result<Option<f64>> {
        let m = *self;
        guard(m.name(), || Ok(rows.and_then(|r| m.compute(&r))))
    }
}

/// SQLite storage class and a short rendering of a value, for error messages.
pub(crate) fn describe(v: ValueRef<'_>) -> String {
    fn short(b: &[u8]) -> String {
        let s = String::from_utf8_lossy(b);
        let mut t: String = s.chars().take(40).collect();
        if s.chars().count() > 40 {
            t.push('…');
        }
        t
    }
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => format!("INTEGER {i}"),
        ValueRef::Real(r) => format!("REAL {r}"),
        ValueRef::Text(t) => format!("TEXT '{}'", short(t)),
        ValueRef::Blob(b) => format!("BLOB of {} bytes", b.len()),
    }
}

/// A finite number (INTEGER or REAL); `None` for NULL.
pub(crate) fn number(f: &str, arg: &str, v: ValueRef<'_>) -> Result<Option<f64>, String> {
    let x = match v {
        ValueRef::Null => return Ok(None),
        ValueRef::Integer(i) => i as f64,
        ValueRef::Real(r) => r,
        other => {
            return Err(format!(
                "{f}: {arg} must be a number (INTEGER or REAL), got {}; pass a number \
                 (e.g. CAST({arg} AS REAL)) or NULL to skip the row",
                describe(other)
            ))
        }
    };
    if !x.is_finite() {
        return Err(format!("{f}: {arg} must be a finite number, got {x}"));
    }
    Ok(Some(x))
}

/// A label read as 0/1: `Some(Some(l))` for INTEGER 0/1 (TRUE/FALSE) or REAL 0.0/1.0,
/// `Some(None)` for NULL, `None` for any other value (each caller says what it accepts).
pub(crate) fn zero_one(v: ValueRef<'_>) -> Option<Option<bool>> {
    match v {
        ValueRef::Null => Some(None),
        ValueRef::Integer(0) => Some(Some(false)),
        ValueRef::Integer(1) => Some(Some(true)),
        ValueRef::Real(0.0) => Some(Some(false)),
        ValueRef::Real(1.0) => Some(Some(true)),
        _ => None,
    }
}

/// A 0/1 label (INTEGER 0/1, TRUE/FALSE, REAL 0.0/1.0); `None` for NULL.
pub(crate) fn label(f: &str, arg: &str, v: ValueRef<'_>) -> Result<Option<bool>, String> {
    if let Some(l) = zero_one(v) {
        return Ok(l);
    }
    match v {
        // a text label ('accurate', …) needs mapping to 0/1 in the query
        ValueRef::Text(_) => Err(format!(
            "{f}: {arg} must be 0 or 1 (or FALSE/TRUE), got {}; pass a 0/1 expression such as \
             {arg} = 'accurate' or CASE {arg} WHEN 'accurate' THEN 1 ELSE 0 END (1 for a \
             positive, e.g. a correct answer), NULL to skip the row",
            describe(v)
        )),
        other => Err(format!(
            "{f}: {arg} must be 0 or 1 (or FALSE/TRUE), got {}; pass 1 for a positive \
             (e.g. a correct answer), 0 for a negative, NULL to skip the row",
            describe(other)
        )),
    }
}

/// `uq_ece`'s `bins`: an integer in 1..=MAX_ECE_BINS (an integral REAL is accepted).
fn bins(f: &str, v: ValueRef<'_>) -> Result<usize, String> {
    let n = match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(r) if r.fract() == 0.0 && r.abs() <= 1e15 => Some(r as i64),
        _ => None,
    };
    match n {
        Some(n) if (1..=MAX_ECE_BINS).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "{f}: bins must be an integer from 1 to {MAX_ECE_BINS}, got {}; omit it for \
             {DEFAULT_ECE_BINS} bins",
            describe(v)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_zero_or_one() {
        assert_eq!(label("f", "label", ValueRef::Integer(1)), Ok(Some(true)));
        assert_eq!(label("f", "label", ValueRef::Integer(0)), Ok(Some(false)));
        assert_eq!(label("f", "label", ValueRef::Real(1.0)), Ok(Some(true)));
        assert_eq!(label("f", "label", ValueRef::Null), Ok(None));
        for bad in [
            ValueRef::Integer(2),
            ValueRef::Integer(-1),
            ValueRef::Real(0.5),
            ValueRef::Text(b"x"),
            ValueRef::Text(b"1"),
            ValueRef::Blob(b"\x01"),
        ] {
            let e = label("uq_auroc", "label", bad).unwrap_err();
            assert!(e.starts_with("uq_auroc: label must be 0 or 1"), "{e}");
        }
        let e = label("uq_auroc", "label", ValueRef::Text(b"accurate")).unwrap_err();
        assert!(e.contains("got TEXT 'accurate'"), "{e}");
        // a text label: the fix shows the mapping
        assert!(
            e.contains("label = 'accurate' or CASE label WHEN 'accurate' THEN 1 ELSE 0 END"),
            "{e}"
        );
    }

    #[test]
    fn scores_are_finite_numbers() {
        assert_eq!(number("f", "score", ValueRef::Integer(3)), Ok(Some(3.0)));
        assert_eq!(number("f", "score", ValueRef::Real(-0.5)), Ok(Some(-0.5)));
        assert_eq!(number("f", "score", ValueRef::Null), Ok(None));
        let e = number("uq_brier", "score", ValueRef::Text(b"0.5")).unwrap_err();
        assert!(e.starts_with("uq_brier: score must be a number"), "{e}");
        let e = number("f", "x", ValueRef::Real(f64::INFINITY)).unwrap_err();
        assert!(e.contains("x must be a finite number"), "{e}");
    }

    #[test]
    fn bins_are_checked() {
        assert_eq!(bins("f", ValueRef::Integer(5)), Ok(5));
        assert_eq!(bins("f", ValueRef::Real(5.0)), Ok(5));
        for bad in [
            ValueRef::Integer(0),
            ValueRef::Integer(-3),
            ValueRef::Integer(MAX_ECE_BINS + 1),
            ValueRef::Real(2.5),
            ValueRef::Real(f64::NAN),
            ValueRef::Null,
            ValueRef::Text(b"10"),
        ] {
            let e = bins("uq_ece", bad).unwrap_err();
            assert!(e.starts_with("uq_ece: bins must be an integer"), "{e}");
        }
    }

    fn rows(scores: &[f64], labels: &[bool]) -> Rows {
        Rows {
            a: scores.to_vec(),
            labels: labels.to_vec(),
            ..Rows::default()
        }
    }

    #[test]
    fn degenerate_groups_are_null() {
        let empty = Rows::default();
        for m in Metric::ALL {
            assert_eq!(m.compute(&empty), None, "{m:?}");
        }
        let pos = rows(&[0.2, 0.9], &[true, true]);
        assert_eq!(Metric::Auroc.compute(&pos), None);
        assert_eq!(Metric::BestThreshold.compute(&pos), None);
        assert_eq!(Metric::BestF1.compute(&pos), None);
        assert_eq!(Metric::Auprc.compute(&pos), Some(1.0));
        let neg = rows(&[0.2, 0.9], &[false, false]);
        assert_eq!(Metric::Auprc.compute(&neg), None);
        assert_eq!(Metric::BestThreshold.compute(&neg), None);
        let flat = Rows {
            a: vec![1.0, 2.0, 3.0],
            b: vec![5.0, 5.0, 5.0],
            ..Rows::default()
        };
        assert_eq!(Metric::Pearson.compute(&flat), None);
        assert_eq!(Metric::Spearman.compute(&flat), None);
        let one = Rows {
            a: vec![1.0],
            b: vec![2.0],
            ..Rows::default()
        };
        assert_eq!(Metric::Pearson.compute(&one), None);
    }

    #[test]
    fn computes_through_core() {
        let r = rows(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]);
        assert_eq!(Metric::Auroc.compute(&r), Some(0.75));
        assert!((Metric::Auprc.compute(&r).unwrap() - 5.0 / 6.0).abs() < 1e-12);
        // t = .8: F1 2/3; t = .4: 1/2; t = .35: TP 2, FP 1 → 4/5; t = .1: 2/3
        assert_eq!(Metric::BestThreshold.compute(&r), Some(0.35));
        assert!((Metric::BestF1.compute(&r).unwrap() - 0.8).abs() < 1e-12);
    }
}
