//! Persistent completion cache in a SQLite file, and [`CachedBackend`], a backend wrapper that
//! serves samples from it.
//!
//! Key: SHA-256 of the canonical JSON of the FULL request (backend, base_url, model, messages,
//! raw flag, temperature, top_p, max_tokens, seed, logprobs) together with the sample index, so
//! re-running costs no new calls while samples `0..n` of a temperature > 0 request stay distinct
//! entries. Each sample is written as soon as its call returns, so a later failure in the same
//! batch loses nothing already paid for. The connection sits behind a mutex (threads) and uses WAL
//! with a busy timeout (processes).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::join_all;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::client::{BackendIdentity, ChatRequest, Completion, LlmBackend, Params, Usage};
use crate::error::LlmError;
use crate::logprobs::TokenLogprob;

const SCHEMA_VERSION: i64 = 1;
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// One cached sample.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSample {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub logprobs: Option<Vec<TokenLogprob>>,
    pub model: String,
    /// UTC, ISO-8601 (`2025-01-31T12:00:00.000Z`); set by the cache on insert.
    pub created_at: String,
}

/// The cache file.
pub struct CompletionCache {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for CompletionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionCache")
            .field("path", &self.path)
            .finish()
    }
}

/// The cache key of a request: `(hash, canonical_json)`. The sample index is the second half of
/// the key, kept in its own column.
pub fn request_key(
    identity: &BackendIdentity,
    params: &Params,
    req: &ChatRequest,
) -> (String, String) {
    let mut messages = Vec::with_capacity(2);
    if let Some(s) = &req.system {
        messages.push(json!({"role": "system", "content": s}));
    }
    messages.push(json!({"role": "user", "content": req.user}));
    // serde_json's default map is ordered by key, so this serialisation is canonical.
    let canonical = json!({
        "v": SCHEMA_VERSION,
        "backend": identity.backend,
        "base_url": identity.base_url,
        "model": identity.model,
        "messages": messages,
        "raw": req.raw,
        "stop": req.stop,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "max_tokens": params.max_tokens,
        "seed": params.seed,
        "logprobs": params.logprobs,
    });
    // Only when asked: the keys of requests without alternatives stay what they were.
    let mut canonical = canonical;
    if params.top_logprobs > 0 {
        canonical["top_logprobs"] = json!(params.top_logprobs);
    }
    let canonical = canonical.to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    let hash = digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    (hash, canonical)
}

