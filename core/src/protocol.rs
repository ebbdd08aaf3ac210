//! The socket protocol between the extension and `uqd`: newline-delimited JSON,
//! one request per line, one response per line (see docs/design.md). The requests and the
//! reply envelope are here; each family's results are in a module of their own (`score`,
//! `llm`, `uad`, `jobs`, `ping`), re-exported here.

mod jobs;
mod llm;
mod ping;
mod score;
mod uad;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of this protocol, which the daemon sends in its ping reply
/// ([`PingInfo::protocol`]) and the extension compares with its own on each new connection: a
/// daemon left running from another build is then named, with the fix, instead of failing on a
/// request or a reply it cannot read.
///
/// The rule: bump it whenever a request or a reply changes shape (an op, a field or a field's
/// type added, removed or renamed, a meaning changed), in the same commit. The two Cargo
/// workspaces (`ext/` and the daemon's) build this module separately, so the number is all that
/// tells them apart at run time. tests/golden/protocol.json pins the shapes: a change without a
/// bump fails `cargo test -p uq-core --test pure protocol_golden::`.
pub const PROTOCOL_VERSION: u32 = 4;

/// Largest request or response line either side accepts.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

pub use jobs::JobInfo;
pub use llm::{ClaimsResult, GenerateResult, GeneratedResponse, GradeResult};
pub use ping::{NliEndpoint, PingInfo};
pub use score::{origin, CoverageResult, Evidence, ScoreResult, SentenceCoverage, UnitScore};
pub use uad::{UadClaim, UadResult, UAD_BUNDLED_LLM_WARNING, UAD_SENTENCE_DEFAULT_NOTE};

/// The reply to an `nli` request is one per pair (defined with the scorers that read it).
pub use crate::score::nli::NliProbs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Ping,
    Nli {
        pairs: Vec<(String, String)>,
    },
    Score {
        response: String,
        samples: Vec<String>,
        #[serde(default)]
        options: Value,
    },
    /// The original answer to `prompt` (row 0, at `options.temperature`) and `n` sampled
    /// answers (rows 1..n, at `options.sampling_temperature`), by `options.generation_llm`.
    Generate {
        prompt: String,
        n: usize,
        #[serde(default)]
        options: Value,
    },
    /// Per sentence of `response`, whether its claims (decomposition LLM) entail it.
    /// Result: [`CoverageResult`].
    Coverage {
        response: String,
        #[serde(default)]
        options: Value,
    },
    /// The claims of `text` (decomposition LLM, the paper's prompt).
    Claims {
        text: String,
        #[serde(default)]
        options: Value,
    },
    /// The union of unique claims across `response` and `samples` (graph scorers' claim
    /// nodes): each text decomposed, then each sample's claims merged into the response's by the
    /// merge LLM, in order (as uqlm's `ClaimMerger`). Result: [`ClaimsResult`].
    ClaimUnion {
        response: String,
        samples: Vec<String>,
        #[serde(default)]
        options: Value,
    },
    /// Uncertainty-aware decoding (§3.4) of `response`, scored against `samples`.
    Uad {
        response: String,
        samples: Vec<String>,
        #[serde(default)]
        options: Value,
    },
    /// FactScore grading of `unit` against `reference` (judge LLM, the appendix prompts).
    Grade {
        unit: String,
        reference: String,
        #[serde(default)]
        options: Value,
    },
    /// Is `claim` objective or subjective? (judge LLM, the appendix prompts).
    Objectivity {
        claim: String,
        #[serde(default)]
        options: Value,
    },
    /// Run (or resume) job `job_id` of the database file `db` in the background.
    JobStart {
        db: String,
        job_id: i64,
    },
    /// Job `job_id`'s progress, read by the daemon (and the job resumed when it is unfinished
    /// and not running).
    JobStatus {
        db: String,
        job_id: i64,
    },
    /// Stop job `job_id` after the rows in progress (committed rows stay).
    JobCancel {
        db: String,
        job_id: i64,
    },
    Shutdown,
}

