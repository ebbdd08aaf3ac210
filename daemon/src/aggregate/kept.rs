//! Whether the reconstruction kept what UAD kept (beyond the paper, docs/reference.md "Lost
//! claims and weak LLMs"): a small reconstruction LLM may drop or change a kept claim, which
//! verification ([`super::verify`]: the reply's sentences against the kept claims) cannot see.
//! Each kept claim is checked the other way round with the NLI judge: premise = the refined
//! response, hypothesis = the claim; a claim with p_e below `verify_threshold` was lost.
//! Claims decomposed by the bundled SmolLM2 are a warning of their own: it merges and garbles
//! claims ([`UAD_BUNDLED_LLM_WARNING`]).

use std::path::{Path, PathBuf};

use uq_core::options::{LlmBackendKind, LlmRole, ScoreOptions};
use uq_core::protocol::origin;
pub use uq_core::protocol::UAD_BUNDLED_LLM_WARNING;
use uq_llm::local::SMOLLM2_FILE;

use crate::judge::Nli;
use crate::role_llms::LlmService;

/// The kept claims that `refined` does not entail (p_e < `threshold`, or no p_e: a judge reply
/// that never parsed), in order. A blank `refined` entails none.
pub fn lost_claims(
    nli: &Nli,
    kept: &[String],
    refined: &str,
    threshold: f64,
) -> Result<Vec<String>, String> {
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    if refined.trim().is_empty() {
        return Ok(kept.to_vec());
    }
    let pairs: Vec<(String, String)> = kept
        .iter()
        .map(|c| (refined.to_string(), c.clone()))
        .collect();
    let probs = nli.probs(&pairs)?;
    Ok(kept
        .iter()
        .zip(probs)
        // A NaN p_e (unparsed) is no entailment.
        .filter(|(_, p)| p.entailment.is_nan() || p.entailment < threshold)
        .map(|(c, _)| c.clone())
        .collect())
}

/// The warning for `lost` kept claims of `n_kept` at `threshold`; `fell_back`: the refined
/// response is the answer's sentences that hold the kept claims instead.
pub fn lost_warning(lost: &[String], n_kept: usize, threshold: f64, fell_back: bool) -> String {
    let listed: Vec<String> = lost.iter().map(|c| format!("{c:?}")).collect();
    format!(
        "the reconstruction lost {} of the {n_kept} kept claims (the reconstructed text does not \
         entail {} with p_e ≥ verify_threshold {threshold}): {}; {}",
        lost.len(),
        if lost.len() == 1 { "it" } else { "them" },
        listed.join(", "),
        if fell_back {
            "refined_response is the answer's sentences that hold the kept claims instead \
             (option reconstruction_fallback); a more capable reconstruction_llm avoids this"
        } else {
            "refined_response is the reconstruction as written (reconstruction_fallback is \
             false); a more capable reconstruction_llm avoids this"
        }
    )
}

/// Whether the claims with `origins` were written by the bundled SmolLM2: some claim comes from
/// the decomposition LLM, and that is the local model of the file the daemon ships
/// ([`SMOLLM2_FILE`]: the LLM config's `model`, else the daemon's `local_llm`).
pub fn by_bundled_llm(llm: &LlmService, opts: &ScoreOptions, origins: &[String]) -> bool {
    decomposes_with_bundled_llm(llm, opts) && origins.iter().any(|o| o == origin::CLAIM)
}

/// Whether the decomposition LLM of `opts` is the bundled SmolLM2 (no capable LLM configured):
/// the local model of the file the daemon ships.
pub fn decomposes_with_bundled_llm(llm: &LlmService, opts: &ScoreOptions) -> bool {
    let cfg = opts.llm.for_role(LlmRole::Decomposition);
    let path = cfg
        .model
        .as_deref()
        .map_or_else(|| llm.local_llm().to_path_buf(), PathBuf::from);
    cfg.backend == LlmBackendKind::Local && is_bundled_file(&path)
}

fn is_bundled_file(path: &Path) -> bool {
    path.file_name().is_some_and(|f| f == SMOLLM2_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use uq_core::options::parse_options;

    #[test]
    fn the_bundled_llm_is_the_shipped_smollm2_writing_claims() {
        let dir = std::env::temp_dir().join(format!("uqd-kept-{}", std::process::id()));
        let bundled = LlmService::new(
            dir.join("cache.sqlite"),
            PathBuf::from("/opt/uq/models/smollm2").join(SMOLLM2_FILE),
        )
        .unwrap();
        let other = LlmService::new(dir.join("cache.sqlite"), "/m/qwen.gguf".into()).unwrap();
        let o = |v: serde_json::Value| parse_options(&v).unwrap();
        let claim = vec![
            origin::CLAIM.to_string(),
            origin::UNCOVERED_SENTENCE.to_string(),
        ];
        let given = vec![origin::GIVEN.to_string()];
        assert!(by_bundled_llm(&bundled, &o(json!({})), &claim));
        assert!(
            !by_bundled_llm(&bundled, &o(json!({})), &given),
            "given claims"
        );
        assert!(
            !by_bundled_llm(&other, &o(json!({})), &claim),
            "UQ_LOCAL_LLM names another model"
        );
        let served = json!({"llm": {"backend": "openai", "model": "gpt-4o-mini"}});
        assert!(!by_bundled_llm(&bundled, &o(served), &claim));
        let own = json!({"decomposition_llm": {"backend": "local", "model": "/m/qwen.gguf"}});
        assert!(!by_bundled_llm(&bundled, &o(own), &claim));
        let named = json!({"llm": {"backend": "local",
                                   "model": format!("/elsewhere/{SMOLLM2_FILE}")}});
        assert!(by_bundled_llm(&other, &o(named), &claim), "the file named");
        // Only the decomposition LLM counts.
        let recon = json!({"decomposition_llm": {"backend": "openai", "model": "m"},
                           "reconstruction_llm": {"backend": "local"}});
        assert!(!by_bundled_llm(&bundled, &o(recon), &claim));
    }

    #[test]
    fn the_lost_warning_lists_the_claims_and_what_was_done() {
        let w = lost_warning(&["A b.".into()], 3, 0.5, true);
        assert_eq!(
            w,
            "the reconstruction lost 1 of the 3 kept claims (the reconstructed text does not \
             entail it with p_e ≥ verify_threshold 0.5): \"A b.\"; refined_response is the \
             answer's sentences that hold the kept claims instead (option \
             reconstruction_fallback); a more capable reconstruction_llm avoids this"
        );
        let w = lost_warning(&["A b.".into(), "C \"d\".".into()], 2, 0.7, false);
        assert!(
            w.contains("lost 2 of the 2 kept claims")
                && w.contains("entail them with p_e ≥ verify_threshold 0.7")
                && w.contains(r#""A b.", "C \"d\".""#)
                && w.contains("the reconstruction as written (reconstruction_fallback is false)"),
            "{w}"
        );
    }
}
