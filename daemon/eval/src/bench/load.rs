//! `uqd bench load`: drives a daemon over its socket from N concurrent connections spread over
//! several worker processes with a mix of `uq_unit_scores` requests (the SelfCheckGPT WikiBio
//! passages: the response, its sentences as units, m samples, one of several scorer sets), and
//! prints throughput, latency percentiles, errors, and the daemon's peak RSS and open fds.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::protocol::Request;

use super::lines::{load_jsonl, round};
use uqd::client;

/// The scorer sets requests cycle through (NLI, NLI + matched, embeddings, model-free).
const MIX: &[&[&str]] = &[
    &["entailment"],
    &["noncontradiction", "contrasted_entailment"],
    &["matched_entailment"],
    &["matched_cosine_sim", "matched_bert_score"],
    &["unigram_max", "unigram_avg"],
];

#[derive(Deserialize)]
struct Passage {
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
    gpt3_sentences: Vec<String>,
}

pub struct LoadArgs<'a> {
    pub socket: &'a Path,
    pub data: &'a Path,
    pub clients: usize,
    pub seconds: f64,
    pub samples: usize,
    /// Worker processes (each runs clients / processes connections).
    pub processes: usize,
}

/// One worker process: `threads` connections for `seconds`, then one JSON line on stdout with
/// every latency (ms) and the errors.
pub fn worker(args: &LoadArgs, threads: usize, seed: usize) -> Result<(), String> {
    let passages: Vec<Passage> = load_jsonl(args.data, None)?;
    if passages.is_empty() {
        return Err(format!("--data {} has no passages", args.data.display()));
    }
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let results: Vec<(Vec<f64>, usize, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let passages = &passages;
                s.spawn(move || {
                    let mut lat = Vec::new();
                    let (mut errors, mut first_error) = (0usize, None);
                    let mut conn = match Conn::open(args.socket) {
                        Ok(c) => c,
                        Err(e) => return (lat, 1, Some(e)),
                    };
                    let mut k = seed * 7919 + t * 104_729;
                    while Instant::now() < deadline {
                        k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let p = &passages[(k >> 33) % passages.len()];
                        let scorers = MIX[(k >> 17) % MIX.len()];
                        let m = args.samples.min(p.gpt3_text_samples.len());
                        let req = Request::Score {
                            response: p.gpt3_text.clone(),
                            samples: p.gpt3_text_samples[..m].to_vec(),
                            options: json!({"units": p.gpt3_sentences, "scorers": scorers, "num_samples": m, "granularity": "sentence"}),
                        };
                        let t0 = Instant::now();
                        match conn.call(&req) {
                            Ok(()) => lat.push(t0.elapsed().as_secs_f64() * 1e3),
                            Err(e) => {
                                errors += 1;
                                first_error.get_or_insert(e);
                                if let Ok(c) = Conn::open(args.socket) {
                                    conn = c;
                                }
                            }
                        }
                    }
                    (lat, errors, first_error)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Vec::new(), 1, Some("client thread panicked".into())))
            })
            .collect()
    });
    let mut lat = Vec::new();
    let (mut errors, mut first_error) = (0, None);
    for (l, e, f) in results {
        lat.extend(l);
        errors += e;
        if first_error.is_none() {
            first_error = f;
        }
    }
    println!(
        "{}",
        json!({"latencies_ms": lat, "errors": errors, "first_error": first_error})
    );
    Ok(())
}

/// One persistent connection (the daemon serves many requests per connection).
struct Conn {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Conn {
    fn open(socket: &Path) -> Result<Conn, String> {
        let s = UnixStream::connect(socket)
            .map_err(|e| format!("connect {}: {e}", socket.display()))?;
        s.set_read_timeout(Some(Duration::from_secs(600))).ok();
        let reader = BufReader::new(s.try_clone().map_err(|e| e.to_string())?);
        Ok(Conn { writer: s, reader })
    }

    fn call(&mut self, req: &Request) -> Result<(), String> {
        let mut line = serde_json::to_vec(req).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| format!("send: {e}"))?;
        let mut reply = String::new();
        self.reader
            .read_line(&mut reply)
            .map_err(|e| format!("receive: {e}"))?;
        let v: Value = serde_json::from_str(&reply).map_err(|e| format!("malformed reply: {e}"))?;
        if v["ok"] == json!(true) {
            Ok(())
        } else {
            Err(v["error"]
                .as_str()
                .unwrap_or("connection closed")
                .chars()
                .take(300)
                .collect())
        }
    }
}

fn proc_kb(pid: u32, field: &str) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with(field))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

fn open_fds(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}

fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    Some(round(sorted[i]))
}

