//! `uqd bench soak --minutes M`: a long run of mixed work against a real daemon (a child `uqd
//! serve` on its own socket and completion cache), from several client threads speaking the
//! socket protocol as the extension does: `score` and `nli` requests over SelfCheckGPT WikiBio
//! passages, and small whole-table jobs (`job_start` / `job_status`) into per-client databases.
//! The daemon is restarted now and then (alternately `kill -9` and a clean `shutdown`); clients
//! reconnect and the jobs resume. Every `--sample-every` seconds one JSON line: the daemon's RSS,
//! open file descriptors and threads, its cache sizes, requests, errors. At the end the same
//! queries are run on a fresh daemon with an empty cache and compared with what the soak got
//! (max absolute difference of every score), and a summary line gives RSS and fds at start and
//! end. docs/reference.md, "Benchmarks", has the figures.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection};
use serde::Deserialize;
use serde_json::{json, Value};

use super::common::{load_jsonl, round};
use crate::config::Config;

#[derive(Deserialize)]
struct Passage {
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
}

pub struct SoakArgs<'a> {
    pub data: &'a Path,
    pub minutes: f64,
    pub clients: usize,
    /// Passages the queries are drawn from.
    pub passages: usize,
    pub samples: usize,
    /// Seconds between daemon restarts (0: never).
    pub restart_every: f64,
    /// Seconds between sample lines.
    pub sample_every: f64,
}

/// Scores of one query: every (unit, scorer) score and every response score, in a fixed order.
type Scores = Vec<f64>;

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    errors: AtomicU64,
    reconnects: AtomicU64,
    jobs_done: AtomicU64,
    job_rows: AtomicU64,
    mismatches: AtomicU64,
}

struct Shared {
    socket: PathBuf,
    counters: Counters,
    /// First result of each query, and the largest difference any later result showed.
    results: Mutex<HashMap<String, Scores>>,
    max_diff: Mutex<f64>,
    first_errors: Mutex<Vec<String>>,
    stop: AtomicBool,
}

impl Shared {
    fn new(socket: PathBuf) -> Shared {
        Shared {
            socket,
            counters: Counters::default(),
            results: Mutex::new(HashMap::new()),
            max_diff: Mutex::new(0.0),
            first_errors: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        }
    }

    fn error(&self, e: String) {
        self.counters.errors.fetch_add(1, Ordering::SeqCst);
        let mut v = self.first_errors.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() < 10 {
            v.push(e);
        }
    }

    /// Compares `scores` with the first result of `key` (recording it when it is the first).
    fn check(&self, key: &str, scores: Scores) {
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
fn diff(a: &[f64], b: &[f64]) -> f64 {
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

/// The scores of a `score` result, in order (NULL as NaN).
fn flatten(result: &Value) -> Scores {
    let mut out: Scores = result["scores"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s["score"].as_f64().unwrap_or(f64::NAN))
                .collect()
        })
        .unwrap_or_default();
    if let Some(m) = result["response_scores"].as_object() {
        out.extend(m.values().map(|v| v.as_f64().unwrap_or(f64::NAN)));
    }
    out
}

/// One connection to the daemon, reconnecting (and retrying the request) while it restarts.
struct Conn<'a> {
    shared: &'a Shared,
    stream: Option<(UnixStream, BufReader<UnixStream>)>,
}

impl Conn<'_> {
    /// The reply to `req`: `Ok(result)` or `Err(the daemon's error)`. Connection failures
    /// (a restart) are retried for up to two minutes.
    fn call(&mut self, req: &Value) -> Result<Value, String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut line = req.to_string();
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

