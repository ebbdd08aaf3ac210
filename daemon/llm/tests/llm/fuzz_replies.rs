//! Property tests of everything uq-llm reads from a model or an HTTP server: the reply parsers
//! (decomposition, questions, claim merging, FactScore yes/no grading, objectivity, verbalized
//! confidence), the chat-completions body decoder, `Retry-After`, and the OpenAI client itself
//! answering a real HTTP request from a fake server on 127.0.0.1 with arbitrary status, headers
//! and body. Nothing may panic; each parser's documented invariants hold. Fixed budgets and seed;
//! the cases run per target are printed (`--nocapture`).

use crate::common;

use std::time::{Duration, SystemTime};

use common::{settings, FakeOpenAi, Reply};
use proptest::prelude::*;
#[path = "../../../../core/tests/common/fuzz.rs"]
mod fuzz_runner;
use fuzz_runner::fuzz;
use serde_json::{json, Value};
use uq_llm::{backoff, parse, reply, ChatRequest, LlmBackend, OpenAiClient};

/// Pieces of what models write: the `###` format, bullets, numbering, headings, the confidence
/// phrases and percentages, yes/no words, line endings, multi-byte text.
const TOKENS: &[&str] = &[
    "###",
    "### ",
    "### NONE",
    "NONE",
    "- ",
    "* ",
    "• ",
    "1. ",
    "2) ",
    "(a) ",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "  ",
    "\t",
    "Here are the facts:",
    "Compilation",
    "non-entailed",
    "New claims:",
    "None",
    "No new claims",
    "Paris is the capital of France.",
    "Is it?",
    "?",
    "**",
    "__",
    "no chance",
    "little chance",
    "less than even",
    "fairly possible",
    "very good chance",
    "almost certain",
    "0%",
    "20 %",
    "40%",
    "60%",
    "80%",
    "100%",
    "150%",
    "-5%",
    "%",
    "yes",
    "No",
    "true",
    "false",
    "objective",
    "subjective",
    "Yes.",
    "é",
    "日本",
    "😀",
    "\u{0}",
    "\u{200b}",
    ".",
    ",",
    ":",
    "0",
    "99999999999999999999",
];

fn model_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.concat()),
        1 => ".{0,400}",
        1 => prop::collection::vec(any::<char>(), 0..200).prop_map(|c| c.into_iter().collect()),
    ]
}

