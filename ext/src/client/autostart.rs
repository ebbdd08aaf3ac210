//! Starting `uqd` on first use: when nothing listens on the socket, the client (mod.rs) runs
//! `uqd serve --socket <path>` detached, its output appended to `uqd.log` beside the socket, and
//! waits until it answers a ping. `UQ_DAEMON` names the binary (default: `uqd` beside the loaded
//! `.so`); `UQ_START_TIMEOUT_MS` bounds the wait (default 60000).

use std::ffi::CStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::conn::{log_path, ping};
use super::settings::{env_ms, DEFAULT_START_TIMEOUT_MS, PING_TIMEOUT, POLL_INTERVAL};

const LOG_TAIL_BYTES: usize = 2_000;

/// Where the `uqd` binary is and how it was found.
pub fn find_daemon() -> Result<(PathBuf, &'static str), String> {
    if let Some(p) = std::env::var_os("UQ_DAEMON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok((p, "UQ_DAEMON"))
        } else {
            Err(format!(
                "UQ_DAEMON={} is not a file; point it to the uqd binary",
                p.display()
            ))
        };
    }
    match library_path() {
        Some(lib) => {
            let dir = lib.parent().unwrap_or(Path::new("."));
            let candidate = dir.join("uqd");
            if candidate.is_file() {
                Ok((candidate, "beside the extension"))
            } else {
                Err(format!(
                    "uqd binary not found: UQ_DAEMON is not set and {} does not exist \
                     (`make setup` puts uqd beside uq0.so in dist/)",
                    candidate.display()
                ))
            }
        }
        None => Err(
            "uqd binary not found: UQ_DAEMON is not set and the extension's own path is unknown"
                .into(),
        ),
    }
}

/// Absolute path of this shared library (via `dladdr`).
pub fn library_path() -> Option<PathBuf> {
    // SAFETY: dladdr only reads the address and fills `info`; dli_fname, when set, points to a
    // NUL-terminated string owned by the dynamic loader.
    let name = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let addr = library_path as *const () as *const libc::c_void;
        if libc::dladdr(addr, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned()
    };
    let p = PathBuf::from(name);
    Some(fs::canonicalize(&p).unwrap_or(p))
}

/// Why the daemon could not be started.
#[derive(Debug)]
pub enum StartError {
    /// The daemon ran and exited before answering; the message carries the reason it logged
    /// (which names its own fix), so no advice about starting it by hand is added.
    Exited(String),
    /// Anything else: no binary, no lock, no answer in time.
    Other(String),
}

impl From<String> for StartError {
    fn from(s: String) -> Self {
        StartError::Other(s)
    }
}

/// Starts `uqd serve --socket <path>` detached, unless another process does it first, and
/// waits until it answers a ping. A lock file (`<socket>.lock`) serialises concurrent starters.
pub fn start_daemon(path: &Path) -> Result<(), StartError> {
    let timeout = env_ms("UQ_START_TIMEOUT_MS", DEFAULT_START_TIMEOUT_MS);
    let deadline = Instant::now() + timeout;
    create_socket_dir(path)?;
    // Held until `_lock` is dropped (closing the file releases the flock).
    let _lock = lock_starters(path, deadline, timeout)?;
    if ping(path, PING_TIMEOUT).is_ok() {
        return Ok(()); // started by whoever held the lock
    }

    let (exe, _) = find_daemon()?;
    let log_file = log_path(path);
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log_file)
        .map_err(|e| format!("cannot open log file {}: {e}", log_file.display()))?;
    let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
    let pid = spawn_detached(&exe, path, &log)
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let started = Started {
        exe: &exe,
        pid,
        log_file: &log_file,
        log_start,
    };
    started.wait_for_answer(path, deadline, timeout)
}

/// Creates the socket's folder (mode 0700) when it does not exist.
fn create_socket_dir(path: &Path) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if !dir.as_os_str().is_empty() && !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Takes the starters' lock (`<socket>.lock`, an exclusive flock), waiting for another starter
/// until `deadline`; the lock is held while the returned file is open.
fn lock_starters(path: &Path, deadline: Instant, timeout: Duration) -> Result<File, StartError> {
    let mut lock_name = path.as_os_str().to_owned();
    lock_name.push(".lock");
    let lock_path = PathBuf::from(lock_name);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| format!("cannot open lock file {}: {e}", lock_path.display()))?;
    loop {
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(lock);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::WouldBlock {
            return Err(format!("cannot lock {}: {e}", lock_path.display()).into());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "another process held {} (starting uqd) for more than {} ms (UQ_START_TIMEOUT_MS)",
                lock_path.display(),
                timeout.as_millis()
            )
            .into());
        }
        sleep(POLL_INTERVAL);
    }
}

/// A `uqd` just spawned: its binary, its pid, and its log with where this run's output starts.
struct Started<'a> {
    exe: &'a Path,
    pid: i32,
    log_file: &'a Path,
    log_start: u64,
}

