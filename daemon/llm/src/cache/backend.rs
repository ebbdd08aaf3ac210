//! [`CachedBackend`]: a backend wrapper whose samples are served from a [`CompletionCache`] when
//! it has them, and fetched from the inner backend and stored at once when it does not.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::join_all;

use super::key::request_key;
use super::store::{CachedSample, CompletionCache};
use crate::client::{BackendIdentity, ChatRequest, Completion, LlmBackend, Params, Usage};
use crate::error::LlmError;

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

    /// Fetches all `n` samples in one call of the inner backend (which batches them) and stores
    /// them.
    async fn fetch_batch(
        &self,
        key: &Key,
        req: &ChatRequest,
        n: usize,
        slots: &mut [Option<CachedSample>],
        usage: &mut Usage,
    ) -> Result<(), LlmError> {
        let c = self.inner.complete(req, n).await?;
        usage.add(&c.usage);
        let indexed: Vec<(usize, CachedSample)> =
            to_samples(c, n).into_iter().enumerate().collect();
        let got = indexed.len();
        self.store(key, indexed.clone()).await?;
        for (i, s) in indexed {
            slots[i] = Some(s);
        }
        if got < n {
            return Err(LlmError::Reply(format!(
                "the backend returned {got} samples for n = {n}"
            )));
        }
        Ok(())
    }

    /// Fetches the `missing` samples one by one, in parallel; every sample that comes back is
    /// kept (and stored) even when another fails, and the first failure is returned.
    async fn fetch_each(
        &self,
        key: &Key,
        req: &ChatRequest,
        missing: &[usize],
        slots: &mut [Option<CachedSample>],
        usage: &mut Usage,
    ) -> Result<(), LlmError> {
        let fetched = join_all(missing.iter().map(|&i| self.fetch_one(key, req, i))).await;
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
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The completion of the (all present) samples, in order.
    fn assemble(&self, req: &ChatRequest, samples: Vec<CachedSample>, usage: Usage) -> Completion {
        let want_lp = self.inner.params(req).logprobs;
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
        Completion {
            texts: samples.into_iter().map(|s| s.text).collect(),
            usage,
            logprobs,
            model,
        }
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
                self.fetch_batch(&key, req, n, &mut slots, &mut usage)
                    .await?;
            } else {
                self.fetch_each(&key, req, &missing, &mut slots, &mut usage)
                    .await?;
            }
        }
        let samples: Vec<CachedSample> = slots.into_iter().flatten().collect();
        Ok(self.assemble(req, samples, usage))
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
