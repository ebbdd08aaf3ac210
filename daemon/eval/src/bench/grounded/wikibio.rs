//! `bench grounded` on SelfCheckGPT WikiBio (`wiki_bio_text` as the source): the runs (a) the
//! passage's own text as the source, (b) retrieval from an FTS5 table of all passages' texts in
//! chunks, (c) the sample-based `entailment` (m samples) and (d) `grounded_fallback`, a line per
//! run and scorer with the AUROC of each half of the records; then the references and the
//! thresholds ([`super::thresholds`]).

use std::time::Instant;

use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::decompose::split_sentences;
use uq_core::score::grounded::{SourceSelection, Thresholds, DEFAULT_THRESHOLDS};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

use super::super::lines::{load_jsonl, round};
use super::metrics::{unit_metrics, Units};
use super::run::{run, GroundedArgs, Item, Run};
use super::thresholds::references;

#[derive(Deserialize)]
struct WikiBio {
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
    annotation: Vec<String>,
    wiki_bio_text: String,
}

/// The grounded scorers of runs (a) and (b).
const GROUNDED: [&str; 2] = ["grounded_entailment", "grounded_noncontradiction"];

/// The passages and their units' labels, with what scores them.
struct Bench<'a> {
    engine: &'a Engine,
    llm: &'a LlmService,
    args: &'a GroundedArgs<'a>,
    recs: Vec<WikiBio>,
    units: Units,
}

/// Runs (a) to (d), the references and the thresholds, and prints their lines.
pub(super) fn wikibio(
    engine: &Engine,
    llm: &LlmService,
    args: &GroundedArgs,
) -> Result<(), String> {
    let bench = Bench::load(engine, llm, args)?;
    let m = args.samples;
    let premise = &args.source_premises[0];
    let mut out = Vec::new();
    let a = bench.source_text(&mut out)?;
    bench.fts_retrieval(premise, &mut out)?;
    let c = bench.samples(&mut out)?;
    bench.fallback(premise, &mut out)?;
    let ce = c.unit_scores("entailment");
    out.extend(references(&a, &ce, &bench.units, m * bench.recs.len()));
    for l in out {
        println!("{l}");
    }
    Ok(())
}

/// An answer with its sentences as units; with sources, checked with `premise`'s selection.
fn item(
    r: &WikiBio,
    scorers: &[&str],
    sources: Option<(Value, &SourceSelection)>,
    samples: usize,
) -> Item {
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
}

/// Units whose evidence says `decided_by` `by`.
fn decided(r: &Run, by: &str) -> usize {
    r.results
        .iter()
        .flat_map(|r| &r.scores)
        .filter(|s| s.evidence.as_ref().is_some_and(|e| e.decided_by == by))
        .count()
}

impl<'a> Bench<'a> {
    /// Reads the passages (the first `limit`), each with at least m samples, and labels their
    /// units.
    fn load(
        engine: &'a Engine,
        llm: &'a LlmService,
        args: &'a GroundedArgs<'a>,
    ) -> Result<Self, String> {
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
        Ok(Bench {
            engine,
            llm,
            args,
            recs,
            units: Units {
                accurate,
                rec,
                half,
            },
        })
    }

    fn run(&self, items: &[Item]) -> Result<Run, String> {
        run(self.engine, self.llm, items, self.args.clients)
    }

    /// One result line of a run and scorer, with the AUROC of each half (`half[i]`: the record
    /// index parity of unit i).
    fn line(&self, run_name: &str, scorer: &str, conf: &[f64], r: &Run, llm_calls: usize) -> Value {
        let (a, ap, nulls) = unit_metrics(conf, &self.units.accurate);
        json!({
            "bench": "grounded", "data": "wikibio", "run": run_name, "scorer": scorer,
            "auroc": a, "nonfact_auc_pr": ap, "units": conf.len(), "null_scores": nulls,
            "nli_pairs": r.nli_pairs, "nli_tokens": r.nli_tokens, "wall_s": round(r.wall_s),
            "llm_calls": llm_calls,
            "auroc_tune_half": self.units.by_half(conf, 0),
            "auroc_check_half": self.units.by_half(conf, 1),
        })
    }

    /// (a) the passage's own text, per source_premise setting; the first is the one kept.
    fn source_text(&self, out: &mut Vec<Value>) -> Result<Run, String> {
        let mut first_a = None;
        for premise in &self.args.source_premises {
            let items: Vec<Item> = self
                .recs
                .iter()
                .map(|r| item(r, &GROUNDED, Some((json!(r.wiki_bio_text), premise)), 0))
                .collect();
            let a = self.run(&items)?;
            for s in GROUNDED {
                let mut l = self.line("a_source_text", s, &a.unit_scores(s), &a, 0);
                l["source_premise"] = json!(premise.label());
                out.push(l);
            }
            first_a.get_or_insert(a);
        }
        first_a.ok_or_else(|| "--source-premise names no setting".into())
    }