/// Every reply: `{"ok":true,"result":...}` or `{"ok":false,"error":"..."}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Reply {
    pub fn ok(result: Value) -> Self {
        Reply {
            ok: true,
            result: Some(result),
            error: None,
        }
    }
    pub fn err(message: impl Into<String>) -> Self {
        Reply {
            ok: false,
            result: None,
            error: Some(message.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llm_requests_parse() {
        let r: Request =
            serde_json::from_value(json!({"op": "generate", "prompt": "Q?", "n": 3})).unwrap();
        assert!(
            matches!(r, Request::Generate { ref prompt, n: 3, ref options } if prompt == "Q?" && options.is_null())
        );
        let r: Request = serde_json::from_value(
            json!({"op": "claims", "text": "A. B.", "options": {"llm": {}}}),
        )
        .unwrap();
        assert!(
            matches!(r, Request::Claims { ref text, ref options } if text == "A. B." && options["llm"].is_object())
        );
        let r: Request =
            serde_json::from_value(json!({"op": "uad", "response": "r", "samples": ["s"]}))
                .unwrap();
        assert!(matches!(r, Request::Uad { ref samples, .. } if samples.len() == 1));
        let r: Request =
            serde_json::from_value(json!({"op": "claim_union", "response": "r", "samples": ["s"]}))
                .unwrap();
        assert!(
            matches!(r, Request::ClaimUnion { ref response, ref samples, ref options } if response == "r" && samples.len() == 1 && options.is_null())
        );
        let s: ScoreResult = serde_json::from_value(
            json!({"units": [], "scores": [], "response_scores": {"normalized_probability": null}}),
        )
        .unwrap();
        assert!(s.notes.is_empty(), "old replies without notes still parse");
        assert!(
            serde_json::from_value::<Request>(json!({"op": "generate", "prompt": "Q?"})).is_err()
        );
        let v = serde_json::to_value(Request::Claims {
            text: "t".into(),
            options: Value::Null,
        })
        .unwrap();
        assert_eq!(v, json!({"op": "claims", "text": "t", "options": null}));
    }

    #[test]
    fn nan_scores_round_trip_as_null() {
        let u = UadClaim {
            idx: 0,
            claim: "c".into(),
            score: f64::NAN,
            calibrated: None,
            kept: false,
            origin: origin::UNCOVERED_SENTENCE.into(),
        };
        let v = serde_json::to_value(&u).unwrap();
        assert_eq!(
            v,
            json!({"idx": 0, "claim": "c", "score": null, "kept": false, "origin": "uncovered_sentence"})
        );
        let back: UadClaim = serde_json::from_value(v).unwrap();
        assert!(back.score.is_nan());
        // A claim of an older daemon (no origin) reads as a claim.
        let old: UadClaim =
            serde_json::from_value(json!({"idx": 0, "claim": "c", "score": 0.5, "kept": true}))
                .unwrap();
        assert_eq!(old.origin, "claim");
        let s: UnitScore =
            serde_json::from_value(json!({"unit_idx": 1, "scorer": "x", "score": null})).unwrap();
        assert!(s.score.is_nan());
        let s: UnitScore =
            serde_json::from_value(json!({"unit_idx": 1, "scorer": "x", "score": 0.25})).unwrap();
        assert_eq!(s.score, 0.25);
        let r = UadResult {
            claims: vec![],
            scorer: "entailment".into(),
            calibrated: false,
            threshold: Some(1.0 / 3.0),
            pre_confidence: None,
            post_confidence: None,
            refined_response: "r".into(),
            verified: true,
            removed_sentences: vec!["Invented.".into()],
            warnings: vec![],
            notes: vec![],
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["pre_confidence"], Value::Null);
        assert!(v.get("notes").is_none(), "empty notes are not sent");
        assert!(v.get("warnings").is_none(), "nor empty warnings");
        assert_eq!(serde_json::from_value::<UadResult>(v).unwrap(), r);
        let with = UadResult {
            notes: vec!["nli_llm (x) judged 1 NLI pairs".into()],
            ..r
        };
        let v = serde_json::to_value(&with).unwrap();
        assert_eq!(serde_json::from_value::<UadResult>(v).unwrap(), with);
    }

    #[test]
    fn old_ping_info_still_parses() {
        let p: PingInfo = serde_json::from_value(json!({
            "version": "0", "pid": 1, "socket": "s", "nli_model": "n", "embed_model": null, "device": "cpu",
            "threads": 1, "labels": [], "nli_cache_entries": 0, "embed_cache_entries": 0
        }))
        .unwrap();
        assert_eq!(
            (p.llm_cache, p.local_llm, p.local_llm_loaded),
            (None, None, false)
        );
    }
}