impl CompletionCache {
    /// Opens (creating if needed) the cache file at `path`, in WAL mode. A file that is not a
    /// SQLite database or is corrupt (a crash, a disk error, another program) is only a cache:
    /// it is moved aside to `<path>.corrupt-<unix time>`, a warning is logged on stderr, and an
    /// empty cache is built in its place.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        match Self::open_file(path) {
            Err((_, Some(e))) => {
                let aside = PathBuf::from(format!(
                    "{}.corrupt-{}",
                    path.display(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                ));
                std::fs::rename(path, &aside).map_err(|e2| {
                    LlmError::Cache(format!(
                        "completion cache {} is corrupt ({e}) and cannot be moved aside ({e2}): delete it",
                        path.display()
                    ))
                })?;
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "uqd: warning: completion cache {} was corrupt ({e}); moved it to {} and started an empty cache",
                    path.display(),
                    aside.display()
                );
                Self::open_file(path).map_err(|(e, _)| e)
            }
            other => other.map_err(|(e, _)| e),
        }
    }

    /// Opens the file; an error comes with the SQLite error when the file is corrupt.
    fn open_file(path: &Path) -> Result<Self, (LlmError, Option<rusqlite::Error>)> {
        let path = path.to_path_buf();
        let fail = |what: &str, e: rusqlite::Error| {
            let corrupt = matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
            );
            let err = LlmError::Cache(format!(
                "completion cache {}: {what}: {e}. Fix: make the file's directory writable, or point the cache \
                 at another path",
                path.display()
            ));
            (err, corrupt.then_some(e))
        };
        let plain = |e: LlmError| (e, None);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                plain(LlmError::Cache(format!(
                    "cannot create the cache directory {}: {e}",
                    dir.display()
                )))
            })?;
        }
        let conn = Connection::open(&path).map_err(|e| fail("cannot open", e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| fail("cannot set busy_timeout", e))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| fail("cannot switch to WAL (is it a SQLite file?)", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(plain(LlmError::Cache(format!(
                "completion cache {}: journal_mode is {mode}, not wal (is the file on a filesystem without shared memory?)",
                path.display()
            ))));
        }
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| fail("cannot read", e))?;
        if version > SCHEMA_VERSION {
            return Err(plain(LlmError::Cache(format!(
                "completion cache {} has schema version {version}, newer than this build's {SCHEMA_VERSION}: use a newer \
                 uqlite or another cache file",
                path.display()
            ))));
        }
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS requests (
                 request_hash TEXT PRIMARY KEY,
                 request_json TEXT NOT NULL,
                 created_at TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS completions (
                 request_hash TEXT NOT NULL,
                 sample_index INTEGER NOT NULL,
                 text TEXT NOT NULL,
                 prompt_tokens INTEGER NOT NULL,
                 completion_tokens INTEGER NOT NULL,
                 logprobs TEXT,
                 model TEXT NOT NULL,
                 created_at TEXT NOT NULL,
                 PRIMARY KEY (request_hash, sample_index));
             PRAGMA user_version = 1;",
        )
        .map_err(|e| fail("cannot create the tables", e))?;
        Ok(CompletionCache {
            path,
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn err(&self, what: &str, e: impl std::fmt::Display) -> LlmError {
        LlmError::Cache(format!(
            "completion cache {}: {what}: {e}",
            self.path.display()
        ))
    }

    /// Sample `index` of the request with hash `hash`, if cached.
    pub fn get(&self, hash: &str, index: usize) -> Result<Option<CachedSample>, LlmError> {
        let conn = self.lock();
        let row = conn
            .query_row(
                "SELECT text, prompt_tokens, completion_tokens, logprobs, model, created_at
                 FROM completions WHERE request_hash = ?1 AND sample_index = ?2",
                params![hash, index as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err("cannot read", e))?;
        let Some((text, pt, ct, lp, model, created_at)) = row else {
            return Ok(None);
        };
        let logprobs = match lp {
            None => None,
            Some(s) => {
                Some(serde_json::from_str(&s).map_err(|e| self.err("corrupt logprobs entry", e))?)
            }
        };
        Ok(Some(CachedSample {
            text,
            prompt_tokens: pt.max(0) as u64,
            completion_tokens: ct.max(0) as u64,
            logprobs,
            model,
            created_at,
        }))
    }

    /// Stores sample `index` (the first writer of a key wins; later writes are ignored).
    pub fn put(
        &self,
        hash: &str,
        request_json: &str,
        index: usize,
        sample: &CachedSample,
    ) -> Result<(), LlmError> {
        let logprobs = match &sample.logprobs {
            None => None,
            Some(lp) => {
                Some(serde_json::to_string(lp).map_err(|e| self.err("cannot encode logprobs", e))?)
            }
        };
        let mut conn = self.lock();
        let tx = conn
            .transaction()
            .map_err(|e| self.err("cannot write", e))?;
        tx.execute(
            "INSERT OR IGNORE INTO requests (request_hash, request_json, created_at)
             VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            params![hash, request_json],
        )
        .map_err(|e| self.err("cannot write", e))?;
        tx.execute(
            "INSERT OR IGNORE INTO completions
             (request_hash, sample_index, text, prompt_tokens, completion_tokens, logprobs, model, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            params![
                hash,
                index as i64,
                sample.text,
                sample.prompt_tokens.min(i64::MAX as u64) as i64,
                sample.completion_tokens.min(i64::MAX as u64) as i64,
                logprobs,
                sample.model
            ],
        )
        .map_err(|e| self.err("cannot write", e))?;
        tx.commit().map_err(|e| self.err("cannot commit", e))
    }

    /// Number of cached samples.
    pub fn len(&self) -> Result<u64, LlmError> {
        let conn = self.lock();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM completions", [], |r| r.get(0))
            .map_err(|e| self.err("cannot count", e))?;
        Ok(n.max(0) as u64)
    }

    pub fn is_empty(&self) -> Result<bool, LlmError> {
        Ok(self.len()? == 0)
    }
}

/// A backend whose samples go through a [`CompletionCache`].
pub struct CachedBackend<B> {
    inner: B,
    cache: Arc<CompletionCache>,
}

/// What a request needs for the cache: its key and JSON.
struct Key {
    hash: Arc<str>,
    json: Arc<str>,
}

impl<B: LlmBackend> CachedBackend<B> {
    pub fn new(inner: B, cache: Arc<CompletionCache>) -> Self {
        CachedBackend { inner, cache }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn cache(&self) -> &Arc<CompletionCache> {
        &self.cache
    }

    fn key(&self, req: &ChatRequest) -> Key {
        let (hash, json) = request_key(&self.inner.identity(), &self.inner.params(req), req);
        Key {
            hash: hash.into(),
            json: json.into(),
        }
    }

    async fn lookup(
        &self,
        key: &Key,
        indices: Vec<usize>,
    ) -> Result<Vec<Option<CachedSample>>, LlmError> {
        let cache = Arc::clone(&self.cache);
        let hash = Arc::clone(&key.hash);
        tokio::task::spawn_blocking(move || {
            indices.into_iter().map(|i| cache.get(&hash, i)).collect()
        })
        .await
        .map_err(|e| LlmError::Cache(format!("cache lookup task failed: {e}")))?
    }

    async fn store(&self, key: &Key, samples: Vec<(usize, CachedSample)>) -> Result<(), LlmError> {
        let cache = Arc::clone(&self.cache);
        let (hash, json) = (Arc::clone(&key.hash), Arc::clone(&key.json));
        tokio::task::spawn_blocking(move || {
            samples
                .iter()
                .try_for_each(|(i, s)| cache.put(&hash, &json, *i, s))
        })
        .await
        .map_err(|e| LlmError::Cache(format!("cache write task failed: {e}")))?
    }

    /// Fetches sample `index` from the inner backend and stores it at once.
    async fn fetch_one(
        &self,
        key: &Key,
        req: &ChatRequest,
        index: usize,
    ) -> Result<(CachedSample, Usage), LlmError> {
        let c = self.inner.complete_sample(req, index).await?;
        let sample = to_samples(c.clone(), 1).into_iter().next().ok_or_else(|| {
            LlmError::Reply(format!("the backend returned no text for sample {index}"))
        })?;
        self.store(key, vec![(index, sample.clone())]).await?;
        Ok((sample, c.usage))
    }
}

/// Splits a completion into per-sample entries; the call's usage is put on the first sample.
fn to_samples(c: Completion, n: usize) -> Vec<CachedSample> {
    let mut out = Vec::with_capacity(n);
    let mut lps = c.logprobs.map(|v| v.into_iter());
    for (i, text) in c.texts.into_iter().take(n).enumerate() {
        let logprobs = lps.as_mut().map(|it| it.next().unwrap_or_default());
        let (pt, ct) = if i == 0 {
            (c.usage.prompt_tokens, c.usage.completion_tokens)
        } else {
            (0, 0)
        };
        out.push(CachedSample {
            text,
            prompt_tokens: pt,
            completion_tokens: ct,
            logprobs,
            model: c.model.clone(),
            created_at: String::new(),
        });
    }
    out
}

#[async_trait]
impl<B: LlmBackend> LlmBackend for CachedBackend<B> {
    fn identity(&self) -> BackendIdentity {
        self.inner.identity()
    }

    fn params(&self, req: &ChatRequest) -> Params {
        self.inner.params(req)
    }

    fn batches_samples(&self) -> bool {
        self.inner.batches_samples()
    }

    async fn complete(&self, req: &ChatRequest, n: usize) -> Result<Completion, LlmError> {
        crate::client::check_request(req, n)?;
        let key = self.key(req);
        let mut slots = self.lookup(&key, (0..n).collect()).await?;
        let missing: Vec<usize> = (0..n).filter(|&i| slots[i].is_none()).collect();
        let mut usage = Usage {
            cache_hits: (n - missing.len()) as u64,
            ..Usage::default()
        };
        if !missing.is_empty() {
            if missing.len() == n && n > 1 && self.inner.batches_samples() {
                let c = self.inner.complete(req, n).await?;
                usage.add(&c.usage);
                let indexed: Vec<(usize, CachedSample)> =
                    to_samples(c, n).into_iter().enumerate().collect();
                let got = indexed.len();
                self.store(&key, indexed.clone()).await?;
                for (i, s) in indexed {
                    slots[i] = Some(s);
                }
                if got < n {
                    return Err(LlmError::Reply(format!(
                        "the backend returned {got} samples for n = {n}"
                    )));
                }
            } else {
                let fetched = join_all(missing.iter().map(|&i| self.fetch_one(&key, req, i))).await;
                let mut first_err = None;
                for (&i, r) in missing.iter().zip(fetched) {
                    match r {
                        Ok((s, u)) => {
                            usage.add(&u);
                            slots[i] = Some(s);
                        }
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                if let Some(e) = first_err {
                    return Err(e);
                }
            }
        }
        let want_lp = self.inner.params(req).logprobs;
        let samples: Vec<CachedSample> = slots.into_iter().flatten().collect();
        let model = samples
            .first()
            .map(|s| s.model.clone())
            .unwrap_or_else(|| self.inner.identity().model);
        let logprobs = want_lp.then(|| {
            samples
                .iter()
                .map(|s| s.logprobs.clone().unwrap_or_default())
                .collect()
        });
        Ok(Completion {
            texts: samples.into_iter().map(|s| s.text).collect(),
            usage,
            logprobs,
            model,
        })
    }

    async fn complete_sample(
        &self,
        req: &ChatRequest,
        index: usize,
    ) -> Result<Completion, LlmError> {
        crate::client::check_request(req, 1)?;
        let key = self.key(req);
        let cached = self.lookup(&key, vec![index]).await?.pop().flatten();
        let (sample, usage) = match cached {
            Some(s) => (
                s,
                Usage {
                    cache_hits: 1,
                    ..Usage::default()
                },
            ),
            None => self.fetch_one(&key, req, index).await?,
        };
        let want_lp = self.inner.params(req).logprobs;
        Ok(Completion {
            logprobs: want_lp.then(|| vec![sample.logprobs.clone().unwrap_or_default()]),
            model: sample.model,
            texts: vec![sample.text],
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
