//! Token-bucket rate limiter for requests per minute and tokens per minute.
//!
//! A bucket holds up to one minute of budget and refills continuously. Taking more than is there
//! drives it negative (a reservation) and the caller sleeps until the debt is repaid, so waiting
//! callers are served in arrival order and every wait is finite.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One bucket: `capacity` units per minute.
#[derive(Debug)]
pub struct TokenBucket {
    capacity: f64,
    per_sec: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    /// A full bucket of `per_minute` units (at least 1).
    pub fn new(per_minute: u32) -> Self {
        let capacity = f64::from(per_minute.max(1));
        TokenBucket {
            capacity,
            per_sec: capacity / 60.0,
            state: Mutex::new((capacity, Instant::now())),
        }
    }

    /// Reserves `cost` units (clamped to the capacity, so one large request cannot wait forever)
    /// and returns how long the caller must wait before sending.
    pub fn reserve(&self, cost: f64) -> Duration {
        let cost = cost.clamp(0.0, self.capacity);
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = Instant::now();
        let (tokens, last) = *guard;
        let refilled =
            (tokens + now.duration_since(last).as_secs_f64() * self.per_sec).min(self.capacity);
        let left = refilled - cost;
        *guard = (left, now);
        if left >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((-left / self.per_sec).min(120.0))
        }
    }

    /// Gives back `units` (e.g. when a request used fewer tokens than estimated).
    pub fn refund(&self, units: f64) {
        if !(units.is_finite() && units > 0.0) {
            return;
        }
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        guard.0 = (guard.0 + units).min(self.capacity);
    }
}

/// RPM and TPM buckets together.
#[derive(Debug, Default)]
pub struct RateLimiter {
    requests: Option<TokenBucket>,
    tokens: Option<TokenBucket>,
}

impl RateLimiter {
    pub fn new(requests_per_minute: Option<u32>, tokens_per_minute: Option<u32>) -> Self {
        RateLimiter {
            requests: requests_per_minute.map(TokenBucket::new),
            tokens: tokens_per_minute.map(TokenBucket::new),
        }
    }

    /// Waits until one request of about `estimated_tokens` tokens may be sent.
    pub async fn acquire(&self, estimated_tokens: u64) {
        let mut wait = Duration::ZERO;
        if let Some(b) = &self.requests {
            wait = wait.max(b.reserve(1.0));
        }
        if let Some(b) = &self.tokens {
            wait = wait.max(b.reserve(estimated_tokens as f64));
        }
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Corrects the token bucket once the real usage is known.
    pub fn settle(&self, estimated_tokens: u64, actual_tokens: u64) {
        if let Some(b) = &self.tokens {
            if actual_tokens < estimated_tokens {
                b.refund((estimated_tokens - actual_tokens) as f64);
            }
        }
    }
}

/// Rough token estimate of a prompt: about four characters per token.
pub fn estimate_tokens(text_chars: usize) -> u64 {
    (text_chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_waits_when_empty() {
        let b = TokenBucket::new(60); // one per second
        for _ in 0..60 {
            assert_eq!(b.reserve(1.0), Duration::ZERO);
        }
        let w = b.reserve(1.0);
        assert!(
            w > Duration::from_millis(900) && w <= Duration::from_millis(1001),
            "{w:?}"
        );
        let w2 = b.reserve(1.0);
        assert!(w2 > Duration::from_millis(1900), "{w2:?}");
    }

    #[test]
    fn oversized_cost_is_clamped() {
        let b = TokenBucket::new(100);
        assert_eq!(b.reserve(1e9), Duration::ZERO);
        let w = b.reserve(100.0);
        assert!(w <= Duration::from_secs(61));
    }

    #[test]
    fn refund_is_capped() {
        let b = TokenBucket::new(10);
        b.refund(1e9);
        b.refund(f64::NAN);
        assert_eq!(b.reserve(10.0), Duration::ZERO);
    }
}
