//! Defaults that depend on where the NLI model runs (docs/reference.md, "GPU"): the batch size,
//! the windows one call keeps in flight, the rows a table job scores at once, and the clients
//! of the benches. A set flag or job option always wins.
//!
//! The CUDA figures come from the H200 measurements of MiniLM v2 fp16 through the whole path
//! (`bench selfcheck --samples 20`): 2 clients 1,964 pairs/s; 8 clients 2,622; 16 clients at
//! batch 64 2,374; 32 clients at batch 128 3,743 (the best, raw model 5,454). A GPU needs
//! thousands of windows queued to run full, length-grouped batches, so on CUDA the batch is 128
//! and a table job scores 32 rows at once. On 2 CPU cores the batched fp32 model with the default
//! premise pads 0.21 of its tokens with 2 bench clients and 0.07 with 8 (64 → 73 pairs/s), so the
//! CPU benches run 8 clients.

use crate::config::Device;

/// The device-dependent defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceDefaults {
    /// NLI windows per forward pass (`--max-batch`).
    pub max_batch: usize,
    /// Batches' worth of windows one NLI call keeps queued (its windows in flight are this ×
    /// `max_batch`, at least [`MIN_IN_FLIGHT`]).
    pub batches_in_flight: usize,
    /// Rows a table job scores at once (job option `concurrency`).
    pub job_concurrency: usize,
    /// Rows per committed transaction of a table job (job option `chunk_size`); at least
    /// `job_concurrency`, so that a chunk can keep every row slot busy.
    pub job_chunk_size: usize,
    /// Concurrent clients of `uqd bench selfcheck` / `claims` / `calibration`.
    pub bench_clients: usize,
    /// NLI batches in flight per session (`--nli-overlap`): while one runs, the next is taken
    /// and padded and the last one's results handed back.
    pub overlap: usize,
}

/// Batches in flight on the bench's stand-in device, whichever defaults it takes.
pub const STAND_IN_OVERLAP: usize = 2;

/// Windows one NLI call keeps in flight at least.
pub const MIN_IN_FLIGHT: usize = 64;

/// On the CPU (and for inference servers, whose batch is the server's business).
pub const CPU: DeviceDefaults = DeviceDefaults {
    max_batch: 16,
    batches_in_flight: 4,
    job_concurrency: 4,
    job_chunk_size: 8,
    bench_clients: 8,
    overlap: 1,
};

/// On CUDA (module docs: measured on an H200).
pub const CUDA: DeviceDefaults = DeviceDefaults {
    max_batch: 128,
    batches_in_flight: 4,
    job_concurrency: 32,
    job_chunk_size: 64,
    bench_clients: 32,
    overlap: 2,
};

impl DeviceDefaults {
    /// The defaults for the device the NLI model actually runs on.
    pub fn of(device: Device) -> DeviceDefaults {
        match device {
            Device::Cuda => CUDA,
            Device::Cpu | Device::Auto => CPU,
        }
    }

    /// Windows one NLI call keeps in flight with batches of `max_batch`.
    pub fn in_flight(&self, max_batch: usize) -> usize {
        (self.batches_in_flight * max_batch).max(MIN_IN_FLIGHT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_keeps_more_in_flight() {
        let (cpu, cuda) = (
            DeviceDefaults::of(Device::Cpu),
            DeviceDefaults::of(Device::Cuda),
        );
        assert_eq!(cpu, CPU);
        assert_eq!(cuda, CUDA);
        assert!(cuda.max_batch > cpu.max_batch && cuda.job_concurrency > cpu.job_concurrency);
        for d in [cpu, cuda] {
            assert!(d.job_chunk_size >= d.job_concurrency);
        }
        assert_eq!(cpu.in_flight(16), 64);
        assert_eq!(cuda.in_flight(128), 512);
        assert_eq!(DeviceDefaults::of(Device::Auto), CPU);
    }
}
