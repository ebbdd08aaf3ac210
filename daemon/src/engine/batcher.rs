//! Dynamic batching of encoded NLI windows across all concurrent callers.
//!
//! One queue; each worker thread owns a runner (a local session, or a client of the inference
//! servers: `engine::remote`, with several workers so that batches are in flight on every
//! endpoint at once). A worker takes the first queued window, waits at most `max_wait` for up to
//! `max_batch` windows, then, when it is the only worker, also takes whatever else is already
//! queued (up to `POOL_BATCHES × max_batch`), sorts the pool by length and cuts it into batches
//! of at most `max_batch`, each padded to its longest window. Each window's logits go back to
//! its caller.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::onnx::{OnnxModel, Output, SeqRef};

/// What runs one batch of windows: a local ONNX Runtime session or an inference server.
pub trait Forward: Send {
    /// The logits of `seqs`, `[seqs.len(), labels]`.
    fn run(&mut self, seqs: &[SeqRef<'_>]) -> Result<Output, String>;
    /// The name of the output that is read (for messages).
    fn output_name(&self) -> &str;
    /// Whether it runs one window per forward pass anyway (dynamic int8): then its worker takes
    /// one window at a time from the queue, so that every worker stays busy.
    fn one_at_a_time(&self) -> bool {
        false
    }
}

impl Forward for OnnxModel {
    fn run(&mut self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        OnnxModel::run(self, seqs)
    }
    fn output_name(&self) -> &str {
        OnnxModel::output_name(self)
    }
    fn one_at_a_time(&self) -> bool {
        self.row_at_a_time
    }
}

/// How many batches' worth of queued windows the worker sorts together.
const POOL_BATCHES: usize = 8;

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

type RawRequest = (Vec<Vec<EncodedWindow>>, Sender<Result<usize, String>>);

enum Msg {
    Job(Job),
    /// Run pre-made batches as they are (benchmark ceiling); replies the number of windows run.
    Raw(Vec<Vec<EncodedWindow>>, Sender<Result<usize, String>>),
}

pub struct Batcher {
    tx: Option<Sender<Msg>>,
    handles: Vec<JoinHandle<()>>,
}

impl Batcher {
    /// Starts one worker thread per runner, each owning its runner; they share one queue.
    pub fn start(
        runners: Vec<Box<dyn Forward>>,
        max_batch: usize,
        max_wait: Duration,
    ) -> Result<Batcher, String> {
        let (tx, rx) = crossbeam_channel::unbounded::<Msg>();
        let mut handles = Vec::new();
        let n = runners.len();
        for (i, runner) in runners.into_iter().enumerate() {
            let rx = rx.clone();
            let h = std::thread::Builder::new()
                .name(format!("uqd-nli-batcher-{i}"))
                .spawn(move || worker(runner, rx, max_batch.max(1), max_wait, n > 1))
                .map_err(|e| format!("cannot start the NLI batcher thread: {e}"))?;
            handles.push(h);
        }
        if handles.is_empty() {
            return Err("internal error: the NLI batcher has no runner".into());
        }
        Ok(Batcher {
            tx: Some(tx),
            handles,
        })
    }

    /// Queues one window; its logits arrive on `job.reply`.
    pub fn submit(&self, job: Job) -> Result<(), String> {
        self.tx
            .as_ref()
            .ok_or_else(|| "the NLI batcher is stopped".to_string())?
            .send(Msg::Job(job))
            .map_err(|_| "the NLI batcher thread has stopped".to_string())
    }

    /// Whether a worker thread is still running.
    pub fn is_alive(&self) -> bool {
        self.handles.iter().any(|h| !h.is_finished())
    }

    /// Runs `batches` as given (no re-sorting), each batch on whichever worker is free;
    /// returns the number of windows run.
    pub fn raw(&self, batches: Vec<Vec<EncodedWindow>>) -> Result<usize, String> {
        let (rtx, rrx) = crossbeam_channel::unbounded();
        let n = batches.len();
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| "the NLI batcher is stopped".to_string())?;
        for b in batches {
            tx.send(Msg::Raw(vec![b], rtx.clone()))
                .map_err(|_| "the NLI batcher thread has stopped".to_string())?;
        }
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
        self.tx.take();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

fn forward(model: &mut dyn Forward, windows: &[&EncodedWindow]) -> Result<Vec<Vec<f32>>, String> {
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
    let k = out.shape[1];
    Ok(out.data.chunks(k).map(|c| c.to_vec()).collect())
}

fn run_jobs(model: &mut dyn Forward, mut pool: Vec<Job>, max_batch: usize) {
    pool.sort_by_key(|j| j.window.len());
    let mut rest = pool;
    while !rest.is_empty() {
        let tail = rest.split_off(rest.len().min(max_batch));
        let batch = std::mem::replace(&mut rest, tail);
        let refs: Vec<&EncodedWindow> = batch.iter().map(|j| &j.window).collect();
        match forward(model, &refs) {
            Ok(rows) => {
                for (job, row) in batch.into_iter().zip(rows) {
                    let _ = job.reply.send((job.tag, Ok(row)));
                }
            }
            Err(e) => {
                for job in batch {
                    let _ = job.reply.send((job.tag, Err(e.clone())));
                }
            }
        }
    }
}

fn run_raw(model: &mut dyn Forward, batches: &[Vec<EncodedWindow>]) -> Result<usize, String> {
    let mut n = 0;
    for b in batches {
        let refs: Vec<&EncodedWindow> = b.iter().collect();
        n += forward(model, &refs)?.len();
    }
    Ok(n)
}

/// One worker: `shared` when other workers take from the same queue, so that it takes one batch
/// at a time (a pool of several would leave the others idle).
fn worker(
    mut model: Box<dyn Forward>,
    rx: Receiver<Msg>,
    max_batch: usize,
    max_wait: Duration,
    shared: bool,
) {
    let max_batch = if model.one_at_a_time() { 1 } else { max_batch };
    let pool_cap = if shared {
        max_batch
    } else {
        max_batch.saturating_mul(POOL_BATCHES)
    };
    let mut raws: Vec<RawRequest> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut pool: Vec<Job> = Vec::new();
        match first {
            Msg::Job(j) => pool.push(j),
            Msg::Raw(b, r) => raws.push((b, r)),
        }
        if !pool.is_empty() {
            // Wait (at most max_wait) for a full batch.
            let deadline = Instant::now() + max_wait;
            while pool.len() < max_batch {
                match rx.recv_deadline(deadline) {
                    Ok(Msg::Job(j)) => pool.push(j),
                    Ok(Msg::Raw(b, r)) => raws.push((b, r)),
                    Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            // Take what else is already queued, so that similar lengths share a batch.
            while pool.len() < pool_cap {
                match rx.try_recv() {
                    Ok(Msg::Job(j)) => pool.push(j),
                    Ok(Msg::Raw(b, r)) => raws.push((b, r)),
                    Err(_) => break,
                }
            }
            run_jobs(model.as_mut(), pool, max_batch);
        }
        for (b, r) in raws.drain(..) {
            let _ = r.send(run_raw(model.as_mut(), &b));
        }
    }
}
