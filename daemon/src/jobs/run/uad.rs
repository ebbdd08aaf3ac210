//! A row's UAD step (job option `uad`): uncertainty-aware decoding over the units just scored.

use serde_json::Value;
use uq_core::jobs::JobSpec;
use uq_core::protocol::{ScoreResult, UadResult};

use crate::aggregate::uad;
use crate::engine::Engine;
use crate::role_llms::LlmService;

/// UAD over the claims just scored (job option `uad`): their scores by the UAD scorer are reused
/// when the job computed them (the UAD scorer is the first of `scorers` unless `uad_scorer`
/// names another).
pub(super) fn row_uad(
    engine: &Engine,
    llm: &LlmService,
    spec: &JobSpec,
    answer: &str,
    samples: &[String],
    options: &Value,
    score: &ScoreResult,
) -> Result<Option<UadResult>, String> {
    if !spec.uad || score.units.is_empty() {
        return Ok(None);
    }
    let uad_scorer = spec.parsed.uad_scorer();
    Ok(Some(if spec.parsed.scoring.scorers.contains(&uad_scorer) {
        let scores = score.unit_scores(uad_scorer.name());
        uad::decide(
            engine,
            llm,
            &spec.parsed,
            answer,
            score.units.clone(),
            &score.origins,
            scores,
        )?
    } else {
        let mut o = options.clone();
        if let Some(map) = o.as_object_mut() {
            map.insert("units".into(), serde_json::json!(score.units));
            // The job's granularity decides: sentences are filtered without an LLM.
            let g = spec.parsed.decompose.granularity;
            map.insert("granularity".into(), serde_json::json!(g.as_str()));
        }
        uad::uad(engine, llm, answer, samples, &o)?
    }))
}