/// Runs the benchmark against the daemon at `args.socket` (started here, with this process's
/// environment, when none answers, and stopped at the end), and prints one JSON line.
pub fn load(args: &LoadArgs) -> Result<(), String> {
    if args.clients == 0 || args.seconds <= 0.0 {
        return Err("--clients and --seconds must be at least 1".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find uqd itself: {e}"))?;
    let started = start_daemon(args, &exe)?;
    let info = client::ping(args.socket, Duration::from_secs(5))?;
    let pid = info["pid"].as_u64().unwrap_or(0) as u32;
    let processes = args.processes.clamp(1, args.clients);
    let workers = spawn_workers(args, &exe, processes)?;
    let t0 = Instant::now();
    // Each worker's output is read by its own thread while it runs (a worker with many fast
    // requests writes more than a pipe holds).
    let readers: Vec<_> = workers
        .into_iter()
        .map(|w| std::thread::spawn(move || w.wait_with_output()))
        .collect();
    let (mut max_fds, mut max_rss_kb) = (0usize, 0f64);
    while readers.iter().any(|r| !r.is_finished()) {
        max_fds = max_fds.max(open_fds(pid).unwrap_or(0));
        max_rss_kb = max_rss_kb.max(proc_kb(pid, "VmRSS:").unwrap_or(0.0));
        std::thread::sleep(Duration::from_millis(100));
    }
    let wall = t0.elapsed().as_secs_f64();
    let Tally {
        mut lat,
        errors,
        first_error,
    } = tally(readers)?;
    lat.sort_by(f64::total_cmp);
    let peak_kb = proc_kb(pid, "VmHWM:").unwrap_or(max_rss_kb);
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    if let Some(mut c) = started {
        let _ = client::call(args.socket, &Request::Shutdown, Duration::from_secs(10));
        let _ = c.wait();
    }
    println!(
        "{}",
        json!({
            "bench": "load",
            "clients": args.clients,
            "processes": processes,
            "seconds": round(wall),
            "requests": lat.len(),
            "requests_per_s": round(lat.len() as f64 / wall),
            "p50_ms": percentile(&lat, 0.50),
            "p95_ms": percentile(&lat, 0.95),
            "p99_ms": percentile(&lat, 0.99),
            "max_ms": lat.last().copied().map(round),
            "errors": errors,
            "first_error": first_error,
            "daemon_pid": pid,
            "daemon_peak_rss_mb": round(peak_kb / 1024.0),
            "daemon_max_open_fds": max_fds,
            "daemon_precision": info["precision"],
            "daemon_device": info["device"],
            "loadavg_after": loadavg.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        })
    );
    Ok(())
}

/// Starts `uqd serve` on `args.socket` when no daemon answers there, and waits until it does;
/// the started daemon, if any.
fn start_daemon(args: &LoadArgs, exe: &Path) -> Result<Option<Child>, String> {
    if client::ping(args.socket, Duration::from_secs(2)).is_ok() {
        return Ok(None);
    }
    let log = std::env::temp_dir().join(format!("uqd-bench-load-{}.log", std::process::id()));
    let log_file =
        std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = Command::new(exe)
        .args(["serve", "--socket"])
        .arg(args.socket)
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .map_err(|e| format!("cannot start uqd serve: {e}"))?;
    let t = Instant::now();
    while client::ping(args.socket, Duration::from_secs(2)).is_err() {
        let log_tail = || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ")
        };
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the daemon started for {} exited ({status}): {}",
                args.socket.display(),
                log_tail()
            ));
        }
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            return Err(format!(
                "the daemon started for {} did not answer in 120 s: {}",
                args.socket.display(),
                log_tail()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(Some(child))
}

/// Starts `processes` load workers sharing `args.clients` connections.
fn spawn_workers(args: &LoadArgs, exe: &Path, processes: usize) -> Result<Vec<Child>, String> {
    let mut workers = Vec::new();
    for w in 0..processes {
        let threads = args.clients / processes + usize::from(w < args.clients % processes);
        let child = Command::new(exe)
            .args(["bench", "load-worker", "--socket"])
            .arg(args.socket)
            .arg("--data")
            .arg(args.data)
            .args([
                "--threads",
                &threads.to_string(),
                "--seconds",
                &args.seconds.to_string(),
            ])
            .args([
                "--samples",
                &args.samples.to_string(),
                "--seed",
                &w.to_string(),
            ])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a load worker: {e}"))?;
        workers.push(child);
    }
    Ok(workers)
}

/// The workers' latencies (ms), error count and first error.
struct Tally {
    lat: Vec<f64>,
    errors: u64,
    first_error: Value,
}

/// Waits for every worker's JSON line and pools them.
fn tally(readers: Vec<WorkerReader>) -> Result<Tally, String> {
    let (mut lat, mut errors, mut first_error) = (Vec::<f64>::new(), 0u64, Value::Null);
    for r in readers {
        let out = r
            .join()
            .map_err(|_| "a load worker's reader panicked".to_string())?
            .map_err(|e| format!("load worker: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Value = match text
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .map(serde_json::from_str)
        {
            Some(Ok(v)) => v,
            _ => {
                errors += 1;
                first_error = json!(format!("a load worker failed ({})", out.status));
                continue;
            }
        };
        lat.extend(
            v["latencies_ms"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64),
        );
        errors += v["errors"].as_u64().unwrap_or(0);
        if first_error.is_null() {
            first_error = v["first_error"].clone();
        }
    }
    Ok(Tally {
        lat,
        errors,
        first_error,
    })
}

/// The thread reading one worker's output.
type WorkerReader = std::thread::JoinHandle<std::io::Result<std::process::Output>>;
