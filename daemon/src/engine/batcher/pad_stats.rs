//! How much padding the batches run for callers carry (`pad_ratio`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Padding of the batches run for callers (not the raw measurement): real tokens and the
/// tokens actually run (each batch padded to its longest window).
#[derive(Debug, Default)]
pub struct PadStats {
    real: AtomicU64,
    padded: AtomicU64,
    batches: AtomicU64,
    windows: AtomicU64,
}

/// A snapshot of [`PadStats`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PadSnapshot {
    pub real_tokens: u64,
    pub padded_tokens: u64,
    pub batches: u64,
    pub windows: u64,
}

impl PadSnapshot {
    /// Padding tokens per real token: (Σ batch size × longest window − Σ window lengths) /
    /// Σ window lengths; `None` before any batch.
    pub fn pad_ratio(&self) -> Option<f64> {
        (self.real_tokens > 0)
            .then(|| (self.padded_tokens - self.real_tokens) as f64 / self.real_tokens as f64)
    }

    /// Windows per batch on average.
    pub fn mean_batch(&self) -> Option<f64> {
        (self.batches > 0).then(|| self.windows as f64 / self.batches as f64)
    }

    /// What ran between `earlier` and `self`.
    pub fn since(&self, earlier: &PadSnapshot) -> PadSnapshot {
        PadSnapshot {
            real_tokens: self.real_tokens - earlier.real_tokens,
            padded_tokens: self.padded_tokens - earlier.padded_tokens,
            batches: self.batches - earlier.batches,
            windows: self.windows - earlier.windows,
        }
    }
}

impl PadStats {
    pub(super) fn record(&self, lens: impl Iterator<Item = usize>) {
        let (mut n, mut sum, mut max) = (0u64, 0u64, 0u64);
        for l in lens {
            n += 1;
            sum += l as u64;
            max = max.max(l as u64);
        }
        self.real.fetch_add(sum, Ordering::Relaxed);
        self.padded.fetch_add(n * max, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.windows.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> PadSnapshot {
        PadSnapshot {
            real_tokens: self.real.load(Ordering::Relaxed),
            padded_tokens: self.padded.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            windows: self.windows.load(Ordering::Relaxed),
        }
    }
}