/// A list item: trimmed, non-empty, with no line break.
fn check_items(what: &str, items: &[String]) -> Result<(), String> {
    for it in items {
        if it.trim().is_empty() || it.contains('\n') {
            return Err(format!("{what} gave a blank or multi-line item {it:?}"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = items.iter().find(|i| !seen.insert(i.as_str())) {
        return Err(format!("{what} gave {d:?} twice"));
    }
    Ok(())
}

#[test]
fn reply_parsers_never_panic() {
    fuzz("llm_reply_parsers", 20_000, model_text(), |t| {
        check_items("claims", &parse::claims(&t))?;
        check_items("questions", &parse::questions(&t))?;
        check_items("merged_claims", &parse::merged_claims(&t))?;
        if let Some(v) = parse::verbalized_confidence(&t) {
            if ![0.0, 0.2, 0.4, 0.6, 0.8, 1.0].contains(&v) {
                return Err(format!("verbalized_confidence gave {v}"));
            }
        }
        let _ = parse::yes_no(&t);
        let _ = parse::objectivity(&t);
        Ok(())
    });
}

/// Chat-completions bodies: valid shapes with wrong types in every field, and broken JSON.
fn reply_body() -> impl Strategy<Value = String> {
    let any_json = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        ".{0,20}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!([{"type": "text", "text": "part"}, 3, "s"])),
    ];
    let logprobs = prop_oneof![
        any_json.clone(),
        prop::collection::vec(any_json.clone(), 0..4).prop_map(
            |v| json!({"content": v.into_iter().map(|x| json!({"logprob": x})).collect::<Vec<_>>()})
        ),
        prop::collection::vec(any_json.clone(), 0..4).prop_map(|v| json!({"token_logprobs": v})),
    ];
    let choice = (any_json.clone(), any_json.clone(), any_json.clone(), any_json.clone(), logprobs).prop_map(
        |(index, content, refusal, finish, lp)| {
            json!({"index": index, "message": {"role": "assistant", "content": content, "refusal": refusal},
                   "finish_reason": finish, "logprobs": lp})
        },
    );
    let body = (prop::collection::vec(choice, 0..4), any_json.clone(), any_json.clone(), any_json).prop_map(
        |(choices, usage, model, error)| {
            json!({"id": "x", "choices": choices, "usage": {"prompt_tokens": usage, "completion_tokens": 2},
                   "model": model, "error": error})
            .to_string()
        },
    );
    prop_oneof![
        4 => body.clone(),
        1 => (body, any::<prop::sample::Index>()).prop_map(|(b, i)| {
            // Truncated at a char boundary, as a proxy may cut it.
            let mut n = i.index(b.len() + 1);
            while !b.is_char_boundary(n) { n -= 1; }
            b[..n].to_string()
        }),
        1 => ".{0,200}",
    ]
}

#[test]
fn reply_body_decoder_never_panics() {
    fuzz(
        "openai_reply_body",
        20_000,
        (reply_body(), any::<bool>()),
        |(body, want_lp)| {
            if let Ok(r) = reply::parse_reply(&body, want_lp) {
                if r.texts.is_empty() {
                    return Err("a usable reply with no text".into());
                }
                if want_lp && r.logprobs.as_ref().map(Vec::len) != Some(r.texts.len()) {
                    return Err("logprobs requested but not one list per choice".into());
                }
            }
            Ok(())
        },
    );
}

#[test]
fn retry_after_never_panics() {
    let strategy = prop_oneof![
        ".{0,40}",
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
        Just("Wed, 21 Oct 2015 07:28:00 GMT".to_string()),
        Just("Fri, 31 Dec 9999 23:59:59 GMT".to_string()),
    ];
    fuzz("retry_after", 20_000, strategy, |v| {
        let _ = backoff::parse_retry_after(&v, SystemTime::now());
        Ok(())
    });
}

#[test]
fn openai_client_decodes_arbitrary_http_replies() {
    let server = FakeOpenAi::scripted(vec![]);
    let mut s = settings(&server);
    s.max_retries = 0;
    s.timeout_ms = 5_000;
    let client = OpenAiClient::new(s).expect("client");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let status = prop::sample::select(vec![
        200u16, 200, 200, 201, 204, 400, 401, 404, 408, 413, 429, 500, 503, 599,
    ]);
    let header = prop_oneof![
        Just(None),
        ".{0,20}".prop_map(|v| Some(("Retry-After".to_string(), v))),
        Just(Some(("Retry-After".to_string(), "0".to_string()))),
        Just(Some(("Content-Type".to_string(), "text/html".to_string()))),
    ];
    fuzz(
        "openai_client_http",
        400,
        (status, header, reply_body(), 1usize..4),
        |(status, header, body, n)| {
            let body = body.replace(['\r', '\n', '\u{0}'], " ");
            server.push(vec![Reply::Raw {
                status,
                headers: header.into_iter().collect(),
                body,
            }]);
            let req = ChatRequest::new("Hi");
            let call = client.complete(&req, n);
            let out =
                rt.block_on(async { tokio::time::timeout(Duration::from_secs(20), call).await });
            match out {
                Err(_) => Err("the call hung".into()),
                Ok(Ok(c)) if c.texts.len() != n => {
                    Err(format!("{} texts for n = {n}", c.texts.len()))
                }
                Ok(Err(e)) if e.message().is_empty() => Err("an error with no message".into()),
                Ok(_) => Ok(()),
            }
        },
    );
}