impl Started<'_> {
    /// Pings the socket until the daemon answers; an error when it exits first (with its log's
    /// reason) or `deadline` passes (with its log's tail).
    fn wait_for_answer(
        &self,
        path: &Path,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), StartError> {
        let (exe, pid, log_file) = (self.exe, self.pid, self.log_file);
        loop {
            sleep(POLL_INTERVAL);
            let last_err = match ping(path, PING_TIMEOUT) {
                Ok(_) => return Ok(()),
                Err(e) => e,
            };
            if !process_alive(pid) {
                // It may have lost a race to another daemon that now answers.
                if ping(path, PING_TIMEOUT).is_ok() {
                    return Ok(());
                }
                let tail = log_tail(log_file, self.log_start);
                return Err(StartError::Exited(format!(
                    "{} exited before answering: {} (its log is {})",
                    exe.display(),
                    exit_reason(&tail),
                    log_file.display(),
                )));
            }
            if Instant::now() >= deadline {
                return Err(StartError::Other(format!(
                    "{} (pid {pid}) did not answer within {} ms (UQ_START_TIMEOUT_MS; last error: {last_err}); \
                     it may still be starting (its log is {})\n{}",
                    exe.display(),
                    timeout.as_millis(),
                    log_file.display(),
                    log_tail(log_file, self.log_start)
                )));
            }
        }
    }
}

/// Runs `exe serve --socket <path>` as a daemon: double fork (so the host never has to reap
/// it), new session, stdin from /dev/null, stdout/stderr appended to `log`. Returns its pid.
fn spawn_detached(exe: &Path, path: &Path, log: &File) -> io::Result<i32> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two descriptors, both close-on-exec.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let (rfd, wfd) = (fds[0], fds[1]);
    let mut cmd = Command::new(exe);
    cmd.arg("serve")
        .arg("--socket")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?);
    // SAFETY: the closure only makes async-signal-safe calls (setsid, fork, close_range, write, _exit).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => {
                    // The daemon: goes on to exec. Descriptors of the host (database files,
                    // sockets) must not leak into it: mark them all close-on-exec
                    // (CLOSE_RANGE_CLOEXEC, Linux >= 5.11; ignored where unsupported).
                    libc::syscall(
                        libc::SYS_close_range,
                        3u32,
                        u32::MAX,
                        libc::CLOSE_RANGE_CLOEXEC,
                    );
                    Ok(())
                }
                pid => {
                    let b = pid.to_ne_bytes();
                    libc::write(wfd, b.as_ptr().cast(), b.len());
                    libc::_exit(0)
                }
            }
        });
    }
    let spawned = cmd.spawn();
    // SAFETY: closing our copy of the write end; the intermediate child has its own.
    unsafe { libc::close(wfd) };
    let result = spawned.and_then(|mut child| {
        child.wait()?; // the intermediate process exits at once
        let mut b = [0u8; 4];
        // SAFETY: reading into a 4-byte buffer from our pipe.
        let n = unsafe { libc::read(rfd, b.as_mut_ptr().cast(), b.len()) };
        if n == 4 {
            Ok(i32::from_ne_bytes(b))
        } else {
            Err(io::Error::other("the daemon's pid could not be read"))
        }
    });
    // SAFETY: closing the read end we own.
    unsafe { libc::close(rfd) };
    result
}

/// Whether `pid` runs (exists and is not a zombie).
fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    if unsafe { libc::kill(pid, 0) } != 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Field 3 (after the parenthesised command name) is the state.
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => true,
    }
}

/// The reason an auto-started daemon gave for exiting, from what it wrote to its log (`tail`):
/// its last `uqd: ...` line (how `uqd` reports a fatal error, e.g. a missing model directory,
/// a bad config file, an ONNX Runtime library that cannot be loaded) and what follows it; after
/// a panic, the panic's message; else (a signal, a loader error) the last lines of the log.
pub fn exit_reason(tail: &str) -> String {
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    let panic = lines
        .iter()
        .rposition(|l| l.starts_with("thread '") && l.contains("panicked"));
    let from = panic
        .or_else(|| lines.iter().rposition(|l| l.starts_with("uqd: ")))
        .unwrap_or(lines.len().saturating_sub(3));
    let reason = lines[from..]
        .iter()
        .map(|l| l.strip_prefix("uqd: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ");
    if reason.is_empty() {
        "it wrote nothing to its log (killed by a signal?)".into()
    } else {
        reason
    }
}

/// The end of what the daemon wrote to the log since `from`.
fn log_tail(log: &Path, from: u64) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = File::open(log) {
        let _ = f
            .seek(SeekFrom::Start(from))
            .and_then(|_| f.read_to_end(&mut text));
    }
    let start = text.len().saturating_sub(LOG_TAIL_BYTES);
    let tail = String::from_utf8_lossy(&text[start..]).trim().to_string();
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::exit_reason;

    #[test]
    fn the_reason_is_the_last_uqd_line() {
        let log = "uqd: CUDA unavailable (x), using CPU\nuqd: NLI model directory /x does not exist: set UQ_NLI_MODEL=DIR\n";
        assert_eq!(
            exit_reason(log),
            "NLI model directory /x does not exist: set UQ_NLI_MODEL=DIR"
        );
    }

    #[test]
    fn else_the_panic_or_the_last_lines() {
        let log = "uqd: listening on /s\nthread 'main' panicked at src/x.rs:1:2:\nboom\n\
                   note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            exit_reason(log),
            "thread 'main' panicked at src/x.rs:1:2: boom"
        );
        let log = "a\nb\nc\nd\n";
        assert_eq!(exit_reason(log), "b c d");
        assert!(exit_reason("").contains("nothing"));
    }
}
