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
//!
//! `client` (the reconnecting connection and what the clients share), `supervisor` (the child
//! daemon: started with this process's whole configuration, stopped, restarted), `load` (the
//! clients' work and the fresh daemon's queries) and `sampler` (the sample lines).

mod client;
mod load;
mod sampler;
mod supervisor;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::lines::{load_jsonl, round};
use client::{diff, Conn, Shared};
use load::Passage;
use sampler::Sampler;
use supervisor::{restart_loop, start_daemon, stop_daemon};
use uqd::config::Config;

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
            std::thread::spawn(move || load::run_client(id, &shared, &passages, samples, &dir))
        })
        .collect();
    let sampler = Sampler {
        socket: &socket,
        cache: &cache,
        t0,
        counters: &shared.counters,
    };
    let every = (args.restart_every, args.sample_every);
    let lives = restart_loop(config, every, &sampler, child, &dir, end)?;
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
    let mut conn = Conn::new(&fresh_shared);
    let score_opts: Value = serde_json::from_str(load::SCORE_OPTIONS).unwrap_or_default();
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
        let want = load::fresh_scores(&mut conn, kind, passage, samples, &score_opts);
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
