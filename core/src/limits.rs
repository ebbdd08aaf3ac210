//! Limits on what one request may carry, checked before any model or LLM work.

use crate::options::{select_samples, ScoreOptions};

/// Largest single text (response, sample or unit) a request may carry: 256 KiB, about 60k
/// tokens, i.e. some 250 NLI windows per pair. Larger texts are refused, not truncated.
pub const MAX_TEXT_BYTES: usize = 256 << 10;

/// Refuses a text over [`MAX_TEXT_BYTES`], naming it (`what`) and saying what to do.
pub fn check_text(text: &str, what: &str) -> Result<(), String> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "{what} is {:.1} MB; the limit is 256 KB per text: split it into parts and score them separately",
            text.len() as f64 / 1e6
        ));
    }
    Ok(())
}

/// Refuses an empty or oversized unit of a caller-given list (`what[i]`).
pub fn check_units(units: &[String], what: &str) -> Result<(), String> {
    for (i, u) in units.iter().enumerate() {
        if u.trim().is_empty() {
            return Err(format!(
                "{what}[{i}] is empty; every unit must be a non-empty string"
            ));
        }
        check_text(u, &format!("{what}[{i}]"))?;
    }
    Ok(())
}

/// Checks what a scoring request carries before any model or LLM work: `samples` (required
/// unless every scorer is verbalized confidence, which compares no samples), the size of every
/// text, and the question of scorers that need one. Returns the samples in use (`num_samples`).
pub fn check_inputs(
    response: &str,
    samples: &[String],
    opts: &ScoreOptions,
) -> Result<Vec<String>, String> {
    let needs_samples = opts.scoring.needs_samples();
    if needs_samples && samples.is_empty() {
        return Err("samples_json must hold at least one sampled response".into());
    }
    check_text(response, "response")?;
    for (j, s) in samples.iter().enumerate() {
        check_text(s, &format!("samples_json[{j}]"))?;
    }
    for s in opts.scoring.computed() {
        if s.needs_prompt() {
            opts.scoring.require_prompt(s)?;
        }
    }
    if samples.is_empty() {
        return Ok(Vec::new());
    }
    select_samples(samples, opts.scoring.num_samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_over_the_limit_are_refused_by_name() {
        assert!(check_text(&"a".repeat(MAX_TEXT_BYTES), "response").is_ok());
        let e = check_text(&"a".repeat(MAX_TEXT_BYTES + 1), "samples_json[2]").unwrap_err();
        assert!(
            e.starts_with("samples_json[2] is 0.3 MB; the limit is 256 KB"),
            "{e}"
        );
    }

    #[test]
    fn empty_units_are_refused_with_their_index() {
        let units = vec!["a".to_string(), "  ".to_string()];
        assert_eq!(
            check_units(&units, "options.units").unwrap_err(),
            "options.units[1] is empty; every unit must be a non-empty string"
        );
    }
}
