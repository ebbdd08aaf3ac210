//! The socket protocol pinned: tests/golden/protocol.json holds one serialized example of every
//! request and of its reply (every field filled, so that a field added, removed or renamed
//! changes the text; and a minimal one where fields are left out when empty), with the
//! `PROTOCOL_VERSION` it was made with. A change of shape without a bump of `PROTOCOL_VERSION`
//! fails; after a bump, `UQ_BLESS=1 cargo test -p uq-core --test pure protocol_golden::` rewrites the
//! file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Value};
use uq_core::protocol::{
    origin, ClaimsResult, CoverageResult, Evidence, GenerateResult, GeneratedResponse, GradeResult,
    JobInfo, NliEndpoint, NliProbs, PingInfo, Reply, Request, ScoreResult, SentenceCoverage,
    UadClaim, UadResult, UnitScore, PROTOCOL_VERSION,
};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/protocol.json")
}

fn v(x: impl Serialize) -> Value {
    serde_json::to_value(x).expect("protocol types serialize")
}

fn s(x: &str) -> String {
    x.to_string()
}

fn options() -> Value {
    json!({"scorers": ["entailment"]})
}

/// Every request, each with every field filled.
fn requests() -> Vec<Request> {
    let samples = vec![s("Paris is in France.")];
    vec![
        Request::Ping,
        Request::Nli {
            pairs: vec![(s("A cat sat."), s("An animal sat."))],
        },
        Request::Score {
            response: s("Paris is the capital."),
            samples: samples.clone(),
            options: options(),
        },
        Request::Generate {
            prompt: s("Where is Paris?"),
            n: 2,
            options: options(),
        },
        Request::Coverage {
            response: s("Paris is the capital."),
            options: options(),
        },
        Request::Claims {
            text: s("Paris is the capital."),
            options: options(),
        },
        Request::ClaimUnion {
            response: s("Paris is the capital."),
            samples: samples.clone(),
            options: options(),
        },
        Request::Uad {
            response: s("Paris is the capital."),
            samples,
            options: options(),
        },
        Request::Grade {
            unit: s("Paris is a city."),
            reference: s("Paris is the capital of France."),
            options: options(),
        },
        Request::Objectivity {
            claim: s("Paris is a city."),
            options: options(),
        },
        Request::JobStart {
            db: s("/tmp/a.db"),
            job_id: 1,
        },
        Request::JobStatus {
            db: s("/tmp/a.db"),
            job_id: 1,
        },
        Request::JobCancel {
            db: s("/tmp/a.db"),
            job_id: 1,
        },
        Request::Shutdown,
    ]
}

fn evidence() -> Evidence {
    Evidence {
        decided_by: s("source"),
        verdict: s("supported"),
        passage: Some(0),
        passage_id: Some(s("7")),
        start: Some(0),
        end: Some(21),
        entailment: Some(0.875),
        contradiction: Some(0.0625),
    }
}

fn score_result() -> ScoreResult {
    ScoreResult {
        units: vec![s("Paris is the capital.")],
        origins: vec![s(origin::SENTENCE)],
        scores: vec![UnitScore {
            unit_idx: 0,
            scorer: s("grounded_entailment"),
            score: 0.875,
            calibrated: Some(0.75),
            evidence: Some(evidence()),
        }],
        response_scores: BTreeMap::from([(s("grounded_entailment"), Some(0.875))]),
        calibrated_scores: BTreeMap::from([(s("grounded_entailment"), Some(0.75))]),
        notes: vec![s("a note")],
        coverage: vec![sentence_coverage()],
    }
}

fn sentence_coverage() -> SentenceCoverage {
    SentenceCoverage {
        idx: 0,
        sentence: s("Paris is the capital."),
        entailment: 0.5,
        covered: true,
    }
}

fn generated(logprobs: bool) -> GeneratedResponse {
    GeneratedResponse {
        index: 0,
        text: s("Paris is in France."),
        temperature: 0.0,
        model: s("SmolLM2-135M-Instruct.Q4_1:135M"),
        prompt_tokens: 12,
        completion_tokens: 6,
        cached: false,
        normalized_probability: logprobs.then_some(0.5),
        logprobs: logprobs.then(|| {
            vec![
                uq_core::logprobs::TokenLogprob::bare(-0.5),
                uq_core::logprobs::TokenLogprob::bare(-0.25),
            ]
        }),
    }
}

fn uad_result(filled: bool) -> UadResult {
    UadResult {
        claims: vec![UadClaim {
            idx: 0,
            claim: s("Paris is a capital."),
            score: 0.5,
            calibrated: filled.then_some(0.625),
            kept: true,
            origin: s(origin::CLAIM),
        }],
        scorer: s("entailment"),
        calibrated: filled,
        threshold: Some(0.25),
        pre_confidence: Some(0.5),
        post_confidence: Some(0.5),
        refined_response: s("Paris is a capital."),
        verified: true,
        removed_sentences: vec![s("Invented.")],
        warnings: if filled { vec![s("a warning")] } else { vec![] },
        notes: if filled { vec![s("a note")] } else { vec![] },
    }
}

fn ping_info(filled: bool) -> PingInfo {
    PingInfo {
        version: s("v0.1.0"),
        protocol: Some(PROTOCOL_VERSION),
        pid: 42,
        socket: s("/run/user/1000/uqlite/uqd.sock"),
        nli_model: s("nli-minilm-l6-v2"),
        embed_model: Some(s("all-MiniLM-L6-v2")),
        device: s("cpu"),
        device_note: Some(s("no CUDA")),
        precision: Some(s("int8")),
        precision_note: filled.then(|| s("run uqd models optimize")),
        nli_batch: Some(32),
        nli_file: Some(s("model_opt_int8.onnx")),
        threads: 2,
        nli_sessions: Some(2),
        labels: vec![s("entailment"), s("neutral"), s("contradiction")],
        nli_cache_entries: 3,
        embed_cache_entries: 4,
        llm_cache: Some(s("completions.sqlite")),
        local_llm: Some(s("SmolLM2-135M-Instruct.Q4_1.gguf")),
        local_llm_loaded: true,
        nli_endpoints: filled.then(|| {
            vec![NliEndpoint {
                url: s("http://127.0.0.1:8000"),
                healthy: true,
                served: 5,
                failures: 1,
                last_error: Some(s("timed out")),
            }]
        }),
    }
}

