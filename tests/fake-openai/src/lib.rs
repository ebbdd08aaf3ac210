//! One fake OpenAI-compatible server for the tests of uq-llm, uqd and the end-to-end tests.
//!
//! It listens on 127.0.0.1 (a random port), speaks plain HTTP/1.1 on std threads (so it serves
//! blocking tests and tokio tests alike) with one request per connection (`connection: close`),
//! serves `POST {base_url}/chat/completions` (any other route gets 404) and records every
//! request. Each chat request gets, in this order:
//!
//! 1. the next reply of the script ([`FakeOpenAi::scripted`], [`FakeOpenAi::push`]);
//! 2. else the reply of the responder ([`FakeOpenAi::start`], [`FakeOpenAi::with_handler`]);
//! 3. else [`Reply::Ok`], a success whose texts name the request's number
//!    (`"reply 3 choice 1"`), so that distinct calls give distinct texts.
//!
//! A success has as many choices as the request's `n` (1 when absent), log-probabilities when
//! the request asks for `logprobs`, a usage of [`PROMPT_TOKENS`] prompt tokens and
//! [`COMPLETION_TOKENS`] completion tokens per choice, and the model `<requested model>-0001`
//! (a dated snapshot, as OpenAI names them), so a test can tell the reply's model from the
//! configured one.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Prompt tokens of every success.
pub const PROMPT_TOKENS: u64 = 10;
/// Completion tokens of every choice of a success.
pub const COMPLETION_TOKENS: u64 = 3;

/// One reply of the server.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A success whose texts name the request's number: `"reply {number} choice {i}"`.
    Ok,
    /// A success whose every choice has this text, `{i}` replaced by the choice's index.
    Text(String),
    /// An OpenAI-style error body (`{"error": {"message": …}}`) with this status.
    Error(u16, String),
    /// Any status, extra headers and body, sent as they are.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Waits, then sends the inner reply.
    Delay(Duration, Box<Reply>),
}

impl Reply {
    /// `status` with `body` as it is.
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Raw {
            status,
            headers: vec![],
            body: body.into(),
        }
    }

    /// `status` with one extra header and `body` as it is.
    pub fn with_header(status: u16, name: &str, value: &str, body: &str) -> Reply {
        Reply::Raw {
            status,
            headers: vec![(name.into(), value.into())],
            body: body.into(),
        }
    }

    /// This reply after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delay(delay, Box::new(self))
    }
}

/// `(200, text)` is [`Reply::Text`], any other status an [`Reply::Error`] with that message.
impl From<(u16, String)> for Reply {
    fn from((status, text): (u16, String)) -> Reply {
        if status == 200 {
            Reply::Text(text)
        } else {
            Reply::Error(status, text)
        }
    }
}

/// The OpenAI-style error body with `message`.
pub fn error_body(message: &str) -> String {
    json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string()
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The `Authorization` header, e.g. `Bearer sk-…`.
    pub authorization: Option<String>,
    /// The JSON body (`Null` when it is not JSON).
    pub body: Value,
    /// When the server had read the whole request.
    pub arrived: Instant,
}

impl Request {
    /// The requested model ("" when none).
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or_default()
    }
}

/// The user message of a request body.
pub fn user_message(body: &Value) -> String {
    message(body, "user")
}

/// The message of `role` (`"user"`, `"system"`) of a request body ("" when none).
pub fn message(body: &Value, role: &str) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["role"] == role))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// A reply as a function of the request body: `(status, text)` as in `From<(u16, String)>`.
/// A function of the request (not of the order of the calls) gives concurrent calls
/// deterministic answers.
pub type Responder = dyn Fn(&Value) -> (u16, String) + Send + Sync;

/// A reply as a function of the whole request (route, headers, body).
pub type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

#[derive(Default)]
struct State {
    script: Mutex<VecDeque<Reply>>,
    handler: Option<Box<Handler>>,
    seen: Mutex<Vec<Request>>,
    /// Requests read and not yet fully answered, and the most there ever were at once.
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// Counts a request in flight from its arrival until its reply is written (or dropped).
struct InFlight<'a>(&'a State);

