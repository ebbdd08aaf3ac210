//! `bench grounded`'s settings and its scoring runs: answers scored `clients` at a time on a
//! cold NLI cache, with what each run cost.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;
use uq_core::protocol::ScoreResult;
use uq_core::score::grounded::SourceSelection;
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

/// One answer to score: the options carry its units and sources.
pub(crate) struct Item {
    pub response: String,
    pub samples: Vec<String>,
    pub options: Value,
}

/// A run's results and costs.
pub(crate) struct Run {
    pub results: Vec<ScoreResult>,
    pub wall_s: f64,
    pub nli_pairs: u64,
    pub nli_tokens: u64,
}

impl Run {
    /// `scorer`'s unit scores of every answer, in answer then unit order.
    pub fn unit_scores(&self, scorer: &str) -> Vec<f64> {
        self.results
            .iter()
            .flat_map(|r| r.unit_scores(scorer))
            .collect()
    }
}

/// Scores every item, `clients` at a time, on a cold NLI cache.
pub(crate) fn run(
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