    /// (b) retrieval from an FTS5 table of every passage's text in chunks.
    fn fts_retrieval(&self, premise: &SourceSelection, out: &mut Vec<Value>) -> Result<(), String> {
        let (conn, owner) = chunk_table(&self.recs, self.args.chunk)?;
        let k = self.args.k;
        let t = Instant::now();
        let (mut items, mut found_own, mut notes) = (Vec::new(), 0usize, 0usize);
        for (i, r) in self.recs.iter().enumerate() {
            let mut it = item(
                r,
                &GROUNDED,
                Some((json!({"fts": "chunks", "k": k}), premise)),
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
        let b = self.run(&items)?;
        for s in GROUNDED {
            let mut l = self.line("b_fts_retrieval", s, &b.unit_scores(s), &b, 0);
            l["chunks"] = json!(owner.len());
            l["k"] = json!(k);
            l["answers_with_own_passage_retrieved"] = json!(found_own);
            l["retrieval_s"] = json!(round(retrieval_s));
            l["retrieval_notes"] = json!(notes);
            out.push(l);
        }
        Ok(())
    }

    /// (c) the sample-based entailment, m samples.
    fn samples(&self, out: &mut Vec<Value>) -> Result<Run, String> {
        let m = self.args.samples;
        let items: Vec<Item> = self
            .recs
            .iter()
            .map(|r| item(r, &["entailment"], None, m))
            .collect();
        let c = self.run(&items)?;
        let conf = c.unit_scores("entailment");
        let llm_calls = m * self.recs.len();
        out.push(self.line("c_samples", "entailment", &conf, &c, llm_calls));
        Ok(c)
    }

    /// `grounded_fallback`'s items: every answer with its source and m samples; with `band`,
    /// the band's thresholds given explicitly.
    fn fallback_items(&self, premise: &SourceSelection, band: Option<Thresholds>) -> Vec<Item> {
        self.recs
            .iter()
            .map(|r| {
                let sources = Some((json!(r.wiki_bio_text), premise));
                let mut it = item(r, &["grounded_fallback"], sources, self.args.samples);
                if let Some(t) = band {
                    it.options["source_entailment_threshold"] = json!(t.entailment);
                    it.options["source_contradiction_threshold"] = json!(t.contradiction);
                }
                it
            })
            .collect()
    }

    /// (d) `grounded_fallback` as it scores by default, then with the band.
    fn fallback(&self, premise: &SourceSelection, out: &mut Vec<Value>) -> Result<(), String> {
        let (m, n) = (self.args.samples, self.recs.len());
        // max(source p_e, samples' score) on every unit, so every answer needs its samples.
        let d = self.run(&self.fallback_items(premise, None))?;
        let dconf = d.unit_scores("grounded_fallback");
        let mut l = self.line("d_fallback", "grounded_fallback", &dconf, &d, m * n);
        l["form"] = json!("max(source p_e, samples), the default");
        l["units_source_larger"] = json!(decided(&d, "source"));
        l["answers_needing_samples"] = json!(n);
        l["llm_calls_saved"] = json!(0);
        out.push(l);

        // With the band at DEFAULT_THRESHOLDS given explicitly (options
        // source_entailment_threshold / source_contradiction_threshold): the sources decide where
        // they are sure, the samples score only the units they leave open (what sample_when_open
        // saves).
        let db = self.run(&self.fallback_items(premise, Some(DEFAULT_THRESHOLDS)))?;
        let sampled_answers = db
            .results
            .iter()
            .filter(|r| {
                r.scores
                    .iter()
                    .any(|s| s.evidence.as_ref().is_some_and(|e| e.verdict == "silent"))
            })
            .count();
        let conf = db.unit_scores("grounded_fallback");
        let llm_calls = m * sampled_answers;
        let mut l = self.line(
            "d_fallback_band",
            "grounded_fallback",
            &conf,
            &db,
            llm_calls,
        );
        l["form"] = json!("band");
        l["thresholds"] = json!({"entailment": DEFAULT_THRESHOLDS.entailment,
            "contradiction": DEFAULT_THRESHOLDS.contradiction});
        l["units_decided_by_source"] = json!(decided(&db, "source"));
        l["answers_needing_samples"] = json!(sampled_answers);
        l["llm_calls_saved"] = json!(m * (n - sampled_answers));
        out.push(l);
        Ok(())
    }
}

/// An in-memory FTS5 table `chunks` of every passage's text in runs of `chunk` sentences, and
/// the record each chunk comes from (rowid - 1 → record).
fn chunk_table(recs: &[WikiBio], chunk: usize) -> Result<(Connection, Vec<usize>), String> {
    let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE VIRTUAL TABLE chunks USING fts5(body)")
        .map_err(|e| e.to_string())?;
    let mut owner: Vec<usize> = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        for c in split_sentences(&r.wiki_bio_text).chunks(chunk.max(1)) {
            conn.execute("INSERT INTO chunks(body) VALUES (?1)", [c.join(" ")])
                .map_err(|e| e.to_string())?;
            owner.push(i);
        }
    }
    Ok((conn, owner))
}
