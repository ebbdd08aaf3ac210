//! The soak's clients' side: one connection to the daemon that reconnects (and retries the
//! request) while the daemon restarts, the counters, and the scores each query got.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use uq_core::protocol::Request;

/// Scores of one query: every (unit, scorer) score and every response score, in a fixed order.
pub type Scores = Vec<f64>;

#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub reconnects: AtomicU64,
    pub jobs_done: AtomicU64,
    pub job_rows: AtomicU64,
    pub mismatches: AtomicU64,
}

/// What the clients share: the socket, the counters, the first result of each query.
pub struct Shared {
    pub socket: PathBuf,
    pub counters: Counters,
    /// First result of each query, and the largest difference any later result showed.
    pub results: Mutex<HashMap<String, Scores>>,
    pub max_diff: Mutex<f64>,
    pub first_errors: Mutex<Vec<String>>,
    pub stop: AtomicBool,
}

impl Shared {
    pub fn new(socket: PathBuf) -> Shared {
        Shared {
            socket,
            counters: Counters::default(),
            results: Mutex::new(HashMap::new()),
            max_diff: Mutex::new(0.0),
            first_errors: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        }
    }

    pub fn error(&self, e: String) {
        self.counters.errors.fetch_add(1, Ordering::SeqCst);
        let mut v = self.first_errors.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() < 10 {
            v.push(e);
        }
    }

    /// Compares `scores` with the first result of `key` (recording it when it is the first).
    pub fn check(&self, key: &str, scores: Scores) {
        let mut r = self.results.lock().unwrap_or_else(|p| p.into_inner());
        match r.get(key) {
            None => {
                r.insert(key.to_string(), scores);
            }
            Some(first) => {
                let d = diff(first, &scores);
                let mut m = self.max_diff.lock().unwrap_or_else(|p| p.into_inner());
                *m = m.max(d);
                if d > 1e-4 {
                    self.counters.mismatches.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    }
}

/// Largest absolute difference; infinite when the shapes or NULLs differ.
pub fn diff(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter().zip(b).fold(0.0, |m, (x, y)| {
        if x.is_nan() != y.is_nan() {
            f64::INFINITY
        } else if x.is_nan() {
            m
        } else {
            m.max((x - y).abs())
        }
    })
}

/// One connection to the daemon, reconnecting (and retrying the request) while it restarts.
pub struct Conn<'a> {
    shared: &'a Shared,
    stream: Option<(UnixStream, BufReader<UnixStream>)>,
}

impl<'a> Conn<'a> {
    pub fn new(shared: &'a Shared) -> Conn<'a> {
        Conn {
            shared,
            stream: None,
        }
    }

    /// The reply to `req`: `Ok(result)` or `Err(the daemon's error)`. Connection failures
    /// (a restart) are retried for up to two minutes.
    pub fn call(&mut self, req: &Request) -> Result<Value, String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut line = serde_json::to_string(req).map_err(|e| e.to_string())?;
        line.push('\n');
        loop {
            match self.try_call(&line) {
                Ok(reply) => {
                    self.shared.counters.requests.fetch_add(1, Ordering::SeqCst);
                    return if reply["ok"] == json!(true) {
                        Ok(reply["result"].clone())
                    } else {
                        Err(reply["error"].as_str().unwrap_or("?").to_string())
                    };
                }
                Err(e) => {
                    self.stream = None;
                    if Instant::now() > deadline || self.shared.stop.load(Ordering::SeqCst) {
                        return Err(format!("no daemon: {e}"));
                    }
                    self.shared
                        .counters
                        .reconnects
                        .fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }

    fn try_call(&mut self, line: &str) -> std::io::Result<Value> {
        if self.stream.is_none() {
            let s = UnixStream::connect(&self.shared.socket)?;
            s.set_read_timeout(Some(Duration::from_secs(300)))?;
            let r = BufReader::new(s.try_clone()?);
            self.stream = Some((s, r));
        }
        let (w, r) = self.stream.as_mut().expect("connected");
        w.write_all(line.as_bytes())?;
        let mut reply = String::new();
        if r.read_line(&mut reply)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "closed",
            ));
        }
        serde_json::from_str(&reply)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}
