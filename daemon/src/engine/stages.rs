//! Where the NLI path's time goes, per stage (the benches print it per pair): host work on the
//! callers' threads (tokenise, cache) and in the batcher (batching, pad and copy, scatter) as the
//! CPU time of the thread that does it (so that threads waiting for a core do not count), the
//! device's time and the windows' wait in the queue as wall time, and how many batches were in
//! flight at once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

/// CPU time of the calling thread so far.
pub fn thread_cpu() -> Duration {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process so far (every thread).
pub fn process_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The time of CPU-time clock `clock` so far.
fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The CPU time a stage takes on the calling thread: `CpuTimer::start()`, then `elapsed()`.
#[derive(Debug, Clone, Copy)]
pub struct CpuTimer(Duration);

impl CpuTimer {
    pub fn start() -> CpuTimer {
        CpuTimer(thread_cpu())
    }

    pub fn elapsed(&self) -> Duration {
        thread_cpu().saturating_sub(self.0)
    }
}

/// One stage of the NLI path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Tokenising the texts and building each pair's windows (caller).
    Tokenise,
    /// Pair keys, cache lookups and stores (caller).
    Cache,
    /// Taking a batch of length neighbours from the queue (batcher).
    Batching,
    /// Padding a batch into the model's input tensors and copying its logits out (batcher).
    PadCopy,
    /// The forward pass itself (the device, or the stand-in's wait).
    Device,
    /// Handing each window's logits back and turning them into a pair's probabilities.
    Scatter,
    /// Each window's time in the queue, from submission until a batch takes it (not CPU time).
    QueueWait,
}

const STAGES: [Stage; 7] = [
    Stage::Tokenise,
    Stage::Cache,
    Stage::Batching,
    Stage::PadCopy,
    Stage::Device,
    Stage::Scatter,
    Stage::QueueWait,
];

impl Stage {
    /// The stage's name in the bench lines.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Tokenise => "tokenise",
            Stage::Cache => "cache",
            Stage::Batching => "batching",
            Stage::PadCopy => "pad_copy",
            Stage::Device => "device",
            Stage::Scatter => "scatter",
            Stage::QueueWait => "queue_wait",
        }
    }
}

/// Nanoseconds per stage, and batches in flight (taken from the queue, results not yet handed
/// back) now and at most.
#[derive(Debug, Default)]
pub struct Stages {
    nanos: [AtomicU64; 7],
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Stages {
    pub fn add(&self, stage: Stage, d: Duration) {
        self.nanos[stage as usize].fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A batch was taken from the queue.
    pub fn batch_taken(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight.fetch_max(now, Ordering::Relaxed);
    }

    /// A batch's results were handed back.
    pub fn batch_done(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// The figures so far; `max_in_flight` is the most batches in flight at once so far.
    pub fn snapshot(&self) -> StageSnapshot {
        StageSnapshot {
            nanos: std::array::from_fn(|i| self.nanos[i].load(Ordering::Relaxed)),
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
        }
    }

    /// Starts a new maximum of batches in flight (benches: one per run).
    pub fn reset_max_in_flight(&self) {
        self.max_in_flight
            .store(self.in_flight.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// A snapshot of [`Stages`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageSnapshot {
    nanos: [u64; 7],
    pub max_in_flight: usize,
}

impl StageSnapshot {
    /// The time of `stage`.
    pub fn time(&self, stage: Stage) -> Duration {
        Duration::from_nanos(self.nanos[stage as usize])
    }

    /// The stage times since `earlier` (the maximum in flight stays this snapshot's).
    pub fn since(&self, earlier: &StageSnapshot) -> StageSnapshot {
        StageSnapshot {
            nanos: std::array::from_fn(|i| self.nanos[i].saturating_sub(earlier.nanos[i])),
            max_in_flight: self.max_in_flight,
        }
    }

    /// `{stage: microseconds per pair}` over `pairs` pairs, two decimals; `null` without pairs.
    pub fn us_per_pair(&self, pairs: u64) -> Value {
        if pairs == 0 {
            return Value::Null;
        }
        let mut out = serde_json::Map::new();
        for s in STAGES {
            let us = self.time(s).as_secs_f64() * 1e6 / pairs as f64;
            out.insert(s.name().into(), json!((us * 100.0).round() / 100.0));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_counts_work_not_sleep() {
        let t = CpuTimer::start();
        std::thread::sleep(Duration::from_millis(30));
        assert!(t.elapsed() < Duration::from_millis(20), "{:?}", t.elapsed());
        let t = CpuTimer::start();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(2) {
            x = std::hint::black_box(x + 1);
        }
        assert!(x > 0);
    }

    #[test]
    fn per_pair_figures_and_in_flight() {
        let s = Stages::default();
        s.add(Stage::Tokenise, Duration::from_micros(300));
        s.add(Stage::QueueWait, Duration::from_millis(3));
        let a = s.snapshot();
        s.add(Stage::Tokenise, Duration::from_micros(100));
        s.batch_taken();
        s.batch_taken();
        s.batch_done();
        let d = s.snapshot().since(&a);
        assert_eq!(d.time(Stage::Tokenise), Duration::from_micros(100));
        assert_eq!(d.max_in_flight, 2);
        let v = s.snapshot().us_per_pair(4);
        assert_eq!(v["tokenise"], json!(100.0));
        assert_eq!(v["queue_wait"], json!(750.0));
        assert_eq!(v["pad_copy"], json!(0.0));
        assert_eq!(StageSnapshot::default().us_per_pair(0), Value::Null);
        s.reset_max_in_flight();
        assert_eq!(s.snapshot().max_in_flight, 1);
    }
}
