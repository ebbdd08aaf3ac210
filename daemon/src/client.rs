//! The client side of the socket protocol (`uq_core::protocol`): one request to a running
//! daemon and its reply, as `uqd status|stop` and the benchmarks send them.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use uq_core::protocol::{Reply, Request};

/// Sends one request to a running daemon and returns its result.
pub fn call(socket: &Path, request: &Request, timeout: Duration) -> Result<Value, String> {
    uq_core::paths::check_socket_path(socket)?;
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| format!("no uqd answers at {}: {e}", socket.display()))?;
    stream.set_read_timeout(Some(timeout)).ok();
    stream.set_write_timeout(Some(timeout)).ok();
    let mut line = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    line.push(b'\n');
    stream
        .write_all(&line)
        .map_err(|e| format!("cannot send to uqd: {e}"))?;
    let mut reply = String::new();
    BufReader::new(stream)
        .read_line(&mut reply)
        .map_err(|e| format!("no reply from uqd: {e}"))?;
    let reply: Reply =
        serde_json::from_str(&reply).map_err(|e| format!("malformed reply from uqd: {e}"))?;
    if reply.ok {
        Ok(reply.result.unwrap_or(Value::Null))
    } else {
        Err(reply.error.unwrap_or_else(|| "unknown error".into()))
    }
}

/// The running daemon's state (`ping`).
pub fn ping(socket: &Path, timeout: Duration) -> Result<Value, String> {
    call(socket, &Request::Ping, timeout)
}
