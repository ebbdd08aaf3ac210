//! Dynamic batching of encoded NLI windows across all concurrent callers, grouped by length.
//!
//! One queue, ordered by window length; each runner (a local session, the bench's stand-in, or
//! a client of the inference servers: `engine::remote`, with several runners so that batches are
//! in flight on every endpoint at once) is shared by `overlap` worker threads. A worker waits
//! until `max_batch` windows are queued or the oldest has waited `max_wait`, then takes the
//! oldest window and the queued windows closest to it in length, up to `max_batch`: a batch is
//! padded to its longest window, so windows of similar length waste little (`pad_ratio`,
//! [`PadStats`]), and taking the oldest first means no window waits behind a stream of others.
//! A runner that runs one window per pass (dynamic int8) takes the oldest window alone.
//!
//! Overlap: a runner runs one batch at a time (a session behind its lock, one device), so while
//! one of its workers' batch runs, another takes the next batch and pads it, and the first hands
//! its results back to their callers after the pass, holding neither the queue nor the runner.
//! A worker whose runner already holds a batch takes only a full one: a partial batch waits until
//! the runner is free, so that the overlap does not run smaller batches.

mod forward;
mod pad_stats;
mod queue;
mod worker;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::stages::Stages;
pub use forward::Forward;
pub use pad_stats::{PadSnapshot, PadStats};
use queue::Queue;
pub use queue::{EncodedWindow, Job, Reply};
use worker::{worker, Shared};

pub struct Batcher {
    queue: Arc<Queue>,
    stats: Arc<PadStats>,
    stages: Arc<Stages>,
    handles: Vec<JoinHandle<()>>,
}

impl Batcher {
    /// Starts `overlap` worker threads per runner (at least one), each runner shared by its
    /// workers; they all share one queue.
    pub fn start(
        runners: Vec<Arc<dyn Forward>>,
        overlap: usize,
        max_batch: usize,
        max_wait: Duration,
    ) -> Result<Batcher, String> {
        let queue = Arc::new(Queue::new(runners.len()));
        let stats = Arc::new(PadStats::default());
        let stages = Arc::new(Stages::default());
        let mut handles = Vec::new();
        for (r, runner) in runners.into_iter().enumerate() {
            for _ in 0..overlap.max(1) {
                let shared = Shared {
                    queue: queue.clone(),
                    stats: stats.clone(),
                    stages: stages.clone(),
                    max_batch: max_batch.max(1),
                    max_wait,
                };
                let runner = runner.clone();
                let h = std::thread::Builder::new()
                    .name(format!("uqd-nli-batcher-{}", handles.len()))
                    .spawn(move || worker(runner.as_ref(), r, &shared))
                    .map_err(|e| format!("cannot start the NLI batcher thread: {e}"))?;
                handles.push(h);
            }
        }
        if handles.is_empty() {
            return Err("internal error: the NLI batcher has no runner".into());
        }
        Ok(Batcher {
            queue,
            stats,
            stages,
            handles,
        })
    }

    /// Where the NLI path's time went so far (the engine adds its callers' stages).
    pub fn stages(&self) -> &Stages {
        &self.stages
    }

    /// Queues one window; its logits arrive on `job.reply`.
    pub fn submit(&self, job: Job) -> Result<(), String> {
        if !self.is_alive() {
            return Err("the NLI batcher thread has stopped".to_string());
        }
        let mut st = self.queue.lock();
        if st.closed {
            return Err("the NLI batcher is stopped".to_string());
        }
        let seq = st.next;
        st.next += 1;
        let len = job.window.len();
        let now = Instant::now();
        st.arrivals.push_back((seq, len, now));
        st.by_len.insert((len, seq), (job, now));
        drop(st);
        // Every worker: one whose runner is busy may not take it.
        self.queue.changed.notify_all();
        Ok(())
    }

    /// Whether a worker thread is still running.
    pub fn is_alive(&self) -> bool {
        self.handles.iter().any(|h| !h.is_finished())
    }

