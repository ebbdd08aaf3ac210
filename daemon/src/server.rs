//! Unix-socket server: newline-delimited JSON, one thread per connection
//! (protocol in `uq_core::protocol`, docs/design.md). Every request gets a reply;
//! nothing a client sends can panic the daemon or stop it from serving others.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use uq_core::options::LlmRole;
use uq_core::protocol::{
    ClaimsResult, CoverageResult, PingInfo, Reply, Request, MAX_LINE_BYTES, PROTOCOL_VERSION,
};

use crate::engine::Engine;
use crate::jobs::Jobs;
use crate::role_llms::{LlmService, RoleLlm};
use uq_core::limits::check_text;

use crate::aggregate::uad;
use crate::decompose::{claims, coverage, merge};
use crate::{generate, grade, pipeline};

/// Shared state of a running daemon.
pub struct Server {
    engine: Arc<Engine>,
    llm: Arc<LlmService>,
    jobs: Arc<Jobs>,
    socket: PathBuf,
    stopping: AtomicBool,
}

impl Server {
    /// The job registry (databases with unfinished jobs) is `jobs.json` beside the completion
    /// cache.
    pub fn new(engine: Arc<Engine>, llm: Arc<LlmService>, socket: PathBuf) -> Self {
        let registry = llm.cache_path().with_file_name("jobs.json");
        let jobs = Jobs::new(Arc::clone(&engine), Arc::clone(&llm), registry);
        Server {
            engine,
            llm,
            jobs,
            socket,
            stopping: AtomicBool::new(false),
        }
    }

    /// Binds the socket (directory 0700, socket 0600) and serves until a `shutdown` request.
    pub fn run(self: Arc<Self>) -> Result<(), String> {
        let listener = bind(&self.socket)?;
        eprintln!("uqd: listening on {}", self.socket.display());
        self.jobs.resume_registered();
        for stream in listener.incoming() {
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            match stream {
                Ok(stream) => {
                    let me = Arc::clone(&self);
                    std::thread::spawn(move || me.serve_connection(stream));
                }
                Err(e) => eprintln!("uqd: accept failed: {e}"),
            }
        }
        let _ = std::fs::remove_file(&self.socket);
        Ok(())
    }