/// A small table of `rows` passages in `db`, for the jobs.
fn make_job_db(
    db: &Path,
    passages: &[Passage],
    samples: usize,
    first: usize,
    rows: usize,
) -> Result<(), String> {
    let _ = std::fs::remove_file(db);
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
        .map_err(|e| e.to_string())?;
    for i in 0..rows {
        let p = &passages[(first + i) % passages.len()];
        let s =
            serde_json::to_string(&p.gpt3_text_samples[..samples]).map_err(|e| e.to_string())?;
        conn.execute(
            "INSERT INTO answers VALUES (?1, ?2, ?3)",
            params![((first + i) % passages.len()) as i64, p.gpt3_text, s],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The job's stored scores by source key (its rows are passages: each key is a passage index).
fn job_scores(db: &Path, job: i64) -> Result<Vec<(String, Scores)>, String> {
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    let mut st = conn
        .prepare(
            "SELECT a.source_key, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) \
             JOIN uq_unit_score s USING (unit_id) WHERE a.job_id = ?1 ORDER BY a.source_key, u.position, s.scorer",
        )
        .map_err(|e| e.to_string())?;
    let rows = st
        .query_map([job], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<f64>>(1)?))
        })
        .and_then(|r| r.collect::<Result<Vec<_>, _>>())
        .map_err(|e| e.to_string())?;
    let mut out: Vec<(String, Scores)> = Vec::new();
    for (k, s) in rows {
        match out.last_mut() {
            Some((last, v)) if *last == k => v.push(s.unwrap_or(f64::NAN)),
            _ => out.push((k, vec![s.unwrap_or(f64::NAN)])),
        }
    }
    Ok(out)
}

const JOB_OPTIONS: &str =
    r#"{"scorers": ["entailment", "noncontradiction"], "chunk_size": 1, "concurrency": 1}"#;
const SCORE_OPTIONS: &str = r#"{"scorers": ["entailment", "noncontradiction", "contrasted_entailment", "luq", "matched_cosine_sim"]}"#;

/// One client's loop: score, nli and job requests in turn until the soak ends.
fn client(id: usize, shared: &Shared, passages: &[Passage], samples: usize, dir: &Path) {
    let mut conn = Conn {
        shared,
        stream: None,
    };
    let score_opts: Value = serde_json::from_str(SCORE_OPTIONS).unwrap_or_default();
    let mut i = id;
    while !shared.stop.load(Ordering::SeqCst) {
        let p = (i * 7 + id) % passages.len();
        let passage = &passages[p];
        match i % 6 {
            0..=3 => {
                let req = json!({"op": "score", "response": passage.gpt3_text,
                                 "samples": &passage.gpt3_text_samples[..samples], "options": score_opts});
                match conn.call(&req) {
                    Ok(r) => shared.check(&format!("score/{p}"), flatten(&r)),
                    Err(e) => shared.error(format!("score: {e}")),
                }
            }
            4 => {
                let pairs: Vec<(String, String)> = passage.gpt3_text_samples[..samples]
                    .iter()
                    .map(|s| (s.clone(), passage.gpt3_text.clone()))
                    .collect();
                match conn.call(&json!({"op": "nli", "pairs": pairs})) {
                    Ok(r) => {
                        let v: Scores = r
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .map(|x| x["entailment"].as_f64().unwrap_or(f64::NAN))
                                    .collect()
                            })
                            .unwrap_or_default();
                        shared.check(&format!("nli/{p}"), v);
                    }
                    Err(e) => shared.error(format!("nli: {e}")),
                }
            }
            _ => {
                if let Err(e) = run_small_job(&mut conn, shared, passages, samples, dir, id, i) {
                    shared.error(format!("job: {e}"));
                }
            }
        }
        i += 1;
    }
}