    /// Padding of the batches run so far for callers.
    pub fn pad_stats(&self) -> PadSnapshot {
        self.stats.snapshot()
    }

    /// Runs `batches` as given (no re-sorting), each batch on whichever worker is free;
    /// returns the number of windows run.
    pub fn raw(&self, batches: Vec<Vec<EncodedWindow>>) -> Result<usize, String> {
        let (rtx, rrx) = crossbeam_channel::unbounded();
        let n = batches.len();
        {
            let mut st = self.queue.lock();
            if st.closed {
                return Err("the NLI batcher is stopped".to_string());
            }
            st.raws
                .extend(batches.into_iter().map(|b| (b, rtx.clone())));
        }
        self.queue.changed.notify_all();
        let mut run = 0;
        for _ in 0..n {
            run += rrx
                .recv()
                .map_err(|_| "the NLI batcher thread has stopped".to_string())??;
        }
        Ok(run)
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        self.queue.lock().closed = true;
        self.queue.changed.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::queue::State;
    use super::*;
    use crate::engine::onnx::{Output, SeqRef};
    use crate::engine::stages::Stage;

    /// A runner that returns each window's length as its one logit, and records batch sizes. Its
    /// first pass waits for the gate: a slow model, behind which the queue fills up.
    struct Echo(
        Arc<Mutex<Vec<usize>>>,
        Mutex<Option<crossbeam_channel::Receiver<()>>>,
    );
    impl Forward for Echo {
        fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
            if let Some(gate) = self.1.lock().unwrap().take() {
                let _ = gate.recv_timeout(Duration::from_secs(10));
            }
            self.0.lock().unwrap().push(seqs.len());
            Ok(Output {
                shape: vec![seqs.len(), 1],
                data: seqs.iter().map(|s| s.ids.len() as f32).collect(),
                timing: Default::default(),
            })
        }
        fn output_name(&self) -> &str {
            "logits"
        }
    }

    fn window(len: usize) -> EncodedWindow {
        EncodedWindow {
            ids: vec![1; len],
            type_ids: vec![0; len],
        }
    }

    #[test]
    fn pad_ratio_of_a_known_batch() {
        let st = PadStats::default();
        // One batch of lengths 10, 12, 20: 3 × 20 = 60 tokens run for 42 real ones.
        st.record([10, 12, 20].into_iter());
        let s = st.snapshot();
        assert_eq!((s.real_tokens, s.padded_tokens, s.batches), (42, 60, 1));
        assert!((s.pad_ratio().unwrap() - 18.0 / 42.0).abs() < 1e-12);
        // A second batch of equal lengths adds no padding: (60 + 40 − 82) / 82.
        st.record([20, 20].into_iter());
        let s = st.snapshot();
        assert!((s.pad_ratio().unwrap() - 18.0 / 82.0).abs() < 1e-12);
        assert_eq!(s.mean_batch(), Some(2.5));
        assert_eq!(PadSnapshot::default().pad_ratio(), None);
    }

    #[test]
    fn take_batch_groups_by_length_around_the_oldest() {
        let (tx, _rx) = crossbeam_channel::unbounded();
        let mut st = State::default();
        for (seq, len) in [50usize, 10, 52, 90, 49, 300, 51].into_iter().enumerate() {
            st.arrivals.push_back((seq as u64, len, Instant::now()));
            st.by_len.insert(
                (len, seq as u64),
                (
                    Job {
                        window: window(len),
                        tag: seq,
                        reply: tx.clone(),
                    },
                    Instant::now(),
                ),
            );
        }
        let lens = |b: &[Job]| b.iter().map(|j| j.window.len()).collect::<Vec<_>>();
        // The oldest (50) and its three nearest lengths.
        assert_eq!(lens(&st.take_batch(4).0), vec![49, 50, 51, 52]);
        // Then the oldest left (10) and its nearest.
        assert_eq!(lens(&st.take_batch(2).0), vec![10, 90]);
        assert_eq!(lens(&st.take_batch(8).0), vec![300]);
        assert!(st.take_batch(8).0.is_empty());
    }

