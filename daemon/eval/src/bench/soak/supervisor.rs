//! The soak's child daemon: `uqd serve` with this process's whole configuration
//! (`Config::to_env`) on the soak's own socket and completion cache, stopped (`kill -9` or a
//! clean `shutdown`) and restarted now and then.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::sampler::Sampler;
use uqd::config::Config;

/// The daemon child: `uqd serve` with the soak's configuration, its log in `dir`.
pub(super) fn start_daemon(
    config: &Config,
    socket: &Path,
    cache: &Path,
    dir: &Path,
) -> Result<Child, String> {
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
    while uqd::client::ping(socket, Duration::from_secs(2)).is_err() {
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

/// Stops the daemon: `kill -9` or a clean `shutdown` request; reaps it.
pub(super) fn stop_daemon(child: &mut Child, socket: &Path, kill: bool) {
    if !kill {
        let _ = uqd::client::call(
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

/// The daemons of a soak: the last one (still running), the first sample line, RSS and fds at
/// the start and end of each daemon's life, and the restarts.
pub(super) struct Lives {
    pub child: Child,
    pub last: Value,
    pub first_sample: Option<Value>,
    pub lifetimes: Vec<Value>,
    pub restarts: usize,
}

/// RSS and fds at the start and the end of daemon `lifetime`.
fn lifetime_line(lifetime: usize, start: &Value, end: &Value) -> Value {
    json!({"daemon": lifetime, "rss_mb": [start["rss_mb"], end["rss_mb"]], "fds": [start["fds"], end["fds"]]})
}

/// Until `end`: a sample line every `--sample-every` seconds, and a restart of the daemon
/// (alternately `kill -9` and a clean shutdown) every `--restart-every` seconds.
pub(super) fn restart_loop(
    config: &Config,
    (restart_every, sample_every): (f64, f64),
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
        if last_sample.elapsed().as_secs_f64() >= sample_every {
            let s = sampler.sample(&child, lifetime);
            println!("{s}");
            first_sample.get_or_insert(s);
            last_sample = Instant::now();
        }
        if restart_every > 0.0
            && last_restart.elapsed().as_secs_f64() >= restart_every
            && Instant::now() + Duration::from_secs_f64(restart_every.min(30.0)) < end
        {
            let s = sampler.sample(&child, lifetime);
            lifetimes.push(lifetime_line(lifetime, &life_start, &s));
            let kill = restarts.is_multiple_of(2);
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