/// A job over 3 passages (fewer when there are fewer) into a fresh database of this client; its scores are compared with
/// the first job over the same passages.
fn run_small_job(
    conn: &mut Conn<'_>,
    shared: &Shared,
    passages: &[Passage],
    samples: usize,
    dir: &Path,
    client: usize,
    i: usize,
) -> Result<(), String> {
    let first = (i / 6) % passages.len();
    let db = dir.join(format!("client-{client}.db"));
    let rows = passages.len().min(3);
    make_job_db(&db, passages, samples, first, rows)?;
    let options: serde_json::Map<String, Value> =
        serde_json::from_str(JOB_OPTIONS).map_err(|e| e.to_string())?;
    let job = {
        let mut c = crate::store::open(&db)?;
        crate::jobs::create::create_job("uqd bench soak", &mut c, "answers", &options)?
    };
    let dbs = db.display().to_string();
    conn.call(&json!({"op": "job_start", "db": dbs, "job_id": job}))?;
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let info = conn.call(&json!({"op": "job_status", "db": dbs, "job_id": job}))?;
        let status = info["status"].as_str().unwrap_or("").to_string();
        if uq_core::jobs::is_final(&status) {
            if status != "done" || info["errors"].as_i64() != Some(0) {
                return Err(format!("job ended {info}"));
            }
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("job still {status} after 600 s"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let scores = job_scores(&db, job)?;
    let distinct: std::collections::BTreeSet<&String> = scores.iter().map(|(k, _)| k).collect();
    if scores.len() != rows || distinct.len() != rows {
        return Err(format!(
            "job {job} stored {} rows ({} distinct keys), not {rows}",
            scores.len(),
            distinct.len()
        ));
    }
    shared.counters.jobs_done.fetch_add(1, Ordering::SeqCst);
    shared
        .counters
        .job_rows
        .fetch_add(rows as u64, Ordering::SeqCst);
    for (k, s) in scores {
        shared.check(&format!("job/{k}"), s);
    }
    Ok(())
}

/// The daemon child: `uqd serve` with the soak's whole configuration (`Config::to_env`), its
/// log in `dir`.
fn start_daemon(config: &Config, socket: &Path, cache: &Path, dir: &Path) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find uqd: {e}"))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("uqd.log"))
        .map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    let own = Config {
        socket: socket.to_path_buf(),
        cache_db: cache.to_path_buf(),
        ..config.clone()
    };
    cmd.arg("serve")
        .envs(own.to_env())
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start uqd serve: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while crate::client::ping(socket, Duration::from_secs(2)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!(
                "uqd serve exited ({st}); see {}",
                dir.join("uqd.log").display()
            ));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err("uqd serve did not answer within 120 s".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(child)
}

/// (RSS in MB, open fds, threads) of process `pid`.
fn proc_stats(pid: u32) -> (f64, usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (field("VmRSS:") / 1024.0, fds, field("Threads:") as usize)
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Stops the daemon: `kill -9` or a clean `shutdown` request; reaps it.
fn stop_daemon(child: &mut Child, socket: &Path, kill: bool) {
    if !kill {
        let _ = crate::client::call(
            socket,
            &uq_core::protocol::Request::Shutdown,
            Duration::from_secs(10),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs the soak and prints its JSON lines.
pub fn soak(config: &Config, args: &SoakArgs) -> Result<(), String> {
    if args.clients == 0 || args.passages == 0 || args.samples == 0 {
        return Err("--clients, --passages and --samples must be at least 1".into());
    }
    let passages = load_passages(args)?;
    let dir = std::env::temp_dir().join(format!("uqd-bench-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let socket = dir.join("run").join("uqd.sock");
    let cache = dir.join("cache").join("completions.sqlite");
    let child = start_daemon(config, &socket, &cache, &dir)?;
    let shared = Arc::new(Shared::new(socket.clone()));
    let passages = Arc::new(passages);
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(args.minutes * 60.0);
    let workers: Vec<_> = (0..args.clients)
        .map(|id| {
            let (shared, passages, dir) = (Arc::clone(&shared), Arc::clone(&passages), dir.clone());
            let samples = args.samples;
            std::thread::spawn(move || client(id, &shared, &passages, samples, &dir))
        })
        .collect();
    let sampler = Sampler {
        socket: &socket,
        cache: &cache,
        t0,
        counters: &shared.counters,
    };
    let lives = restart_loop(config, args, &sampler, child, &dir, end)?;
    let (mut child, last) = (lives.child, lives.last);
    shared.stop.store(true, Ordering::SeqCst);
    for w in workers {
        let _ = w.join();
    }
    stop_daemon(&mut child, &socket, false);
    let (compared, fresh_diff, fresh_mismatch) =
        fresh_check(config, &dir, &shared, &passages, args.samples)?;

    let c = &shared.counters;
    let first = lives
        .first_sample
        .unwrap_or_else(|| lives.lifetimes[0].clone());
    let (restarts, lifetimes) = (lives.restarts, lives.lifetimes);
    println!(
        "{}",
        json!({
            "bench": "soak", "summary": true, "minutes": round(t0.elapsed().as_secs_f64() / 60.0),
            "clients": args.clients, "passages": args.passages, "samples": args.samples,
            "restarts": restarts,
            "rss_mb_start": first["rss_mb"], "rss_mb_end": last["rss_mb"],
            "fds_start": first["fds"], "fds_end": last["fds"],
            "per_daemon": lifetimes,
            "nli_cache_entries_end": last["nli_cache_entries"],
            "embed_cache_entries_end": last["embed_cache_entries"],
            "completion_cache_bytes_end": last["completion_cache_bytes"],
            "requests": c.requests.load(Ordering::SeqCst), "errors": c.errors.load(Ordering::SeqCst),
            "first_errors": *shared.first_errors.lock().unwrap_or_else(|p| p.into_inner()),
            "reconnects": c.reconnects.load(Ordering::SeqCst),
            "jobs_done": c.jobs_done.load(Ordering::SeqCst), "job_rows": c.job_rows.load(Ordering::SeqCst),
            "repeat_max_abs_diff": *shared.max_diff.lock().unwrap_or_else(|p| p.into_inner()),
            "repeat_mismatches": c.mismatches.load(Ordering::SeqCst),
            "fresh_compared": compared, "fresh_max_abs_diff": fresh_diff, "fresh_mismatches": fresh_mismatch,
        })
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The first `--passages` passages of `--data`, each with at least `--samples` samples.
fn load_passages(args: &SoakArgs) -> Result<Vec<Passage>, String> {
    let passages: Vec<Passage> = load_jsonl(args.data, Some(args.passages))?;
    if let Some(p) = passages
        .iter()
        .find(|p| p.gpt3_text_samples.len() < args.samples)
    {
        return Err(format!(
            "--samples {} but a passage has {}",
            args.samples,
            p.gpt3_text_samples.len()
        ));
    }
    Ok(passages)
}

/// The sample lines of the running daemon: its RSS, fds and threads, cache sizes and counters.
struct Sampler<'a> {
    socket: &'a Path,
    cache: &'a Path,
    t0: Instant,
    counters: &'a Counters,
}

impl Sampler<'_> {
    fn sample(&self, child: &Child, lifetime: usize) -> Value {
        let (rss, fds, threads) = proc_stats(child.id());
        let ping = crate::client::ping(self.socket, Duration::from_secs(10)).unwrap_or(Value::Null);
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

/// The daemons of a soak: the last one (still running), the first sample line, RSS and fds at
/// the start and end of each daemon's life, and the restarts.
struct Lives {
    child: Child,
    last: Value,
    first_sample: Option<Value>,
    lifetimes: Vec<Value>,
    restarts: usize,
}

/// RSS and fds at the start and the end of daemon `lifetime`.
fn lifetime_line(lifetime: usize, start: &Value, end: &Value) -> Value {
    json!({"daemon": lifetime, "rss_mb": [start["rss_mb"], end["rss_mb"]], "fds": [start["fds"], end["fds"]]})
}

/// Until `end`: a sample line every `--sample-every` seconds, and a restart of the daemon
/// (alternately `kill -9` and a clean shutdown) every `--restart-every` seconds.
fn restart_loop(
    config: &Config,
    args: &SoakArgs,
    sampler: &Sampler,
    mut child: Child,
    dir: &Path,
    end: Instant,
) -> Result<Lives, String> {
    let (socket, cache) = (sampler.socket, sampler.cache);
    let mut lifetime = 1;
    let mut first_sample: Option<Value> = None;
    let mut lifetimes: Vec<Value> = Vec::new();
    let mut life_start = sampler.sample(&child, lifetime);
    let mut last_sample = Instant::now();
    let mut last_restart = Instant::now();
    let mut restarts = 0usize;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(250));
        if last_sample.elapsed().as_secs_f64() >= args.sample_every {
            let s = sampler.sample(&child, lifetime);
            println!("{s}");
            first_sample.get_or_insert(s);
            last_sample = Instant::now();
        }
        if args.restart_every > 0.0
            && last_restart.elapsed().as_secs_f64() >= args.restart_every
            && Instant::now() + Duration::from_secs_f64(args.restart_every.min(30.0)) < end
        {
            let s = sampler.sample(&child, lifetime);
            lifetimes.push(lifetime_line(lifetime, &life_start, &s));
            let kill = restarts % 2 == 0;
            eprintln!(
                "soak: restarting the daemon ({})",
                if kill { "kill -9" } else { "shutdown" }
            );
            stop_daemon(&mut child, socket, kill);
            child = start_daemon(config, socket, cache, dir)?;
            restarts += 1;
            lifetime += 1;
            life_start = sampler.sample(&child, lifetime);
            last_restart = Instant::now();
        }
    }
    let last = sampler.sample(&child, lifetime);
    println!("{last}");
    lifetimes.push(lifetime_line(lifetime, &life_start, &last));
    Ok(Lives {
        child,
        last,
        first_sample,
        lifetimes,
        restarts,
    })
}

/// The same queries on a fresh daemon with an empty cache: scores must match the soak's.
/// (compared, max absolute difference, mismatches); a failed query is an error of the soak.
fn fresh_check(
    config: &Config,
    dir: &Path,
    shared: &Shared,
    passages: &[Passage],
    samples: usize,
) -> Result<(usize, f64, usize), String> {
    let socket = &shared.socket;
    let fresh_cache = dir.join("fresh").join("completions.sqlite");
    let mut fresh = start_daemon(config, socket, &fresh_cache, dir)?;
    let fresh_shared = Shared::new(socket.clone());
    let mut conn = Conn {
        shared: &fresh_shared,
        stream: None,
    };
    let score_opts: Value = serde_json::from_str(SCORE_OPTIONS).unwrap_or_default();
    let soaked = shared
        .results
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let (mut compared, mut fresh_diff, mut fresh_mismatch) = (0usize, 0.0f64, 0usize);
    for (key, got) in &soaked {
        let Some((kind, p)) = key.split_once('/') else {
            continue;
        };
        let Ok(p) = p.parse::<usize>() else { continue };
        let passage = &passages[p];
        let samples = &passage.gpt3_text_samples[..samples];
        let want = fresh_scores(&mut conn, kind, passage, samples, &score_opts);
        match want {
            Ok(want) => {
                let d = diff(got, &want);
                compared += 1;
                fresh_diff = fresh_diff.max(d);
                if d > 1e-4 {
                    fresh_mismatch += 1;
                }
            }
            Err(e) => shared.error(format!("fresh run: {e}")),
        }
    }
    stop_daemon(&mut fresh, socket, false);
    Ok((compared, fresh_diff, fresh_mismatch))
}

/// The scores of one soak query (`score/P`, `job/P` or `nli/P` of passage P) on `conn`.
fn fresh_scores(
    conn: &mut Conn,
    kind: &str,
    passage: &Passage,
    samples: &[String],
    score_opts: &Value,
) -> Result<Scores, String> {
    match kind {
        "score" | "job" => {
            let opts = if kind == "score" {
                score_opts.clone()
            } else {
                json!({"scorers": ["entailment", "noncontradiction"]})
            };
            conn.call(&json!({"op": "score", "response": passage.gpt3_text, "samples": samples, "options": opts}))
                .map(|r| {
                    if kind == "score" {
                        flatten(&r)
                    } else {
                        job_order(&r)
                    }
                })
        }
        _ => {
            let pairs: Vec<(String, String)> = samples
                .iter()
                .map(|s| (s.clone(), passage.gpt3_text.clone()))
                .collect();
            conn.call(&json!({"op": "nli", "pairs": pairs})).map(|r| {
                r.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x["entailment"].as_f64().unwrap_or(f64::NAN))
                            .collect()
                    })
                    .unwrap_or_default()
            })
        }
    }
}

/// The unit scores of a `score` result in the order a job stores them: by position, then scorer.
fn job_order(r: &Value) -> Scores {
    let mut by: Vec<(i64, String, f64)> = r["scores"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["unit_idx"].as_i64().unwrap_or(0),
                        s["scorer"].as_str().unwrap_or("").to_string(),
                        s["score"].as_f64().unwrap_or(f64::NAN),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    by.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    by.into_iter().map(|x| x.2).collect()
}
