//! One `score` request through the paper's three stages: [`crate::decompose`] (§3.1) →
//! [`crate::score`] (§3.3) → [`crate::aggregate`] (§3.4).

use serde_json::Value;
use uq_core::limits::check_inputs;
use uq_core::options::parse_options;
use uq_core::protocol::ScoreResult;

use crate::aggregate;
use crate::decompose::{decompose, Decomposed};
use crate::engine::Engine;
use crate::role_llms::LlmService;
use crate::score::{self, Context, Scored};

/// Scores `response` against `samples` as `options` asks (docs/reference.md, options).
pub fn score(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    samples: &[String],
    options: &Value,
) -> Result<ScoreResult, String> {
    let opts = parse_options(options)?;
    let samples = check_inputs(response, samples, &opts)?;
    // Short-form scorers compare whole answers: no decomposition unless a unit scorer needs it.
    let decomposed = if opts.scoring.needs_units() {
        decompose(engine, llm, response, &samples, &opts)?
    } else {
        Decomposed::default()
    };
    let scored: Scored = score::score(&Context {
        engine,
        llm,
        response,
        units: &decomposed.units,
        samples: &samples,
        sample_units: decomposed.sample_units.as_deref(),
        opts: &opts,
    })?;
    Ok(aggregate::respond(decomposed, scored, &opts))
}
