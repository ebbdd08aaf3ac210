//! `uqd bench white-box`: the white-box scorers beside the black-box ones on answers a program
//! can grade ([`questions`]: sums, products, weekdays of dates, unit conversions, letter counts,
//! the next month, the larger number). The generation LLM (`--llm`, e.g. SmolLM2 behind the
//! llama.cpp server: `scripts/bench-white-box.sh`) answers each question at temperature 0 with
//! its token log-probabilities and top-k alternatives and draws `--samples` sampled answers
//! (temperature 1) in the same `generate` call; every scorer then scores the answer with those
//! tokens and samples; the label is the program's grade. Prints one JSON line per scorer (AUROC
//! of the answer's confidence against its correctness, with a 95 % interval over resampled
//! questions), one summary line (accuracy per kind, seconds per answer to generate and to
//! score) and, with `--items`, each question's answer, grade and scores; an aligned table goes
//! to stderr.

pub mod questions;

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};
use uq_core::evaluation::{Figure, Labelled};
use uq_core::metrics::bootstrap::{Interval, RESAMPLES, SEED};
use uq_core::scorers::{Family, Scorer};

use super::lines::round;
use questions::{grade, questions, Question};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// The scorers of the bench: every white-box one (the unit scorers on the answer's sentences,
/// mean-aggregated) and the black-box ones that need no LLM call of their own.
const WHITE_BOX: [&str; 12] = [
    "min_probability",
    "sequence_probability",
    "mean_token_negentropy",
    "min_token_negentropy",
    "probability_margin",
    "monte_carlo_probability",
    "consistency_and_confidence",
    "semantic_negentropy",
    "semantic_density",
    "claim_probability",
    "claim_normalized_probability",
    "claim_min_token_negentropy",
];
const BLACK_BOX: [&str; 6] = [
    "entailment",
    "noncontradiction",
    "shortform_noncontradiction",
    "shortform_semantic_negentropy",
    "shortform_cosine_sim",
    "unigram_avg",
];

pub struct WhiteBoxArgs<'a> {
    /// The generation LLM's config (`logprobs` and `top_logprobs` are set by the bench).
    pub llm: &'a Value,
    pub questions: usize,
    pub samples: usize,
    pub seed: u64,
    pub max_tokens: u32,
    pub items: Option<&'a Path>,
}

/// One graded and scored answer.
struct Item {
    question: Question,
    answer: String,
    correct: bool,
    scores: Vec<Option<f64>>,
    generate_s: f64,
    score_s: f64,
}

/// The bench's scorers: those whose model is loaded (the cosine ones need embeddings).
fn scorers(engine: &Engine) -> Vec<Scorer> {
    WHITE_BOX
        .iter()
        .chain(BLACK_BOX.iter())
        .map(|n| Scorer::parse(n).expect("a catalogue name"))
        .filter(|s| engine.has_embeddings() || !s.needs_embeddings())
        .collect()
}

/// Runs the bench and prints its lines.
pub fn white_box(engine: &Engine, llm: &LlmService, a: &WhiteBoxArgs) -> Result<(), String> {
    if a.questions < 4 {
        return Err(
            "--questions must be at least 4 (an AUROC needs right and wrong answers)".into(),
        );
    }
    let mut config = a.llm.clone();
    let c = config
        .as_object_mut()
        .ok_or("--llm must be a JSON object: an LLM config, e.g. {\"backend\":\"local\"}")?;
    c.insert("logprobs".into(), json!(true));
    c.entry("top_logprobs").or_insert(json!(5));
    c.insert("max_tokens".into(), json!(a.max_tokens));
    let scorers = scorers(engine);
    let mut items = Vec::with_capacity(a.questions);
    for (i, q) in questions(a.questions, a.seed).into_iter().enumerate() {
        items.push(answer_and_score(
            engine, llm, &config, &scorers, q, a.samples,
        )?);
        if (i + 1) % 10 == 0 {
            eprintln!("bench white-box: {} of {} answers", i + 1, a.questions);
        }
    }
    if let Some(path) = a.items {
        write_items(path, &items, &scorers)?;
    }
    print_lines(&items, &scorers, a, &config)
}

