//! `uqd bench calibration --target-labels K,…`: what a handful of labels of the new LLM's
//! answers buys. Per direction (fit file → test file), scorer and K (answers of the test file
//! whose claims are labelled), over `draws` seeded random draws of the K answers, on the test
//! file's other answers' labelled claims, the ECE (10 bins) and Brier of:
//!
//! * `old`: the Platt model fitted on the fit file, as it is;
//! * `adapted`: the same adapted to the test file's unlabelled scores (Saerens EM,
//!   `uq_core::calibrate::adapt`), and `guarded`: the adaptation checked on the K answers'
//!   labels (`uq_core::calibrate::guard`: refused when it raises their ECE; `refused` is the
//!   share of draws where it was);
//! * `platt_k`: Platt fitted on the K answers' labels alone;
//! * `refit`: the old model refitted on the K answers' labels with itself as the prior (MAP,
//!   `uq_core::calibrate::refit`, the prior's precision the old model's `refit_precision`);
//!   `refit_adapted`: the same from the adaptation (centred on the adapted map), and
//!   `refit_guarded`: from the guarded adaptation (centred on the adapted map when the guard let
//!   it through, on the old model when it refused), what a job with both options does;
//!   `widened`: the share of draws whose `refit_guarded` widened its prior. These are the fixed
//!   refits (`Calibration::refit_fixed`: the prior at the old fit's full strength);
//! * `chosen`: the refit with the prior's strength chosen by leave-one-answer-out over the K
//!   answers (`Calibration::refit`, what `uq_refit_calibration` and jobs do), and
//!   `chosen_guarded`: the same from the guarded adaptation; `scale`: the mean log₂ of the
//!   scale chosen.
//!
//! K = 0 is one draw (nothing labelled: `old` and `adapted` only). A draw whose K answers hold
//! labels of one class has no `platt_k` or `refit` (counted in `*_failed`); means are over the
//! draws that have a value. One JSON line per (direction, scorer, K), then a summary line with
//! the targets at K = [`TARGET_K`], entailment, per direction: the fixed refit's (ECE ≤
//! [`TARGET_ECE`] and ≤ both `old` and `platt_k`) and the chosen one's (ECE at most
//! [`CHOSEN_SLACK`] above the better of `old` and `platt_k`).

use serde_json::{json, Value};
use uq_core::calibrate::{Calibration, Method};
use uq_core::metrics::bootstrap::Rng;
use uq_core::metrics::{brier, ece};
use uq_core::scorers::Scorer;

use super::claims::ECE_BINS;
use super::lines::round;

/// The target: refit ECE with [`TARGET_K`] labelled answers.
pub const TARGET_ECE: f64 = 0.06;
pub const TARGET_K: usize = 10;
/// The chosen refit's target: at most this far above the better of `old` and `platt_k`.
pub const CHOSEN_SLACK: f64 = 0.01;

/// One file's labelled claims of one scorer: scores, labels and the answer each belongs to.
pub struct Claims<'a> {
    pub name: &'a str,
    pub scores: &'a [f64],
    pub labels: &'a [bool],
    pub answers: &'a [usize],
}

/// The settings of the runs.
pub struct Draws<'a> {
    pub ks: &'a [usize],
    pub draws: usize,
    pub seed: u64,
}

/// (ECE, Brier) per draw of one contender.
#[derive(Default)]
struct Figures {
    ece: Vec<f64>,
    brier: Vec<f64>,
    failed: usize,
}

impl Figures {
    fn push(&mut self, p: &[f64], labels: &[bool]) {
        match (ece(p, labels, ECE_BINS), brier(p, labels)) {
            (Some(e), Some(b)) => {
                self.ece.push(e);
                self.brier.push(b);
            }
            _ => self.failed += 1,
        }
    }

    /// The figures of a fitted model on the judged claims, or a failure when it was not fitted.
    fn push_fitted<E>(&mut self, fitted: Result<Calibration, E>, s: &Split) {
        match fitted {
            Ok(c) => self.push(&s.map(&c), &s.el),
            Err(_) => self.failed += 1,
        }
    }

