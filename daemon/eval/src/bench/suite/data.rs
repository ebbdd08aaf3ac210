//! The suite's datasets: every shared evaluation file read as answers to score (the options
//! carry their units, samples and sources) and the labels of their units.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::grounded::{GroundedRow, Item};
use super::super::lines::load_jsonl;
use super::super::wikibio::WikiBio;

/// The conformal level of the transfer figures.
pub const ALPHA: f64 = 0.1;

/// The default scorers (`uq_core::options::DEFAULT_SCORERS`), by name.
pub const DEFAULT: [&str; 3] = ["entailment", "noncontradiction", "contrasted_entailment"];

/// How a dataset's figures are read from its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// One label per unit (sentence or claim); units are grouped by answer.
    Unit,
    /// One label per answer: the answer's confidence (response score) is the figure's score.
    Answer,
}

/// One dataset of the suite.
pub struct Dataset {
    /// Short name, e.g. `wikibio_dev`.
    pub name: &'static str,
    /// The file it was read from (its name).
    pub file: &'static str,
    pub level: Level,
    pub items: Vec<Item>,
    /// Per item, the labels of its units (`Level::Unit`; `None`: unlabelled, left out) or its
    /// one label (`Level::Answer`).
    pub labels: Vec<Vec<Option<bool>>>,
    /// Per item, per unit, whether it is major-inaccurate (WikiBio's three classes; empty
    /// elsewhere): the NonFact\* figure.
    pub major: Vec<Vec<bool>>,
    /// The scorers run (and read).
    pub scorers: Vec<&'static str>,
    /// LLM calls the answers' scores rest on: the samples the sample scorers read (given in the
    /// file; a user would generate them).
    pub llm_calls: usize,
}

impl Dataset {
    /// A dataset of labelled units whose answers rest on `samples` LLM calls each.
    fn of_units(
        name: &'static str,
        file: &'static str,
        samples: usize,
        items: Vec<Item>,
        labels: Vec<Vec<Option<bool>>>,
        major: Vec<Vec<bool>>,
        scorers: Vec<&'static str>,
    ) -> Dataset {
        Dataset {
            name,
            file,
            level: Level::Unit,
            llm_calls: samples * items.len(),
            items,
            labels,
            major,
            scorers,
        }
    }
}

/// Which files the suite reads, and how each becomes datasets.
pub const FILES: [(&str, &str); 7] = [
    ("wikibio_dev", "selfcheck_wikibio_dev.jsonl"),
    ("wikibio_dev2", "selfcheck_wikibio_dev2.jsonl"),
    ("factscore_gpt4", "graph_uq_factscore_gpt-4.jsonl"),
    ("factscore_gpt35", "graph_uq_factscore_gpt-3.5-turbo.jsonl"),
    ("popqa_llama3", "graph_uq_popqa_llama-3-70b-instruct.jsonl"),
    (
        "factscore_llama3",
        "graph_uq_factscore_llama-3-70b-instruct.jsonl",
    ),
    ("grounded", "grounded_dev.jsonl"),
];

/// The two pairs of claim files: a change of LLM (same domain) and of domain (same LLM).
pub const PAIRS: [(&str, &str); 2] = [
    ("factscore_gpt4", "factscore_gpt35"),
    ("popqa_llama3", "factscore_llama3"),
];

/// The scoring settings every request carries.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Samples per answer (m).
    pub samples: usize,
    /// Answers per file (per task for grounded_dev); `None`: all.
    pub limit: Option<usize>,
    /// Option `premise` (`None`: the default at the granularity).
    pub premise: Option<Value>,
    /// Option `source_premise` (`None`: the default).
    pub source_premise: Option<Value>,
}

impl Settings {
    fn options(&self, mut o: Value, sources: bool) -> Value {
        if let Some(p) = &self.premise {
            o["premise"] = p.clone();
        }
        if let (true, Some(p)) = (sources, &self.source_premise) {
            o["source_premise"] = p.clone();
        }
        o
    }
}

#[derive(Deserialize)]
struct ClaimsRecord {
    response: String,
    samples: Vec<String>,
    response_claims: Vec<Claim>,
}

#[derive(Deserialize)]
struct Claim {
    claim: String,
    label: Option<u8>,
}

/// Every dataset of the files in `dir`.
pub fn load(dir: &Path, s: &Settings) -> Result<Vec<Dataset>, String> {
    let mut out = Vec::new();
    for (name, file) in FILES {
        let path = dir.join(file);
        if !path.exists() {
            return Err(format!(
                "--data-dir {}: {file} is missing; pass the folder of the shared evaluation \
                 files (../shared/data)",
                dir.display()
            ));
        }
        match name {
            "wikibio_dev" | "wikibio_dev2" => out.push(wikibio(name, file, &path, s)?),
            "grounded" => out.extend(grounded(file, &path, s)?),
            _ => out.push(claims(name, file, &path, s)?),
        }
    }
    Ok(out)
}

