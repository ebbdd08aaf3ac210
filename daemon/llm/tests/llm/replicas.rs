//! One LLM over several replicas (`base_url` + `replicas`), each a fake OpenAI server on
//! 127.0.0.1: a failing replica is taken out and the call moves on without using a retry, a
//! slow replica gets fewer requests than a fast one, a replica comes back after
//! `replica_retry_ms`, and the completion cache and usage stay those of one LLM.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{settings, FakeOpenAi, Reply};
use uq_llm::{
    CachedBackend, ChatRequest, CompletionCache, LlmBackend, LlmError, LlmSettings, OpenAiClient,
};

fn req(i: usize) -> ChatRequest {
    ChatRequest::new(format!("Question {i}?"))
}

fn replicated(
    first: &FakeOpenAi,
    others: &[&FakeOpenAi],
    tweak: impl FnOnce(&mut LlmSettings),
) -> OpenAiClient {
    let mut s = settings(first);
    s.replicas = others.iter().map(|o| o.base_url.clone()).collect();
    s.max_retries = 0;
    tweak(&mut s);
    OpenAiClient::new(s).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_replica_is_taken_out_and_the_call_moves_on() {
    let failing = FakeOpenAi::with_handler(|_| Reply::Error(503, "overloaded".into()));
    let healthy = FakeOpenAi::scripted(vec![]);
    // No retries at all: the move to the healthy replica is not a retry.
    let client = replicated(&failing, &[&healthy], |s| s.replica_retry_ms = 60_000);
    for i in 0..6 {
        let c = client
            .complete(&req(i), 1)
            .await
            .expect("the healthy replica answers");
        assert_eq!(c.texts.len(), 1);
    }
    assert_eq!(healthy.requests(), 6);
    assert!(
        failing.requests() <= 1,
        "taken out after its first failure: {} requests",
        failing.requests()
    );
    assert_eq!(
        client.replicas_down(),
        vec![format!("{}/chat/completions", failing.base_url)]
    );
    assert_eq!(client.total_usage().requests, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_replica_failing_is_an_error_naming_them() {
    let a = FakeOpenAi::with_handler(|_| Reply::Error(500, "boom".into()));
    let b = FakeOpenAi::with_handler(|_| Reply::Error(502, "bad gateway".into()));
    let client = replicated(&a, &[&b], |s| s.max_retries = 1);
    let e = tokio::time::timeout(Duration::from_secs(30), client.complete(&req(0), 1))
        .await
        .expect("ends")
        .unwrap_err();
    assert!(matches!(e, LlmError::RetriesExhausted(_)), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("2 replicas of fake-model") && m.contains("HTTP 50"),
        "{m}"
    );
    assert!(
        a.requests() >= 1 && b.requests() >= 1,
        "both tried: {} {}",
        a.requests(),
        b.requests()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_slow_replica_gets_fewer_requests() {
    let slow = FakeOpenAi::with_handler(|_| Reply::Ok.after(Duration::from_millis(600)));
    let fast = FakeOpenAi::with_handler(|_| Reply::Ok.after(Duration::from_millis(20)));
    let client = Arc::new(replicated(&slow, &[&fast], |s| s.concurrency = 4));
    let calls: Vec<_> = (0..24)
        .map(|i| {
            let c = Arc::clone(&client);
            tokio::spawn(async move { c.complete(&req(i), 1).await })
        })
        .collect();
    for c in calls {
        c.await.unwrap().expect("every call answered");
    }
    let (s, f) = (slow.requests(), fast.requests());
    assert_eq!(s + f, 24);
    // Least loaded: while a slow request is in flight the fast replica takes the others.
    assert!(f >= 3 * s, "slow {s}, fast {f}");
    assert!(s >= 1, "the slow replica is still used");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_comes_back_after_replica_retry_ms() {
    let flaky = FakeOpenAi::scripted(vec![Reply::Error(503, "restarting".into())]);
    let other = FakeOpenAi::scripted(vec![]);
    let client = replicated(&flaky, &[&other], |s| s.replica_retry_ms = 300);
    client
        .complete(&req(0), 1)
        .await
        .expect("answered by a replica");
    if flaky.requests() == 1 {
        assert_eq!(client.replicas_down().len(), 1, "the failed replica is out");
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(client.replicas_down().is_empty());
    for i in 1..9 {
        client.complete(&req(i), 1).await.unwrap();
    }
    // Back in service: it answers its share again (its scripted failure is used up).
    assert!(
        flaky.requests() >= 3,
        "flaky {} other {}",
        flaky.requests(),
        other.requests()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_cache_knows_one_llm_whatever_replica_answers() {
    let a = FakeOpenAi::scripted(vec![]);
    let b = FakeOpenAi::scripted(vec![]);
    let dir = std::env::temp_dir().join(format!("uq-llm-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cache = Arc::new(CompletionCache::open(dir.join("c.sqlite")).unwrap());
    let two = CachedBackend::new(replicated(&a, &[&b], |_| {}), Arc::clone(&cache));
    let first = two.complete(&req(0), 1).await.unwrap();
    // The cache knows the LLM by its first URL: the same LLM without replicas hits the entry.
    let one = CachedBackend::new(replicated(&a, &[], |_| {}), Arc::clone(&cache));
    let again = one.complete(&req(0), 1).await.unwrap();
    assert_eq!(first.texts, again.texts);
    assert_eq!(
        a.requests() + b.requests(),
        1,
        "the second call came from the cache"
    );
    assert_eq!(two.identity(), one.identity());
    let _ = std::fs::remove_dir_all(&dir);
}