    /// Submits `n` windows of length 10 to `b` and waits for every reply.
    fn run_windows(b: &Batcher, n: usize) {
        let (tx, rx) = crossbeam_channel::unbounded();
        for tag in 0..n {
            b.submit(Job {
                window: window(10),
                tag,
                reply: tx.clone(),
            })
            .unwrap();
        }
        for _ in 0..n {
            rx.recv_timeout(Duration::from_secs(20)).unwrap().1.unwrap();
        }
    }

    /// One device (the stand-in, 20 ms a batch) shared by two workers: while one batch runs the
    /// next is taken, so two are in flight; with one worker, one. The batches stay full.
    #[test]
    fn overlap_keeps_two_batches_in_flight_on_one_device() {
        for overlap in [1, 2] {
            let device = Arc::new(crate::engine::stand_in::StandIn::new(
                Duration::from_millis(20),
                3,
                0,
            ));
            let b = Batcher::start(vec![device], overlap, 16, Duration::from_millis(50)).unwrap();
            run_windows(&b, 16 * 6);
            let s = b.stages().snapshot();
            assert_eq!(s.max_in_flight, overlap, "overlap {overlap}");
            let pad = b.pad_stats();
            assert_eq!((pad.batches, pad.windows), (6, 96), "overlap {overlap}");
            assert!(s.time(Stage::Device) >= Duration::from_millis(120));
        }
    }

    /// A worker whose device is busy takes no partial batch: windows that trickle in while a
    /// batch runs (100 ms) wait for the device and then go as one batch, not one each.
    #[test]
    fn a_busy_device_gets_no_partial_batches() {
        let device = Arc::new(crate::engine::stand_in::StandIn::new(
            Duration::from_millis(100),
            3,
            0,
        ));
        let b = Batcher::start(vec![device], 2, 64, Duration::from_millis(15)).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        for tag in 0..20 {
            if tag == 10 {
                // The first ten are on the device by now.
                std::thread::sleep(Duration::from_millis(40));
            }
            if tag > 10 {
                std::thread::sleep(Duration::from_millis(2));
            }
            b.submit(Job {
                window: window(10),
                tag,
                reply: tx.clone(),
            })
            .unwrap();
        }
        for _ in 0..20 {
            rx.recv_timeout(Duration::from_secs(20)).unwrap().1.unwrap();
        }
        assert_eq!(b.pad_stats().batches, 2, "{:?}", b.pad_stats());
    }

    /// Windows of lengths spread from 20 to 400 tokens, queued faster than they run (the model's
    /// first pass lasts until all are queued): batches of 64 pad less than 10% of the real
    /// tokens, and every window gets its own result.
    #[test]
    fn queued_windows_of_similar_length_share_batches() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let (open, gate) = crossbeam_channel::bounded(1);
        let b = Batcher::start(
            vec![Arc::new(Echo(sizes.clone(), Mutex::new(Some(gate))))],
            1,
            64,
            Duration::from_millis(50),
        )
        .unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut x: u64 = 7;
        let n = 64 * 40;
        for tag in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 20 + (x >> 33) as usize % 381;
            b.submit(Job {
                window: window(len),
                tag,
                reply: tx.clone(),
            })
            .unwrap();
        }
        open.send(()).unwrap();
        let mut seen = vec![false; n];
        for _ in 0..n {
            let (tag, row) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
            assert!(!seen[tag]);
            seen[tag] = true;
            assert!(row.unwrap()[0] >= 20.0);
        }
        let s = b.pad_stats();
        assert_eq!(s.windows, n as u64);
        let ratio = s.pad_ratio().unwrap();
        eprintln!(
            "pad_ratio {ratio:.4}, mean batch {:.1}",
            s.mean_batch().unwrap()
        );
        assert!(ratio <= 0.10, "pad_ratio {ratio}");
        assert!(s.mean_batch().unwrap() > 32.0, "{:?}", s);
    }
}
