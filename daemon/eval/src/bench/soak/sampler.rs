//! The soak's sample lines: the running daemon's RSS, fds and threads (/proc), its cache
//! sizes and the clients' counters.

use std::path::Path;
use std::process::Child;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::client::Counters;
use crate::bench::lines::round;
use crate::bench::procfs::proc_stats;

/// The sample lines of the running daemon: its RSS, fds and threads, cache sizes and counters.
pub(super) struct Sampler<'a> {
    pub socket: &'a Path,
    pub cache: &'a Path,
    pub t0: Instant,
    pub counters: &'a Counters,
}

impl Sampler<'_> {
    pub fn sample(&self, child: &Child, lifetime: usize) -> Value {
        let (rss, fds, threads) = proc_stats(child.id());
        let ping = uqd::client::ping(self.socket, Duration::from_secs(10)).unwrap_or(Value::Null);
        let (c, cache) = (self.counters, self.cache);
        json!({
            "bench": "soak", "t_s": round(self.t0.elapsed().as_secs_f64()), "daemon": lifetime,
            "pid": child.id(), "rss_mb": round(rss), "fds": fds, "threads": threads,
            "nli_cache_entries": ping["nli_cache_entries"], "embed_cache_entries": ping["embed_cache_entries"],
            "completion_cache_bytes": file_size(cache) + file_size(&cache.with_extension("sqlite-wal")),
            "requests": c.requests.load(Ordering::SeqCst), "errors": c.errors.load(Ordering::SeqCst),
            "reconnects": c.reconnects.load(Ordering::SeqCst), "jobs_done": c.jobs_done.load(Ordering::SeqCst),
            "mismatches": c.mismatches.load(Ordering::SeqCst),
        })
    }
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}
