//! A worker: waits for a batch from the shared queue, runs it on its runner and hands each
//! window's logits back to its caller.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::stages::{CpuTimer, Stage, Stages};

use super::forward::{forward, Forward};
use super::pad_stats::PadStats;
use super::queue::{EncodedWindow, Job, Queue, RawRequest};

/// What a worker shares with the others.
pub(super) struct Shared {
    pub(super) queue: Arc<Queue>,
    pub(super) stats: Arc<PadStats>,
    pub(super) stages: Arc<Stages>,
    pub(super) max_batch: usize,
    pub(super) max_wait: Duration,
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
pub(super) fn worker(model: &dyn Forward, runner: usize, shared: &Shared) {
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
