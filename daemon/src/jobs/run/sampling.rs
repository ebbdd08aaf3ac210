//! A row's samples: its samples column, else the answer and samples generated from its prompt
//! (job option `generate`; with `grounded_fallback`, the samples it falls back on).

use serde_json::Value;
use uq_core::jobs::JobSpec;
use uq_core::options::parse_samples;
use uq_core::protocol::GeneratedResponse;

use super::cells::col;
use crate::generate;
use crate::jobs::rows::SourceRow;
use crate::role_llms::LlmService;

/// The row's samples column (a JSON array of strings), `None` when NULL.
pub(super) fn row_samples(spec: &JobSpec, row: &SourceRow) -> Result<Option<Vec<String>>, String> {
    Ok(match &row.samples {
        None => None,
        Some(s) => {
            let v: Value = serde_json::from_str(s).map_err(|e| {
            format!(
                "column {:?} is not JSON ({e}): store samples as a JSON array of strings, e.g. json_array('a', 'b')",
                col(&spec.columns.samples)
            )
        })?;
            Some(
                parse_samples(&v)
                    .map_err(|e| format!("column {:?}: {e}", col(&spec.columns.samples)))?,
            )
        }
    })
}

/// The answer and the samples generated for a row (`None`: the row had them).
pub(super) type Generated = (Option<GeneratedResponse>, Option<Vec<GeneratedResponse>>);

/// Generates the answer and the samples the row lacks, from its prompt (job option `generate`):
/// the generated answer and samples, `samples` set to the latter.
pub(super) fn generate_missing(
    llm: &LlmService,
    spec: &JobSpec,
    row: &SourceRow,
    options: &Value,
    samples: &mut Option<Vec<String>>,
) -> Result<Generated, String> {
    let answer_missing = row.answer.as_deref().is_none_or(|a| a.trim().is_empty());
    // grounded_fallback falls back on samples where the sources are silent: generated when asked.
    let samples_missing = samples.is_none()
        && (spec.parsed.scoring.needs_samples()
            || (spec.generate > 0
                && spec
                    .parsed
                    .scoring
                    .scorers
                    .contains(&uq_core::scorers::Scorer::GroundedFallback)));
    let mut generated_answer = None;
    let mut generated_samples = None;
    if !(answer_missing || samples_missing) {
        return Ok((generated_answer, generated_samples));
    }
    let what = if answer_missing {
        "the answer"
    } else {
        "the samples"
    };
    if spec.generate == 0 {
        let state = if answer_missing && row.answer.is_some() {
            "empty (blank text)"
        } else {
            "NULL"
        };
        return Err(format!(
            "{what} column is {state} for this row: fill it, or set job option generate to the number of samples to generate from the prompt"
        ));
    }
    let prompt = row
        .prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("{what} must be generated but the prompt is NULL or empty"))?;
    let g = generate::generate(llm, prompt, spec.generate, options)?;
    let mut responses = g.responses.into_iter();
    let original = responses.next();
    if answer_missing {
        generated_answer = original;
    }
    if samples_missing {
        let gen: Vec<GeneratedResponse> = responses.collect();
        *samples = Some(gen.iter().map(|r| r.text.clone()).collect());
        generated_samples = Some(gen);
    }
    Ok((generated_answer, generated_samples))
}

/// Gives the white-box scorers the generated answer's and samples' tokens: options
/// `response_logprobs` and `sample_logprobs`, unless the row's options set them or the
/// generation LLM returned none (then the white-box scores are NULL, saying why). The samples'
/// tokens go only with samples that were all generated with them.
pub(super) fn logprob_options(options: &mut Value, (answer, samples): &Generated) {
    let Some(o) = options.as_object_mut() else {
        return;
    };
    if let Some(t) = answer.as_ref().and_then(|a| a.logprobs.as_ref()) {
        if !o.contains_key("response_logprobs") {
            o.insert("response_logprobs".into(), serde_json::json!(t));
        }
    }
    let tokens: Option<Vec<_>> = samples
        .iter()
        .flatten()
        .map(|s| s.logprobs.as_ref())
        .collect();
    if let (Some(t), false) = (tokens, o.contains_key("sample_logprobs")) {
        if !t.is_empty() {
            o.insert("sample_logprobs".into(), serde_json::json!(t));
        }
    }
}
