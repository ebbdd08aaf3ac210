//! LLM usage metered per piece of work (a job's row): a thread inside [`metered`] hands its
//! meter to the tasks it runs on the LLM runtime ([`block_on`]), and each completion they await
//! adds its usage to it.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use uq_llm::{Completion, Usage};

/// LLM usage of some metered work (a job's row): calls, tokens, cache hits. Work run inside
/// [`metered`] on a thread adds the usage of every completion it awaits through
/// [`LlmService::block_on`](super::LlmService::block_on) (futures polled in the same task, e.g. `join_all`, included).
#[derive(Debug, Default)]
pub struct UsageMeter(Mutex<Usage>);

impl UsageMeter {
    pub fn add(&self, u: &Usage) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).add(u);
    }
    pub fn get(&self) -> Usage {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

thread_local! {
    static THREAD_METER: std::cell::RefCell<Option<Arc<UsageMeter>>> = const { std::cell::RefCell::new(None) };
}

tokio::task_local! {
    static TASK_METER: Arc<UsageMeter>;
}

/// Runs `f` on this thread with LLM usage added to `meter`.
pub fn metered<T>(meter: &Arc<UsageMeter>, f: impl FnOnce() -> T) -> T {
    let previous = THREAD_METER.with(|m| m.replace(Some(Arc::clone(meter))));
    struct Restore(Option<Arc<UsageMeter>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            THREAD_METER.with(|m| *m.borrow_mut() = previous);
        }
    }
    let _restore = Restore(previous);
    f()
}

/// Adds the usage of `c` to the meter of the task that awaits it, if any.
pub(super) fn record_usage(c: &Completion) {
    let _ = TASK_METER.try_with(|m| m.add(&c.usage));
}

/// Runs `f` to completion on `runtime`, with the calling thread's meter (if it runs inside
/// [`metered`]) as the meter of the task.
pub(super) fn block_on<F: Future>(runtime: &tokio::runtime::Runtime, f: F) -> F::Output {
    match THREAD_METER.with(|m| m.borrow().clone()) {
        Some(meter) => runtime.block_on(TASK_METER.scope(meter, f)),
        None => runtime.block_on(f),
    }
}
