//! The OpenAI-compatible client against a fake server on 127.0.0.1: retries, Retry-After,
//! timeouts, broken replies, refusals, auth errors, and `n`.

use crate::common;

use std::time::{Duration, Instant};

use common::{settings, FakeOpenAi, Reply};
use uq_llm::{ChatRequest, LlmBackend, LlmError, LlmSettings, OpenAiClient};

fn req() -> ChatRequest {
    ChatRequest::new("What is the capital of France?").with_system("Answer briefly.")
}

async fn run(
    script: Vec<Reply>,
    tweak: impl FnOnce(&mut LlmSettings),
) -> (FakeOpenAi, Result<uq_llm::Completion, LlmError>, Duration) {
    let server = FakeOpenAi::scripted(script);
    let mut s = settings(&server);
    tweak(&mut s);
    let client = OpenAiClient::new(s).expect("client");
    let t0 = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(60), client.complete(&req(), 1))
        .await
        .expect("the call must end by itself");
    (server, out, t0.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured() {
    let (server, out, elapsed) = run(
        vec![Reply::with_header(
            429,
            "Retry-After",
            "1",
            r#"{"error":{"message":"slow down"}}"#,
        )],
        |_| {},
    )
    .await;
    let c = out.expect("retry succeeds");
    assert_eq!(server.requests(), 2);
    assert_eq!(c.texts, vec!["reply 2 choice 0"]);
    let _ = elapsed;
    let t = server.arrivals();
    assert!(
        t[1] - t[0] >= Duration::from_millis(950),
        "the retry arrived {:?} after the 429 with Retry-After: 1",
        t[1] - t[0]
    );
    assert_eq!(c.usage.requests, 1);
    assert_eq!(c.usage.prompt_tokens, 10);
    assert_eq!(c.model, "fake-model-0001", "the model the server names");
    let seen = server.received();
    assert_eq!(seen[0].body["messages"][0]["role"], "system");
    assert_eq!(
        seen[0].body["messages"][1]["content"],
        "What is the capital of France?"
    );
    assert_eq!(seen[0].body["model"], "fake-model");
    assert!(seen[0].authorization.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limited_without_retry_after_backs_off() {
    let (server, out, _) = run(
        vec![Reply::status(429, "busy"), Reply::status(429, "busy")],
        |_| {},
    )
    .await;
    out.expect("third attempt succeeds");
    assert_eq!(server.requests(), 3);
    // Full jitter: retry k waits at most backoff::ceiling(k) (0.5 s, then 1 s); the server's
    // arrival times show it (plus a second for the request itself on a loaded machine).
    let t = server.arrivals();
    for k in 0..2 {
        let gap = t[k + 1] - t[k];
        let most = uq_llm::backoff::ceiling(k as u32) + Duration::from_secs(1);
        assert!(
            gap <= most,
            "retry {k} came {gap:?} after the 429 (at most {most:?})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_error_then_success() {
    let (server, out, _) = run(vec![Reply::status(500, "oops")], |_| {}).await;
    assert_eq!(out.expect("retry succeeds").texts, vec!["reply 2 choice 0"]);
    assert_eq!(server.requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_are_bounded() {
    let busy = || Reply::status(503, r#"{"error":"overloaded right now"}"#);
    let (server, out, _) = run(vec![busy(), busy(), busy(), busy()], |s| s.max_retries = 2).await;
    let e = out.expect_err("gives up");
    assert!(matches!(e, LlmError::RetriesExhausted(_)), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains(&server.base_url) && m.contains("/chat/completions"),
        "{m}"
    );
    assert!(
        m.contains("3 attempts") && m.contains("503") && m.contains("overloaded right now"),
        "{m}"
    );
    assert_eq!(server.requests(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_reply_times_out() {
    let slow = || Reply::Ok.after(Duration::from_secs(3));
    let (server, out, elapsed) = run(vec![slow(), slow()], |s| {
        s.timeout_ms = 300;
        s.max_retries = 1;
    })
    .await;
    let e = out.expect_err("times out");
    assert!(matches!(e, LlmError::RetriesExhausted(_)), "{e:?}");
    assert!(e.to_string().contains("timeout_ms = 300"), "{e}");
    // Both attempts failed although each reply would have come after 3 s: the timeout cut them.
    assert_eq!(server.requests(), 2);
    let _ = elapsed;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_reply_then_fast_success() {
    let (server, out, _) = run(vec![Reply::Ok.after(Duration::from_secs(3))], |s| {
        s.timeout_ms = 300
    })
    .await;
    out.expect("second attempt succeeds");
    assert_eq!(server.requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_json_is_retried_then_reported() {
    let trunc = || {
        Reply::status(
            200,
            r#"{"id":"x","choices":[{"index":0,"message":{"content":"Par"#,
        )
    };
    let (server, out, _) = run(vec![trunc()], |_| {}).await;
    out.expect("retry after a truncated body succeeds");
    assert_eq!(server.requests(), 2);

    let (server, out, _) = run(vec![trunc(), trunc(), trunc()], |s| s.max_retries = 2).await;
    let e = out.expect_err("always truncated");
    assert!(e.to_string().contains("not valid JSON"), "{e}");
    assert_eq!(server.requests(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_choices_are_retried() {
    let (server, out, _) = run(vec![Reply::status(200, r#"{"choices":[]}"#)], |_| {}).await;
    out.expect("retry succeeds");
    assert_eq!(server.requests(), 2);

    let empty = || Reply::status(200, r#"{"choices":[],"usage":{}}"#);
    let (server, out, _) = run(vec![empty(), empty()], |s| s.max_retries = 1).await;
    assert!(out
        .expect_err("always empty")
        .to_string()
        .contains("empty `choices`"));
    assert_eq!(server.requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusal_is_not_retried() {
    let refusal = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that."},"finish_reason":"stop"}]}"#;
    let (server, out, _) = run(vec![Reply::status(200, refusal)], |_| {}).await;
    let e = out.expect_err("refused");
    assert!(matches!(e, LlmError::Refusal(_)), "{e:?}");
    assert!(e.to_string().contains("can't help"), "{e}");
    assert_eq!(server.requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_content_is_a_clear_error() {
    let null = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"length"}]}"#;
    let (server, out, _) = run(vec![Reply::status(200, null)], |_| {}).await;
    let e = out.expect_err("no text");
    assert!(
        matches!(e, LlmError::Reply(_)) && e.to_string().contains("no text"),
        "{e:?}"
    );
    assert_eq!(server.requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_fails_at_once_naming_the_variable() {
    std::env::set_var("UQ_LLM_TEST_FAKE_KEY", "sk-test-123");
    let (server, out, _) = run(
        vec![Reply::status(
            401,
            r#"{"error":{"message":"Incorrect API key"}}"#,
        )],
        |s| s.api_key_env = Some("UQ_LLM_TEST_FAKE_KEY".into()),
    )
    .await;
    let e = out.expect_err("401");
    assert!(matches!(e, LlmError::Rejected { status: 401, .. }), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains("set the API key in the env var named by api_key_env (UQ_LLM_TEST_FAKE_KEY)"),
        "{m}"
    );
    assert!(m.contains("Incorrect API key"), "{m}");
    assert!(
        !m.contains("sk-test-123"),
        "the key must not leak into messages"
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(
        server.received()[0].authorization.as_deref(),
        Some("Bearer sk-test-123")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_client_errors_fail_at_once() {
    for (status, needle) in [
        (400, "n_supported"),
        (403, "permissions"),
        (404, "base_url"),
    ] {
        let (server, out, _) = run(vec![Reply::status(status, "nope")], |_| {}).await;
        let e = out.expect_err("rejected");
        assert!(
            matches!(e, LlmError::Rejected { status: s, .. } if s == status),
            "{e:?}"
        );
        assert!(e.to_string().contains(needle), "{e}");
        assert_eq!(server.requests(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_is_retried_then_reported() {
    // Bind then drop a listener: its port is (almost surely) closed.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let s = LlmSettings {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key_env: None,
        max_retries: 1,
        timeout_ms: 2000,
        ..LlmSettings::default()
    };
    let client = OpenAiClient::new(s).unwrap();
    let e = client
        .complete(&req(), 1)
        .await
        .expect_err("nobody listens");
    assert!(matches!(e, LlmError::RetriesExhausted(_)), "{e:?}");
    assert!(
        e.to_string().contains("connection failed") || e.to_string().contains("transport error"),
        "{e}"
    );
}

/// A server and a client with `seed` 10 that sends `n` or not.
fn seeded(n_supported: bool) -> (FakeOpenAi, OpenAiClient) {
    let server = FakeOpenAi::scripted(vec![]);
    let client = OpenAiClient::new(LlmSettings {
        n_supported,
        seed: Some(10),
        ..settings(&server)
    })
    .unwrap();
    (server, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_in_one_request_or_separate_requests() {
    let (server, client) = seeded(true);
    let c = client.complete(&req(), 3).await.unwrap();
    assert_eq!(
        c.texts,
        vec!["reply 1 choice 0", "reply 1 choice 1", "reply 1 choice 2"]
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(server.received()[0].body["n"], 3);
    assert_eq!(c.usage.completion_tokens, 9);

    let (server, client) = seeded(false);
    let c = client.complete(&req(), 3).await.unwrap();
    assert_eq!(c.texts.len(), 3);
    assert_eq!(server.requests(), 3);
    let mut seeds: Vec<u64> = server
        .received()
        .iter()
        .map(|s| s.body["seed"].as_u64().unwrap())
        .collect();
    seeds.sort();
    assert_eq!(seeds, vec![10, 11, 12], "sample i gets seed + i");
    assert!(server.received().iter().all(|s| s.body.get("n").is_none()));
    assert_eq!(c.usage.requests, 3);
    let total = client.total_usage();
    assert_eq!(
        (total.requests, total.prompt_tokens, total.completion_tokens),
        (3, 30, 9)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_ignoring_n_gets_the_rest_separately() {
    let one = r#"{"choices":[{"index":0,"message":{"content":"only one"}}]}"#;
    let server = FakeOpenAi::scripted(vec![Reply::status(200, one)]);
    let client = OpenAiClient::new(settings(&server)).unwrap();
    let c = client.complete(&req(), 3).await.unwrap();
    assert_eq!(c.texts.len(), 3);
    assert_eq!(c.texts[0], "only one");
    assert_eq!(server.requests(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logprobs_are_returned_per_choice() {
    let server = FakeOpenAi::scripted(vec![]);
    let client = OpenAiClient::new(LlmSettings {
        logprobs: true,
        ..settings(&server)
    })
    .unwrap();
    let c = client.complete(&req(), 2).await.unwrap();
    let values = c.logprobs.as_ref().map(|l| {
        l.iter()
            .map(|t| uq_llm::logprobs::values(t))
            .collect::<Vec<_>>()
    });
    assert_eq!(values, Some(vec![vec![-0.25, -1.5], vec![-0.25, -1.5]]));
    // The tokens' texts come with them.
    assert_eq!(c.logprobs.as_ref().unwrap()[0][1].token, " x");
    assert_eq!(server.received()[0].body["logprobs"], true);
}

/// The most requests sent within any window of the arrival times `t`, against what a bucket of
/// `capacity` refilled at `per_sec` allows: `count <= capacity + per_sec * span + slack`, with
/// `cost` units per request. Returns the worst window as (count·cost, allowed).
fn worst_window(t: &[Instant], cost: f64, capacity: f64, per_sec: f64) -> (f64, f64) {
    let mut worst = (0.0, f64::INFINITY);
    for i in 0..t.len() {
        for j in i..t.len() {
            let used = (j - i + 1) as f64 * cost;
            let allowed = capacity + per_sec * (t[j] - t[i]).as_secs_f64();
            if used - allowed > worst.0 - worst.1 {
                worst = (used, allowed);
            }
        }
    }
    worst
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_cap_holds_at_the_server() {
    for cap in [1usize, 3] {
        // Each reply takes 400 ms, so without the cap all 9 requests would be in flight at once
        // (and with it, `cap` of them overlap even when a busy machine is slow to send them).
        let server = FakeOpenAi::with_handler(|_| Reply::Ok.after(Duration::from_millis(400)));
        let client = OpenAiClient::new(LlmSettings {
            n_supported: false,
            concurrency: cap,
            ..settings(&server)
        })
        .unwrap();
        let c = client.complete(&req(), 9).await.unwrap();
        assert_eq!(c.texts.len(), 9);
        assert_eq!(server.requests(), 9);
        assert_eq!(
            server.max_in_flight(),
            cap,
            "requests the server saw in flight at once"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_per_minute_hold_at_the_server() {
    // A bucket of 30 requests refilled at 0.5 per second: 30 at once, then one every 2 s.
    let server = FakeOpenAi::scripted(vec![]);
    let client = OpenAiClient::new(LlmSettings {
        n_supported: false,
        concurrency: 8,
        requests_per_minute: Some(30),
        ..settings(&server)
    })
    .unwrap();
    let c = client.complete(&req(), 32).await.unwrap();
    assert_eq!(c.texts.len(), 32);
    let t = server.arrivals();
    assert_eq!(t.len(), 32);
    let (used, allowed) = worst_window(&t, 1.0, 30.0, 0.5);
    assert!(
        used <= allowed + 0.25,
        "{used} requests where the limit allows {allowed:.2}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_per_minute_hold_at_the_server() {
    // Each request is estimated at 13 tokens (45 prompt characters / 4, plus max_tokens 1), and
    // the fake server reports 13 used, so nothing is refunded: a bucket of 390 tokens refilled at
    // 6.5 per second sends 30 at once, then one every 2 s.
    let server = FakeOpenAi::scripted(vec![]);
    let client = OpenAiClient::new(LlmSettings {
        n_supported: false,
        concurrency: 8,
        max_tokens: 1,
        tokens_per_minute: Some(390),
        ..settings(&server)
    })
    .unwrap();
    let c = client.complete(&req(), 32).await.unwrap();
    assert_eq!(c.texts.len(), 32);
    assert_eq!(c.usage.prompt_tokens + c.usage.completion_tokens, 32 * 13);
    let t = server.arrivals();
    let (used, allowed) = worst_window(&t, 13.0, 390.0, 6.5);
    assert!(
        used <= allowed + 3.0,
        "{used} tokens sent where the limit allows {allowed:.1}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_requests_are_refused_by_http() {
    let server = FakeOpenAi::scripted(vec![]);
    let client = OpenAiClient::new(settings(&server)).unwrap();
    let e = client
        .complete(&ChatRequest::raw("Q: x\nA:"), 1)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("local backend"), "{e}");
    let e = client
        .complete(&ChatRequest::new("  "), 1)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    assert_eq!(client.complete(&req(), 0).await.unwrap().texts.len(), 0);
    assert_eq!(server.requests(), 0);
}