fn answer_and_score(
    engine: &Engine,
    llm: &LlmService,
    config: &Value,
    scorers: &[Scorer],
    question: Question,
    samples: usize,
) -> Result<Item, String> {
    let t = Instant::now();
    let g = uqd::generate::generate(
        llm,
        &question.prompt,
        samples,
        &json!({"generation_llm": config}),
    )?;
    let generate_s = t.elapsed().as_secs_f64();
    let rows = g.responses;
    let answer = rows[0].text.clone();
    let texts: Vec<String> = rows[1..].iter().map(|r| r.text.clone()).collect();
    let sample_lps: Option<Vec<_>> = rows[1..].iter().map(|r| r.logprobs.clone()).collect();
    let names: Vec<&str> = scorers.iter().map(|s| s.name()).collect();
    let options = json!({
        "scorers": names, "prompt": question.prompt,
        "response_logprobs": rows[0].logprobs, "sample_logprobs": sample_lps,
    });
    let t = Instant::now();
    // An empty answer cannot be scored: NULL scores, graded wrong.
    let result = if answer.trim().is_empty() {
        None
    } else {
        Some(uqd::pipeline::score(
            engine, llm, &answer, &texts, &options,
        )?)
    };
    let score_s = t.elapsed().as_secs_f64();
    let scores = scorers
        .iter()
        .map(|s| {
            result
                .as_ref()
                .and_then(|r| r.response_scores.get(s.name()).copied().flatten())
                .filter(|x| x.is_finite())
        })
        .collect();
    Ok(Item {
        correct: grade(&question, &answer),
        question,
        answer,
        scores,
        generate_s,
        score_s,
    })
}

/// The AUROC of scorer `k` over the items it scored, with its interval over resampled items
/// (each item its own answer; the suite's resamples and seed).
fn auroc_of(items: &[Item], k: usize) -> (usize, Option<Interval>) {
    let (scores, labels): (Vec<f64>, Vec<bool>) = items
        .iter()
        .filter_map(|it| it.scores[k].map(|s| (s, it.correct)))
        .unzip();
    let set = Labelled {
        answers: (0..scores.len()).collect(),
        scores,
        labels,
        major: Vec::new(),
    };
    (
        set.scores.len(),
        Figure::Auroc.interval(&set, RESAMPLES, SEED),
    )
}

fn print_lines(
    items: &[Item],
    scorers: &[Scorer],
    a: &WhiteBoxArgs,
    config: &Value,
) -> Result<(), String> {
    let n = items.len() as f64;
    let correct = items.iter().filter(|i| i.correct).count();
    let mut table = vec![format!(
        "{:<30} {:<11} {:>6} {:>24}",
        "scorer", "family", "scored", "AUROC [95 %]"
    )];
    for (k, s) in scorers.iter().enumerate() {
        let (scored, iv) = auroc_of(items, k);
        let family = if s.family() == Family::WhiteBox {
            "white_box"
        } else {
            "black_box"
        };
        let line = json!({
            "bench": "white_box", "scorer": s.name(), "family": family, "scored": scored,
            "auroc": iv.map(|i| round(i.estimate)), "low": iv.map(|i| round(i.low)),
            "high": iv.map(|i| round(i.high)),
        });
        println!("{line}");
        table.push(format!(
            "{:<30} {:<11} {:>6} {:>24}",
            s.name(),
            family,
            scored,
            iv.map_or("-".to_string(), |i| format!(
                "{:.3} [{:.3}, {:.3}]",
                i.estimate, i.low, i.high
            ))
        ));
    }
    let mut kinds: Vec<&str> = items.iter().map(|i| i.question.kind).collect();
    kinds.dedup();
    kinds.sort_unstable();
    kinds.dedup();
    let per_kind: serde_json::Map<String, Value> = kinds
        .iter()
        .map(|k| {
            let of: Vec<&Item> = items.iter().filter(|i| i.question.kind == *k).collect();
            let right = of.iter().filter(|i| i.correct).count();
            (k.to_string(), json!(round(right as f64 / of.len() as f64)))
        })
        .collect();
    let mean = |f: fn(&Item) -> f64| items.iter().map(f).sum::<f64>() / n;
    let summary = json!({
        "bench": "white_box", "summary": true, "questions": items.len(), "samples": a.samples,
        "seed": a.seed, "llm": config, "correct": correct, "accuracy": round(correct as f64 / n),
        "accuracy_per_kind": per_kind,
        "generate_s_per_answer": round(mean(|i| i.generate_s)),
        "score_s_per_answer": round(mean(|i| i.score_s)),
    });
    println!("{summary}");
    table.push(format!(
        "{} answers, {correct} right ({:.1} %); {:.2} s to generate and {:.2} s to score an answer",
        items.len(),
        100.0 * correct as f64 / n,
        mean(|i| i.generate_s),
        mean(|i| i.score_s)
    ));
    eprintln!("{}", table.join("\n"));
    Ok(())
}

fn write_items(path: &Path, items: &[Item], scorers: &[Scorer]) -> Result<(), String> {
    let mut f =
        std::fs::File::create(path).map_err(|e| format!("--items {}: {e}", path.display()))?;
    for it in items {
        let scores: serde_json::Map<String, Value> = scorers
            .iter()
            .zip(&it.scores)
            .map(|(s, v)| (s.name().to_string(), json!(v)))
            .collect();
        let line = json!({"kind": it.question.kind, "prompt": it.question.prompt,
            "answer": it.answer, "correct": it.correct, "scores": scores});
        writeln!(f, "{line}").map_err(|e| format!("--items {}: {e}", path.display()))?;
    }
    Ok(())
}
