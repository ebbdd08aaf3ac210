//! Client of the `uqd` daemon: newline-delimited JSON over the per-user Unix socket, with
//! transparent reconnection and auto-start of the daemon (autostart.rs).
//!
//! Environment: `UQ_SOCKET` (socket path, via `uq_core::paths`), `UQ_DAEMON` (path of `uqd`;
//! default: `uqd` beside the loaded `.so`), `UQ_TIMEOUT_MS` (reply timeout; default 300000, or
//! 3600000 for requests that may call an LLM), `UQ_START_TIMEOUT_MS` (auto-start timeout,
//! default 60000).

use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::thread::sleep;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uq_core::paths::default_socket_path;
use uq_core::protocol::{
    ClaimsResult, CoverageResult, GenerateResult, NliProbs, PingInfo, Reply, Request, ScoreResult,
    UadResult, MAX_LINE_BYTES,
};

use crate::autostart::{start_daemon, StartError};

/// Default reply timeout for requests (`UQ_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;
/// Default reply timeout of requests that may call an LLM (`generate`, `claims`, `uad`, and
/// `score` with claims or an LLM judge) when `UQ_TIMEOUT_MS` is unset: generation on a CPU is
/// slow (the embedded SmolLM2 writes ~20 tokens/s on 2 cores).
pub const DEFAULT_LLM_TIMEOUT_MS: u64 = 3_600_000;
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
/// Pause between tries (reconnecting, polling a starting daemon).
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

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
        let pairs = vec![(premise.to_owned(), hypothesis.to_owned())];
        let mut probs: Vec<NliProbs> = self.request("nli", &Request::Nli { pairs }, false)?;
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
        options: Map<String, Value>,
        llm: bool,
    ) -> Result<ScoreResult, String> {
        let options = Value::Object(options);
        let req = Request::Score {
            response,
            samples,
            options,
        };
        let result: ScoreResult = self.request("score", &req, llm)?;
        set_last_notes(&result.notes);
        Ok(result)
    }

    /// `generate` op: the original answer to `prompt` and `n` sampled answers.
    pub fn generate(
        &self,
        prompt: String,
        n: usize,
        options: Map<String, Value>,
    ) -> Result<GenerateResult, String> {
        let options = Value::Object(options);
        self.request("generate", &Request::Generate { prompt, n, options }, true)
    }

    /// `claims` op: the claims of `text` (decomposition LLM).
    pub fn claims(
        &self,
        text: String,
        options: Map<String, Value>,
    ) -> Result<ClaimsResult, String> {
        let options = Value::Object(options);
        self.request("claims", &Request::Claims { text, options }, true)
    }

    /// `coverage` op: which sentences of `response` its claims entail.
    pub fn coverage(
        &self,
        response: String,
        options: Map<String, Value>,
    ) -> Result<CoverageResult, String> {
        let options = Value::Object(options);
        self.request("coverage", &Request::Coverage { response, options }, true)
    }

    /// `claim_union` op: the union of unique claims of `response` and `samples` (merge LLM).
    pub fn claim_union(
        &self,
        response: String,
        samples: Vec<String>,
        options: Map<String, Value>,
    ) -> Result<ClaimsResult, String> {
        let options = Value::Object(options);
        let req = Request::ClaimUnion {
            response,
            samples,
            options,
        };
        self.request("claim_union", &req, true)
    }

    /// `uad` op: uncertainty-aware decoding of `response` against `samples`.
    pub fn uad(
        &self,
        response: String,
        samples: Vec<String>,
        options: Map<String, Value>,
    ) -> Result<UadResult, String> {
        let options = Value::Object(options);
        self.request(
            "uad",
            &Request::Uad {
                response,
                samples,
                options,
            },
            true,
        )
    }

    /// [`Client::call`], the result decoded as the reply to `op`.
    fn request<T: DeserializeOwned>(
        &self,
        op: &str,
        req: &Request,
        llm: bool,
    ) -> Result<T, String> {
        let result = self.call(req, llm)?;
        serde_json::from_value(result)
            .map_err(|e| format!("unexpected reply from uqd to `{op}` ({e})"))
    }

    /// [`Client::call`] for SQL function `func` (which prefixes errors), the result decoded.
    pub fn call_for<T: DeserializeOwned>(
        &self,
        func: &str,
        req: &Request,
        llm: bool,
    ) -> Result<T, String> {
        let result = self.call(req, llm).map_err(|e| format!("{func}: {e}"))?;
        serde_json::from_value(result)
            .map_err(|e| format!("{func}: unexpected reply from uqd ({e})"))
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
    uq_core::paths::check_socket_path(path)?;
    match UnixStream::connect(path) {
        Ok(s) => return Ok(Conn::new(path, s)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) => {}
        Err(e) => return Err(format!("cannot connect to uqd at {}: {e}", path.display())),
    }
    start_daemon(path).map_err(|e| match e {
        // The daemon's own reason names its fix (a model, a config file, a library).
        StartError::Exited(reason) => format!(
            "daemon not reachable at {} and could not be started: {reason}",
            path.display()
        ),
        StartError::Other(reason) => {
            // The advice goes before a multi-line log tail, if any.
            let (head, tail) = reason.split_once('\n').unwrap_or((&reason, ""));
            format!(
                "daemon not reachable at {} and could not be started: {head}. \
                 Start it with `dist/uqd serve` (same UQ_SOCKET) or set UQ_DAEMON=/path/to/uqd{}{tail}",
                path.display(),
                if tail.is_empty() { "" } else { "\n" }
            )
        }
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
