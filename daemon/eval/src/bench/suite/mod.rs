//! `uqd bench suite`: the default scorers over every shared evaluation file, each figure with a
//! 95 % interval over resampled answers (`uq_core::metrics::bootstrap`), in one table:
//!
//! * per dataset and scorer: AUROC, AUC-PR and NonFact AUC-PR (`uq_core::evaluation`), on
//!   WikiBio also NonFact\* (its AUC-PR is SelfCheckGPT's Factual);
//!   the grounded_dev tasks at answer level, with the answer's confidence under the default
//!   aggregation and under min and mean (`scorer@min`, `scorer@mean`);
//! * per pair of claim files (a change of LLM, a change of domain), both directions: ECE of the
//!   raw scores and of the Platt model fitted on the other file, the conformal threshold's
//!   coverage and kept share at α = [`data::ALPHA`] fitted on the other file;
//! * the refit with K labelled answers of the test file ([`super::refit`]): the old model, Platt
//!   on the K answers, the fixed refit and the chosen one;
//! * per dataset: NLI pairs, tokens, LLM calls (the samples the scores rest on) and wall time.
//!
//! Also JSON lines (`--json`), the units' scores included, so that [`compare`] can recompute any
//! figure of two runs on the same resamples. No LLM call is made.

mod compare;
mod data;
mod table;
mod units;

use std::path::Path;

use serde_json::{json, Value};
use uq_core::aggregate::{aggregate, Aggregation};
use uq_core::evaluation::{Figure, Fitted, Labelled, Transfer};
use uq_core::metrics::bootstrap::Interval;

pub use compare::compare;
use data::{Dataset, Level, Settings, ALPHA, DEFAULT, PAIRS};
pub use table::grid;
use units::units_line;

use super::grounded::run;
use super::lines::round;
use super::refit::{self as refit_lines, Claims, Draws};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// Labelled answers of the refit lines (`--quick`: the first two).
const TARGET_LABELS: [usize; 4] = [5, 10, 20, 40];
/// Answers per file (per task for grounded_dev) in `--quick`.
pub const QUICK_ANSWERS: usize = 20;

pub struct SuiteArgs<'a> {
    /// The folder of the shared evaluation files.
    pub data_dir: &'a Path,
    pub samples: usize,
    pub quick: bool,
    pub clients: usize,
    /// Option `premise` of every request (`None`: the default).
    pub premise: Option<Value>,
    /// Option `source_premise` of the grounded requests (`None`: the default).
    pub source_premise: Option<Value>,
    pub resamples: usize,
    pub seed: u64,
    /// Random draws of the K labelled answers per K.
    pub draws: usize,
    /// Also write the JSON lines here.
    pub json: Option<&'a Path>,
}

/// Runs the suite: the table to stdout, progress to stderr, the JSON lines to `args.json`.
pub fn suite(engine: &Engine, llm: &LlmService, args: &SuiteArgs) -> Result<(), String> {
    let settings = Settings {
        samples: args.samples,
        limit: args.quick.then_some(QUICK_ANSWERS),
        premise: args.premise.clone(),
        source_premise: args.source_premise.clone(),
    };
    let datasets = data::load(args.data_dir, &settings)?;
    let info = engine.info();
    let mut lines = vec![json!({
        "suite": "settings", "version": env!("CARGO_PKG_VERSION"), "nli_file": info.nli_file,
        "precision": info.precision, "device": info.device, "threads": info.threads,
        "samples": args.samples, "premise": args.premise, "source_premise": args.source_premise,
        "quick": args.quick, "resamples": args.resamples, "seed": args.seed, "alpha": ALPHA,
    })];
    let mut sets: Vec<(String, String, Labelled)> = Vec::new();
    for d in &datasets {
        eprintln!("suite: {} ({} answers)", d.name, d.items.len());
        let r = run(engine, llm, &d.items, args.clients)?;
        let mut units = 0;
        for scorer in &d.scorers {
            for (name, set) in labelled(d, &r.results, scorer) {
                units = units.max(set.labels.len());
                lines.push(units_line(d.name, &name, &set));
                for f in Figure::of_set(&set) {
                    lines.push(figure_line(
                        d.name,
                        &name,
                        f.name(),
                        f.interval(&set, args.resamples, args.seed),
                        &set,
                    ));
                }
                sets.push((d.name.to_string(), name, set));
            }
        }
        if d.level == Level::Answer {
            for scorer in &d.scorers {
                lines.push(aggregation_line(d.name, scorer, &sets, args)?);
            }
        }
        lines.push(json!({"suite": "cost", "dataset": d.name, "file": d.file,
            "answers": d.items.len(), "units": units, "nli_pairs": r.nli_pairs,
            "nli_tokens": r.nli_tokens, "llm_calls": d.llm_calls, "wall_s": round(r.wall_s)}));
    }
    lines.extend(pair_lines(&sets, args)?);
    print!("{}", table::render(&lines));
    if let Some(path) = args.json {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, text)
            .map_err(|e| format!("cannot write --json {}: {e}", path.display()))?;
        eprintln!("suite: JSON lines in {}", path.display());
    }
    Ok(())
}

