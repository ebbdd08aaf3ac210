//! `uqd bench conformal`: does the conformal factuality threshold (Mohri & Hashimoto 2024,
//! `uq_core::calibrate::conformal`) keep its promise on real answers? The claims of a graph-uq
//! FActScore-Bio file are scored once as `bench claims` scores them (NLI unit-response and
//! graph scorers, the records' `all_claims` as claim union, the first m samples); then, in
//! memory, `--splits` seeded random half/half splits of the answers with at least one labelled
//! claim: fit on one half at α ∈ {0.05, 0.1, 0.2, 0.3}, UAD on the other half at the fitted
//! threshold (kept ⇔ score ≥ τ̂). Per α and scorer: the mean coverage (share of test answers
//! whose kept labelled claims are all true), its spread over the splits (sd, 5th and 95th
//! percentile) and the share of labelled claims kept. The same for the fixed threshold 1/3 and
//! the 50th / 90th percentile of each answer's own claim scores (no guarantee), over the same
//! test halves. With `--data2`, also cross-file: fit on all of one file, test on all of the
//! other (both directions), where exchangeability no longer holds. No LLM call is made.

use std::path::Path;

use serde_json::json;
use uq_core::aggregate::uad::{uad_kept, uad_threshold};
use uq_core::calibrate::conformal::Conformal;
use uq_core::metrics::bootstrap::Rng;
use uq_core::scorers::Scorer;

use super::claims::{answer_claims, claim_scorers, claim_scores, score_file, ScoredFile};
use super::lines::round;
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// The miscoverage levels.
pub const ALPHAS: [f64; 4] = [0.05, 0.1, 0.2, 0.3];

pub struct ConformalArgs<'a> {
    pub data: &'a Path,
    /// The second file of the cross-file run.
    pub data2: Option<&'a Path>,
    pub splits: usize,
    pub samples: usize,
    pub clients: usize,
    pub limit: Option<usize>,
    pub seed: u64,
}

/// One answer's claims: (score, label), NaN = no score, `None` = unlabelled.
type Answer = Vec<(f64, Option<bool>)>;

/// One file's answers with a labelled claim, per scorer.
struct Scored {
    name: String,
    per_scorer: Vec<(Scorer, Vec<Answer>)>,
}

/// A threshold rule: the model's, a fixed one or a percentile of the answer's scores.
#[derive(Clone, Copy)]
enum Rule {
    Conformal(f64),
    Fixed(f64),
    Percentile(f64),
}

/// (all kept labelled claims true?, kept labelled claims, labelled claims) of one answer.
fn outcome(a: &Answer, rule: Rule) -> (bool, usize, usize) {
    let scores: Vec<f64> = a.iter().map(|c| c.0).collect();
    let t = match rule {
        Rule::Conformal(t) => Some(t),
        Rule::Fixed(t) => uad_threshold(&scores, Some(t), None),
        Rule::Percentile(q) => uad_threshold(&scores, None, Some(q)),
    };
    let kept = uad_kept(&scores, t);
    let (mut ok, mut k, mut n) = (true, 0, 0);
    for (c, keep) in a.iter().zip(kept) {
        if let Some(l) = c.1 {
            n += 1;
            if keep {
                k += 1;
                ok &= l;
            }
        }
    }
    (ok, k, n)
}

/// (coverage, kept share) of `answers` under `rule`.
fn evaluate<'a>(answers: impl Iterator<Item = &'a Answer>, rule: Rule) -> (f64, f64) {
    let (mut cov, mut total, mut kept, mut claims) = (0usize, 0usize, 0usize, 0usize);
    for a in answers {
        let (ok, k, n) = outcome(a, rule);
        cov += usize::from(ok);
        total += 1;
        kept += k;
        claims += n;
    }
    (
        cov as f64 / total.max(1) as f64,
        kept as f64 / claims.max(1) as f64,
    )
}

/// The labelled claims of answers, for the fit.
fn labelled(answers: &[&Answer]) -> (Vec<Vec<(f64, bool)>>, usize) {
    let mut nulls = 0;
    let fit = answers
        .iter()
        .map(|a| {
            nulls += a.iter().filter(|c| c.1.is_none()).count();
            a.iter().filter_map(|c| c.1.map(|l| (c.0, l))).collect()
        })
        .collect();
    (fit, nulls)
}