    fn serve_connection(&self, stream: UnixStream) {
        let mut writer = match stream.try_clone() {
            Ok(w) => w,
            Err(_) => return,
        };
        if let Err(e) = same_user(&stream) {
            let _ = write_reply(&mut writer, &Reply::err(e));
            return;
        }
        let mut reader = BufReader::new(stream);
        loop {
            let line = match read_line(&mut reader) {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(reply) => {
                    let _ = write_reply(&mut writer, &reply);
                    return;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let (reply, shutdown) = self.handle_line(&line);
            if write_reply(&mut writer, &reply).is_err() {
                return;
            }
            if shutdown {
                self.shutdown();
                return;
            }
        }
    }

    /// Parses and answers one request line; panics in a handler become error replies. The
    /// `bool` is true for a `shutdown` request (the caller then stops the daemon).
    pub fn handle_line(&self, line: &str) -> (Reply, bool) {
        let request: Request = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                return (
                    Reply::err(format!(
                        "malformed request ({e}); expected one JSON object per line with an \"op\" of ping, nli, score, generate, coverage, claims, claim_union, uad, grade, objectivity, job_start, job_status, job_cancel or shutdown"
                    )),
                    false,
                )
            }
        };
        let shutdown = matches!(request, Request::Shutdown);
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(request)));
        let reply = match outcome {
            Ok(Ok(value)) => Reply::ok(value),
            Ok(Err(message)) => Reply::err(message),
            Err(panic) => Reply::err(format!(
                "internal error in uqd: {}; please report it",
                panic_message(&panic)
            )),
        };
        (reply, shutdown)
    }

    fn handle(&self, request: Request) -> Result<Value, String> {
        match request {
            Request::Ping => to_value(self.ping_info()),
            Request::Nli { pairs } => self.nli(&pairs),
            Request::Score {
                response,
                samples,
                options,
            } => self.on_answer(pipeline::score, &response, &samples, &options),
            Request::Generate { prompt, n, options } => {
                to_value(generate::generate(&self.llm, &prompt, n, &options)?)
            }
            Request::Claims { text, options } => self.claims(&text, &options),
            Request::Coverage { response, options } => self.coverage(&response, &options),
            Request::ClaimUnion {
                response,
                samples,
                options,
            } => to_value(ClaimsResult {
                claims: merge::claim_union_op(&self.llm, &response, &samples, &options)?,
            }),
            Request::Uad {
                response,
                samples,
                options,
            } => self.on_answer(uad::uad, &response, &samples, &options),
            Request::Grade {
                unit,
                reference,
                options,
            } => self.grade(&unit, &reference, &options),
            Request::Objectivity { claim, options } => {
                check_text(&claim, "claim")?;
                let judge = self.role_llm(&options, LlmRole::Judge)?;
                to_value(self.llm.block_on(grade::objectivity(&judge, &claim))?)
            }
            Request::JobStart { db, job_id } => to_value(self.jobs.start(&db, job_id)?),
            Request::JobStatus { db, job_id } => to_value(self.jobs.status(&db, job_id)?),
            Request::JobCancel { db, job_id } => to_value(self.jobs.cancel(&db, job_id)?),
            Request::Shutdown => Ok(Value::Null),
        }
    }

    fn nli(&self, pairs: &[(String, String)]) -> Result<Value, String> {
        for (i, (premise, hypothesis)) in pairs.iter().enumerate() {
            check_text(premise, &format!("pairs[{i}] premise"))?;
            check_text(hypothesis, &format!("pairs[{i}] hypothesis"))?;
        }
        to_value(self.engine.nli(pairs)?)
    }

    /// The reply to a request on an answer and its samples (`score`, `uad`): `op` run with the
    /// engine and the LLM layer.
    fn on_answer<T: serde::Serialize>(
        &self,
        op: AnswerOp<T>,
        response: &str,
        samples: &[String],
        options: &Value,
    ) -> Result<Value, String> {
        to_value(op(&self.engine, &self.llm, response, samples, options)?)
    }

    fn claims(&self, text: &str, options: &Value) -> Result<Value, String> {
        check_text(text, "text")?;
        let decomposer = self.role_llm(options, LlmRole::Decomposition)?;
        let claims = self.llm.block_on(claims::decompose(&decomposer, text))?;
        to_value(ClaimsResult { claims })
    }

    /// The response's claims (the options' `units`, else the decomposition LLM's) and which of
    /// its sentences they do not entail.
    fn coverage(&self, response: &str, options: &Value) -> Result<Value, String> {
        check_text(response, "response")?;
        let opts = uq_core::options::parse_options(options)?;
        let claims = match &opts.decompose.units {
            Some(units) => {
                uq_core::limits::check_units(units, "options.units")?;
                units.clone()
            }
            None if response.trim().is_empty() => Vec::new(),
            None => {
                let decomposer = self.role_llm(options, LlmRole::Decomposition)?;
                self.llm
                    .block_on(claims::decompose(&decomposer, response))?
            }
        };
        let sentences = coverage::coverage(
            &crate::judge::Nli::new(&self.engine, &self.llm, &opts)?,
            response,
            &claims,
            opts.decompose.coverage_threshold,
        )?;
        to_value(CoverageResult { claims, sentences })
    }

    fn grade(&self, unit: &str, reference: &str, options: &Value) -> Result<Value, String> {
        check_text(unit, "unit")?;
        check_text(reference, "reference")?;
        let judge = self.role_llm(options, LlmRole::Judge)?;
        to_value(
            self.llm
                .block_on(grade::factscore(&judge, unit, reference))?,
        )
    }

    /// The LLM of `role` as a request's `options` set it.
    fn role_llm(&self, options: &Value, role: LlmRole) -> Result<RoleLlm, String> {
        let opts = uq_core::options::parse_options(options)?;
        self.llm.for_role(&opts, role)
    }

    fn ping_info(&self) -> PingInfo {
        let info = self.engine.info();
        PingInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol: Some(PROTOCOL_VERSION),
            pid: std::process::id(),
            socket: self.socket.display().to_string(),
            nli_model: info.nli_model,
            embed_model: info.embed_model,
            device: info.device,
            device_note: info.device_note,
            precision: Some(info.precision),
            precision_note: info.precision_note,
            nli_batch: Some(info.nli_batch),
            nli_file: Some(info.nli_file),
            threads: info.threads,
            nli_sessions: Some(info.nli_sessions),
            labels: info.labels,
            nli_cache_entries: info.nli_cache_entries,
            embed_cache_entries: info.embed_cache_entries,
            llm_cache: Some(self.llm.cache_path().display().to_string()),
            local_llm: Some(self.llm.local_llm().display().to_string()),
            local_llm_loaded: self.llm.local_loaded(),
            nli_endpoints: info.nli_endpoints,
        }
    }

    fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = std::fs::remove_file(&self.socket);
        eprintln!("uqd: shutting down");
        std::process::exit(0);
    }
}

