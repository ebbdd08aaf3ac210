//! `uqd bench spans`: the claim alignment (`uq_core::decompose::spans`) against hand-marked
//! spans of FActScore-Bio answers (tests/golden/spans/: one `{line, claim_idx, start, end}` per
//! claim of the first answers of a graph-uq file, `start`/`end` null for a claim the marker
//! found no place for). No model and no LLM: the claims are the file's `response_claims`.
//!
//! Per claim with a hand-marked span: character precision, recall and F1 of the aligned span
//! against it (0 when the aligner gave none), whether the two overlap, and whether the aligned
//! span lies in the hand-marked span's sentence. Printed: one JSON line with the means, the
//! share of claims placed, and the share of claims the marker left unplaced that the aligner
//! placed anyway.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};
use uq_core::decompose::spans::{unit_spans, Span};
use uq_core::decompose::split_sentence_spans;

pub struct SpansArgs<'a> {
    pub data: &'a Path,
    pub marks: &'a Path,
}

/// What one claim scored.
#[derive(Default)]
struct Tally {
    claims: usize,
    marked: usize,
    placed: usize,
    /// Hand-marked claims the aligner placed.
    placed_marked: usize,
    overlap: usize,
    same_sentence: usize,
    precision: f64,
    recall: f64,
    f1: f64,
    /// Claims the marker could not place.
    unmarked: usize,
    /// …that the aligner placed.
    unmarked_placed: usize,
}

impl Tally {
    /// One claim: its aligned span `got` against the hand-marked `marked` (characters).
    fn add(&mut self, response: &str, got: Option<Span>, marked: Option<(usize, usize)>) {
        self.claims += 1;
        self.placed += got.is_some() as usize;
        let Some((gs, ge)) = marked else {
            self.unmarked += 1;
            self.unmarked_placed += got.is_some() as usize;
            return;
        };
        self.marked += 1;
        let Some(s) = got else { return };
        self.placed_marked += 1;
        let inter = s.end.min(ge).saturating_sub(s.start.max(gs)) as f64;
        let (p, r) = (inter / (s.end - s.start) as f64, inter / (ge - gs) as f64);
        self.precision += p;
        self.recall += r;
        if inter > 0.0 {
            self.f1 += 2.0 * p * r / (p + r);
            self.overlap += 1;
        }
        let sentence = sentence_of(response, s.start);
        self.same_sentence +=
            (sentence.is_some() && sentence == sentence_of(response, gs)) as usize;
    }
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// The sentence (index) holding character `c` of `text`.
fn sentence_of(text: &str, c: usize) -> Option<usize> {
    let byte = text.char_indices().nth(c).map(|(b, _)| b)?;
    split_sentence_spans(text)
        .iter()
        .position(|&(s, e)| s <= byte && byte < e)
}

pub fn spans(args: &SpansArgs<'_>) -> Result<(), String> {
    let data = read_jsonl(args.data)?;
    let marks = read_jsonl(args.marks)?;
    let mut by_line: HashMap<usize, Vec<&Value>> = HashMap::new();
    for m in &marks {
        let line = m["line"]
            .as_u64()
            .ok_or("marks: every line needs \"line\"")? as usize;
        by_line.entry(line).or_default().push(m);
    }
    let mut t = Tally::default();
    let mut answers = 0;
    for (line, ms) in by_line.iter() {
        let record = data
            .get(*line)
            .ok_or_else(|| format!("marks: line {line} is not in {}", args.data.display()))?;
        let response = record["response"].as_str().ok_or("data: no response")?;
        let claims: Vec<String> = record["response_claims"]
            .as_array()
            .ok_or("data: no response_claims")?
            .iter()
            .map(|c| c["claim"].as_str().unwrap_or_default().to_string())
            .collect();
        answers += 1;
        let aligned = unit_spans(response, &claims);
        for m in ms {
            let k = m["claim_idx"].as_u64().ok_or("marks: no claim_idx")? as usize;
            let marked = match (m["start"].as_u64(), m["end"].as_u64()) {
                (Some(s), Some(e)) => Some((s as usize, e as usize)),
                _ => None,
            };
            t.add(response, aligned.get(k).copied().flatten(), marked);
        }
    }
    let share = |n: usize, d: usize| {
        if d == 0 {
            Value::Null
        } else {
            json!(n as f64 / d as f64)
        }
    };
    let mean = |x: f64, d: usize| {
        if d == 0 {
            Value::Null
        } else {
            json!(x / d as f64)
        }
    };
    println!(
        "{}",
        json!({
            "bench": "spans",
            "data": args.data.display().to_string(),
            "answers": answers,
            "claims": t.claims,
            "hand_marked": t.marked,
            "placed": share(t.placed, t.claims),
            "overlap": share(t.overlap, t.marked),
            "same_sentence": share(t.same_sentence, t.marked),
            "char_f1": mean(t.f1, t.marked),
            "char_precision_placed": mean(t.precision, t.placed_marked),
            "char_recall": mean(t.recall, t.marked),
            "unmarked": t.unmarked,
            "unmarked_placed": t.unmarked_placed,
        })
    );
    Ok(())
}
