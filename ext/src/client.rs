//! Client of the `uqd` daemon: newline-delimited JSON over the per-user Unix socket, with
//! transparent reconnection and auto-start of the daemon.
//!
//! Environment: `UQ_SOCKET` (socket path, via `uq_core::paths`), `UQ_DAEMON` (path of `uqd`;
//! default: `uqd` beside the loaded `.so`), `UQ_TIMEOUT_MS` (reply timeout; default 300000, or
//! 3600000 for requests that may call an LLM), `UQ_START_TIMEOUT_MS` (auto-start timeout,
//! default 60000).

use std::ffi::CStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;
use uq_core::paths::default_socket_path;
use uq_core::protocol::{
    ClaimsResult, GenerateResult, NliProbs, PingInfo, Reply, Request, ScoreResult, UadResult,
    MAX_LINE_BYTES,
};

/// Default reply timeout for requests (`UQ_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;
/// Default reply timeout of requests that may call an LLM (`generate`, `claims`, `uad`, and
/// `score` with claims or an LLM judge) when `UQ_TIMEOUT_MS` is unset: generation on a CPU is
/// slow (the embedded SmolLM2 writes ~20 tokens/s on 2 cores).
pub const DEFAULT_LLM_TIMEOUT_MS: u64 = 3_600_000;
/// Default time allowed for an auto-started daemon to answer (`UQ_START_TIMEOUT_MS`).
pub const DEFAULT_START_TIMEOUT_MS: u64 = 60_000;
/// Notes of the last `score` reply of this process (why a score is NULL), for `uq_debug()`.
static LAST_NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keeps `notes` as the last score notes (thread-safe; a poisoned lock is recovered).
pub fn set_last_notes(notes: &[String]) {
    *LAST_NOTES.lock().unwrap_or_else(|e| e.into_inner()) = notes.to_vec();
}

