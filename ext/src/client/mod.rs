//! Client of the `uqd` daemon: newline-delimited JSON over the per-user Unix socket (conn.rs),
//! with transparent reconnection, a protocol version check on each new connection
//! (handshake.rs) and auto-start of the daemon (autostart.rs); timeouts in settings.rs.
//!
//! Environment: `UQ_SOCKET` (socket path, via `uq_core::paths`), `UQ_DAEMON` (path of `uqd`;
//! default: `uqd` beside the loaded `.so`), `UQ_TIMEOUT_MS` (reply timeout; default 300000, or
//! 3600000 for requests that may call an LLM), `UQ_START_TIMEOUT_MS` (auto-start timeout,
//! default 60000).

pub mod autostart;
pub mod conn;
mod handshake;
pub mod settings;

use std::io;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::thread::sleep;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uq_core::paths::default_socket_path;
use uq_core::protocol::{
    ClaimsResult, CoverageResult, GenerateResult, NliProbs, Request, ScoreResult, UadResult,
    MAX_LINE_BYTES,
};

use autostart::{start_daemon, StartError};
use conn::{reply_result, Conn, Failure};
use settings::{reply_timeout, POLL_INTERVAL};

/// Notes of the last `score` reply of this process (why a score is NULL), for `uq_debug()`.
static LAST_NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps `notes` as the last score notes (thread-safe; a poisoned lock is recovered).
pub fn set_last_notes(notes: &[String]) {
    *LAST_NOTES.lock().unwrap_or_else(|e| e.into_inner()) = notes.to_vec();
}

/// Adds `notes` (the extension's own, e.g. what the retrieval of `sources` found nothing for)
/// after the last score notes.
pub fn add_last_notes(notes: &[String]) {
    if !notes.is_empty() {
        LAST_NOTES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(notes);
    }
}

/// Keeps the note of a blank response, answered without the daemon: `what` is what the
/// function returned for it ("NULL", "no rows", "the response as given").
pub fn note_blank_response(func: &str, what: &str) {
    set_last_notes(&[format!(
        "{func}: the response is blank (empty or only spaces), so there are no units to score: \
         {what}; leave such rows out with WHERE length(trim(response)) > 0, or pass option units"
    )]);
}

/// The notes of the last `score` reply (empty when it had none).
pub fn last_notes() -> Vec<String> {
    LAST_NOTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Tries of one request when the connection breaks.
const MAX_ATTEMPTS: u32 = 3;

/// One daemon connection shared by the functions of one SQLite connection.
pub struct Client {
    conn: Mutex<Option<Conn>>,
    /// The warnings this connection has shown on stderr (each once per connection).
    shown: Mutex<Vec<String>>,
}

impl Client {
    pub fn new() -> Self {
        Client {
            conn: Mutex::new(None),
            shown: Mutex::new(Vec::new()),
        }
    }

    /// Whether `warning` is new to this connection; it is recorded as shown.
    pub fn first_time(&self, warning: &str) -> bool {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if shown.iter().any(|w| w == warning) {
            return false;
        }
        shown.push(warning.to_string());
        true
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
            match conn.request(&line, timeout) {
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
            // The uqd this extension would start (beside uq0.so: dist/ of a checkout, the
            // package directory of a pip or npm install), named as it is on this machine.
            let uqd = autostart::find_daemon()
                .map(|(p, _)| p.display().to_string())
                .unwrap_or_else(|_| "uqd".into());
            format!(
                "daemon not reachable at {} and could not be started: {head}. \
                 Start it with `{uqd} serve` (same UQ_SOCKET) or set UQ_DAEMON=/path/to/uqd{}{tail}",
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

#[cfg(test)]
mod tests {
    use super::Client;

    #[test]
    fn a_warning_is_new_once_per_connection() {
        let (a, b) = (Client::new(), Client::new());
        assert!(a.first_time("w"));
        assert!(!a.first_time("w"), "shown already on this connection");
        assert!(a.first_time("v"), "another warning");
        assert!(b.first_time("w"), "another connection");
    }
}
