//! Conformal factuality: a UAD threshold that comes with a guarantee (Mohri & Hashimoto 2024,
//! "Language Models with Conformal Factuality Guarantees", ICML 2024, §3 and §4).
//!
//! UAD keeps the claims of an answer whose score is at or above a threshold τ
//! ([`crate::aggregate::uad::uad_retained`]: kept ⇔ score ≥ τ, a NaN score never). Split
//! conformal prediction picks τ from labelled calibration answers so that, for a new answer
//! exchangeable with them,
//!
//! P(every kept claim of the new answer is true) ≥ 1 − α.
//!
//! **Nonconformity.** Answer i's score r_i is the smallest threshold at which its kept claims
//! are all true (the paper's r(x, y*) = inf{τ : every claim kept at τ is true}, their eq. 3).
//! With kept ⇔ score ≥ τ, a threshold equal to a false claim's score keeps it, so r_i is the
//! smallest float above the largest score of the answer's false claims (`f64::next_up`): a
//! false claim and every claim tied with it are removed at r_i. An answer with no false claim
//! (or no claim at all) is safe at any threshold: r_i = 0, the lowest claim score (scores lie
//! in [0, 1]).
//!
//! **Threshold.** τ̂ = the k-th smallest of r_1 … r_n, k = ⌈(n + 1)(1 − α)⌉ (the paper's
//! Theorem 3.1; Angelopoulos & Bates 2021, §1). Then P(r_{n+1} ≤ τ̂) ≥ k / (n + 1) ≥ 1 − α
//! for any exchangeable r (ties included), and r_{n+1} ≤ τ̂ means every kept claim of answer
//! n + 1 is true. When the r are distinct (no ties) the coverage is also at most
//! 1 − α + 1/(n + 1). k > n (fewer than 1/α − 1 answers) cannot be met: an error.
//!
//! **Second mode, a share of false claims** (the paper's §4, "partial" factuality): with β,
//! r_i is the smallest threshold from which on the false share among the kept claims stays
//! ≤ β (the share is not monotone in τ, so every higher threshold must satisfy it too, which
//! keeps the sets nested and the guarantee exact): P(false kept / kept ≤ β) ≥ 1 − α, no kept
//! claim counting as share 0. β = 0 is the first mode.
//!
//! Claims with a NaN score (NULL: the scorer left them open) are never kept by UAD and so never
//! change r_i; they count in `claims`. Unlabelled claims are left out by the caller and counted
//! in `null_labels`.
//!
//! A model is JSON: `{"method":"conformal","threshold":τ̂,"alpha":α,["beta":β,]"answers":n,
//! "claims":m,"null_labels":u[,"fitted_on":{…}]}` (`fitted_on` as a calibration model's,
//! [`FittedOn`]).

use serde_json::{json, Map, Value};

use super::adapt::FittedOn;
use crate::json::type_name;

/// Guards ⌈(n + 1)(1 − α)⌉ against a product that rounding put a hair above an integer.
const EPS: f64 = 1e-9;

/// The method name of a conformal model.
pub const METHOD: &str = "conformal";

/// The keys of a conformal model's JSON.
pub const KEYS: [&str; 8] = [
    "method",
    "threshold",
    "alpha",
    "beta",
    "answers",
    "claims",
    "null_labels",
    "fitted_on",
];

/// A fitted conformal threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Conformal {
    /// τ̂: UAD keeps claims with score ≥ this.
    pub threshold: f64,
    /// α: the guarantee holds with probability ≥ 1 − α.
    pub alpha: f64,
    /// β of the second mode (false share among kept claims ≤ β); `None` = every kept claim
    /// true.
    pub beta: Option<f64>,
    /// n: labelled calibration answers.
    pub answers: usize,
    /// Labelled claims of those answers.
    pub claims: usize,
    /// Claims left out for a NULL label.
    pub null_labels: usize,
    /// What the scores were made with; `None` when not recorded.
    pub fitted_on: Option<FittedOn>,
}

