//! Next-token choice from logits: greedy at temperature 0, else temperature + nucleus (top-p)
//! sampling from a seeded RNG (the same seed gives the same tokens).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Temperatures at or below this are greedy.
pub const GREEDY_BELOW: f64 = 1e-5;

/// A seeded sampler.
pub struct Sampler {
    temperature: f64,
    top_p: f64,
    rng: StdRng,
}

impl Sampler {
    pub fn new(temperature: f64, top_p: f64, seed: u64) -> Self {
        Sampler {
            temperature,
            top_p,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Picks a token; returns it and its log-probability under the model (temperature 1).
    /// `None` when the logits are empty or not finite.
    pub fn pick(&mut self, logits: &[f32]) -> Option<(u32, f64)> {
        if logits.is_empty() || logits.iter().any(|x| x.is_nan()) {
            return None;
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        if !max.is_finite() {
            return None;
        }
        let log_z = log_partition(logits, max);
        let logprob = |i: usize| f64::from(logits[i]) - log_z;
        if self.temperature <= GREEDY_BELOW {
            let best = logits
                .iter()
                .enumerate()
                .fold(0, |b, (i, &x)| if x > logits[b] { i } else { b });
            return Some((best as u32, logprob(best)));
        }
        let t = self.temperature;
        let mut probs: Vec<(usize, f64)> = logits
            .iter()
            .enumerate()
            .map(|(i, &x)| (i, (f64::from(x - max) / t).exp()))
            .collect();
        let total: f64 = probs.iter().map(|p| p.1).sum();
        if self.top_p < 1.0 {
            probs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut cum = 0.0;
            let mut keep = probs.len();
            for (k, p) in probs.iter().enumerate() {
                cum += p.1 / total;
                if cum >= self.top_p {
                    keep = k + 1;
                    break;
                }
            }
            probs.truncate(keep.max(1));
        }
        let kept: f64 = probs.iter().map(|p| p.1).sum();
        let mut r = self.rng.random::<f64>() * kept;
        for &(i, p) in &probs {
            if r < p {
                return Some((i as u32, logprob(i)));
            }
            r -= p;
        }
        let last = probs.last()?.0;
        Some((last as u32, logprob(last)))
    }
}

/// ln Σ exp(logits), computed from their finite maximum `max` (temperature 1).
fn log_partition(logits: &[f32], max: f32) -> f64 {
    f64::from(max)
        + logits
            .iter()
            .map(|&x| f64::from(x - max).exp())
            .sum::<f64>()
            .ln()
}

/// The `k` most likely tokens of `logits` with their log-probabilities (temperature 1), most
/// likely first (ties by token id).
pub fn top_k(logits: &[f32], k: usize) -> Vec<(u32, f64)> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() || k == 0 {
        return Vec::new();
    }
    let log_z = log_partition(logits, max);
    let mut idx: Vec<usize> = (0..logits.len()).collect();
    let k = k.min(idx.len());
    idx.select_nth_unstable_by(k - 1, |&a, &b| {
        logits[b].total_cmp(&logits[a]).then(a.cmp(&b))
    });
    idx.truncate(k);
    idx.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
    idx.into_iter()
        .map(|i| (i as u32, f64::from(logits[i]) - log_z))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_sorted_and_normalised() {
        let t = top_k(&[0.0, 3.0, 1.0, 3.0], 3);
        assert_eq!(t.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 3, 2]);
        let z: f64 = [0.0f64, 3.0, 1.0, 3.0].iter().map(|x| x.exp()).sum();
        assert!((t[0].1 - (3.0 - z.ln())).abs() < 1e-9);
        assert!(top_k(&[1.0], 5).len() == 1 && top_k(&[1.0], 0).is_empty());
    }

    #[test]
    fn greedy_takes_argmax() {
        let mut s = Sampler::new(0.0, 1.0, 1);
        let (t, lp) = s.pick(&[0.0, 3.0, 1.0]).unwrap();
        assert_eq!(t, 1);
        assert!(lp < 0.0 && lp > -0.2);
    }

    #[test]
    fn same_seed_same_tokens() {
        let logits: Vec<f32> = (0..50).map(|i| (i % 7) as f32 * 0.3).collect();
        let run = |seed| {
            let mut s = Sampler::new(1.0, 0.9, seed);
            (0..30)
                .map(|_| s.pick(&logits).unwrap().0)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn top_p_keeps_the_head() {
        let mut s = Sampler::new(1.0, 0.5, 3);
        for _ in 0..100 {
            assert_eq!(s.pick(&[10.0, 0.0, 0.0, 0.0]).unwrap().0, 0);
        }
    }

    #[test]
    fn bad_logits() {
        let mut s = Sampler::new(1.0, 1.0, 3);
        assert!(s.pick(&[]).is_none());
        assert!(s.pick(&[f32::NAN, 1.0]).is_none());
        assert!(s.pick(&[f32::NEG_INFINITY]).is_none());
    }
}
