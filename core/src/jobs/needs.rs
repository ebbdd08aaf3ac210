//! What a job's settings need from the table and the scoring options: grading a reference, the
//! scorers samples, `sample_when_open` the grounded fallback, generation the prompts.

use super::spec::JobSpec;

/// What the job's settings need from the table and the scoring options: UAD claims, grading a
/// reference, the scorers samples, generation the prompts.
pub(super) fn check_needs(spec: &JobSpec, table: &str) -> Result<(), String> {
    let (parsed, columns) = (&spec.parsed, &spec.columns);
    if spec.grade && columns.reference.is_none() {
        return Err(
            "option grade needs the reference text: name its column with option reference_column"
                .into(),
        );
    }
    if columns.samples.is_none() && spec.generate == 0 && parsed.scoring.needs_samples() {
        return Err(format!(
            "table {table:?} has no samples column: name it with option samples_column, or set option generate to the number of samples to generate"
        ));
    }
    if spec.sample_when_open {
        if !(spec.generate > 0
            && parsed
                .scoring
                .scorers
                .contains(&crate::scorers::Scorer::GroundedFallback))
        {
            return Err(
                "option sample_when_open generates samples only for the rows the sources leave \
                 open: it needs scorer grounded_fallback and option generate (the samples per \
                 row), e.g. \"scorers\":[\"grounded_fallback\"],\"generate\":5"
                    .into(),
            );
        }
        if parsed.grounded.band.is_none() {
            return Err(
                "option sample_when_open saves samples only where the sources decide a unit \
                 alone, which grounded_fallback does only with its band: give \
                 source_entailment_threshold and/or source_contradiction_threshold, e.g. \
                 \"source_entailment_threshold\":0.7,\"source_contradiction_threshold\":0.9, \
                 or drop sample_when_open (by default grounded_fallback compares every unit \
                 with the samples, so every row needs them)"
                    .into(),
            );
        }
        if let Some(s) = parsed
            .scoring
            .computed()
            .into_iter()
            .find(|s| s.needs_samples())
        {
            return Err(format!(
                "option sample_when_open leaves out the samples of the rows the sources decide, \
                 but scorer {} compares samples in every row: score it in another job, or drop \
                 sample_when_open",
                s.name()
            ));
        }
    }
    if spec.generate > 0 && columns.prompt.is_none() {
        return Err(format!(
            "option generate needs the prompts: table {table:?} has no column \"prompt\" or \"question\"; name it with option prompt_column"
        ));
    }
    Ok(())
}