/// The lines of each pair of claim files, both directions, per default scorer: the transfer
/// figures and the refit on K labelled answers of the test file.
fn pair_lines(sets: &[(String, String, Labelled)], args: &SuiteArgs) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let find = |d: &str, s: &str| {
        sets.iter()
            .find(|x| x.0 == d && x.1 == s)
            .map(|x| &x.2)
            .ok_or_else(|| format!("internal error: no scores of {s} on {d}"))
    };
    let ks: Vec<usize> = TARGET_LABELS
        .into_iter()
        .filter(|&k| !args.quick || k <= 10)
        .collect();
    for (x, y) in PAIRS {
        for (fit, test) in [(x, y), (y, x)] {
            for scorer in DEFAULT {
                let (f, t) = (find(fit, scorer)?, find(test, scorer)?);
                let fitted = Fitted::on(f, ALPHA);
                for tr in Transfer::ALL {
                    let i = tr.interval(&fitted, t, args.resamples, args.seed);
                    let mut l = json!({"suite": "transfer", "fit": fit, "test": test,
                        "scorer": scorer, "figure": tr.name()});
                    put_interval(&mut l, i);
                    if let Some(c) = &fitted.conformal {
                        l["conformal_threshold"] = json!(round(c.threshold));
                    }
                    out.push(l);
                }
                eprintln!("suite: refit {fit} → {test}, {scorer}");
                let draws = Draws {
                    ks: &ks,
                    draws: args.draws,
                    seed: args.seed,
                };
                let fit_claims = Claims {
                    name: fit,
                    scores: &f.scores,
                    labels: &f.labels,
                    answers: &f.answers,
                };
                let test_claims = Claims {
                    name: test,
                    scores: &t.scores,
                    labels: &t.labels,
                    answers: &t.answers,
                };
                let scorer_id = uq_core::scorers::Scorer::parse(scorer)?;
                for mut l in refit_lines::lines(&fit_claims, &test_claims, scorer_id, &draws)? {
                    l["suite"] = json!("refit");
                    out.push(l);
                }
            }
        }
    }
    Ok(out)
}

/// The labelled sets of `scorer` on a dataset: per unit (`Level::Unit`), or per answer under
/// the default aggregation and under min and mean (`Level::Answer`).
fn labelled(
    d: &Dataset,
    results: &[uq_core::protocol::ScoreResult],
    scorer: &str,
) -> Vec<(String, Labelled)> {
    match d.level {
        Level::Unit => {
            let mut set = Labelled::default();
            for (i, (r, labels)) in results.iter().zip(&d.labels).enumerate() {
                let major = d.major.get(i);
                for (u, (s, l)) in r.unit_scores(scorer).into_iter().zip(labels).enumerate() {
                    if let Some(l) = l {
                        set.scores.push(s);
                        set.labels.push(*l);
                        set.answers.push(i);
                        if let Some(m) = major {
                            set.major.push(m[u]);
                        }
                    }
                }
            }
            vec![(scorer.to_string(), set)]
        }
        Level::Answer => {
            let per_answer = |score: &dyn Fn(&uq_core::protocol::ScoreResult) -> f64| {
                let mut set = Labelled::default();
                for (i, (r, labels)) in results.iter().zip(&d.labels).enumerate() {
                    set.scores.push(score(r));
                    set.labels.push(labels[0].unwrap_or(false));
                    set.answers.push(i);
                }
                set
            };
            let default = per_answer(&|r| {
                r.response_scores
                    .get(scorer)
                    .copied()
                    .flatten()
                    .unwrap_or(f64::NAN)
            });
            let by = |agg: Aggregation| {
                per_answer(&|r| aggregate(&r.unit_scores(scorer), agg).unwrap_or(f64::NAN))
            };
            vec![
                (scorer.to_string(), default),
                (format!("{scorer}@min"), by(Aggregation::Min)),
                (format!("{scorer}@mean"), by(Aggregation::Mean)),
            ]
        }
    }
}

/// The paired AUROC difference of the answers' min and mean aggregations of `scorer`: what
/// the default aggregation of the grounded scorers is decided on.
fn aggregation_line(
    dataset: &str,
    scorer: &str,
    sets: &[(String, String, Labelled)],
    args: &SuiteArgs,
) -> Result<Value, String> {
    let get = |name: String| {
        sets.iter()
            .find(|x| x.0 == dataset && x.1 == name)
            .map(|x| &x.2)
            .ok_or_else(|| format!("internal error: no {name} on {dataset}"))
    };
    let (min, mean) = (
        get(format!("{scorer}@min"))?,
        get(format!("{scorer}@mean"))?,
    );
    let mut l = json!({"suite": "aggregation", "dataset": dataset, "scorer": scorer,
        "figure": "auroc", "difference": "min - mean"});
    put_interval(
        &mut l,
        Figure::Auroc.paired(mean, min, args.resamples, args.seed)?,
    );
    Ok(l)
}

fn figure_line(
    dataset: &str,
    scorer: &str,
    figure: &str,
    i: Option<Interval>,
    set: &Labelled,
) -> Value {
    let mut l = json!({"suite": "figure", "dataset": dataset, "scorer": scorer, "figure": figure,
        "units": set.labels.len(), "answers": set.clusters().answers(),
        "unscored": set.unscored()});
    put_interval(&mut l, i);
    l
}

/// `estimate`, `low`, `high` and `resamples` (null when undefined).
fn put_interval(l: &mut Value, i: Option<Interval>) {
    l["estimate"] = json!(i.map(|i| round(i.estimate)));
    l["low"] = json!(i.map(|i| round(i.low)));
    l["high"] = json!(i.map(|i| round(i.high)));
    l["resamples"] = json!(i.map(|i| i.resamples));
}
