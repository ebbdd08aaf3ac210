//! The completion cache in front of the fake server: hits cost no request, sample indices are
//! distinct entries, and finished samples survive a later failure (checked by re-opening the file).

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{settings, FakeOpenAi, Reply};
use uq_llm::{CachedBackend, ChatRequest, CompletionCache, LlmBackend, LlmSettings, OpenAiClient};

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uq-llm-cache-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("completions.sqlite")
}

fn cached(
    server: &FakeOpenAi,
    path: &PathBuf,
    tweak: impl FnOnce(&mut LlmSettings),
) -> CachedBackend<OpenAiClient> {
    let mut s = settings(server);
    tweak(&mut s);
    CachedBackend::new(
        OpenAiClient::new(s).unwrap(),
        Arc::new(CompletionCache::open(path).unwrap()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_identical_call_hits_the_cache() {
    let path = temp_db("hit");
    let server = FakeOpenAi::scripted(vec![]);
    let llm = cached(&server, &path, |_| {});
    let req = ChatRequest::new("Name a prime number.");
    let first = llm.complete(&req, 1).await.unwrap();
    assert_eq!(server.requests(), 1);
    assert_eq!(first.usage.requests, 1);
    assert_eq!(first.usage.cache_hits, 0);
    let second = llm.complete(&req, 1).await.unwrap();
    assert_eq!(server.requests(), 1, "served from the cache");
    assert_eq!(second.texts, first.texts);
    assert_eq!(second.usage.cache_hits, 1);
    assert_eq!(second.usage.requests, 0);
    assert_eq!(second.usage.prompt_tokens, 0);

    // Any change of the request is a new entry.
    llm.complete(&req.clone().with_temperature(0.0), 1)
        .await
        .unwrap();
    llm.complete(&req.clone().with_system("Be brief."), 1)
        .await
        .unwrap();
    assert_eq!(server.requests(), 3);

    // A new process (new client, re-opened file) still hits.
    drop(llm);
    let llm = cached(&server, &path, |_| {});
    let again = llm.complete(&req, 1).await.unwrap();
    assert_eq!(again.texts, first.texts);
    assert_eq!(server.requests(), 3);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_indices_are_distinct_entries() {
    let path = temp_db("samples");
    let server = FakeOpenAi::scripted(vec![]);
    let llm = cached(&server, &path, |s| s.n_supported = false);
    let req = ChatRequest::new("Tell me a fact about owls.");
    let c = llm.complete(&req, 2).await.unwrap();
    assert_eq!(server.requests(), 2);
    assert_ne!(c.texts[0], c.texts[1], "two samples, two answers");
    assert_eq!(llm.cache().len().unwrap(), 2);

    // Asking again costs nothing; asking for one more costs one request.
    let again = llm.complete(&req, 2).await.unwrap();
    assert_eq!(again.texts, c.texts);
    assert_eq!(server.requests(), 2);
    let three = llm.complete(&req, 3).await.unwrap();
    assert_eq!(&three.texts[..2], &c.texts[..]);
    assert_eq!(three.usage.cache_hits, 2);
    assert_eq!(three.usage.requests, 1);
    assert_eq!(server.requests(), 3);
    let one = llm.complete_sample(&req, 1).await.unwrap();
    assert_eq!(one.texts, vec![c.texts[1].clone()]);
    assert_eq!(server.requests(), 3);

    // A server that takes `n`: one request, stored as n entries.
    let path2 = temp_db("samples-n");
    let server2 = FakeOpenAi::scripted(vec![]);
    let llm2 = cached(&server2, &path2, |s| s.n_supported = true);
    let c2 = llm2.complete(&req, 2).await.unwrap();
    assert_eq!(server2.requests(), 1);
    assert_eq!(c2.texts, vec!["reply 1 choice 0", "reply 1 choice 1"]);
    assert_eq!(llm2.cache().len().unwrap(), 2);
    assert_eq!(
        llm2.complete_sample(&req, 1).await.unwrap().texts,
        vec!["reply 1 choice 1"]
    );
    assert_eq!(server2.requests(), 1);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
    let _ = std::fs::remove_dir_all(path2.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_samples_survive_a_later_failure() {
    let path = temp_db("partial");
    // First request succeeds, the second is rejected (400: not retried).
    let server = FakeOpenAi::scripted(vec![Reply::Ok, Reply::status(400, "bad request")]);
    let llm = cached(&server, &path, |s| {
        s.n_supported = false;
        s.concurrency = 1;
    });
    let req = ChatRequest::new("List two rivers.");
    let e = llm.complete(&req, 2).await.expect_err("one sample fails");
    assert!(e.to_string().contains("400"), "{e}");
    assert_eq!(server.requests(), 2);
    drop(llm);

    // Re-open the file: the successful sample is there.
    let reopened = CompletionCache::open(&path).unwrap();
    assert_eq!(reopened.len().unwrap(), 1);
    drop(reopened);

    // Re-running pays only for the missing sample.
    let llm = cached(&server, &path, |s| s.n_supported = false);
    let c = llm.complete(&req, 2).await.unwrap();
    assert_eq!(c.texts.len(), 2);
    assert_eq!(c.usage.cache_hits, 1);
    assert_eq!(c.usage.requests, 1);
    assert_eq!(server.requests(), 3);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logprobs_round_trip_through_the_cache() {
    let path = temp_db("logprobs");
    let server = FakeOpenAi::scripted(vec![]);
    let llm = cached(&server, &path, |s| s.logprobs = true);
    let req = ChatRequest::new("Say hi.");
    let a = llm.complete(&req, 2).await.unwrap();
    let b = llm.complete(&req, 2).await.unwrap();
    assert_eq!(server.requests(), 1);
    assert_eq!(a.logprobs, b.logprobs);
    let values = b.logprobs.as_ref().map(|l| {
        l.iter()
            .map(|t| uq_llm::logprobs::values(t))
            .collect::<Vec<_>>()
    });
    assert_eq!(values, Some(vec![vec![-0.25, -1.5], vec![-0.25, -1.5]]));
    // The tokens' texts come with them.
    assert_eq!(b.logprobs.as_ref().unwrap()[0][1].token, " x");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn concurrent_writers_from_threads_and_connections() {
    let path = temp_db("threads");
    let a = Arc::new(CompletionCache::open(&path).unwrap());
    let b = Arc::new(CompletionCache::open(&path).unwrap()); // a second connection, as another process would
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let c = if t % 2 == 0 {
                Arc::clone(&a)
            } else {
                Arc::clone(&b)
            };
            std::thread::spawn(move || {
                for i in 0..25 {
                    let s = uq_llm::CachedSample {
                        text: format!("t{t} i{i}"),
                        prompt_tokens: 1,
                        completion_tokens: 1,
                        logprobs: None,
                        model: "m".into(),
                        created_at: String::new(),
                    };
                    c.put(&format!("hash-{t}"), "{}", i, &s).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(a.len().unwrap(), 100);
    assert_eq!(b.get("hash-3", 24).unwrap().unwrap().text, "t3 i24");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
