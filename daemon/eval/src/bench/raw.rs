//! The raw-model ceiling: the NLI model alone on a benchmark's distinct NLI pairs,
//! pre-tokenised and length-sorted, at the batch the batcher forms.

use std::collections::HashSet;
use std::time::Instant;

use uq_core::decompose::split_sentences;
use uq_core::score::premise::Premise;

use super::options::Job;
use uqd::engine::Engine;
use uqd::score::premise::premises;

/// The distinct NLI pairs the scorers ask for: (sample, unit) for the unit-response family and,
/// when `matched`, (sample unit, unit) with each sample's units as given, else its sentences,
/// and, when `graph`, (response or sample, claim) for every claim of the union and the units;
/// whole texts reduced as `premise` selects.
fn all_nli_pairs(
    engine: &Engine,
    jobs: &[Job],
    matched: bool,
    graph: bool,
    premise: Premise,
) -> Result<Vec<(String, String)>, String> {
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    let mut add = |pair: (String, String)| {
        if seen.insert(pair.clone()) {
            pairs.push(pair);
        }
    };
    for job in jobs {
        let sample_units: Vec<String> = if !matched {
            Vec::new()
        } else if let Some(su) = &job.sample_units {
            su.iter().flatten().cloned().collect()
        } else {
            job.samples
                .iter()
                .flat_map(|s| split_sentences(s))
                .collect()
        };
        let samples: Vec<&str> = job.samples.iter().map(String::as_str).collect();
        let selected = premises(engine, premise, &samples, &job.units)?;
        for (u, row) in job.units.iter().zip(selected) {
            for p in row.into_iter().chain(sample_units.iter().cloned()) {
                add((p, u.clone()));
            }
        }
        if let (true, Some(union)) = (graph, &job.claim_union) {
            let answers: Vec<&str> = std::iter::once(job.response.as_str())
                .filter(|r| !r.trim().is_empty())
                .chain(samples.iter().copied())
                .collect();
            let claims: Vec<String> = union.iter().chain(&job.units).cloned().collect();
            let selected = premises(engine, premise, &answers, &claims)?;
            for (c, row) in claims.iter().zip(selected) {
                for p in row {
                    add((p, c.clone()));
                }
            }
        }
    }
    Ok(pairs)
}

/// At most `n` of `items`, evenly spread over them.
fn spread_sample<T>(items: Vec<T>, n: usize) -> Vec<T> {
    if items.len() <= n {
        return items;
    }
    let step = items.len() as f64 / n as f64;
    let mut want = (0..n).map(|i| (i as f64 * step) as usize).peekable();
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, x)| {
            if want.peek() == Some(&i) {
                want.next();
                Some(x)
            } else {
                None
            }
        })
        .collect()
}

/// The raw model's pairs/s on at most `n` of the jobs' distinct NLI pairs (evenly spread), at
/// the batch the batcher forms, and the number of pairs it ran; `(None, 0)` when `n` is 0.
pub(super) fn raw_ceiling(
    engine: &Engine,
    jobs: &[Job],
    matched: bool,
    graph: bool,
    premise: Premise,
    n: usize,
) -> Result<(Option<f64>, usize), String> {
    if n == 0 {
        return Ok((None, 0));
    }
    let pairs = spread_sample(all_nli_pairs(engine, jobs, matched, graph, premise)?, n);
    if pairs.is_empty() {
        return Ok((None, 0));
    }
    Ok((
        Some(raw_throughput(engine, &pairs, engine.nli_batch())?),
        pairs.len(),
    ))
}

/// Pairs per second of the ONNX model alone on length-sorted batches of `max_batch` (the batch
/// the batcher forms).
fn raw_throughput(
    engine: &Engine,
    pairs: &[(String, String)],
    max_batch: usize,
) -> Result<f64, String> {
    let mut windows = engine.nli_encode(pairs)?;
    windows.sort_by_key(|w| w.len());
    let batches: Vec<Vec<_>> = windows
        .chunks(max_batch.max(1))
        .map(|c| c.to_vec())
        .collect();
    let t = Instant::now();
    engine.nli_raw_forward(&batches)?;
    Ok(pairs.len() as f64 / t.elapsed().as_secs_f64())
}