impl<'a> InFlight<'a> {
    fn enter(state: &'a State) -> Self {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(state)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The running server; it lives until the test process ends.
pub struct FakeOpenAi {
    /// `http://127.0.0.1:<port>/v1`, the `base_url` of an LLM config.
    pub base_url: String,
    port: u16,
    state: Arc<State>,
}

impl FakeOpenAi {
    /// A server that answers with `script` in order, then with [`Reply::Ok`].
    pub fn scripted(script: Vec<Reply>) -> FakeOpenAi {
        let fake = FakeOpenAi::serve(State::default());
        fake.push(script);
        fake
    }

    /// A server whose replies are a function of the request body.
    pub fn start(responder: Arc<Responder>) -> FakeOpenAi {
        FakeOpenAi::with_handler(move |r: &Request| responder(&r.body).into())
    }

    /// A server whose replies are a function of the whole request.
    pub fn with_handler(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeOpenAi {
        FakeOpenAi::serve(State {
            handler: Some(Box::new(handler)),
            ..State::default()
        })
    }

    fn serve(state: State) -> FakeOpenAi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(state);
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let state = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = handle(stream, &state);
                });
            }
        });
        FakeOpenAi {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            port,
            state,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: Vec<Reply>) {
        self.state.script.lock().unwrap().extend(replies);
    }

    /// Number of requests received so far.
    /// The most requests the server was answering at once (read, reply not yet written).
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// When each request arrived, sorted.
    pub fn arrivals(&self) -> Vec<Instant> {
        let mut t: Vec<Instant> = self.received().iter().map(|r| r.arrived).collect();
        t.sort();
        t
    }

    pub fn requests(&self) -> usize {
        self.state.seen.lock().unwrap().len()
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Request> {
        self.state.seen.lock().unwrap().clone()
    }

    /// The bodies of the requests received so far.
    pub fn seen(&self) -> Vec<Value> {
        self.received().into_iter().map(|r| r.body).collect()
    }

    /// Number of requests for `model`.
    pub fn hits(&self, model: &str) -> usize {
        self.received()
            .iter()
            .filter(|r| r.model() == model)
            .count()
    }

    /// An LLM config object (as in `temp.uq_llms` and options) for this server: model
    /// `fake-model`, no API key, no retries, 10 s timeout.
    pub fn config(&self) -> Value {
        json!({"backend": "openai", "base_url": self.base_url, "model": "fake-model",
               "api_key_env": null, "max_retries": 0, "timeout_ms": 10000})
    }
}

fn handle(stream: TcpStream, state: &State) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let (mut content_length, mut authorization) = (0usize, None);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            } else if k.eq_ignore_ascii_case("authorization") {
                authorization = Some(v.trim().to_string());
            }
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body)?;
    let request = Request {
        method,
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        arrived: Instant::now(),
    };
    let in_flight = InFlight::enter(state);
    let number = {
        let mut seen = state.seen.lock().unwrap();
        seen.push(request.clone());
        seen.len()
    };
    let reply = if request.method != "POST" || !request.path.ends_with("/chat/completions") {
        Reply::Error(
            404,
            format!("no such route: {} {}", request.method, request.path),
        )
    } else if let Some(next) = state.script.lock().unwrap().pop_front() {
        next
    } else if let Some(handler) = &state.handler {
        handler(&request)
    } else {
        Reply::Ok
    };
    let (status, headers, text) = render(reply, &request.body, number);
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reason(status),
        text.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&text);
    // Out of flight before the client can read the reply: else a client that sends its next
    // request as soon as it has this one's could be counted twice.
    drop(in_flight);
    let mut stream = stream;
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

fn render(reply: Reply, body: &Value, number: usize) -> (u16, Vec<(String, String)>, String) {
    match reply {
        Reply::Delay(d, inner) => {
            std::thread::sleep(d);
            render(*inner, body, number)
        }
        Reply::Raw {
            status,
            headers,
            body,
        } => (status, headers, body),
        Reply::Error(status, message) => (status, vec![], error_body(&message)),
        Reply::Text(text) => (200, vec![], success(body, number, &text)),
        Reply::Ok => (
            200,
            vec![],
            success(body, number, &format!("reply {number} choice {{i}}")),
        ),
    }
}

/// A success body for the request `body` (its `n` choices, log-probabilities when asked);
/// the text of choice `i` is `text` with `{i}` replaced by `i`.
fn success(body: &Value, number: usize, text: &str) -> String {
    let n = body["n"].as_u64().unwrap_or(1);
    let want_logprobs = body["logprobs"].as_bool().unwrap_or(false);
    let choices: Vec<Value> = (0..n)
        .map(|i| {
            let content = text.replace("{i}", &i.to_string());
            let mut c = json!({
                "index": i,
                "message": {"role": "assistant", "content": content, "refusal": null},
                "finish_reason": "stop"
            });
            if want_logprobs {
                c["logprobs"] = json!({"content": [{"token": "reply", "logprob": -0.25},
                                                   {"token": " x", "logprob": -1.5}]});
            }
            c
        })
        .collect();
    let model = body["model"].as_str().unwrap_or("fake");
    json!({
        "id": format!("chatcmpl-{number}"),
        "object": "chat.completion",
        "model": format!("{model}-0001"),
        "choices": choices,
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS * n,
                  "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS * n}
    })
    .to_string()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
