//! `uqd bench grounded`: grounded checking (docs/reference.md, "Grounded checking") against
//! the sample-based scorers. On SelfCheckGPT WikiBio (`wiki_bio_text` as the source): (a) the
//! passage's own text as the source, (b) retrieval from an FTS5 table of all passages' texts in
//! chunks, (c) the sample-based `entailment` (m samples), (d) `grounded_fallback` (its default,
//! max(source p_e, samples), and the band at the default thresholds given explicitly). On
//! `grounded_dev.jsonl`: (a) per task and overall beside the whole-source `uq_nli` baseline.
//! Thresholds and K are compared on one half of the records and reported on the other (even /
//! odd record index). Prints one JSON object per line.
//!
//! The bench's settings and scoring runs are in `run`, the WikiBio runs in `wikibio` (their
//! references and thresholds in `thresholds` and `cv`, the figures in `metrics`), the
//! grounded_dev runs in `dev`.

use serde_json::Value;
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

mod cv;
mod dev;
mod metrics;
mod run;
mod thresholds;
mod wikibio;

pub(super) use dev::GroundedRow;
pub use run::GroundedArgs;
pub(super) use run::{run, Item};

/// Runs the bench on the records of `--data`, told apart by their first line's fields.
pub fn grounded(engine: &Engine, llm: &LlmService, args: &GroundedArgs) -> Result<(), String> {
    let first = std::fs::read_to_string(args.data)
        .map_err(|e| format!("cannot read --data {}: {e}", args.data.display()))?;
    let first: Value = first
        .lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if first.get("wiki_bio_text").is_some() {
        wikibio::wikibio(engine, llm, args)
    } else if first.get("source").is_some() {
        dev::grounded_dev(engine, llm, args)
    } else {
        Err(format!(
            "--data {}: neither SelfCheckGPT WikiBio records (wiki_bio_text) nor grounded records \
             (source, response, label): pass ../shared/data/selfcheck_wikibio_dev.jsonl or \
             ../shared/data/grounded_dev.jsonl",
            args.data.display()
        ))
    }
}
