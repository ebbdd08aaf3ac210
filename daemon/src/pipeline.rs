//! One `score` request through the paper's three stages: [`crate::decompose`] (§3.1) →
//! [`crate::score`] (§3.3) → [`crate::aggregate`] (§3.4).

use serde_json::Value;
use uq_core::calibrate::FittedOn;
use uq_core::limits::check_inputs;
use uq_core::options::{parse_options, ScoreOptions};
use uq_core::protocol::ScoreResult;

use crate::aggregate;
use crate::decompose::{decompose, Decomposed};
use crate::engine::Engine;
use crate::judge;
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
    // What the NLI judge (option nli_llm) did is a note: how its probabilities were read, and
    // the pairs it could not read (never a silent 0).
    let (stages, tally) = judge::tallied(|| -> Result<(Decomposed, Scored), String> {
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
        Ok((decomposed, scored))
    });
    let (decomposed, mut scored) = stages?;
    if let Some((cfg, _)) = opts.llm.nli_judge() {
        let label = llm.role_llm(cfg, uq_core::options::LlmRole::Nli)?;
        scored.notes.extend(tally.note(label.label()));
    }
    let mut result = aggregate::respond(decomposed, scored, &opts);
    result
        .notes
        .extend(calibration_notes(engine, &opts, Some(samples.len())));
    Ok(result)
}

/// A note per calibration model fitted on scores made with another setting than these (scorer,
/// NLI model, precision, premise, samples: `uq_core::calibrate::FittedOn`), naming the
/// difference: its probabilities may be wrong, and the user is told so.
pub fn calibration_notes(
    engine: &Engine,
    opts: &ScoreOptions,
    num_samples: Option<usize>,
) -> Vec<String> {
    if opts.calibration.models.is_empty() {
        return Vec::new();
    }
    let info = engine.info();
    opts.calibration
        .models
        .iter()
        .filter_map(|(s, c)| {
            let now = FittedOn::of_request(
                s.name(),
                &info.nli_model,
                &info.precision,
                opts.premise(),
                num_samples,
            );
            let diffs = c.mismatches(&now);
            (!diffs.is_empty()).then(|| {
                format!(
                    "calibration.{}: the model was fitted on scores made with another setting \
                     ({}), so its probabilities may be wrong here; refit it with \
                     uq_fit_calibration on scores made with this setting",
                    s.name(),
                    diffs.join("; ")
                )
            })
        })
        .collect()
}
