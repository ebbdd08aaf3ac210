//! The replicas of one OpenAI-compatible LLM (several `base_url`s, e.g. vLLM servers behind no
//! load balancer): each attempt goes to the healthy replica with the fewest requests in flight
//! (ties taken in turn); a replica whose attempt fails in a retryable way (connection error,
//! timeout, 5xx, 429, broken reply) is taken out for `retry_after` and then tried again. When
//! every replica is out, the one that comes back first is used.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Replica {
    /// `{base_url}/chat/completions`.
    url: String,
    in_flight: AtomicUsize,
    down_until: Mutex<Option<Instant>>,
}

pub struct Replicas {
    list: Vec<Replica>,
    retry_after: Duration,
    turn: AtomicUsize,
}

/// Counts one request in flight on a replica until dropped.
pub struct InFlight<'a>(&'a Replica);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Replicas {
    /// `base_urls`: at least one, without `/chat/completions`.
    pub fn new(base_urls: &[String], retry_after: Duration) -> Replicas {
        Replicas {
            list: base_urls
                .iter()
                .map(|b| Replica {
                    url: format!("{}/chat/completions", b.trim_end_matches('/')),
                    in_flight: AtomicUsize::new(0),
                    down_until: Mutex::new(None),
                })
                .collect(),
            retry_after,
            turn: AtomicUsize::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn url(&self, i: usize) -> &str {
        &self.list[i].url
    }

    fn healthy(&self, i: usize, now: Instant) -> bool {
        lock(&self.list[i].down_until).is_none_or(|t| t <= now)
    }

    /// The replica for the next attempt, counted in flight until the guard is dropped.
    pub fn pick(&self) -> (usize, InFlight<'_>) {
        let now = Instant::now();
        let n = self.list.len();
        let start = self.turn.fetch_add(1, Ordering::Relaxed) % n;
        let order = (0..n).map(|k| (start + k) % n);
        let best = order
            .clone()
            .filter(|&i| self.healthy(i, now))
            .min_by_key(|&i| self.list[i].in_flight.load(Ordering::SeqCst))
            .unwrap_or_else(|| {
                order
                    .min_by_key(|&i| lock(&self.list[i].down_until).unwrap_or(now))
                    .unwrap_or(0)
            });
        let r = &self.list[best];
        r.in_flight.fetch_add(1, Ordering::SeqCst);
        (best, InFlight(r))
    }

    /// Takes replica `i` out for `retry_after` (a single replica is never taken out: its own
    /// retries and backoff apply). Returns whether another replica is healthy now.
    pub fn failed(&self, i: usize) -> bool {
        if self.list.len() < 2 {
            return false;
        }
        let now = Instant::now();
        *lock(&self.list[i].down_until) = Some(now + self.retry_after);
        (0..self.list.len()).any(|k| k != i && self.healthy(k, now))
    }

    /// Replica `i` answered: it is healthy again.
    pub fn succeeded(&self, i: usize) {
        *lock(&self.list[i].down_until) = None;
    }

    /// The replicas out of service now.
    pub fn down(&self) -> Vec<&str> {
        let now = Instant::now();
        (0..self.list.len())
            .filter(|&i| !self.healthy(i, now))
            .map(|i| self.list[i].url.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("http://r{i}/v1")).collect()
    }

    #[test]
    fn least_loaded_healthy_replica_first() {
        let r = Replicas::new(&urls(3), Duration::from_secs(60));
        let (a, _ga) = r.pick();
        let (b, _gb) = r.pick();
        let (c, gc) = r.pick();
        let mut seen = vec![a, b, c];
        seen.sort();
        assert_eq!(
            seen,
            vec![0, 1, 2],
            "one request each before any gets a second"
        );
        drop(gc);
        assert_eq!(r.pick().0, c, "the replica with nothing in flight");
        // A failed replica is skipped while out.
        assert!(r.failed(0));
        for _ in 0..6 {
            assert_ne!(r.pick().0, 0);
        }
        assert_eq!(r.down(), vec!["http://r0/v1/chat/completions"]);
        r.succeeded(0);
        assert!(r.down().is_empty());
    }

    #[test]
    fn out_replicas_come_back_and_the_earliest_is_used_when_all_are_out() {
        let r = Replicas::new(&urls(2), Duration::from_millis(50));
        assert!(r.failed(0));
        assert!(!r.failed(1), "no healthy replica left");
        // Both out: the one that comes back first (0) is used.
        assert_eq!(r.pick().0, 0);
        std::thread::sleep(Duration::from_millis(80));
        assert!(r.down().is_empty(), "both back after retry_after");
        // A single replica is never taken out.
        let one = Replicas::new(&urls(1), Duration::from_secs(60));
        assert!(!one.failed(0));
        assert!(one.down().is_empty());
    }
}