/// k = ⌈(n + 1)(1 − α)⌉: the rank (1-based) of the threshold among the n nonconformity scores.
pub fn rank(n: usize, alpha: f64) -> usize {
    ((n as f64 + 1.0) * (1.0 - alpha) - EPS).ceil().max(1.0) as usize
}

/// The fewest labelled answers a fit at level α needs: the smallest n with
/// ⌈(n + 1)(1 − α)⌉ ≤ n, i.e. n ≥ 1/α − 1.
pub fn min_answers(alpha: f64) -> usize {
    let mut n = ((1.0 / alpha - 1.0 - EPS).ceil().max(1.0)) as usize;
    while rank(n, alpha) > n {
        n += 1;
    }
    while n > 1 && rank(n - 1, alpha) < n {
        n -= 1;
    }
    n
}

/// Answer i's nonconformity score r_i (module doc): the smallest threshold from which on the
/// share of false claims among the kept ones (kept ⇔ score ≥ threshold) is at most `beta`
/// (0: no false claim kept). `claims` are (score, true?) pairs; NaN scores are never kept.
/// 0 when every threshold is safe.
pub fn nonconformity(claims: &[(f64, bool)], beta: f64) -> f64 {
    let mut scored: Vec<(f64, bool)> = claims
        .iter()
        .copied()
        .filter(|(s, _)| !s.is_nan())
        .collect();
    // Highest score first: walking down, each group of tied scores joins the kept set at once.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut kept, mut false_kept) = (0usize, 0usize);
    let mut i = 0;
    while i < scored.len() {
        let s = scored[i].0;
        while i < scored.len() && scored[i].0 == s {
            kept += 1;
            false_kept += usize::from(!scored[i].1);
            i += 1;
        }
        // Thresholds in (next lower score, s] keep exactly the claims scoring ≥ s.
        if false_kept as f64 > beta * kept as f64 {
            // The highest threshold that fails: r is the smallest float above it.
            return s.next_up();
        }
    }
    0.0
}

fn check_level(name: &str, x: f64, example: &str, closed_zero: bool) -> Result<(), String> {
    let ok = if closed_zero {
        (0.0..1.0).contains(&x)
    } else {
        x > 0.0 && x < 1.0
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name} must be a number {} 1, got {x}: e.g. {example}",
            if closed_zero {
                "from 0 up to, not including,"
            } else {
                "strictly between 0 and"
            }
        ))
    }
}

impl Conformal {
    /// Fits τ̂ on `answers`, each the (score, true?) pairs of its labelled claims, at level
    /// `alpha` (and `beta` for the second mode); `null_labels` counts the claims the caller left
    /// out for a NULL label. `alpha` / `beta` name the arguments in errors. Scores must be
    /// claim scores in [0, 1] or NaN (unscored).
    pub fn fit(
        answers: &[Vec<(f64, bool)>],
        alpha: f64,
        beta: Option<f64>,
        null_labels: usize,
    ) -> Result<Conformal, String> {
        check_level("alpha", alpha, "0.1 for a 90 % guarantee", false)?;
        if let Some(b) = beta {
            check_level(
                "beta",
                b,
                "0.2 for at most a fifth of the kept claims false",
                true,
            )?;
        }
        if let Some(s) = answers
            .iter()
            .flatten()
            .map(|c| c.0)
            .find(|s| !s.is_nan() && !(0.0..=1.0).contains(s))
        {
            return Err(format!(
                "score must be a claim score in [0, 1] (as UAD filters them), got {s}"
            ));
        }
        let n = answers.len();
        let k = rank(n, alpha);
        if k > n {
            return Err(format!(
                "too few labelled answers: alpha = {alpha} needs at least {} (⌈(n + 1)(1 − \
                 alpha)⌉ ≤ n), got {n}{}; label more answers or raise alpha",
                min_answers(alpha),
                if null_labels > 0 {
                    format!(" ({null_labels} claims with a NULL label left out)")
                } else {
                    String::new()
                }
            ));
        }
        let mut r: Vec<f64> = answers
            .iter()
            .map(|a| nonconformity(a, beta.unwrap_or(0.0)))
            .collect();
        r.sort_by(f64::total_cmp);
        Ok(Conformal {
            threshold: r[k - 1],
            alpha,
            beta,
            answers: n,
            claims: answers.iter().map(Vec::len).sum(),
            null_labels,
            fitted_on: None,
        })
    }