fn check_samples(file: &str, have: usize, m: usize) -> Result<(), String> {
    if have < m {
        return Err(format!(
            "--samples {m} but an answer of {file} has only {have} samples"
        ));
    }
    Ok(())
}

/// Sentence level: the annotated sentences as units, the first m samples; non-factual = minor or
/// major inaccurate. With the Wikipedia text (dev), also the grounded scorers against it.
fn wikibio(
    name: &'static str,
    file: &'static str,
    path: &Path,
    s: &Settings,
) -> Result<Dataset, String> {
    let recs: Vec<WikiBio> = load_jsonl(path, s.limit)?;
    let grounded = recs.iter().all(|r| r.wiki_bio_text.is_some());
    let mut scorers = DEFAULT.to_vec();
    if grounded {
        scorers.extend(["grounded_entailment", "grounded_fallback"]);
    }
    let mut items = Vec::new();
    let mut labels = Vec::new();
    let mut major = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        check_samples(file, r.gpt3_text_samples.len(), s.samples)?;
        if r.annotation.len() != r.gpt3_sentences.len() {
            return Err(format!(
                "{file} record {}: annotation and gpt3_sentences differ in length",
                i + 1
            ));
        }
        let mut o = json!({"units": r.gpt3_sentences, "scorers": scorers,
            "num_samples": s.samples, "granularity": "sentence"});
        if let Some(text) = r.wiki_bio_text.as_ref().filter(|_| grounded) {
            o["sources"] = json!(text);
        }
        items.push(Item {
            response: r.gpt3_text.clone(),
            samples: r.gpt3_text_samples[..s.samples].to_vec(),
            options: s.options(o, grounded),
        });
        labels.push(r.annotation.iter().map(|a| Some(a == "accurate")).collect());
        major.push(
            r.annotation
                .iter()
                .map(|a| a == "major_inaccurate")
                .collect(),
        );
    }
    Ok(Dataset::of_units(
        name, file, s.samples, items, labels, major, scorers,
    ))
}

/// Claim level: the answer's labelled claims as units (unlabelled ones are left out: the
/// default scorers score each unit alone), the first m samples.
fn claims(
    name: &'static str,
    file: &'static str,
    path: &Path,
    s: &Settings,
) -> Result<Dataset, String> {
    let recs: Vec<ClaimsRecord> = load_jsonl(path, s.limit)?;
    let mut items = Vec::new();
    let mut labels = Vec::new();
    for r in &recs {
        check_samples(file, r.samples.len(), s.samples)?;
        let labelled: Vec<&Claim> = r
            .response_claims
            .iter()
            .filter(|c| c.label.is_some())
            .collect();
        if labelled.is_empty() {
            continue;
        }
        let units: Vec<&str> = labelled.iter().map(|c| c.claim.as_str()).collect();
        let o = json!({"units": units, "scorers": DEFAULT, "num_samples": s.samples,
            "granularity": "claim"});
        items.push(Item {
            response: r.response.clone(),
            samples: r.samples[..s.samples].to_vec(),
            options: s.options(o, false),
        });
        labels.push(labelled.iter().map(|c| c.label.map(|l| l == 1)).collect());
    }
    Ok(Dataset::of_units(
        name,
        file,
        s.samples,
        items,
        labels,
        Vec::new(),
        DEFAULT.to_vec(),
    ))
}

/// Answer level, one dataset per task: the response's sentences as units (QA: question + answer
/// as one unit, against the length confound of shared/data/README.md), checked against the
/// source; the answer's label.
fn grounded(file: &'static str, path: &Path, s: &Settings) -> Result<Vec<Dataset>, String> {
    let rows: Vec<GroundedRow> = load_jsonl(path, None)?;
    let scorers = vec!["grounded_entailment", "grounded_noncontradiction"];
    let mut out = Vec::new();
    for (name, task) in [
        ("grounded_qa", "qa"),
        ("grounded_summaries", "summarization"),
    ] {
        let mut items = Vec::new();
        let mut labels = Vec::new();
        for r in rows.iter().filter(|r| r.task == task) {
            if s.limit.is_some_and(|l| items.len() >= l) {
                break;
            }
            let o = json!({"units": r.units(), "scorers": scorers, "sources": r.source});
            items.push(Item {
                response: r.response.clone(),
                samples: vec![],
                options: s.options(o, true),
            });
            labels.push(vec![Some(r.label == 1)]);
        }
        out.push(Dataset {
            name,
            file,
            level: Level::Answer,
            items,
            labels,
            major: Vec::new(),
            scorers: scorers.clone(),
            llm_calls: 0,
        });
    }
    Ok(out)
}
