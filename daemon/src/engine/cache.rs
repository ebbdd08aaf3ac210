//! Content-addressed caches with in-flight de-duplication: a key is computed at most once, also
//! when several callers ask for it at the same time (the later ones wait for the first).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use xxhash_rust::xxh3::Xxh3;

/// 128-bit key of an NLI pair: hash of premise bytes, a 0xFF separator (never in UTF-8), hypothesis bytes.
pub fn pair_key(premise: &str, hypothesis: &str) -> u128 {
    let mut h = Xxh3::new();
    h.update(premise.as_bytes());
    h.update(&[0xFF]);
    h.update(hypothesis.as_bytes());
    h.digest128()
}

/// 128-bit key of a text.
pub fn text_key(text: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(text.as_bytes())
}

struct Waiter<V> {
    result: Mutex<Option<Result<V, String>>>,
    cv: Condvar,
}

impl<V: Clone> Waiter<V> {
    fn new() -> Arc<Self> {
        Arc::new(Waiter {
            result: Mutex::new(None),
            cv: Condvar::new(),
        })
    }
    fn set(&self, r: Result<V, String>) {
        let mut g = self.result.lock().unwrap_or_else(|e| e.into_inner());
        *g = Some(r);
        self.cv.notify_all();
    }
    fn wait(&self) -> Result<V, String> {
        let mut g = self.result.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = g.as_ref() {
                return r.clone();
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

enum Slot<V> {
    Ready(V),
    Pending(Arc<Waiter<V>>),
}

struct Inner<V> {
    map: HashMap<u128, Slot<V>>,
    ready: usize,
    cost: usize,
}

/// A cache `u128 → V` with in-flight de-duplication and an optional cost cap (when the total cost
/// of the ready entries would exceed it, the ready entries are dropped; `None`: never).
pub struct DedupCache<V> {
    inner: Mutex<Inner<V>>,
    cap: Option<usize>,
    cost_of: fn(&V) -> usize,
}

enum Lookup<V> {
    Hit(V),
    Wait(Arc<Waiter<V>>),
    Owned,
}

impl<V: Clone> DedupCache<V> {
    pub fn new(cap: Option<usize>, cost_of: fn(&V) -> usize) -> Self {
        DedupCache {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                ready: 0,
                cost: 0,
            }),
            cap,
            cost_of,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<V>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of computed entries.
    pub fn len(&self) -> usize {
        self.lock().ready
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every ready entry (pending ones stay, for their waiters).
    pub fn clear(&self) {
        let mut g = self.lock();
        g.map.retain(|_, s| matches!(s, Slot::Pending(_)));
        g.ready = 0;
        g.cost = 0;
    }

    /// The value of `key` when it is cached.
    pub fn get(&self, key: u128) -> Option<V> {
        match self.lock().map.get(&key) {
            Some(Slot::Ready(v)) => Some(v.clone()),
            _ => None,
        }
    }

    fn lookup(&self, key: u128) -> Lookup<V> {
        let mut g = self.lock();
        match g.map.get(&key) {
            Some(Slot::Ready(v)) => Lookup::Hit(v.clone()),
            Some(Slot::Pending(w)) => Lookup::Wait(w.clone()),
            None => {
                g.map.insert(key, Slot::Pending(Waiter::new()));
                Lookup::Owned
            }
        }
    }

    fn complete(&self, key: u128, v: V) {
        let cost = (self.cost_of)(&v);
        let mut g = self.lock();
        if let Some(cap) = self.cap {
            if g.cost + cost > cap {
                g.map.retain(|_, s| matches!(s, Slot::Pending(_)));
                g.ready = 0;
                g.cost = 0;
            }
        }
        let prev = g.map.insert(key, Slot::Ready(v.clone()));
        g.ready += 1;
        g.cost += cost;
        drop(g);
        if let Some(Slot::Pending(w)) = prev {
            w.set(Ok(v));
        }
    }

    fn fail(&self, key: u128, err: &str) {
        let prev = {
            let mut g = self.lock();
            match g.map.get(&key) {
                Some(Slot::Pending(_)) => g.map.remove(&key),
                _ => None,
            }
        };
        if let Some(Slot::Pending(w)) = prev {
            w.set(Err(err.to_string()));
        }
    }

    /// Values for `keys` (same order). Cached keys are returned; keys pending in another call are
    /// awaited; the rest are claimed and passed (as indices into `keys`, first occurrences only) to
    /// `compute`, which must return one value per claimed index, in order. If `compute` fails, the
    /// claimed keys are released and whoever waited on them gets the error.
    pub fn get_or_compute<F>(&self, keys: &[u128], compute: F) -> Result<Vec<V>, String>
    where
        F: FnOnce(&[usize]) -> Result<Vec<V>, String>,
    {
        let mut out: Vec<Option<V>> = vec![None; keys.len()];
        let mut waits: Vec<(usize, Arc<Waiter<V>>)> = Vec::new();
        let mut owned: Vec<usize> = Vec::new();
        let mut claims = Claims {
            cache: self,
            keys: HashSet::new(),
        };
        for (i, &k) in keys.iter().enumerate() {
            match self.lookup(k) {
                Lookup::Hit(v) => out[i] = Some(v),
                Lookup::Wait(w) => waits.push((i, w)),
                Lookup::Owned => {
                    claims.keys.insert(k);
                    owned.push(i);
                }
            }
        }
        if !owned.is_empty() {
            let vals = match compute(&owned) {
                Ok(v) => v,
                Err(e) => {
                    claims.fail_all(&e);
                    return Err(e);
                }
            };
            if vals.len() != owned.len() {
                let e = format!(
                    "internal error: computed {} values for {} keys",
                    vals.len(),
                    owned.len()
                );
                claims.fail_all(&e);
                return Err(e);
            }
            for (&i, v) in owned.iter().zip(vals) {
                self.complete(keys[i], v.clone());
                claims.keys.remove(&keys[i]);
                out[i] = Some(v);
            }
        }
        // Only now wait (our own claims are resolved, so two callers never wait on each other).
        for (i, w) in waits {
            out[i] = Some(w.wait()?);
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| "internal error: missing cache value".to_string()))
            .collect()
    }
}

/// Releases claimed keys that were not completed (on error or panic), waking their waiters.
struct Claims<'a, V: Clone> {
    cache: &'a DedupCache<V>,
    keys: HashSet<u128>,
}

impl<V: Clone> Claims<'_, V> {
    fn fail_all(&mut self, err: &str) {
        for k in self.keys.drain() {
            self.cache.fail(k, err);
        }
    }
}

impl<V: Clone> Drop for Claims<'_, V> {
    fn drop(&mut self) {
        if !self.keys.is_empty() {
            self.fail_all("the computation was abandoned");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn keys_differ_by_split_point() {
        assert_ne!(pair_key("ab", "c"), pair_key("a", "bc"));
        assert_eq!(pair_key("ab", "c"), pair_key("ab", "c"));
        assert_ne!(text_key("a"), text_key("b"));
    }

    #[test]
    fn computes_once_and_dedups_within_a_call() {
        let c: DedupCache<u32> = DedupCache::new(None, |_| 1);
        let calls = AtomicUsize::new(0);
        let r = c
            .get_or_compute(&[1, 2, 1], |idx| {
                calls.fetch_add(idx.len(), Ordering::SeqCst);
                Ok(idx.iter().map(|&i| i as u32 * 10).collect())
            })
            .unwrap();
        assert_eq!(r, vec![0, 10, 0]);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let r = c
            .get_or_compute(&[2, 1], |_| panic!("must not compute"))
            .unwrap();
        assert_eq!(r, vec![10, 0]);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn failure_releases_claims() {
        let c: DedupCache<u32> = DedupCache::new(None, |_| 1);
        assert!(c.get_or_compute(&[5], |_| Err("boom".into())).is_err());
        assert_eq!(c.len(), 0);
        assert_eq!(c.get_or_compute(&[5], |_| Ok(vec![7])).unwrap(), vec![7]);
    }

    #[test]
    fn concurrent_callers_share_one_computation() {
        let c = Arc::new(DedupCache::<u32>::new(None, |_| 1));
        let calls = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let c = c.clone();
                let calls = calls.clone();
                std::thread::spawn(move || {
                    c.get_or_compute(&[42, 43], |idx| {
                        calls.fetch_add(idx.len(), Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        Ok(idx.iter().map(|&i| 100 + i as u32).collect())
                    })
                    .unwrap()
                })
            })
            .collect();
        for h in hs {
            assert_eq!(h.join().unwrap(), vec![100, 101]);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn cost_cap_clears() {
        let c: DedupCache<u32> = DedupCache::new(Some(2), |_| 1);
        c.get_or_compute(&[1, 2], |i| Ok(i.iter().map(|_| 0).collect()))
            .unwrap();
        assert_eq!(c.len(), 2);
        c.get_or_compute(&[3], |_| Ok(vec![0])).unwrap();
        assert_eq!(c.len(), 1);
    }
}
