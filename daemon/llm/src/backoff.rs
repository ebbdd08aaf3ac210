//! Retry delays: exponential backoff with full jitter, and `Retry-After` parsing.

use std::time::{Duration, SystemTime};

use rand::Rng;

/// First backoff ceiling.
pub const BASE_DELAY: Duration = Duration::from_millis(500);
/// Largest backoff ceiling.
pub const MAX_DELAY: Duration = Duration::from_secs(30);
/// Largest `Retry-After` honoured; longer requests are cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Full-jitter delay before retry number `retry` (0 = first retry): uniform in
/// `0..=min(MAX_DELAY, BASE_DELAY * 2^retry)`.
pub fn jittered(retry: u32) -> Duration {
    let ceiling = ceiling(retry);
    let ms = ceiling.as_millis() as u64;
    Duration::from_millis(rand::rng().random_range(0..=ms))
}

/// The backoff ceiling for retry number `retry`.
pub fn ceiling(retry: u32) -> Duration {
    let factor = 1u64 << retry.min(16);
    BASE_DELAY.saturating_mul(factor as u32).min(MAX_DELAY)
}

/// Parses a `Retry-After` value: delay seconds (`"2"`, `"1.5"`) or an HTTP date. Past dates give
/// zero; the result is capped at [`MAX_RETRY_AFTER`]. Unparseable → `None`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if let Ok(secs) = v.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        return Some(Duration::from_secs_f64(
            secs.min(MAX_RETRY_AFTER.as_secs_f64()),
        ));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    let d = when.duration_since(now).unwrap_or(Duration::ZERO);
    Some(d.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_under_ceiling() {
        for retry in 0..40 {
            let d = jittered(retry);
            assert!(d <= ceiling(retry));
            assert!(d <= MAX_DELAY);
        }
        assert_eq!(ceiling(0), Duration::from_millis(500));
        assert_eq!(ceiling(1), Duration::from_secs(1));
        assert_eq!(ceiling(100), MAX_DELAY);
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(" 2.5 ", now),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(parse_retry_after("99999", now), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("NaN", now), None);
        let date = httpdate::fmt_http_date(now + Duration::from_secs(5));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(5)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(5));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
    }
}
