//! The socket protocol between the extension and `uqd`: newline-delimited JSON,
//! one request per line, one response per line (see docs/design.md).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The version of this protocol, which the daemon sends in its ping reply
/// ([`PingInfo::protocol`]) and the extension compares with its own on each new connection: a
/// daemon left running from another build is then named, with the fix, instead of failing on a
/// request or a reply it cannot read.
///
/// The rule: bump it whenever a request or a reply changes shape (an op, a field or a field's
/// type added, removed or renamed, a meaning changed), in the same commit. The two Cargo
/// workspaces (`ext/` and the daemon's) build this file separately, so the number is all that
/// tells them apart at run time. tests/golden/protocol.json pins the shapes: a change without a
/// bump fails `cargo test -p uq-core --test pure protocol_golden::`.
pub const PROTOCOL_VERSION: u32 = 4;

/// Largest request or response line either side accepts.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

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

/// Result of a `grade` or `objectivity` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeResult {
    /// `Some(true)`: supported / objective; `Some(false)`: not supported / subjective; `None`:
    /// the judge's reply could not be read.
    pub label: Option<bool>,
    /// The judge's reply as given.
    pub raw: String,
    /// `factscore:<LLM>` or `objectivity:<LLM>` (`uq_label.grader`).
    pub grader: String,
}

/// Result of the job requests: the job row as the daemon reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    pub job_id: i64,
    pub status: String,
    pub done: i64,
    pub total: i64,
    pub errors: i64,
    pub message: Option<String>,
    /// Whether this daemon is running the job now.
    pub running_here: bool,
}

/// Reads a score that JSON may carry as `null` (a NaN when written: serde_json writes
/// non-finite floats as `null`) back as NaN.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// One row of `uq_unit_scores`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitScore {
    pub unit_idx: usize,
    pub scorer: String,
    /// NaN (JSON `null`) when the score could not be had (e.g. a judge reply that names no
    /// confidence phrase).
    #[serde(deserialize_with = "nan_if_null")]
    pub score: f64,
    /// The score calibrated by `options.calibration`'s model of this scorer: a probability;
    /// `None` without a model (or for a NaN score).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<f64>,
    /// What decided a grounded scorer's score (`uq_core::score::grounded`); `None` for the
    /// other scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

/// Why a grounded scorer scored a unit as it did: the sources' verdict, which evidence decided
/// (the `evidence` column of `uq_unit_scores` and `uq_unit_score`, as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `"source"` (the sources decided; `grounded_fallback`: their p_e was at least the
    /// samples' score, or, with a threshold option, their verdict), `"samples"`
    /// (`grounded_fallback`: the samples' score was the larger, or, with a threshold option, the
    /// sources were silent) or `"none"` (the sources were silent and nothing else decided:
    /// the other grounded scorers, or `grounded_fallback`'s NULL score).
    pub decided_by: String,
    /// The sources' verdict: `"supported"`, `"contradicted"` or `"silent"`.
    pub verdict: String,
    /// The deciding premise's passage: its index in the sources, its id (an FTS5 rowid, or the
    /// id given), and the character span of its selected sentences (end exclusive). `None`
    /// when no source sentence shares a word with the unit.
    #[serde(default)]
    pub passage: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage_id: Option<String>,
    #[serde(default)]
    pub start: Option<usize>,
    #[serde(default)]
    pub end: Option<usize>,
    /// p_e and p_c of that premise.
    #[serde(default)]
    pub entailment: Option<f64>,
    #[serde(default)]
    pub contradiction: Option<f64>,
}

/// Result of a `score` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreResult {
    pub units: Vec<String>,
    /// Where each unit came from ([`origin`]), parallel to `units`.
    #[serde(default)]
    pub origins: Vec<String>,
    pub scores: Vec<UnitScore>,
    /// Aggregated score per scorer (and the short-form scorers' whole-response scores); `None`
    /// when there are no units (or a short-form score could not be had, see `notes`).
    pub response_scores: std::collections::BTreeMap<String, Option<f64>>,
    /// Per calibrated scorer (`options.calibration`), the aggregate of its calibrated unit
    /// scores (with mean: the expected share of true units).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub calibrated_scores: std::collections::BTreeMap<String, Option<f64>>,
    /// Why a score is NULL, e.g. `normalized_probability` without token log-probabilities
    /// (the extension keeps the last notes for `uq_debug()`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Decomposition coverage of the response's sentences (claims decomposed by the LLM with
    /// option `coverage` other than `"off"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<SentenceCoverage>,
}

