//! One connection to `uqd`: a request line out, a reply line back, with timeouts, and the
//! failures that are worth a reconnect told apart from the others.

use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use uq_core::protocol::{PingInfo, Reply, MAX_LINE_BYTES};

use super::handshake;

/// The `ping` request.
const PING_LINE: &str = "{\"op\":\"ping\"}\n";

/// The `result` of an ok reply, or the daemon's error.
pub fn reply_result(reply: Reply) -> Result<Value, String> {
    if reply.ok {
        Ok(reply.result.unwrap_or(Value::Null))
    } else {
        Err(reply
            .error
            .unwrap_or_else(|| "uqd returned an error without a message".into()))
    }
}

pub enum Failure {
    /// The connection is gone (EOF, reset, broken pipe): worth one reconnect.
    Disconnected(String),
    Other(String),
}

/// One connection to the daemon.
pub struct Conn {
    pub path: PathBuf,
    reader: BufReader<UnixStream>,
    /// Whether the daemon's protocol version was checked (on the first request).
    checked: bool,
}

impl Conn {
    pub fn new(path: &Path, stream: UnixStream) -> Self {
        Conn {
            path: path.to_owned(),
            reader: BufReader::new(stream),
            checked: false,
        }
    }

    /// [`Conn::round_trip`], after checking on the connection's first request that the daemon
    /// speaks this extension's protocol version (see [`handshake::check`]).
    pub fn request(&mut self, line: &str, timeout: Duration) -> Result<Reply, Failure> {
        if !self.checked {
            let reply = self.round_trip(PING_LINE, timeout)?;
            let info = reply_result(reply).map_err(Failure::Other)?;
            handshake::check(&self.path, &info).map_err(Failure::Other)?;
            self.checked = true;
        }
        self.round_trip(line, timeout)
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
    let reply = conn.round_trip(PING_LINE, timeout).map_err(|f| match f {
        Failure::Disconnected(e) | Failure::Other(e) => e,
    })?;
    let result = reply_result(reply)?;
    serde_json::from_value(result).map_err(|e| format!("unexpected reply from uqd to `ping` ({e})"))
}
