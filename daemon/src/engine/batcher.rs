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

use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::onnx::{OnnxModel, Output, SeqRef};
use super::stages::{CpuTimer, Stage, Stages};

/// What runs one batch of windows: a local ONNX Runtime session, the bench's stand-in or an
/// inference server. Shared by the workers of its overlap: it runs their batches one at a time
/// where the device needs that (a session's lock), and prepares them beside each other.
pub trait Forward: Send + Sync {
    /// The logits of `seqs`, `[seqs.len(), labels]`.
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String>;
    /// The name of the output that is read (for messages).
    fn output_name(&self) -> &str;
    /// Whether it runs one window per forward pass anyway (dynamic int8): then its worker takes
    /// one window at a time from the queue, so that every worker stays busy.
    fn one_at_a_time(&self) -> bool {
        false
    }
}

impl Forward for OnnxModel {
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        OnnxModel::run(self, seqs)
    }
    fn output_name(&self) -> &str {
        OnnxModel::output_name(self)
    }
    fn one_at_a_time(&self) -> bool {
        self.row_at_a_time
    }
}

/// One model input: `[CLS] premise-window [SEP] hypothesis [SEP]` (or the model's own template).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedWindow {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
}

impl EncodedWindow {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The reply of one window: `(tag, logits row)`.
pub type Reply = (usize, Result<Vec<f32>, String>);

pub struct Job {
    pub window: EncodedWindow,
    pub tag: usize,
    pub reply: Sender<Reply>,
}

type RawRequest = (Vec<EncodedWindow>, Sender<Result<usize, String>>);

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
    fn record(&self, lens: impl Iterator<Item = usize>) {
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

/// The queued windows: by (length, arrival number), and their arrival order.
#[derive(Default)]
struct State {
    /// The queued windows and when each arrived.
    by_len: BTreeMap<(usize, u64), (Job, Instant)>,
    /// (arrival number, length, arrival time); entries already taken are skipped lazily.
    arrivals: VecDeque<(u64, usize, Instant)>,
    raws: VecDeque<RawRequest>,
    next: u64,
    closed: bool,
    /// Per runner, the batches its workers have taken that have not yet left it.
    held: Vec<usize>,
}

impl State {
    /// The oldest queued window's key and arrival time.
    fn oldest(&mut self) -> Option<((usize, u64), Instant)> {
        while let Some(&(seq, len, at)) = self.arrivals.front() {
            if self.by_len.contains_key(&(len, seq)) {
                return Some(((len, seq), at));
            }
            self.arrivals.pop_front();
        }
        None
    }

    /// The oldest window and queued windows of similar length, at most `max_batch` in all, in
    /// length order: of the runs of `max_batch` consecutive windows (in length order) that hold
    /// the oldest, the one that pads least (fewest tokens added to reach its longest window).
    /// Also returns the time its windows waited in the queue, together.
    fn take_batch(&mut self, max_batch: usize) -> (Vec<Job>, Duration) {
        let Some((key, _)) = self.oldest() else {
            return (Vec::new(), Duration::ZERO);
        };
        // Up to max_batch - 1 neighbours on each side of the oldest, in length order.
        let below: Vec<(usize, u64)> = self
            .by_len
            .range(..key)
            .rev()
            .take(max_batch - 1)
            .map(|(k, _)| *k)
            .collect();
        let above: Vec<(usize, u64)> = self
            .by_len
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .take(max_batch - 1)
            .map(|(k, _)| *k)
            .collect();
        let run: Vec<(usize, u64)> = below
            .into_iter()
            .rev()
            .chain(std::iter::once(key))
            .chain(above)
            .collect();
        let at = run.iter().position(|k| *k == key).unwrap_or(0);
        let n = max_batch.min(run.len());
        // Windows of n consecutive keys holding `at`: starts from at + 1 - n to at.
        let padding = |start: usize| {
            let w = &run[start..start + n];
            let longest = w.iter().map(|k| k.0).max().unwrap_or(0);
            w.iter().map(|k| longest - k.0).sum::<usize>()
        };
        let first = (at + 1).saturating_sub(n);
        let last = at.min(run.len() - n);
        let start = (first..=last).min_by_key(|&s| padding(s)).unwrap_or(first);
        let now = Instant::now();
        let mut waited = Duration::ZERO;
        let batch = run[start..start + n]
            .iter()
            .filter_map(|k| self.by_len.remove(k))
            .map(|(job, at)| {
                waited += now - at;
                job
            })
            .collect();
        (batch, waited)
    }
}

/// The length-ordered queue the workers share.
struct Queue {
    state: Mutex<State>,
    changed: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A batch of `runner` has left it: its workers may take a partial batch again.
    fn release(&self, runner: usize) {
        let mut st = self.lock();
        st.held[runner] = st.held[runner].saturating_sub(1);
        drop(st);
        self.changed.notify_all();
    }
}

pub struct Batcher {
    queue: Arc<Queue>,
    stats: Arc<PadStats>,
    stages: Arc<Stages>,
    handles: Vec<JoinHandle<()>>,
}

/// What a worker shares with the others.
struct Shared {
    queue: Arc<Queue>,
    stats: Arc<PadStats>,
    stages: Arc<Stages>,
    max_batch: usize,
    max_wait: Duration,
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
        let queue = Arc::new(Queue {
            state: Mutex::new(State {
                held: vec![0; runners.len()],
                ..State::default()
            }),
            changed: Condvar::new(),
        });
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

/// The output of `windows`' pass, checked to be `[windows, labels]`.
fn forward(model: &dyn Forward, windows: &[&EncodedWindow]) -> Result<Output, String> {
    let seqs: Vec<SeqRef<'_>> = windows
        .iter()
        .map(|w| SeqRef {
            ids: &w.ids,
            type_ids: &w.type_ids,
        })
        .collect();
    let out = match catch_unwind(AssertUnwindSafe(|| model.run(&seqs))) {
        Ok(r) => r?,
        Err(_) => return Err("internal error: the NLI forward pass panicked".into()),
    };
    if out.shape.len() != 2 || out.shape[0] != windows.len() || out.shape[1] == 0 {
        return Err(format!(
            "NLI model output {:?} has shape {:?}; expected [batch, labels]",
            model.output_name(),
            out.shape
        ));
    }
    Ok(out)
}

/// Runs a batch of callers' windows on `model`, releases the runner, then hands each window's
/// logits back to its caller.
fn run_batch(model: &dyn Forward, runner: usize, batch: Vec<Job>, shared: &Shared) {
    let refs: Vec<&EncodedWindow> = batch.iter().map(|j| &j.window).collect();
    shared.stats.record(refs.iter().map(|w| w.len()));
    let t = Instant::now();
    let out = forward(model, &refs);
    let ran = t.elapsed();
    shared.queue.release(runner);
    let t = CpuTimer::start();
    match out {
        Ok(out) => {
            let (host, device) = match out.timing {
                // A runner that does not say: all of it is the pass.
                tm if tm.device.is_zero() && tm.host.is_zero() => (Duration::ZERO, ran),
                tm => (tm.host, tm.device),
            };
            shared.stages.add(Stage::PadCopy, host);
            shared.stages.add(Stage::Device, device);
            for (job, row) in batch.into_iter().zip(out.data.chunks(out.shape[1])) {
                let _ = job.reply.send((job.tag, Ok(row.to_vec())));
            }
        }
        Err(e) => {
            for job in batch {
                let _ = job.reply.send((job.tag, Err(e.clone())));
            }
        }
    }
    shared.stages.add(Stage::Scatter, t.elapsed());
    shared.stages.batch_done();
}

/// What a worker does next.
enum Work {
    Batch(Vec<Job>),
    Raw(RawRequest),
    Stop,
}

/// Waits for work: a raw batch at once; a batch of jobs once `max_batch` are queued, or once the
/// oldest has waited `max_wait` and the worker's `runner` holds no batch (or the queue is
/// closing).
fn next_work(shared: &Shared, runner: usize, max_batch: usize) -> Work {
    let q = &shared.queue;
    let mut st = q.lock();
    loop {
        if let Some(r) = st.raws.pop_front() {
            return Work::Raw(r);
        }
        match st.oldest() {
            Some((_, at)) => {
                let due = at + shared.max_wait;
                let now = Instant::now();
                let free = st.held[runner] == 0;
                if st.by_len.len() >= max_batch || (now >= due && free) || st.closed {
                    let t = CpuTimer::start();
                    let (batch, waited) = st.take_batch(max_batch);
                    st.held[runner] += 1;
                    shared.stages.batch_taken();
                    shared.stages.add(Stage::Batching, t.elapsed());
                    shared.stages.add(Stage::QueueWait, waited);
                    return Work::Batch(batch);
                }
                st = if now >= due {
                    // Due, but the runner is busy: wait for it (or for a full batch).
                    q.changed.wait(st).unwrap_or_else(|p| p.into_inner())
                } else {
                    q.changed
                        .wait_timeout(st, due - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                };
            }
            None if st.closed => return Work::Stop,
            None => st = q.changed.wait(st).unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// One worker of `runner`: runs batches from the shared queue until it closes.
fn worker(model: &dyn Forward, runner: usize, shared: &Shared) {
    let max_batch = if model.one_at_a_time() {
        1
    } else {
        shared.max_batch
    };
    loop {
        match next_work(shared, runner, max_batch) {
            Work::Batch(batch) => {
                // Others may be able to start on what is left.
                shared.queue.changed.notify_one();
                run_batch(model, runner, batch, shared);
            }
            Work::Raw((b, reply)) => {
                let refs: Vec<&EncodedWindow> = b.iter().collect();
                let _ = reply.send(forward(model, &refs).map(|o| o.shape[0]));
            }
            Work::Stop => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::onnx::Output;

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