/// The notes of the last `score` reply (empty when it had none).
pub fn last_notes() -> Vec<String> {
    LAST_NOTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Timeout of the pings used to probe the daemon (`uq_debug`, auto-start polling).
pub const PING_TIMEOUT: Duration = Duration::from_millis(2_000);
/// Tries of one request when the connection breaks.
const MAX_ATTEMPTS: u32 = 3;
const POLL_INTERVAL: Duration = Duration::from_millis(50);
const LOG_TAIL_BYTES: usize = 2_000;

/// A duration in milliseconds from the environment, `default_ms` when unset or invalid.
pub fn env_ms(name: &str, default_ms: u64) -> Duration {
    let ms = std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(default_ms);
    Duration::from_millis(ms.max(1))
}

/// Reply timeout: `UQ_TIMEOUT_MS`, else the default for requests with (`llm`) or without LLM work.
pub fn reply_timeout(llm: bool) -> Duration {
    env_ms(
        "UQ_TIMEOUT_MS",
        if llm {
            DEFAULT_LLM_TIMEOUT_MS
        } else {
            DEFAULT_TIMEOUT_MS
        },
    )
}

/// One daemon connection shared by the functions of one SQLite connection.
pub struct Client {
    conn: Mutex<Option<Conn>>,
}

impl Client {
    pub fn new() -> Self {
        Client {
            conn: Mutex::new(None),
        }
    }

    /// `nli` op for one pair.
    pub fn nli(&self, premise: &str, hypothesis: &str) -> Result<NliProbs, String> {
        let req = Request::Nli {
            pairs: vec![(premise.to_owned(), hypothesis.to_owned())],
        };
        let result = self.call(&req, false)?;
        let mut probs: Vec<NliProbs> = serde_json::from_value(result)
            .map_err(|e| format!("unexpected reply from uqd to `nli` ({e})"))?;
        match probs.len() {
            1 => Ok(probs.remove(0)),
            n => Err(format!(
                "unexpected reply from uqd to `nli`: {n} results for 1 pair"
            )),
        }
    }

    /// `score` op; `llm`: the options make the daemon call an LLM (claims, a judge), so the
    /// reply may take long.
    pub fn score(
        &self,
        response: String,
        samples: Vec<String>,
        options: serde_json::Map<String, Value>,
        llm: bool,
    ) -> Result<ScoreResult, String> {
        let req = Request::Score {
            response,
            samples,
            options: Value::Object(options),
        };
        let result: ScoreResult = decode("score", self.call(&req, llm)?)?;
        set_last_notes(&result.notes);
        Ok(result)
    }

    /// `generate` op: the original answer to `prompt` and `n` sampled answers.
    pub fn generate(
        &self,
        prompt: String,
        n: usize,
        options: serde_json::Map<String, Value>,
    ) -> Result<GenerateResult, String> {
        let req = Request::Generate {
            prompt,
            n,
            options: Value::Object(options),
        };
        decode("generate", self.call(&req, true)?)
    }

    /// `claims` op: the claims of `text` (decomposition LLM).
    pub fn claims(
        &self,
        text: String,
        options: serde_json::Map<String, Value>,
    ) -> Result<ClaimsResult, String> {
        let req = Request::Claims {
            text,
            options: Value::Object(options),
        };
        decode("claims", self.call(&req, true)?)
    }

    /// `claim_union` op: the union of unique claims of `response` and `samples` (merge LLM).
    pub fn claim_union(
        &self,
        response: String,
        samples: Vec<String>,
        options: serde_json::Map<String, Value>,
    ) -> Result<ClaimsResult, String> {
        let req = Request::ClaimUnion {
            response,
            samples,
            options: Value::Object(options),
        };
        decode("claim_union", self.call(&req, true)?)
    }

    /// `uad` op: uncertainty-aware decoding of `response` against `samples`.
    pub fn uad(
        &self,
        response: String,
        samples: Vec<String>,
        options: serde_json::Map<String, Value>,
    ) -> Result<UadResult, String> {
        let req = Request::Uad {
            response,
            samples,
            options: Value::Object(options),
        };
        decode("uad", self.call(&req, true)?)
    }

    /// Sends one request and returns the `result` of an ok reply, or the daemon's error.
    /// Reuses the connection; on a broken connection reconnects (starting the daemon if
    /// nothing answers) and sends the request again, up to `MAX_ATTEMPTS` times. `llm`: the
    /// request may call an LLM (longer default reply timeout, see [`reply_timeout`]).
    pub fn call(&self, req: &Request, llm: bool) -> Result<Value, String> {
        let mut line =
            serde_json::to_string(req).map_err(|e| format!("cannot encode request: {e}"))?;
        if line.len() > MAX_LINE_BYTES {
            return Err(format!(
                "request is {} bytes, more than the daemon accepts ({} bytes = 64 MiB); \
                 send shorter texts or fewer samples per call",
                line.len(),
                MAX_LINE_BYTES
            ));
        }
        line.push('\n');
        let path = default_socket_path();
        let timeout = reply_timeout(llm);

        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|c| c.path != path) {
            *slot = None; // UQ_SOCKET changed
        }
        let mut disconnects = 0;
        loop {
            let conn = match slot.as_mut() {
                Some(conn) => conn,
                None => slot.insert(connect_or_start(&path)?),
            };
            match conn.round_trip(&line, timeout) {
                Ok(reply) => return reply_result(reply),
                // The daemon restarted or died (possibly still closing its listener): reconnect,
                // starting it again if needed.
                Err(Failure::Disconnected(e)) => {
                    *slot = None;
                    disconnects += 1;
                    if disconnects == MAX_ATTEMPTS {
                        return Err(e);
                    }
                    if disconnects > 1 {
                        sleep(POLL_INTERVAL);
                    }
                }
                Err(Failure::Other(e)) => {
                    *slot = None;
                    return Err(e);
                }
            }
        }
    }
}

/// The typed result of an ok reply to `op`.
fn decode<T: serde::de::DeserializeOwned>(op: &str, result: Value) -> Result<T, String> {
    serde_json::from_value(result).map_err(|e| format!("unexpected reply from uqd to `{op}` ({e})"))
}

fn reply_result(reply: Reply) -> Result<Value, String> {
    if reply.ok {
        Ok(reply.result.unwrap_or(Value::Null))
    } else {
        Err(reply
            .error
            .unwrap_or_else(|| "uqd returned an error without a message".into()))
    }
}

enum Failure {
    /// The connection is gone (EOF, reset, broken pipe): worth one reconnect.
    Disconnected(String),
    Other(String),
}

struct Conn {
    path: PathBuf,
    reader: BufReader<UnixStream>,
}

impl Conn {
    fn new(path: &Path, stream: UnixStream) -> Self {
        Conn {
            path: path.to_owned(),
            reader: BufReader::new(stream),
        }
    }

