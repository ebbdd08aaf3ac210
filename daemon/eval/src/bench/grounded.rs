//! `uqd bench grounded`: grounded checking (docs/reference.md, "Grounded checking") against
//! the sample-based scorers. On SelfCheckGPT WikiBio (`wiki_bio_text` as the source): (a) the
//! passage's own text as the source, (b) retrieval from an FTS5 table of all passages' texts in
//! chunks, (c) the sample-based `entailment` (m samples), (d) `grounded_fallback` (its default,
//! max(source p_e, samples), and the band at the default thresholds given explicitly). On
//! `grounded_dev.jsonl`: (a) per task and overall beside the whole-source `uq_nli` baseline.
//! Thresholds and K are compared on one half of the records and reported on the other (even /
//! odd record index). Prints one JSON object per line.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::aggregate::{aggregate, Aggregation};
use uq_core::decompose::split_sentences;
use uq_core::metrics::{auroc, average_precision};
use uq_core::protocol::{NliProbs, ScoreResult};
use uq_core::score::grounded::{
    band_score, check, Checked, SourceSelection, Thresholds, Verdict, DEFAULT_THRESHOLDS,
};

use super::lines::{load_jsonl, pct, round};

mod cv;
use uqd::engine::Engine;
use uqd::pipeline;
use uqd::role_llms::LlmService;

pub struct GroundedArgs<'a> {
    pub data: &'a Path,
    /// Samples per answer for the sample-based runs (m).
    pub samples: usize,
    pub limit: Option<usize>,
    /// Concurrent scoring threads.
    pub clients: usize,
    /// Passages retrieved per answer in run (b).
    pub k: usize,
    /// Sentences per row of the FTS5 table of run (b).
    pub chunk: usize,
    /// The `source_premise` settings of run (a), one run each (the first is used by the other
    /// runs).
    pub source_premises: Vec<SourceSelection>,
}

#[derive(Deserialize)]
struct WikiBio {
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
    annotation: Vec<String>,
    wiki_bio_text: String,
}

/// A row of grounded_dev.jsonl (shared/data/README.md).
#[derive(Deserialize)]
pub(super) struct GroundedRow {
    pub source: String,
    #[serde(default)]
    pub question: Option<String>,
    pub response: String,
    pub label: i64,
    pub task: String,
}

impl GroundedRow {
    /// What is checked against the source: a QA row's question and answer together (the answer
    /// alone is length-confounded: shared/data/README.md), a summary as it is.
    pub fn hypothesis(&self) -> String {
        match (&self.question, self.task.as_str()) {
            (Some(q), "qa") => format!("{q} {}", self.response),
            _ => self.response.clone(),
        }
    }

    /// The units scored: a QA row's hypothesis as one unit, a summary's sentences.
    pub fn units(&self) -> Vec<String> {
        if self.task == "qa" {
            vec![self.hypothesis()]
        } else {
            split_sentences(&self.response)
        }
    }
}

/// One answer to score: the options carry its units and sources.
pub(super) struct Item {
    pub response: String,
    pub samples: Vec<String>,
    pub options: Value,
}

/// A run's results and costs.
pub(super) struct Run {
    pub results: Vec<ScoreResult>,
    pub wall_s: f64,
    pub nli_pairs: u64,
    pub nli_tokens: u64,
}

/// Scores every item, `clients` at a time, on a cold NLI cache.
pub(super) fn run(
    engine: &Engine,
    llm: &LlmService,
    items: &[Item],
    clients: usize,
) -> Result<Run, String> {
    engine.clear_nli_cache();
    let (p0, t0) = (engine.nli_pairs_computed(), engine.nli_tokens_computed());
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<ScoreResult, String>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..clients.max(1).min(items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(it) = items.get(i) else { break };
                let r = pipeline::score(engine, llm, &it.response, &it.samples, &it.options);
                out.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    let wall_s = start.elapsed().as_secs_f64();
    let results = out
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not scored".into())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Run {
        results,
        wall_s,
        nli_pairs: engine.nli_pairs_computed() - p0,
        nli_tokens: engine.nli_tokens_computed() - t0,
    })
}

