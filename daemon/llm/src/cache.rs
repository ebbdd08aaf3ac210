//! Persistent completion cache in a SQLite file, and [`CachedBackend`], a backend wrapper that
//! serves samples from it.
//!
//! Key: SHA-256 of the canonical JSON of the FULL request (backend, base_url, model, messages,
//! raw flag, temperature, top_p, max_tokens, seed, logprobs) together with the sample index, so
//! re-running costs no new calls while samples `0..n` of a temperature > 0 request stay distinct
//! entries. Each sample is written as soon as its call returns, so a later failure in the same
//! batch loses nothing already paid for. The connection sits behind a mutex (threads) and uses WAL
//! with a busy timeout (processes).

mod backend;
mod key;
mod store;

pub use backend::CachedBackend;
pub use key::request_key;
pub use store::{CachedSample, CompletionCache};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{BackendIdentity, ChatRequest, Params};

    fn ident() -> BackendIdentity {
        BackendIdentity {
            backend: "openai".into(),
            base_url: "http://x/v1".into(),
            model: "m".into(),
        }
    }
    fn params() -> Params {
        Params {
            temperature: 1.0,
            top_p: 1.0,
            max_tokens: 10,
            seed: None,
            logprobs: false,
            top_logprobs: 0,
        }
    }

    #[test]
    fn key_covers_every_field() {
        let req = ChatRequest::new("q");
        let (base, json) = request_key(&ident(), &params(), &req);
        assert_eq!(base.len(), 64);
        assert!(json.contains("\"max_tokens\":10"));
        let variants = [
            request_key(
                &BackendIdentity {
                    backend: "local".into(),
                    ..ident()
                },
                &params(),
                &req,
            )
            .0,
            request_key(
                &BackendIdentity {
                    base_url: "http://y/v1".into(),
                    ..ident()
                },
                &params(),
                &req,
            )
            .0,
            request_key(
                &BackendIdentity {
                    model: "m2".into(),
                    ..ident()
                },
                &params(),
                &req,
            )
            .0,
            request_key(
                &ident(),
                &Params {
                    temperature: 0.5,
                    ..params()
                },
                &req,
            )
            .0,
            request_key(
                &ident(),
                &Params {
                    top_p: 0.9,
                    ..params()
                },
                &req,
            )
            .0,
            request_key(
                &ident(),
                &Params {
                    max_tokens: 11,
                    ..params()
                },
                &req,
            )
            .0,
            request_key(
                &ident(),
                &Params {
                    seed: Some(1),
                    ..params()
                },
                &req,
            )
            .0,
            request_key(
                &ident(),
                &Params {
                    logprobs: true,
                    ..params()
                },
                &req,
            )
            .0,
            request_key(&ident(), &params(), &req.clone().with_system("s")).0,
            request_key(&ident(), &params(), &ChatRequest::new("q2")).0,
            request_key(&ident(), &params(), &ChatRequest::raw("q")).0,
            request_key(&ident(), &params(), &req.clone().with_stop("\n")).0,
        ];
        for v in &variants {
            assert_ne!(v, &base);
        }
        assert_eq!(request_key(&ident(), &params(), &req).0, base);
    }

    #[test]
    fn put_get_roundtrip_and_reopen() {
        let dir = std::env::temp_dir().join(format!("uq-llm-cache-unit-{}", std::process::id()));
        let path = dir.join("c.sqlite");
        let _ = std::fs::remove_file(&path);
        let cache = CompletionCache::open(&path).unwrap();
        assert!(cache.is_empty().unwrap());
        let s = CachedSample {
            text: "hello".into(),
            prompt_tokens: 3,
            completion_tokens: 1,
            logprobs: Some(vec![crate::logprobs::TokenLogprob::bare(-0.5)]),
            model: "m".into(),
            created_at: String::new(),
        };
        cache.put("h", "{}", 0, &s).unwrap();
        cache
            .put(
                "h",
                "{}",
                0,
                &CachedSample {
                    text: "other".into(),
                    ..s.clone()
                },
            )
            .unwrap();
        drop(cache);
        let cache = CompletionCache::open(&path).unwrap();
        let got = cache.get("h", 0).unwrap().unwrap();
        assert_eq!(got.text, "hello");
        assert_eq!(
            got.logprobs,
            Some(vec![crate::logprobs::TokenLogprob::bare(-0.5)])
        );
        assert!(
            got.created_at.ends_with('Z') && got.created_at.contains('T'),
            "{}",
            got.created_at
        );
        assert!(cache.get("h", 1).unwrap().is_none());
        assert_eq!(cache.len().unwrap(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_and_rebuilt() {
        let dir = std::env::temp_dir().join(format!("uq-llm-cache-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.sqlite");
        let garbage = b"this is not sqlite at all, just some text padding padding padding padding padding padding padding padding";
        std::fs::write(&path, garbage).unwrap();
        let cache = CompletionCache::open(&path).unwrap();
        assert_eq!(cache.len().unwrap(), 0);
        let aside: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("bad.sqlite.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(std::fs::read(dir.join(&aside[0])).unwrap(), garbage);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
