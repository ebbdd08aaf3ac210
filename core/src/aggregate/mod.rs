//! Stage 3 of the pipeline: response-level aggregation A: [0,1]* → [0,1] (paper §3.4),
//! and the claim filter of uncertainty-aware decoding (UAD, §3.4, in [`uad`]).

use std::fmt;

pub mod sentence_filter;
pub mod uad;

pub use uad::{
    keep_at_least, percentile, uad_kept, uad_kept_accuracy, uad_retained, uad_threshold,
    DEFAULT_CUT, DEFAULT_UAD_THRESHOLD,
};

/// Aggregation operator over the unit scores of one response (§3.4: averaging is the
/// primary operator; minimum, geometric mean and rank-weighted average the alternatives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Aggregation {
    /// A_avg(y) = (1/|δ(y)|) Σ_s c(s).
    #[default]
    Mean,
    /// min_s c(s).
    Min,
    /// exp((1/n) Σ ln c(s)); 0 when any c(s) is 0.
    GeometricMean,
    /// Σ_k w_k c_(k) / Σ_k w_k with c_(1) ≤ … ≤ c_(n) and w_k = n − k + 1.
    RankWeighted,
}

impl Aggregation {
    pub const ALL: &'static [Aggregation] = &[
        Aggregation::Mean,
        Aggregation::Min,
        Aggregation::GeometricMean,
        Aggregation::RankWeighted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Mean => "mean",
            Aggregation::Min => "min",
            Aggregation::GeometricMean => "geometric_mean",
            Aggregation::RankWeighted => "rank_weighted",
        }
    }

    /// Parses `mean`, `min`, `geometric_mean` (aliases `geometric`, `gmean`) or
    /// `rank_weighted`, case-insensitive and trimmed.
    pub fn parse(name: &str) -> Result<Aggregation, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "mean" => Ok(Aggregation::Mean),
            "min" => Ok(Aggregation::Min),
            "geometric_mean" | "geometric" | "gmean" => Ok(Aggregation::GeometricMean),
            "rank_weighted" => Ok(Aggregation::RankWeighted),
            _ => Err(format!(
                "unknown aggregation {name:?}: valid aggregations are {}",
                Aggregation::ALL
                    .iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for Aggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Aggregates unit scores into one response score. NaN scores are skipped (as numpy's
/// `nanmean`); `None` when no non-NaN score is left (no units → SQL NULL).
pub fn aggregate(scores: &[f64], a: Aggregation) -> Option<f64> {
    let mut v: Vec<f64> = scores.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    Some(match a {
        Aggregation::Mean => v.iter().sum::<f64>() / n,
        Aggregation::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
        Aggregation::GeometricMean => {
            if v.iter().any(|&x| x <= 0.0) {
                0.0
            } else {
                (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
            }
        }
        Aggregation::RankWeighted => {
            v.sort_by(f64::total_cmp);
            let len = v.len();
            // k is 1-based: w_k = n − k + 1, so index i (0-based) weighs n − i.
            let num: f64 = v
                .iter()
                .enumerate()
                .map(|(i, x)| (len - i) as f64 * x)
                .sum();
            let den = (len * (len + 1) / 2) as f64;
            num / den
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn parse_names() {
        for a in Aggregation::ALL {
            assert_eq!(Aggregation::parse(a.as_str()), Ok(*a));
            assert_eq!(a.to_string(), a.as_str());
        }
        assert_eq!(
            Aggregation::parse(" GMean "),
            Ok(Aggregation::GeometricMean)
        );
        assert_eq!(
            Aggregation::parse("geometric"),
            Ok(Aggregation::GeometricMean)
        );
        let e = Aggregation::parse("median").unwrap_err();
        assert!(
            e.contains("\"median\"") && e.contains("rank_weighted") && e.contains("geometric_mean"),
            "{e}"
        );
        assert_eq!(Aggregation::default(), Aggregation::Mean);
    }

    #[test]
    fn hand_computed() {
        let s = [0.9, 0.5, 0.7];
        // mean: 2.1/3 = 0.7
        assert!(close(aggregate(&s, Aggregation::Mean), 0.7));
        assert!(close(aggregate(&s, Aggregation::Min), 0.5));
        // geometric: (0.9·0.5·0.7)^(1/3) = 0.315^(1/3) = 0.680409... (0.6804³ = 0.314990)
        assert!(close(
            aggregate(&s, Aggregation::GeometricMean),
            0.315f64.powf(1.0 / 3.0)
        ));
        assert!(
            (aggregate(&s, Aggregation::GeometricMean).unwrap_or(0.0) - 0.6804092).abs() < 1e-6
        );
        // rank-weighted: sorted 0.5, 0.7, 0.9 with weights 3, 2, 1:
        // (1.5 + 1.4 + 0.9) / 6 = 3.8/6 = 0.6333...
        assert!(close(aggregate(&s, Aggregation::RankWeighted), 3.8 / 6.0));
    }

    #[test]
    fn rank_weighted_four_units() {
        // sorted 0.1, 0.2, 0.4, 0.8, weights 4, 3, 2, 1:
        // (0.4 + 0.6 + 0.8 + 0.8) / 10 = 2.6/10 = 0.26
        assert!(close(
            aggregate(&[0.8, 0.1, 0.4, 0.2], Aggregation::RankWeighted),
            0.26
        ));
        // single unit: every operator returns it
        for a in Aggregation::ALL {
            assert!(close(aggregate(&[0.42], *a), 0.42));
        }
    }

    #[test]
    fn geometric_with_zero() {
        assert_eq!(
            aggregate(&[0.9, 0.0, 0.7], Aggregation::GeometricMean),
            Some(0.0)
        );
        // 0.25·1 → sqrt = 0.5
        assert!(close(
            aggregate(&[0.25, 1.0], Aggregation::GeometricMean),
            0.5
        ));
    }

    #[test]
    fn empty_and_nan() {
        for a in Aggregation::ALL {
            assert_eq!(aggregate(&[], *a), None);
            assert_eq!(aggregate(&[f64::NAN, f64::NAN], *a), None);
        }
        // NaN skipped: mean of 0.2, 0.6 = 0.4
        assert!(close(
            aggregate(&[0.2, f64::NAN, 0.6], Aggregation::Mean),
            0.4
        ));
        assert!(close(
            aggregate(&[0.2, f64::NAN, 0.6], Aggregation::Min),
            0.2
        ));
        // rank-weighted on 0.2, 0.6: (2·0.2 + 1·0.6)/3 = 1/3
        assert!(close(
            aggregate(&[f64::NAN, 0.6, 0.2], Aggregation::RankWeighted),
            1.0 / 3.0
        ));
    }
}