/// AUROC (accurate = positive) and NonFact AUC-PR of unit confidences, NaN left out.
fn unit_metrics(conf: &[f64], accurate: &[bool]) -> (Option<f64>, Option<f64>, usize) {
    let (c, a): (Vec<f64>, Vec<bool>) = conf
        .iter()
        .zip(accurate)
        .filter(|(c, _)| c.is_finite())
        .map(|(&c, &a)| (c, a))
        .unzip();
    let hallu: Vec<f64> = c.iter().map(|x| 1.0 - x).collect();
    let nonfact: Vec<bool> = a.iter().map(|x| !x).collect();
    (
        auroc(&c, &a).map(round),
        average_precision(&hallu, &nonfact).map(pct),
        conf.len() - c.len(),
    )
}

pub fn grounded(engine: &Engine, llm: &LlmService, args: &GroundedArgs) -> Result<(), String> {
    let first = std::fs::read_to_string(args.data)
        .map_err(|e| format!("cannot read --data {}: {e}", args.data.display()))?;
    let first: Value = first
        .lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if first.get("wiki_bio_text").is_some() {
        wikibio(engine, llm, args)
    } else if first.get("source").is_some() {
        grounded_dev(engine, llm, args)
    } else {
        Err(format!(
            "--data {}: neither SelfCheckGPT WikiBio records (wiki_bio_text) nor grounded records \
             (source, response, label): pass ../shared/data/selfcheck_wikibio_dev.jsonl or \
             ../shared/data/grounded_dev.jsonl",
            args.data.display()
        ))
    }
}

/// One WikiBio result line of a run and scorer, with the AUROC of each half (`half[i]`: the
/// record index parity of unit i).
fn line(
    run_name: &str,
    scorer: &str,
    conf: &[f64],
    (accurate, half): (&[bool], &[usize]),
    r: &Run,
    llm_calls: usize,
) -> Value {
    let (a, ap, nulls) = unit_metrics(conf, accurate);
    json!({
        "bench": "grounded", "data": "wikibio", "run": run_name, "scorer": scorer,
        "auroc": a, "nonfact_auc_pr": ap, "units": conf.len(), "null_scores": nulls,
        "nli_pairs": r.nli_pairs, "nli_tokens": r.nli_tokens, "wall_s": round(r.wall_s),
        "llm_calls": llm_calls,
        "auroc_tune_half": half_auroc(conf, accurate, half, 0),
        "auroc_check_half": half_auroc(conf, accurate, half, 1),
    })
}

/// The AUROC of the units of one half (`half[i]` = record index parity).
fn half_auroc(conf: &[f64], accurate: &[bool], half: &[usize], h: usize) -> Option<f64> {
    let (c, a): (Vec<f64>, Vec<bool>) = conf
        .iter()
        .zip(accurate)
        .zip(half)
        .filter(|(_, &x)| x == h)
        .map(|((&c, &a), _)| (c, a))
        .unzip();
    unit_metrics(&c, &a).0
}