/// Where a unit came from (the `origin` column of `uq_unit_scores`, `uad_claims` and `uq_unit`).
pub mod origin {
    /// Split from the response by the sentence splitter.
    pub const SENTENCE: &str = "sentence";
    /// A claim of the decomposition LLM.
    pub const CLAIM: &str = "claim";
    /// Given by the caller (option `units`, a job's `units_column`).
    pub const GIVEN: &str = "given";
    /// A sentence of the response that its claims do not entail, scored as a unit of its own
    /// (option `coverage: "add_units"`).
    pub const UNCOVERED_SENTENCE: &str = "uncovered_sentence";
}

/// One sentence of a response checked against the response's claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceCoverage {
    pub idx: usize,
    pub sentence: String,
    /// p_e(premise = the claims joined, hypothesis = the sentence).
    pub entailment: f64,
    /// entailment ≥ option `coverage_threshold`.
    pub covered: bool,
}

/// Result of a `coverage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageResult {
    pub claims: Vec<String>,
    pub sentences: Vec<SentenceCoverage>,
}

impl ScoreResult {
    /// The unit scores of `scorer`, in unit order.
    pub fn unit_scores(&self, scorer: &str) -> Vec<f64> {
        let mut v: Vec<(usize, f64)> = self
            .scores
            .iter()
            .filter(|s| s.scorer == scorer)
            .map(|s| (s.unit_idx, s.score))
            .collect();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|x| x.1).collect()
    }
}

/// One row of a `generate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedResponse {
    /// 0 = the original answer; 1..n = the sampled answers.
    pub index: usize,
    pub text: String,
    pub temperature: f64,
    /// The model that answered (as the server names it; `file stem:size` for a local GGUF).
    pub model: String,
    /// Tokens of the call that produced this text (when one call produced several samples, its
    /// whole usage is on the first of them and the others show 0).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Served from the completion cache (no new call).
    pub cached: bool,
    /// exp(mean token log-probability) of the text, when the generation LLM returned
    /// log-probabilities (`"logprobs": true` in its config); else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized_probability: Option<f64>,
    /// The text's tokens, each with its character offset (when they tile the text), its
    /// log-probability and the top-k alternatives, when the generation LLM returned them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<crate::logprobs::TokenLogprob>>,
}

/// Result of a `generate` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerateResult {
    pub responses: Vec<GeneratedResponse>,
}

/// Result of a `claims` request (no claims → empty array).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimsResult {
    pub claims: Vec<String>,
}

/// One claim of a `uad` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UadClaim {
    pub idx: usize,
    pub claim: String,
    /// The UAD scorer's score (NaN / JSON `null` when it could not be had; never kept).
    #[serde(deserialize_with = "nan_if_null")]
    pub score: f64,
    /// The score calibrated by `options.calibration`'s model of the UAD scorer; when present,
    /// UAD filters on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<f64>,
    /// Filtered score (calibrated when calibrated) ≥ threshold
    /// (`uq_core::aggregate::uad_retained`).
    pub kept: bool,
    /// Where the claim came from ([`origin`]).
    #[serde(default = "claim_origin")]
    pub origin: String,
}

fn claim_origin() -> String {
    origin::CLAIM.to_string()
}

/// The warning of a `uad` reply whose claims the bundled SmolLM2-135M wrote (the extension's
/// `uad_filter` shows it once per connection on stderr).
pub const UAD_BUNDLED_LLM_WARNING: &str = "the claims were written by the bundled \
    SmolLM2-135M, which writes poor claims (it merges, drops and garbles them): for sentence-level \
    filtering without an LLM pass '{\"granularity\":\"sentence\"}', or configure a capable LLM \
    with option decomposition_llm or llm (e.g. one registered in temp.uq_llms)";