    /// The claims kept at τ̂ (UAD's rule, score ≥ τ̂; NaN never).
    pub fn keep(&self, scores: &[f64]) -> Vec<bool> {
        crate::aggregate::uad::uad_retained(scores, self.threshold)
    }

    /// The guarantee in words, for notes and `uq_debug()`.
    pub fn guarantee(&self) -> String {
        let level = format_level(1.0 - self.alpha);
        let what = match self.beta {
            None => "P(all kept claims true)".to_string(),
            Some(b) => format!("P(false share of kept claims ≤ {})", format_level(b)),
        };
        format!(
            "conformal: {what} ≥ {level} for answers exchangeable with the {} calibration \
             answers (threshold {})",
            self.answers, self.threshold
        )
    }

    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("method".into(), json!(METHOD));
        o.insert("threshold".into(), json!(self.threshold));
        o.insert("alpha".into(), json!(self.alpha));
        if let Some(b) = self.beta {
            o.insert("beta".into(), json!(b));
        }
        o.insert("answers".into(), json!(self.answers));
        o.insert("claims".into(), json!(self.claims));
        o.insert("null_labels".into(), json!(self.null_labels));
        if let Some(f) = &self.fitted_on {
            o.insert("fitted_on".into(), f.to_json());
        }
        Value::Object(o)
    }

    /// Reads the JSON of [`Conformal::to_json`] (`what` names it in errors): `method`,
    /// `threshold`, `alpha` and `answers` required.
    pub fn from_json(v: &Value, what: &str) -> Result<Conformal, String> {
        let fix = "pass the JSON that uq_fit_conformal returns";
        let o = v
            .as_object()
            .ok_or_else(|| format!("{what} must be a JSON object, got {}: {fix}", type_name(v)))?;
        match o.get("method").and_then(Value::as_str) {
            Some(METHOD) => {}
            Some(m) => {
                return Err(format!(
                    "{what}.method must be \"conformal\", got {m:?} (a calibration model goes \
                     in option calibration): {fix}"
                ))
            }
            None => return Err(format!("{what}.method must be \"conformal\": {fix}")),
        }
        if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{what} has unknown key {k:?}: its keys are {}",
                KEYS.join(", ")
            ));
        }
        let num = |k: &str| -> Result<f64, String> {
            o.get(k)
                .and_then(Value::as_f64)
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{what}.{k} must be a finite number: {fix}"))
        };
        let count = |k: &str, required: bool| -> Result<usize, String> {
            match o.get(k) {
                None | Some(Value::Null) if !required => Ok(0),
                Some(v) if v.is_u64() => Ok(v.as_u64().unwrap_or(0) as usize),
                _ if required => Err(format!(
                    "{what}.{k} must be the number of calibration answers the model was fitted \
                     on (a positive integer): {fix}"
                )),
                _ => Err(format!("{what}.{k} must be a non-negative integer: {fix}")),
            }
        };
        let threshold = num("threshold")?;
        let alpha = num("alpha")?;
        check_level(&format!("{what}.alpha"), alpha, "0.1", false)?;
        let beta = match o.get("beta") {
            None | Some(Value::Null) => None,
            Some(_) => {
                let b = num("beta")?;
                check_level(&format!("{what}.beta"), b, "0.2", true)?;
                Some(b)
            }
        };
        let answers = count("answers", true)?;
        if answers == 0 {
            return Err(format!(
                "{what}.answers must be the number of calibration answers the model was fitted \
                 on (a positive integer): {fix}"
            ));
        }
        let fitted_on = match o.get("fitted_on") {
            None | Some(Value::Null) => None,
            Some(f) => Some(FittedOn::from_json(f, &format!("{what}.fitted_on"))?),
        };
        Ok(Conformal {
            threshold,
            alpha,
            beta,
            answers,
            claims: count("claims", false)?,
            null_labels: count("null_labels", false)?,
            fitted_on,
        })
    }
}