fn grade() -> GradeResult {
    GradeResult {
        label: Some(true),
        raw: s("True"),
        grader: s("factscore:local"),
    }
}

fn job_info() -> JobInfo {
    JobInfo {
        job_id: 1,
        status: s("running"),
        done: 2,
        total: 3,
        errors: 1,
        message: Some(s("row 2: a failure")),
        running_here: true,
    }
}

/// The result of `r` as the daemon sends it (every field filled). Exhaustive: a new request
/// fails to compile here until it has a result, and needs an example in [`requests`].
fn result(r: &Request) -> Value {
    match r {
        Request::Ping => v(ping_info(true)),
        Request::Nli { .. } => v(vec![NliProbs {
            entailment: 0.75,
            neutral: 0.125,
            contradiction: 0.125,
        }]),
        Request::Score { .. } => v(score_result()),
        Request::Generate { .. } => v(GenerateResult {
            responses: vec![generated(true)],
        }),
        Request::Coverage { .. } => v(CoverageResult {
            claims: vec![s("Paris is a capital.")],
            sentences: vec![sentence_coverage()],
        }),
        Request::Claims { .. } | Request::ClaimUnion { .. } => v(ClaimsResult {
            claims: vec![s("Paris is a capital.")],
        }),
        Request::Uad { .. } => v(uad_result(true)),
        Request::Grade { .. } | Request::Objectivity { .. } => v(grade()),
        Request::JobStart { .. } | Request::JobStatus { .. } | Request::JobCancel { .. } => {
            v(job_info())
        }
        Request::Shutdown => Value::Null,
    }
}

/// The golden file's content for this build.
fn golden() -> Value {
    let exchanges: Vec<Value> = requests()
        .iter()
        .map(|r| json!({"request": v(r), "reply": v(Reply::ok(result(r)))}))
        .collect();
    // Replies whose optional fields are left out when empty or absent.
    let minimal = json!({
        "score": ScoreResult {
            units: vec![],
            origins: vec![],
            scores: vec![UnitScore {
                unit_idx: 0,
                scorer: s("entailment"),
                score: f64::NAN,
                calibrated: None,
                evidence: None,
            }],
            response_scores: BTreeMap::from([(s("entailment"), None)]),
            calibrated_scores: BTreeMap::new(),
            notes: vec![],
            coverage: vec![],
        },
        "evidence": Evidence {
            decided_by: s("none"),
            verdict: s("silent"),
            passage: None,
            passage_id: None,
            start: None,
            end: None,
            entailment: None,
            contradiction: None,
        },
        "generate": GenerateResult { responses: vec![generated(false)] },
        "uad": uad_result(false),
        "ping": ping_info(false),
        "grade": GradeResult { label: None, raw: s("?"), grader: s("objectivity:local") },
        "error": Reply::err("uq_nli: premise is NULL"),
    });
    json!({
        "protocol_version": PROTOCOL_VERSION,
        "examples": {"exchanges": exchanges, "minimal": minimal},
    })
}

#[test]
fn every_request_has_one_example() {
    let ops: Vec<String> = requests()
        .iter()
        .map(|r| v(r)["op"].as_str().unwrap_or_default().to_string())
        .collect();
    let mut distinct = ops.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        ops.len(),
        "an op twice in requests(): {ops:?}"
    );
    // Each example reads back as the request it was made from.
    for r in requests() {
        let back: Request = serde_json::from_value(v(&r)).expect("a request reads back");
        assert_eq!(v(back), v(&r));
    }
}

/// tests/golden/protocol.json is `golden()`. When the examples differ and `PROTOCOL_VERSION`
/// is the golden's, a request or reply changed shape without a bump: that fails even under
/// `UQ_BLESS=1`. Otherwise `UQ_BLESS=1` rewrites the file.
#[test]
fn protocol_matches_golden_or_version_bumped() {
    let path = golden_path();
    let want = golden();
    let text = format!("{}\n", serde_json::to_string_pretty(&want).expect("JSON"));
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if old == text {
        return;
    }
    let old: Value = serde_json::from_str(&old).unwrap_or(Value::Null);
    let old_version = old["protocol_version"].as_u64();
    if old["examples"] != want["examples"] && old_version == Some(u64::from(PROTOCOL_VERSION)) {
        panic!(
            "a request or reply of core/src/protocol.rs changed shape but PROTOCOL_VERSION is \
             still {PROTOCOL_VERSION}: bump PROTOCOL_VERSION (the daemon and the extension then \
             name a mismatched pair instead of misreading each other), then rebless with \
             UQ_BLESS=1 cargo test -p uq-core --test pure protocol_golden:: and review the diff of {}",
            path.display()
        );
    }
    if std::env::var("UQ_BLESS").is_ok_and(|b| b == "1") {
        std::fs::write(&path, &text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    panic!(
        "{} is not this build's protocol (PROTOCOL_VERSION {PROTOCOL_VERSION}, golden {old_version:?}); \
         rewrite it with UQ_BLESS=1 cargo test -p uq-core --test pure protocol_golden:: and review \
         the diff. Generated:\n{text}",
        path.display()
    );
}