/// The note of a `uad` reply that filtered sentences because no capable LLM is configured (no
/// option `granularity`, no `units`, the decomposition LLM the bundled SmolLM2): the extension
/// shows it once per connection on stderr.
pub const UAD_SENTENCE_DEFAULT_NOTE: &str = "no capable LLM is configured (the decomposition \
    LLM is the bundled SmolLM2-135M, which writes poor claims), so the answer's sentences were \
    filtered without an LLM (granularity sentence); for claims configure a capable LLM with \
    option decomposition_llm or llm (e.g. one registered in temp.uq_llms), or pass \
    '{\"granularity\":\"claim\"}' to use the bundled one";

/// Result of a `uad` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UadResult {
    pub claims: Vec<UadClaim>,
    /// The scorer whose claim scores filter.
    pub scorer: String,
    /// Whether threshold, kept and the confidences use calibrated scores.
    #[serde(default)]
    pub calibrated: bool,
    /// The threshold used; `None` only with `threshold_percentile` and no scored claim.
    pub threshold: Option<f64>,
    /// Aggregate (`options.aggregation`) over every claim; `None` without claims.
    pub pre_confidence: Option<f64>,
    /// Aggregate over the kept claims; `None` when none is kept.
    pub post_confidence: Option<f64>,
    /// The kept claims rewritten by the reconstruction LLM; the original response when no
    /// claim is kept (as uqlm). With option `verify` (default), only its sentences that the kept
    /// claims entail (all failing: the kept claims joined). With option
    /// `reconstruction_fallback` (default), the answer's sentences that hold the kept claims
    /// when the rewrite does not entail one of them (a warning says so).
    pub refined_response: String,
    /// Whether the reconstruction was checked against the kept claims (option `verify`, and a
    /// reconstruction was made).
    #[serde(default)]
    pub verified: bool,
    /// Sentences of the reconstruction removed by the check; for the sentence filter, the
    /// answer's sentences (units) it removed, in order.
    #[serde(default)]
    pub removed_sentences: Vec<String>,
    /// What went wrong that the result alone does not show: kept claims the reconstruction
    /// does not entail (lost or changed by the reconstruction LLM) and what was done about it,
    /// claims written by the bundled SmolLM2 ([`UAD_BUNDLED_LLM_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the NLI judge (option `nli_llm`) did while scoring and verifying, with the pairs it
    /// could not read (the extension keeps them for `uq_debug()`, as a score reply's notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Result of a `ping` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingInfo {
    pub version: String,
    /// The daemon's [`PROTOCOL_VERSION`]; absent from a daemon older than the check.
    #[serde(default)]
    pub protocol: Option<u32>,
    pub pid: u32,
    pub socket: String,
    pub nli_model: String,
    pub embed_model: Option<String>,
    pub device: String,
    /// Why CUDA is not used although the device setting asked for it.
    #[serde(default)]
    pub device_note: Option<String>,
    /// Precision of the NLI file that runs ("int8", "fp32", "fp16", "original").
    #[serde(default)]
    pub precision: Option<String>,
    /// Why `--precision auto` does not run the variant it prefers, naming the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_note: Option<String>,
    /// NLI windows per forward pass at most.
    #[serde(default)]
    pub nli_batch: Option<usize>,
    /// The NLI model file that runs.
    #[serde(default)]
    pub nli_file: Option<String>,
    pub threads: usize,
    /// NLI sessions running batches side by side (local), or batches in flight (remote).
    #[serde(default)]
    pub nli_sessions: Option<usize>,
    pub labels: Vec<String>,
    pub nli_cache_entries: usize,
    pub embed_cache_entries: usize,
    /// Path of the persistent completion cache (SQLite) of the LLM layer.
    #[serde(default)]
    pub llm_cache: Option<String>,
    /// Path of the local model's GGUF file (the default LLM).
    #[serde(default)]
    pub local_llm: Option<String>,
    /// Whether a local model has been loaded (it is loaded on the first request that needs it).
    #[serde(default)]
    pub local_llm_loaded: bool,
    /// The inference servers the NLI model runs on (`--nli-backend`); absent when it runs locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nli_endpoints: Option<Vec<NliEndpoint>>,
}

/// One inference-server endpoint of the NLI backend and its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NliEndpoint {
    /// Base URL, e.g. `http://127.0.0.1:8000`.
    pub url: String,
    /// Whether requests go to it (its last request or health check succeeded).
    pub healthy: bool,
    /// Inference requests it answered.
    pub served: u64,
    /// Requests and health checks it failed.
    pub failures: u64,
    pub last_error: Option<String>,
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