/// 0.9 → "0.9", 0.95 → "0.95": a level without float noise.
fn format_level(x: f64) -> String {
    let s = format!("{:.6}", x);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(claims: &[(f64, u8)]) -> Vec<(f64, bool)> {
        claims.iter().map(|&(s, l)| (s, l == 1)).collect()
    }

    #[test]
    fn nonconformity_removes_the_highest_false_claim_and_its_ties() {
        // False claims at 0.4 and 0.7: r is just above 0.7.
        let a = answer(&[(0.9, 1), (0.7, 0), (0.8, 1), (0.4, 0)]);
        let r = nonconformity(&a, 0.0);
        assert_eq!(r, 0.7f64.next_up());
        assert_eq!(
            crate::aggregate::uad::uad_retained(&[0.9, 0.7, 0.8, 0.4], r),
            vec![true, false, true, false]
        );
        // A true claim tied with the false one goes with it: a threshold equal to a false
        // claim's score would keep it.
        let tied = answer(&[(0.6, 1), (0.6, 0), (0.9, 1)]);
        let r = nonconformity(&tied, 0.0);
        assert!(r > 0.6 && r <= 0.9);
        assert!(!crate::aggregate::uad::uad_retained(&[0.6], r)[0]);
        // No false claim, or no claim: safe at any threshold.
        assert_eq!(nonconformity(&answer(&[(0.1, 1), (0.5, 1)]), 0.0), 0.0);
        assert_eq!(nonconformity(&[], 0.0), 0.0);
        // A false claim with no score (NaN) is never kept: it does not count.
        assert_eq!(nonconformity(&[(f64::NAN, false), (0.2, true)], 0.0), 0.0);
        // A false claim scoring 1 removes everything.
        assert!(nonconformity(&answer(&[(1.0, 0)]), 0.0) > 1.0);
    }

    #[test]
    fn nonconformity_with_a_false_share() {
        // Descending: 0.9 T, 0.8 T, 0.7 F, 0.6 F; false shares from the top 0, 0, 1/3, 2/4.
        let a = answer(&[(0.9, 1), (0.8, 1), (0.7, 0), (0.6, 0)]);
        assert_eq!(nonconformity(&a, 0.4), 0.6f64.next_up());
        assert_eq!(nonconformity(&a, 0.3), 0.7f64.next_up());
        assert_eq!(nonconformity(&a, 0.5), 0.0);
        // β = 0 is the first mode.
        assert_eq!(nonconformity(&a, 0.0), 0.7f64.next_up());
        // Not monotone: 0.9 F, then three true claims: shares 1, 1/2, 1/3, 1/4. Threshold 0
        // (share 1/4) meets β = 0.3, but higher ones do not: r is above the false top claim.
        let b = answer(&[(0.9, 0), (0.8, 1), (0.7, 1), (0.6, 1)]);
        assert_eq!(nonconformity(&b, 0.3), 0.9f64.next_up());
    }

    /// The hand-worked example of docs/reference.md ("Conformal factuality").
    #[test]
    fn threshold_of_a_hand_worked_example() {
        // Ten answers; r: 0, 0, 0.3⁺, 0.5⁺, 0.5⁺, 0.6⁺, 0.2⁺, 0, 0.8⁺, 0.4⁺.
        let answers = vec![
            answer(&[(0.9, 1), (0.5, 1)]),
            answer(&[]),
            answer(&[(0.3, 0), (0.7, 1)]),
            answer(&[(0.5, 0), (0.5, 1), (0.1, 0)]),
            answer(&[(0.5, 0)]),
            answer(&[(0.6, 0), (0.9, 1)]),
            answer(&[(0.2, 0)]),
            answer(&[(0.4, 1)]),
            answer(&[(0.8, 0), (0.95, 1)]),
            answer(&[(0.4, 0), (0.6, 1)]),
        ];
        // Sorted r: 0, 0, 0, 0.2⁺, 0.3⁺, 0.4⁺, 0.5⁺, 0.5⁺, 0.6⁺, 0.8⁺.
        // α = 0.2: k = ⌈11 · 0.8⌉ = 9 → 0.6⁺.
        let m = Conformal::fit(&answers, 0.2, None, 3).unwrap();
        assert_eq!(m.threshold, 0.6f64.next_up());
        assert_eq!((m.answers, m.claims, m.null_labels), (10, 16, 3));
        // α = 0.5: k = ⌈5.5⌉ = 6 → 0.4⁺.
        assert_eq!(
            Conformal::fit(&answers, 0.5, None, 0).unwrap().threshold,
            0.4f64.next_up()
        );
        // α = 0.1: k = ⌈9.9⌉ = 10 → 0.8⁺; α = 0.05: k = ⌈10.45⌉ = 11 > 10: an error.
        assert_eq!(
            Conformal::fit(&answers, 0.1, None, 0).unwrap().threshold,
            0.8f64.next_up()
        );
        let e = Conformal::fit(&answers, 0.05, None, 2).unwrap_err();
        assert!(
            e.contains("needs at least 19") && e.contains("got 10"),
            "{e}"
        );
        assert_eq!(min_answers(0.05), 19);
        assert_eq!(min_answers(0.1), 9);
        assert_eq!(min_answers(0.2), 4);
        assert_eq!(rank(9, 0.1), 9);
    }

    #[test]
    fn fit_errors_name_the_argument() {
        let a = vec![answer(&[(0.5, 1)]); 30];
        for (alpha, beta, want) in [
            (0.0, None, "alpha"),
            (1.0, None, "alpha"),
            (f64::NAN, None, "alpha"),
            (0.1, Some(1.0), "beta"),
            (0.1, Some(-0.1), "beta"),
        ] {
            let e = Conformal::fit(&a, alpha, beta, 0).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
        let e = Conformal::fit(&[answer(&[(1.5, 1)])], 0.5, None, 0).unwrap_err();
        assert!(e.contains("[0, 1]"), "{e}");
    }

    #[test]
    fn json_round_trip_and_errors() {
        let mut m =
            Conformal::fit(&vec![answer(&[(0.3, 0), (0.8, 1)]); 20], 0.1, Some(0.2), 1).unwrap();
        m.fitted_on = Some(FittedOn {
            scorer: Some("entailment".into()),
            num_samples: Some(5),
            ..FittedOn::default()
        });
        let back = Conformal::from_json(&m.to_json(), "conformal").unwrap();
        assert_eq!(back, m);
        assert_eq!(
            m.guarantee(),
            format!(
                "conformal: P(false share of kept claims ≤ 0.2) ≥ 0.9 for answers exchangeable \
                 with the 20 calibration answers (threshold {})",
                m.threshold
            )
        );
        for (v, want) in [
            (json!([]), "must be a JSON object"),
            (
                json!({"method":"platt","threshold":0.5,"alpha":0.1,"answers":9}),
                "method",
            ),
            (
                json!({"method":"conformal","alpha":0.1,"answers":9}),
                "threshold",
            ),
            (
                json!({"method":"conformal","threshold":0.5,"alpha":2,"answers":9}),
                "alpha",
            ),
            (
                json!({"method":"conformal","threshold":0.5,"alpha":0.1}),
                "answers",
            ),
            (
                json!({"method":"conformal","threshold":0.5,"alpha":0.1,"answers":9,"x":1}),
                "unknown key",
            ),
        ] {
            let e = Conformal::from_json(&v, "conformal").unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
    }

    /// Synthetic answers: claims' scores noisy in their truth, 0 to 5 claims per answer; with
    /// `ties`, scores rounded to 0.05 (many tied nonconformity scores).
    fn synthetic(rng: &mut u64, n: usize, ties: bool) -> Vec<Vec<(f64, bool)>> {
        let mut next = move || {
            // xorshift64*
            *rng ^= *rng >> 12;
            *rng ^= *rng << 25;
            *rng ^= *rng >> 27;
            (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let m = (next() * 6.0) as usize;
                (0..m)
                    .map(|_| {
                        let truth = next() < 0.75;
                        let s = (if truth { 0.35 } else { 0.0 } + 0.65 * next()).min(1.0);
                        (if ties { (s * 20.0).round() / 20.0 } else { s }, truth)
                    })
                    .collect()
            })
            .collect()
    }

    /// Monte Carlo slack below 1 − α: the expected coverage is ≥ ⌈(n + 1)(1 − α)⌉/(n + 1)
    /// (0.9502 at α = 0.05, n = 200), and the mean over 1,000 splits has a standard error of
    /// about 0.0007 (observed: 0.9492 at α = 0.05).
    const MC: f64 = 0.003;

    /// Mean coverage of the test halves of 1,000 seeded random half/half splits.
    fn mean_coverage(data: &[Vec<(f64, bool)>], alpha: f64, beta: Option<f64>) -> f64 {
        let half = data.len() / 2;
        let mut covered = 0usize;
        let mut total = 0usize;
        let mut order: Vec<usize> = (0..data.len()).collect();
        let mut rng = 12345u64 + (alpha * 1000.0) as u64;
        for _ in 0..1000 {
            // Fisher–Yates with an LCG.
            for i in (1..order.len()).rev() {
                rng = rng
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                order.swap(i, ((rng >> 33) % (i as u64 + 1)) as usize);
            }
            let cal: Vec<_> = order[..half].iter().map(|&i| data[i].clone()).collect();
            let m = Conformal::fit(&cal, alpha, beta, 0).unwrap();
            for &i in &order[half..] {
                let a = &data[i];
                let kept = m.keep(&a.iter().map(|c| c.0).collect::<Vec<_>>());
                let (k, f) = a
                    .iter()
                    .zip(&kept)
                    .filter(|(_, &k)| k)
                    .fold((0usize, 0usize), |(k, f), ((_, t), _)| {
                        (k + 1, f + usize::from(!t))
                    });
                covered += usize::from(f as f64 <= beta.unwrap_or(0.0) * k as f64);
                total += 1;
            }
        }
        covered as f64 / total as f64
    }

    /// Continuous scores: mean coverage in [1 − α, 1 − α + 1/(n + 1) + 0.02] (the split
    /// conformal bounds; 0.02 for the Monte Carlo error), less [`MC`] below. Tied scores: at
    /// least 1 − α − [`MC`] (ties only raise coverage). With β only the lower bound: a share can
    /// be ≤ β at τ̂ below r (the share is not monotone), which covers beyond P(r ≤ τ̂).
    #[test]
    fn coverage_on_synthetic_splits() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let smooth = synthetic(&mut seed, 400, false);
        let tied = synthetic(&mut seed, 400, true);
        let n = 200.0;
        for alpha in [0.05, 0.1, 0.2, 0.3] {
            for beta in [None, Some(0.25)] {
                let cov = mean_coverage(&smooth, alpha, beta);
                let hi = 1.0 - alpha + 1.0 / (n + 1.0) + 0.02;
                assert!(
                    cov >= 1.0 - alpha - MC && (beta.is_some() || cov <= hi),
                    "alpha {alpha} beta {beta:?}: coverage {cov}"
                );
                let cov = mean_coverage(&tied, alpha, beta);
                assert!(
                    cov >= 1.0 - alpha,
                    "ties, alpha {alpha} beta {beta:?}: {cov}"
                );
            }
        }
    }
}