    fn mean(v: &[f64]) -> Option<f64> {
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    fn write(&self, line: &mut Value, name: &str) {
        let m = Self::mean(&self.ece);
        let sd = m.map(|m| {
            (self.ece.iter().map(|x| (x - m).powi(2)).sum::<f64>() / self.ece.len() as f64).sqrt()
        });
        line[format!("ece_{name}")] = json!(m.map(round));
        line[format!("ece_{name}_sd")] = json!(sd.map(round));
        line[format!("brier_{name}")] = json!(Self::mean(&self.brier).map(round));
        if self.failed > 0 {
            line[format!("{name}_failed")] = json!(self.failed);
        }
    }
}

/// The test file's claims split by one draw: the K drawn answers' (scores, labels, answers),
/// which the refits learn from, and the other answers' (scores, labels), which judge them.
struct Split {
    ks: Vec<f64>,
    kl: Vec<bool>,
    ka: Vec<usize>,
    es: Vec<f64>,
    el: Vec<bool>,
}

impl Split {
    fn of(test: &Claims, chosen: &[usize]) -> Split {
        let (mut ks, mut kl, mut es, mut el) = (vec![], vec![], vec![], vec![]);
        let mut ka = vec![];
        for i in 0..test.scores.len() {
            if chosen.contains(&test.answers[i]) {
                ks.push(test.scores[i]);
                kl.push(test.labels[i]);
                ka.push(test.answers[i]);
            } else {
                es.push(test.scores[i]);
                el.push(test.labels[i]);
            }
        }
        Split { ks, kl, ka, es, el }
    }

    /// The judged claims' scores as `c` maps them.
    fn map(&self, c: &Calibration) -> Vec<f64> {
        self.es.iter().map(|&x| c.apply(x)).collect()
    }
}

/// What every draw starts from: the old model, its adaptation to the test file's scores (none
/// when it failed), the name they carry and the test file's labelled claims' scores.
struct Models<'a> {
    old: &'a Calibration,
    adapted: Option<&'a Calibration>,
    what: &'a str,
    test_scores: &'a [f64],
}

/// Every contender's figures over the draws of one K, and the counts of the guard's refusals
/// and of the widened priors.
#[derive(Default)]
struct Contest {
    old: Figures,
    adapted: Figures,
    guarded: Figures,
    platt_k: Figures,
    refit: Figures,
    refit_adapted: Figures,
    refit_guarded: Figures,
    chosen: Figures,
    chosen_guarded: Figures,
    log2_scales: Vec<f64>,
    refused: usize,
    checked: usize,
    widened: usize,
}

impl Contest {
    /// The contenders that need no labels: the old model and its adaptation.
    fn unlabelled(&mut self, m: &Models, s: &Split) {
        self.old.push(&s.map(m.old), &s.el);
        match m.adapted {
            Some(a) => self.adapted.push(&s.map(a), &s.el),
            None => self.adapted.failed += 1,
        }
    }

    /// The contenders that learn from the K answers' labels.
    fn labelled(&mut self, m: &Models, s: &Split) {
        let (ks, kl, what) = (&s.ks, &s.kl, m.what);
        let guarded = m.old.adapt_guarded(m.test_scores, ks, kl, what, "score");
        match &guarded {
            Ok(g) => {
                if g.prior.as_ref().is_some_and(|p| p.check.is_some()) {
                    self.checked += 1;
                    self.refused += usize::from(g.prior.as_ref().is_some_and(|p| !p.applied));
                }
                self.guarded.push(&s.map(g), &s.el);
            }
            Err(_) => self.guarded.failed += 1,
        }
        self.platt_k
            .push_fitted(Calibration::fit(ks, kl, Method::Platt, "score"), s);
        self.refit
            .push_fitted(m.old.refit_fixed(ks, kl, what, "score"), s);
        match m.old.refit(ks, kl, Some(&s.ka), what, "score") {
            Ok(c) => {
                if let Some(x) = c.refit.as_ref().and_then(|r| r.scale.as_ref()) {
                    self.log2_scales.push(x.scale.log2());
                }
                self.chosen.push(&s.map(&c), &s.el)
            }
            Err(_) => self.chosen.failed += 1,
        }
        // from the guarded adaptation (the old model itself when adapting failed)
        let from_guarded = guarded.as_ref().unwrap_or(m.old);
        self.chosen_guarded
            .push_fitted(from_guarded.refit(ks, kl, Some(&s.ka), what, "score"), s);
        match m.adapted.map(|a| a.refit_fixed(ks, kl, what, "score")) {
            Some(Ok(c)) => self.refit_adapted.push(&s.map(&c), &s.el),
            _ => self.refit_adapted.failed += 1,
        }
        match from_guarded.refit_fixed(ks, kl, what, "score") {
            Ok(c) => {
                self.widened += usize::from(c.refit.as_ref().is_some_and(|r| r.drift.is_some()));
                self.refit_guarded.push(&s.map(&c), &s.el)
            }
            Err(_) => self.refit_guarded.failed += 1,
        }
    }

