//! The inference servers' endpoints: which are up, the next one in turn, and what each served
//! and failed (for `uqd status` and `uq_debug()`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use uq_core::protocol::NliEndpoint as EndpointInfo;

struct Endpoint {
    /// Base URL, e.g. `http://127.0.0.1:8000`.
    url: String,
    healthy: AtomicBool,
    /// Requests it answered.
    served: AtomicU64,
    /// Requests and health checks it failed.
    failures: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// The endpoints, used in turn.
pub(super) struct Endpoints {
    list: Vec<Endpoint>,
    turn: AtomicUsize,
}

impl Endpoints {
    /// The endpoints of `urls`, all down until a request or a health check passes.
    pub fn new(urls: &[String]) -> Endpoints {
        Endpoints {
            list: urls
                .iter()
                .map(|u| Endpoint {
                    url: u.clone(),
                    healthy: AtomicBool::new(false),
                    served: AtomicU64::new(0),
                    failures: AtomicU64::new(0),
                    last_error: Mutex::new(None),
                })
                .collect(),
            turn: AtomicUsize::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Endpoint `i`'s base URL.
    pub fn url(&self, i: usize) -> &str {
        &self.list[i].url
    }

    /// Marks endpoint `i` up.
    pub fn set_up(&self, i: usize) {
        self.list[i].healthy.store(true, Ordering::SeqCst);
    }

    /// Marks endpoint `i` down; whether it was up.
    pub fn set_down(&self, i: usize) -> bool {
        self.list[i].healthy.swap(false, Ordering::SeqCst)
    }

    /// Whether any endpoint is up.
    pub fn any_up(&self) -> bool {
        self.list.iter().any(|e| e.healthy.load(Ordering::SeqCst))
    }

    /// Counts a request endpoint `i` answered.
    pub fn note_served(&self, i: usize) {
        self.list[i].served.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a failure of endpoint `i` and keeps its message.
    pub fn note_failure(&self, i: usize, message: &str) {
        let e = &self.list[i];
        e.failures.fetch_add(1, Ordering::Relaxed);
        *e.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.to_string());
    }

    /// The next endpoint in turn that is up; when none is, the next in turn.
    pub fn pick(&self) -> usize {
        let n = self.list.len();
        let start = self.turn.fetch_add(1, Ordering::Relaxed) % n;
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| self.list[i].healthy.load(Ordering::SeqCst))
            .unwrap_or(start)
    }

    /// The endpoints' state.
    pub fn infos(&self) -> Vec<EndpointInfo> {
        self.list
            .iter()
            .map(|e| EndpointInfo {
                url: e.url.clone(),
                healthy: e.healthy.load(Ordering::SeqCst),
                served: e.served.load(Ordering::Relaxed),
                failures: e.failures.load(Ordering::Relaxed),
                last_error: e
                    .last_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            })
            .collect()
    }
}
