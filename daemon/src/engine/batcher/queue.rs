//! The windows callers queue, ordered by length, and how a batch is taken from them.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

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

pub(super) type RawRequest = (Vec<EncodedWindow>, Sender<Result<usize, String>>);

/// The queued windows: by (length, arrival number), and their arrival order.
#[derive(Default)]
pub(super) struct State {
    /// The queued windows and when each arrived.
    pub(super) by_len: BTreeMap<(usize, u64), (Job, Instant)>,
    /// (arrival number, length, arrival time); entries already taken are skipped lazily.
    pub(super) arrivals: VecDeque<(u64, usize, Instant)>,
    pub(super) raws: VecDeque<RawRequest>,
    pub(super) next: u64,
    pub(super) closed: bool,
    /// Per runner, the batches its workers have taken that have not yet left it.
    pub(super) held: Vec<usize>,
}

impl State {
    /// The oldest queued window's key and arrival time.
    pub(super) fn oldest(&mut self) -> Option<((usize, u64), Instant)> {
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
    pub(super) fn take_batch(&mut self, max_batch: usize) -> (Vec<Job>, Duration) {
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
pub(super) struct Queue {
    state: Mutex<State>,
    pub(super) changed: Condvar,
}

impl Queue {
    /// An empty queue for the workers of `runners` runners.
    pub(super) fn new(runners: usize) -> Queue {
        Queue {
            state: Mutex::new(State {
                held: vec![0; runners],
                ..State::default()
            }),
            changed: Condvar::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A batch of `runner` has left it: its workers may take a partial batch again.
    pub(super) fn release(&self, runner: usize) {
        let mut st = self.lock();
        st.held[runner] = st.held[runner].saturating_sub(1);
        drop(st);
        self.changed.notify_all();
    }
}
