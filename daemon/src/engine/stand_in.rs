//! The stand-in NLI model of the benches (`--nli-stand-in-ms`): a forward pass that takes a fixed
//! time per batch, or none, and returns fixed logits, so that the host side of the NLI path can
//! be measured on a machine without the device. It models one device: its batches run one at a
//! time, behind one lock, so that only host work can overlap with them, as on a real card.
//! Everything before and after the pass is the real path's: the inputs are padded into the
//! model's three int64 tensors as a session gets them, and the logits copied out.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::batcher::Forward;
use super::onnx::{padded_len, InputKind, Output, RunTiming, SeqRef};
use super::stages::CpuTimer;

/// The inputs a BERT-style NLI model declares.
const INPUTS: [InputKind; 3] = [InputKind::Ids, InputKind::Attention, InputKind::TypeIds];

pub struct StandIn {
    per_batch: Duration,
    /// The one device: a pass holds it for `per_batch`.
    device: Mutex<()>,
    labels: usize,
    pad_id: u32,
}

impl StandIn {
    pub fn new(per_batch: Duration, labels: usize, pad_id: u32) -> StandIn {
        StandIn {
            per_batch,
            device: Mutex::new(()),
            labels,
            pad_id,
        }
    }

    /// The logits of every window: label i gets −i (fixed, so every pair's probabilities are
    /// the same, and decided: no two labels tie).
    fn logits(&self, rows: usize) -> Vec<f32> {
        (0..rows)
            .flat_map(|_| (0..self.labels).map(|i| -(i as f32)))
            .collect()
    }
}

impl Forward for StandIn {
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        let host = CpuTimer::start();
        let l = padded_len(seqs);
        let inputs: Vec<Vec<i64>> = INPUTS
            .iter()
            .map(|k| k.data(seqs, l, self.pad_id))
            .collect();
        let made = host.elapsed();
        let device = {
            let _card = self.device.lock().unwrap_or_else(|p| p.into_inner());
            let ran = Instant::now();
            // A wait, not a spin: the host's cores stay free while the "device" runs.
            if !self.per_batch.is_zero() {
                std::thread::sleep(self.per_batch);
            }
            std::hint::black_box(&inputs);
            ran.elapsed()
        };
        let copying = CpuTimer::start();
        let data = self.logits(seqs.len());
        Ok(Output {
            shape: vec![seqs.len(), self.labels],
            data,
            timing: RunTiming {
                host: made + copying.elapsed(),
                device,
            },
        })
    }

    fn output_name(&self) -> &str {
        "logits"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_logits_after_the_time_per_batch() {
        let m = StandIn::new(Duration::from_millis(5), 3, 0);
        let ids = [1u32, 2, 3];
        let seqs = [
            SeqRef {
                ids: &ids,
                type_ids: &[0, 0, 1],
            },
            SeqRef {
                ids: &ids[..1],
                type_ids: &[0],
            },
        ];
        let out = m.run(&seqs).unwrap();
        assert_eq!(out.shape, vec![2, 3]);
        assert_eq!(out.data, vec![0.0, -1.0, -2.0, 0.0, -1.0, -2.0]);
        assert!(out.timing.device >= Duration::from_millis(5));
        let none = StandIn::new(Duration::ZERO, 3, 0).run(&seqs).unwrap();
        assert!(none.timing.device < Duration::from_millis(5));
    }
}