    /// The contenders' figures into K's line (those that learn from labels only for K > 0).
    fn write(&self, line: &mut Value, k: usize, draws: usize) {
        self.old.write(line, "old");
        self.adapted.write(line, "adapted");
        if k > 0 {
            self.guarded.write(line, "guarded");
            let (refused, checked) = (self.refused, self.checked);
            line["refused"] = json!((checked > 0).then(|| round(refused as f64 / checked as f64)));
            self.platt_k.write(line, "platt_k");
            self.refit.write(line, "refit");
            self.refit_adapted.write(line, "refit_adapted");
            self.refit_guarded.write(line, "refit_guarded");
            line["widened"] = json!(round(self.widened as f64 / draws as f64));
            self.chosen.write(line, "chosen");
            self.chosen_guarded.write(line, "chosen_guarded");
            line["scale_log2"] = json!(Figures::mean(&self.log2_scales).map(round));
        }
    }
}

/// The lines of one direction and scorer, one per K.
pub fn lines(fit: &Claims, test: &Claims, s: Scorer, d: &Draws) -> Result<Vec<Value>, String> {
    let old = Calibration::fit(fit.scores, fit.labels, Method::Platt, "score")
        .map_err(|e| format!("{} on {}: {e}", s.name(), fit.name))?;
    let what = format!("{} platt fitted on {}", s.name(), fit.name);
    // EM on all the test file's labelled claims' scores, without their labels
    let adapted = old.adapt(test.scores, &what, "score").ok();
    let models = Models {
        old: &old,
        adapted: adapted.as_ref(),
        what: &what,
        test_scores: test.scores,
    };
    let mut ids: Vec<usize> = test.answers.to_vec();
    ids.dedup();
    let mut out = Vec::new();
    for &k in d.ks {
        if k >= ids.len() {
            return Err(format!(
                "--target-labels {k}: the test file {} has only {} answers with a labelled claim",
                test.name,
                ids.len()
            ));
        }
        let mut contest = Contest::default();
        let mut rng = Rng(d.seed ^ (k as u64).wrapping_mul(0x9E37_79B9));
        let mut order = ids.clone();
        let draws = if k == 0 { 1 } else { d.draws };
        for _ in 0..draws {
            rng.shuffle(&mut order);
            let split = Split::of(test, &order[..k]);
            contest.unlabelled(&models, &split);
            if k > 0 {
                contest.labelled(&models, &split);
            }
        }
        let mut line = json!({
            "target_labels": k,
            "scorer": s.name(),
            "fit": fit.name,
            "test": test.name,
            "draws": draws,
            "seed": d.seed,
            "refit_precision": old.refit_precision.map(|p| p.to_json()),
            "prior_adapted": adapted.as_ref().and_then(|a| a.prior.as_ref()).map(|p| round(p.target)),
        });
        contest.write(&mut line, k, draws);
        out.push(line);
    }
    Ok(out)
}

/// Whether a line is the targets' (entailment, K = [`TARGET_K`]) and meets them.
pub fn target(line: &Value) -> Option<Value> {
    if line["scorer"] != json!("entailment") || line["target_labels"] != json!(TARGET_K) {
        return None;
    }
    let get = |k: &str| line[k].as_f64();
    let met = |refit: &str| match (get(refit), get("ece_old"), get("ece_platt_k")) {
        (Some(r), Some(o), Some(p)) => r <= TARGET_ECE && r <= o && r <= p,
        _ => false,
    };
    let met_chosen = |c: &str| match (get(c), get("ece_old"), get("ece_platt_k")) {
        (Some(r), Some(o), Some(p)) => r <= o.min(p) + CHOSEN_SLACK,
        _ => false,
    };
    Some(
        json!({"fit": line["fit"], "test": line["test"], "ece_old": line["ece_old"],
        "ece_platt_k": line["ece_platt_k"], "ece_refit": line["ece_refit"],
        "ece_refit_adapted": line["ece_refit_adapted"],
        "ece_refit_guarded": line["ece_refit_guarded"], "met_refit": met("ece_refit"),
        "met_refit_adapted": met("ece_refit_adapted"),
        "met_refit_guarded": met("ece_refit_guarded"),
        "ece_chosen": line["ece_chosen"], "ece_chosen_guarded": line["ece_chosen_guarded"],
        "met_chosen": met_chosen("ece_chosen"),
        "met_chosen_guarded": met_chosen("ece_chosen_guarded")}),
    )
}