/// An operation on an answer, its samples and the options (`pipeline::score`, `uad::uad`).
type AnswerOp<T> = fn(&Engine, &LlmService, &str, &[String], &Value) -> Result<T, String>;

fn to_value<T: serde::Serialize>(v: T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| format!("internal error serialising a reply: {e}"))
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Reads one line of at most `MAX_LINE_BYTES`; `Ok(None)` at end of stream.
fn read_line(reader: &mut BufReader<UnixStream>) -> Result<Option<String>, Reply> {
    let mut buf = Vec::new();
    let n = reader
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', &mut buf)
        .map_err(|e| Reply::err(format!("could not read the request: {e}")))?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE_BYTES {
        return Err(Reply::err(format!(
            "request larger than {MAX_LINE_BYTES} bytes; split the work into smaller calls"
        )));
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| Reply::err("request is not valid UTF-8; send text as UTF-8"))
}

/// Only the daemon's own user is served (its socket is 0600 in a 0700 directory; this also
/// refuses root and anyone handed the descriptor).
fn same_user(stream: &UnixStream) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED writes one ucred of `len` bytes into `cred`, a valid local.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if rc != 0 {
        return Err(format!(
            "cannot read the peer's credentials: {}",
            std::io::Error::last_os_error()
        ));
    }
    if cred.uid != me {
        return Err(format!(
            "this uqd serves uid {me} only, not uid {}: each user runs their own daemon (UQ_SOCKET)",
            cred.uid
        ));
    }
    Ok(())
}

fn write_reply(writer: &mut UnixStream, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(reply)
        .unwrap_or_else(|_| br#"{"ok":false,"error":"unserialisable reply"}"#.to_vec());
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()
}

/// Creates the socket's directory (0700) and binds the socket (0600). A socket file that
/// nobody answers on is stale and removed; a live one means another daemon is running.
pub fn bind(socket: &Path) -> Result<UnixListener, String> {
    uq_core::paths::check_socket_path(socket)?;
    if let Some(dir) = socket.parent() {
        if !dir.exists() {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!("cannot create the socket directory {}: {e}", dir.display())
            })?;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
    if socket.exists() {
        if crate::client::ping(socket, Duration::from_secs(2)).is_ok() {
            return Err(format!(
                "another uqd is already serving {}; stop it with `uqd stop` or choose another socket with --socket/UQ_SOCKET",
                socket.display()
            ));
        }
        std::fs::remove_file(socket)
            .map_err(|e| format!("cannot remove the stale socket {}: {e}", socket.display()))?;
    }
    let listener = UnixListener::bind(socket)
        .map_err(|e| format!("cannot bind the socket {}: {e}", socket.display()))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot chmod 0600 the socket {}: {e}", socket.display()))?;
    Ok(listener)
}