fn wikibio(engine: &Engine, llm: &LlmService, args: &GroundedArgs) -> Result<(), String> {
    let recs: Vec<WikiBio> = load_jsonl(args.data, args.limit)?;
    let m = args.samples;
    if let Some(r) = recs.iter().find(|r| r.gpt3_text_samples.len() < m) {
        return Err(format!(
            "--samples {m} but a passage has only {} samples",
            r.gpt3_text_samples.len()
        ));
    }
    let accurate: Vec<bool> = recs
        .iter()
        .flat_map(|r| r.annotation.iter().map(|a| a == "accurate"))
        .collect();
    // The record index of each unit, and its parity (the tune / check halves).
    let rec: Vec<usize> = recs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| std::iter::repeat_n(i, r.gpt3_sentences.len()))
        .collect();
    let half: Vec<usize> = rec.iter().map(|i| i % 2).collect();
    let scores = |run: &Run, scorer: &str| -> Vec<f64> {
        run.results
            .iter()
            .flat_map(|r| r.unit_scores(scorer))
            .collect()
    };
    let labels = (accurate.as_slice(), half.as_slice());
    // An answer with its sentences as units; with sources, checked with `premise`'s selection.
    let item = |r: &WikiBio,
                scorers: &[&str],
                sources: Option<(Value, &SourceSelection)>,
                samples: usize| {
        let mut o = json!({"units": r.gpt3_sentences, "scorers": scorers});
        if let Some((s, premise)) = sources {
            o["sources"] = s;
            o["source_premise"] = premise.to_json();
        }
        if samples > 0 {
            o["num_samples"] = json!(samples);
        }
        Item {
            response: r.gpt3_text.clone(),
            samples: r.gpt3_text_samples[..samples].to_vec(),
            options: o,
        }
    };
    let premise = &args.source_premises[0];
    let g = ["grounded_entailment", "grounded_noncontradiction"];
    let mut out = Vec::new();

    // (a) the passage's own text, per source_premise setting; the first is the one kept.
    let mut first_a = None;
    for premise in &args.source_premises {
        let items: Vec<Item> = recs
            .iter()
            .map(|r| item(r, &g, Some((json!(r.wiki_bio_text), premise)), 0))
            .collect();
        let a = run(engine, llm, &items, args.clients)?;
        for s in g {
            let mut l = line("a_source_text", s, &scores(&a, s), labels, &a, 0);
            l["source_premise"] = json!(premise.label());
            out.push(l);
        }
        first_a.get_or_insert(a);
    }
    let a = first_a.ok_or("--source-premise names no setting")?;

    // (b) retrieval from an FTS5 table of every passage's text in chunks.
    let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE VIRTUAL TABLE chunks USING fts5(body)")
        .map_err(|e| e.to_string())?;
    let mut owner: Vec<usize> = Vec::new(); // chunk rowid - 1 → record
    for (i, r) in recs.iter().enumerate() {
        for c in split_sentences(&r.wiki_bio_text).chunks(args.chunk.max(1)) {
            conn.execute("INSERT INTO chunks(body) VALUES (?1)", [c.join(" ")])
                .map_err(|e| e.to_string())?;
            owner.push(i);
        }
    }
    let t = Instant::now();
    let (mut items, mut found_own, mut notes) = (Vec::new(), 0usize, 0usize);
    for (i, r) in recs.iter().enumerate() {
        let mut it = item(
            r,
            &g,
            Some((json!({"fts": "chunks", "k": args.k}), premise)),
            0,
        );
        notes += uqd::sources::resolve(&conn, &mut it.options, &r.gpt3_text)?.len();
        let ids: Vec<usize> = it.options["sources"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["id"].as_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if ids.iter().any(|&id: &usize| owner.get(id - 1) == Some(&i)) {
            found_own += 1;
        }
        items.push(it);
    }
    let retrieval_s = t.elapsed().as_secs_f64();
    let b = run(engine, llm, &items, args.clients)?;
    for s in g {
        let mut l = line("b_fts_retrieval", s, &scores(&b, s), labels, &b, 0);
        l["chunks"] = json!(owner.len());
        l["k"] = json!(args.k);
        l["answers_with_own_passage_retrieved"] = json!(found_own);
        l["retrieval_s"] = json!(round(retrieval_s));
        l["retrieval_notes"] = json!(notes);
        out.push(l);
    }

    // (c) the sample-based entailment, m samples.
    let items: Vec<Item> = recs
        .iter()
        .map(|r| item(r, &["entailment"], None, m))
        .collect();
    let c = run(engine, llm, &items, args.clients)?;
    out.push(line(
        "c_samples",
        "entailment",
        &scores(&c, "entailment"),
        labels,
        &c,
        m * recs.len(),
    ));

    // (d) grounded_fallback as it scores by default: max(source p_e, samples' score) on every
    // unit, so every answer needs its samples.
    let fallback_items = |band: Option<Thresholds>| -> Vec<Item> {
        recs.iter()
            .map(|r| {
                let sources = Some((json!(r.wiki_bio_text), premise));
                let mut it = item(r, &["grounded_fallback"], sources, m);
                if let Some(t) = band {
                    it.options["source_entailment_threshold"] = json!(t.entailment);
                    it.options["source_contradiction_threshold"] = json!(t.contradiction);
                }
                it
            })
            .collect()
    };
    // Units whose evidence says `decided_by` `by`.
    let decided = |r: &Run, by: &str| -> usize {
        r.results
            .iter()
            .flat_map(|r| &r.scores)
            .filter(|s| s.evidence.as_ref().is_some_and(|e| e.decided_by == by))
            .count()
    };
    let d = run(engine, llm, &fallback_items(None), args.clients)?;
    let dconf = scores(&d, "grounded_fallback");
    let mut l = line(
        "d_fallback",
        "grounded_fallback",
        &dconf,
        labels,
        &d,
        m * recs.len(),
    );
    l["form"] = json!("max(source p_e, samples), the default");
    l["units_source_larger"] = json!(decided(&d, "source"));
    l["answers_needing_samples"] = json!(recs.len());
    l["llm_calls_saved"] = json!(0);
    out.push(l);

    // (d) with the band at DEFAULT_THRESHOLDS given explicitly (options
    // source_entailment_threshold / source_contradiction_threshold): the sources decide where
    // they are sure, the samples score only the units they leave open (what sample_when_open
    // saves).
    let db = run(
        engine,
        llm,
        &fallback_items(Some(DEFAULT_THRESHOLDS)),
        args.clients,
    )?;
    let sampled_answers = db
        .results
        .iter()
        .filter(|r| {
            r.scores
                .iter()
                .any(|s| s.evidence.as_ref().is_some_and(|e| e.verdict == "silent"))
        })
        .count();
    let mut l = line(
        "d_fallback_band",
        "grounded_fallback",
        &scores(&db, "grounded_fallback"),
        labels,
        &db,
        m * sampled_answers,
    );
    l["form"] = json!("band");
    l["thresholds"] = json!({"entailment": DEFAULT_THRESHOLDS.entailment,
        "contradiction": DEFAULT_THRESHOLDS.contradiction});
    l["units_decided_by_source"] = json!(decided(&db, "source"));
    l["answers_needing_samples"] = json!(sampled_answers);
    l["llm_calls_saved"] = json!(m * (recs.len() - sampled_answers));
    out.push(l);
    let by_half = |conf: &[f64], h: usize| half_auroc(conf, &accurate, &half, h);

    // References: the larger of source and samples (no saving possible), and the thresholds
    // compared on the tune half (from (a)'s NLI probabilities and (c)'s scores).
    let ae = scores(&a, "grounded_entailment");
    let ce = scores(&c, "entailment");
    let max: Vec<f64> = ae.iter().zip(&ce).map(|(x, y)| x.max(*y)).collect();
    out.push(json!({"bench": "grounded", "data": "wikibio", "reference": "max(grounded_entailment, entailment)",
        "auroc": unit_metrics(&max, &accurate).0, "llm_calls": m * recs.len()}));
    let probs: Vec<Vec<NliProbs>> = a
        .results
        .iter()
        .flat_map(|r| {
            let mut v: Vec<_> = r
                .scores
                .iter()
                .filter(|s| s.scorer == "grounded_entailment")
                .collect();
            v.sort_by_key(|s| s.unit_idx);
            v.into_iter()
                .map(|s| match &s.evidence {
                    Some(e) if e.entailment.is_some() => {
                        let (pe, pc) =
                            (e.entailment.unwrap_or(0.0), e.contradiction.unwrap_or(0.0));
                        vec![NliProbs {
                            entailment: pe,
                            contradiction: pc,
                            neutral: 1.0 - pe - pc,
                        }]
                    }
                    _ => vec![],
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let combined = |t: Thresholds| -> Vec<f64> {
        probs
            .iter()
            .zip(&ce)
            .map(|(p, &s)| band_score(&check(p, t), t, Some(s)))
            .collect()
    };
    // The alternative band_score was chosen over: a silent unit placed in the band by the
    // samples' score alone, not by the larger of it and the source's own p_e (a silent unit's
    // p_e taken as 0 leaves only the samples).
    let samples_alone: Vec<f64> = probs
        .iter()
        .zip(&ce)
        .map(|(p, &s)| {
            let c = check(p, DEFAULT_THRESHOLDS);
            let c = match c.verdict {
                Verdict::Silent => Checked {
                    entailment: 0.0,
                    ..c
                },
                _ => c,
            };
            band_score(&c, DEFAULT_THRESHOLDS, Some(s))
        })
        .collect();
    out.push(json!({"bench": "grounded", "data": "wikibio", "reference": "fallback with the samples' score alone in the band",
        "auroc": unit_metrics(&samples_alone, &accurate).0, "auroc_tune_half": by_half(&samples_alone, 0), "auroc_check_half": by_half(&samples_alone, 1)}));
    let mut grid = Vec::new();
    for te in [0.5, 0.6, 0.7, 0.8, 0.9] {
        for tc in [0.5, 0.7, 0.8, 0.9, 0.95] {
            let t = Thresholds {
                entailment: te,
                contradiction: tc,
            };
            let conf = combined(t);
            let decided = probs
                .iter()
                .filter(|p| check(p, t).verdict != Verdict::Silent)
                .count();
            grid.push((
                by_half(&conf, 0).unwrap_or(0.0),
                te,
                tc,
                by_half(&conf, 1),
                decided,
            ));
        }
    }
    grid.sort_by(|x, y| y.0.total_cmp(&x.0));
    let best = grid[0];
    let default_conf = combined(DEFAULT_THRESHOLDS);
    out.push(json!({"bench": "grounded", "data": "wikibio", "thresholds": "chosen on the tune half",
        "best_tune": {"entailment": best.1, "contradiction": best.2, "auroc_tune": round(best.0), "auroc_check": best.3, "units_decided": best.4},
        "default": {"entailment": DEFAULT_THRESHOLDS.entailment, "contradiction": DEFAULT_THRESHOLDS.contradiction,
            "auroc_tune": by_half(&default_conf, 0), "auroc_check": by_half(&default_conf, 1)}}));
    out.push(cv::cross_validated(&probs, &ce, &accurate, &rec));
    for l in out {
        println!("{l}");
    }
    Ok(())
}

fn grounded_dev(engine: &Engine, llm: &LlmService, args: &GroundedArgs) -> Result<(), String> {
    let rows: Vec<GroundedRow> = load_jsonl(args.data, args.limit)?;
    let label: Vec<bool> = rows.iter().map(|r| r.label == 1).collect();
    let tasks = ["qa", "summarization"];
    let report = |name: &str, conf: &[f64], extra: Value| {
        let sel = |f: &dyn Fn(usize) -> bool| -> Option<f64> {
            let (c, l): (Vec<f64>, Vec<bool>) = (0..rows.len())
                .filter(|&i| f(i) && conf[i].is_finite())
                .map(|i| (conf[i], label[i]))
                .unzip();
            auroc(&c, &l).map(round)
        };
        let mut l = json!({"bench": "grounded", "data": "grounded_dev", "run": name,
            "auroc_all": sel(&|_| true),
            "auroc_tune_half": sel(&|i| i % 2 == 0), "auroc_check_half": sel(&|i| i % 2 == 1)});
        for t in tasks {
            l[format!("auroc_{t}")] = json!(sel(&|i| rows[i].task == t));
        }
        if let Value::Object(e) = extra {
            for (k, v) in e {
                l[k] = v;
            }
        }
        println!("{l}");
    };
    // Baseline: uq_nli(source, hypothesis), one windowed NLI call over the whole source.
    engine.clear_nli_cache();
    let (p0, t0) = (engine.nli_pairs_computed(), engine.nli_tokens_computed());
    let start = Instant::now();
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.source.clone(), r.hypothesis()))
        .collect();
    let probs = engine.nli(&pairs)?;
    let base: Vec<f64> = probs.iter().map(|p| p.entailment).collect();
    report(
        "baseline_uq_nli_whole_source",
        &base,
        json!({
        "nli_pairs": engine.nli_pairs_computed() - p0, "nli_tokens": engine.nli_tokens_computed() - t0,
        "wall_s": round(start.elapsed().as_secs_f64()), "llm_calls": 0}),
    );
    // The same with the QA answer alone (length-confounded: see shared/data/README.md).
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.source.clone(), r.response.clone()))
        .collect();
    let alone: Vec<f64> = engine.nli(&pairs)?.iter().map(|p| p.entailment).collect();
    report(
        "baseline_uq_nli_whole_source_answer_alone",
        &alone,
        json!({"llm_calls": 0}),
    );
    // (a) per sentence of the response (QA: question + answer as one unit) against the source's
    // most relevant sentences; the answer's score is its least supported unit (min) or the
    // mean of its units.
    for setting in &args.source_premises {
        let premise = setting.to_json();
        let items: Vec<Item> = rows
            .iter()
            .map(|r| {
                let units = r.units();
                Item {
                    response: r.response.clone(),
                    samples: vec![],
                    options: json!({"units": units, "scorers": ["grounded_entailment", "grounded_noncontradiction"],
                        "sources": r.source, "source_premise": premise}),
                }
            })
            .collect();
        let a = run(engine, llm, &items, args.clients)?;
        for s in ["grounded_entailment", "grounded_noncontradiction"] {
            for agg in [Aggregation::Min, Aggregation::Mean] {
                let conf: Vec<f64> = a
                    .results
                    .iter()
                    .map(|r| aggregate(&r.unit_scores(s), agg).unwrap_or(f64::NAN))
                    .collect();
                report(
                    &format!("a_source_{s}"),
                    &conf,
                    json!({"scorer": s, "source_premise": premise, "setting": setting.label(),
                    "aggregation": agg.as_str(),
                    "nli_pairs": a.nli_pairs, "nli_tokens": a.nli_tokens,
                    "wall_s": round(a.wall_s), "llm_calls": 0}),
                );
            }
        }
    }
    Ok(())
}