/// Mean, sd, 5th and 95th percentile (numpy's linear method); null for no values.
fn spread(v: &[f64]) -> serde_json::Value {
    if v.is_empty() {
        return serde_json::Value::Null;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let pct = |q| uq_core::aggregate::uad::percentile(v, q).map(round);
    json!({"mean": round(mean), "sd": round(sd), "p5": pct(5.0), "p95": pct(95.0)})
}

/// Runs the benchmark and prints its JSON lines (progress goes to stderr).
pub fn conformal(engine: &Engine, llm: &LlmService, args: &ConformalArgs) -> Result<(), String> {
    let scorers = claim_scorers(false);
    let run = (args.samples, args.clients, args.limit);
    let file = |path: &Path| -> Result<Scored, String> {
        scored(score_file(engine, llm, path, run, &scorers)?, &scorers)
    };
    let a = file(args.data)?;
    let b = match args.data2 {
        Some(p) => Some(file(p)?),
        None => None,
    };
    for file in std::iter::once(&a).chain(b.as_ref()) {
        splits(file, args);
    }
    if let Some(b) = &b {
        cross(&a, b);
        cross(b, &a);
    }
    Ok(())
}

/// Keeps, per scorer, the answers of one scored file with at least one labelled claim.
fn scored(file: ScoredFile, scorers: &[Scorer]) -> Result<Scored, String> {
    let (records, results) = (&file.records, &file.results);
    let mut per_scorer = Vec::new();
    for &s in scorers {
        let answers = answer_claims(records, &claim_scores(s, records, results)?)
            .into_iter()
            .filter(|a| a.iter().any(|c| c.1.is_some()))
            .collect();
        per_scorer.push((s, answers));
    }
    Ok(Scored {
        name: file.name,
        per_scorer,
    })
}

/// The split runs of one file: a line per scorer and α, and per scorer and baseline rule.
fn splits(file: &Scored, args: &ConformalArgs) {
    for (s, answers) in &file.per_scorer {
        let n = answers.len();
        let half = n / 2;
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Rng(args.seed);
        let baselines = [
            ("fixed_1/3", Rule::Fixed(1.0 / 3.0)),
            ("percentile_50", Rule::Percentile(50.0)),
            ("percentile_90", Rule::Percentile(90.0)),
        ];
        // per α: (coverage, kept, threshold) per split; per baseline: (coverage, kept)
        let mut conf: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); ALPHAS.len()];
        let mut base: Vec<Vec<(f64, f64)>> = vec![Vec::new(); baselines.len()];
        let mut errors = Vec::new();
        for _ in 0..args.splits {
            rng.shuffle(&mut order);
            let cal: Vec<&Answer> = order[..half].iter().map(|&i| &answers[i]).collect();
            let test = || order[half..].iter().map(|&i| &answers[i]);
            let (fit, nulls) = labelled(&cal);
            for (j, &alpha) in ALPHAS.iter().enumerate() {
                match Conformal::fit(&fit, alpha, None, nulls) {
                    Ok(m) => {
                        let (c, k) = evaluate(test(), Rule::Conformal(m.threshold));
                        conf[j].push((c, k, m.threshold));
                    }
                    Err(e) => errors.push(e),
                }
            }
            for (j, (_, rule)) in baselines.iter().enumerate() {
                base[j].push(evaluate(test(), *rule));
            }
        }
        for (j, &alpha) in ALPHAS.iter().enumerate() {
            let cov: Vec<f64> = conf[j].iter().map(|x| x.0).collect();
            let kept: Vec<f64> = conf[j].iter().map(|x| x.1).collect();
            let thr: Vec<f64> = conf[j].iter().map(|x| x.2.min(1.0)).collect();
            println!(
                "{}",
                json!({"file": file.name, "scorer": s.name(), "rule": "conformal",
                    "alpha": alpha, "target": round(1.0 - alpha), "answers": n,
                    "calibration_answers": half, "splits": cov.len(),
                    "coverage": spread(&cov), "kept_share": spread(&kept),
                    "threshold": spread(&thr),
                    "fit_errors": errors.iter().filter(|e| e.contains(&format!("alpha = {alpha} "))).count()})
            );
        }
        for (j, (name, _)) in baselines.iter().enumerate() {
            let cov: Vec<f64> = base[j].iter().map(|x| x.0).collect();
            let kept: Vec<f64> = base[j].iter().map(|x| x.1).collect();
            println!(
                "{}",
                json!({"file": file.name, "scorer": s.name(), "rule": name, "answers": n,
                    "splits": cov.len(), "coverage": spread(&cov), "kept_share": spread(&kept)})
            );
        }
    }
}

/// Fit on all of `fit`, test on all of `test`: a line per scorer and α.
fn cross(fit: &Scored, test: &Scored) {
    for ((s, fa), (_, ta)) in fit.per_scorer.iter().zip(&test.per_scorer) {
        let refs: Vec<&Answer> = fa.iter().collect();
        let (labels, nulls) = labelled(&refs);
        for &alpha in &ALPHAS {
            let line = match Conformal::fit(&labels, alpha, None, nulls) {
                Ok(m) => {
                    let (c, k) = evaluate(ta.iter(), Rule::Conformal(m.threshold));
                    let (c_in, _) = evaluate(fa.iter(), Rule::Conformal(m.threshold));
                    json!({"cross": true, "fit": fit.name, "test": test.name,
                        "scorer": s.name(), "alpha": alpha, "target": round(1.0 - alpha),
                        "threshold": m.threshold, "coverage": round(c), "kept_share": round(k),
                        "coverage_on_fit_file": round(c_in)})
                }
                Err(e) => json!({"cross": true, "fit": fit.name, "test": test.name,
                    "scorer": s.name(), "alpha": alpha, "error": e}),
            };
            println!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_counts_labelled_claims_only() {
        let a: Answer = vec![(0.9, Some(true)), (0.5, None), (0.2, Some(false))];
        assert_eq!(outcome(&a, Rule::Conformal(0.3)), (true, 1, 2));
        assert_eq!(outcome(&a, Rule::Conformal(0.1)), (false, 2, 2));
        // The 50th percentile of 0.2, 0.5, 0.9 is 0.5 (the unlabelled claim counts).
        assert_eq!(outcome(&a, Rule::Percentile(50.0)), (true, 1, 2));
        assert_eq!(outcome(&a, Rule::Fixed(1.0 / 3.0)), (true, 1, 2));
    }
}