    /// Writes one request line and reads one reply line.
    fn round_trip(&mut self, line: &str, timeout: Duration) -> Result<Reply, Failure> {
        let ms = timeout.as_millis();
        let classify = |e: io::Error, doing: &str| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Failure::Other(format!(
                "uqd did not answer within {ms} ms; raise UQ_TIMEOUT_MS or see {}",
                log_path(&self.path).display()
            )),
            io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::UnexpectedEof => Failure::Disconnected(format!(
                "uqd closed the connection while {doing} ({e}); see {}",
                log_path(&self.path).display()
            )),
            _ => Failure::Other(format!("socket error while {doing}: {e}")),
        };
        let stream = self.reader.get_ref();
        stream
            .set_read_timeout(Some(timeout))
            .and_then(|_| stream.set_write_timeout(Some(timeout)))
            .map_err(|e| Failure::Other(format!("cannot set socket timeouts: {e}")))?;
        send_all(stream, line.as_bytes()).map_err(|e| classify(e, "sending the request"))?;

        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| classify(e, "waiting for the reply"))?;
        if n == 0 || buf.last() != Some(&b'\n') {
            if buf.len() > MAX_LINE_BYTES {
                return Err(Failure::Other(format!(
                    "reply from uqd is larger than {MAX_LINE_BYTES} bytes"
                )));
            }
            return Err(classify(
                io::ErrorKind::UnexpectedEof.into(),
                "waiting for the reply",
            ));
        }
        serde_json::from_slice(&buf).map_err(|e| {
            Failure::Other(format!("uqd sent a reply that is not protocol JSON ({e})"))
        })
    }
}

/// `write_all` with MSG_NOSIGNAL: a daemon that went away must give EPIPE, not kill the host
/// with SIGPIPE.
fn send_all(stream: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
    let fd = stream.as_raw_fd();
    while !bytes.is_empty() {
        // SAFETY: fd is an open socket owned by `stream`; the buffer is valid for its length.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Log file of an auto-started daemon: beside the socket.
pub fn log_path(socket: &Path) -> PathBuf {
    socket.parent().unwrap_or(Path::new(".")).join("uqd.log")
}

/// One ping on a fresh connection; never starts the daemon.
pub fn ping(socket: &Path, timeout: Duration) -> Result<PingInfo, String> {
    let stream = UnixStream::connect(socket)
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let mut conn = Conn::new(socket, stream);
    let line = "{\"op\":\"ping\"}\n";
    let reply = conn.round_trip(line, timeout).map_err(|f| match f {
        Failure::Disconnected(e) | Failure::Other(e) => e,
    })?;
    let result = reply_result(reply)?;
    serde_json::from_value(result).map_err(|e| format!("unexpected reply from uqd to `ping` ({e})"))
}

/// Connects, starting the daemon first when nothing listens on the socket.
fn connect_or_start(path: &Path) -> Result<Conn, String> {
    match UnixStream::connect(path) {
        Ok(s) => return Ok(Conn::new(path, s)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) => {}
        Err(e) => return Err(format!("cannot connect to uqd at {}: {e}", path.display())),
    }
    start_daemon(path).map_err(|reason| {
        // The advice goes before a multi-line log tail, if any.
        let (head, tail) = reason.split_once('\n').unwrap_or((&reason, ""));
        format!(
            "daemon not reachable at {} and could not be started: {head}. \
             Start it with `dist/uqd serve` (same UQ_SOCKET) or set UQ_DAEMON=/path/to/uqd{}{tail}",
            path.display(),
            if tail.is_empty() { "" } else { "\n" }
        )
    })?;
    UnixStream::connect(path)
        .map(|s| Conn::new(path, s))
        .map_err(|e| {
            format!(
                "uqd started but connecting to {} failed: {e}",
                path.display()
            )
        })
}

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

/// Starts `uqd serve --socket <path>` detached, unless another process does it first, and
/// waits until it answers a ping. A lock file (`<socket>.lock`) serialises concurrent starters.
fn start_daemon(path: &Path) -> Result<(), String> {
    let timeout = env_ms("UQ_START_TIMEOUT_MS", DEFAULT_START_TIMEOUT_MS);
    let deadline = Instant::now() + timeout;
    let dir = path.parent().unwrap_or(Path::new("."));
    if !dir.as_os_str().is_empty() && !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
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
    // Held until `lock` is dropped (closing the file releases the flock).
    loop {
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::WouldBlock {
            return Err(format!("cannot lock {}: {e}", lock_path.display()));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "another process held {} (starting uqd) for more than {} ms (UQ_START_TIMEOUT_MS)",
                lock_path.display(),
                timeout.as_millis()
            ));
        }
        sleep(POLL_INTERVAL);
    }
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
            return Err(format!(
                "{} exited before answering (its log is {})\n{}",
                exe.display(),
                log_file.display(),
                log_tail(&log_file, log_start)
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{} (pid {pid}) did not answer within {} ms (UQ_START_TIMEOUT_MS; last error: {last_err}); \
                 it may still be starting (its log is {})\n{}",
                exe.display(),
                timeout.as_millis(),
                log_file.display(),
                log_tail(&log_file, log_start)
            ));
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
