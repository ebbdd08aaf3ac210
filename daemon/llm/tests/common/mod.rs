//! A fake OpenAI-compatible server on 127.0.0.1 (random port) for the client and cache tests.
//! Plain HTTP/1.1 on a tokio TcpListener, one request per connection. Each request takes the next
//! scripted reply; when the script is used up, every request gets a success whose text names the
//! request's number, so distinct calls give distinct texts.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A normal success (n choices, as the request asks).
    Ok,
    /// Any status, extra headers and body.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Wait, then send the inner reply.
    Delay(Duration, Box<Reply>),
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Raw {
            status,
            headers: vec![],
            body: body.to_string(),
        }
    }
    pub fn with_header(status: u16, name: &str, value: &str, body: &str) -> Reply {
        Reply::Raw {
            status,
            headers: vec![(name.into(), value.into())],
            body: body.into(),
        }
    }
}

/// What the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub body: Value,
    pub authorization: Option<String>,
}

pub struct FakeServer {
    pub base_url: String,
    script: Arc<Mutex<Vec<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeServer {
    /// Starts a server that answers with `script` in order, then with successes.
    pub async fn start(script: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        let script = Arc::new(Mutex::new(script.into_iter().rev().collect::<Vec<_>>()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s2, seen2) = (Arc::clone(&script), Arc::clone(&seen));
        tokio::spawn(async move {
            // Bounded: at most 1000 connections per server.
            for _ in 0..1000 {
                let Ok((sock, _)) = listener.accept().await else {
                    break;
                };
                let (s3, seen3) = (Arc::clone(&s2), Arc::clone(&seen2));
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(20), handle(sock, s3, seen3))
                        .await;
                });
            }
        });
        FakeServer {
            base_url: format!("http://{addr}/v1"),
            script,
            seen,
        }
    }

    /// Number of requests received so far.
    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: Vec<Reply>) {
        let mut s = self.script.lock().unwrap();
        let mut all: Vec<Reply> = s.drain(..).rev().collect();
        all.extend(replies);
        *s = all.into_iter().rev().collect();
    }
}

async fn handle(mut sock: TcpStream, script: Arc<Mutex<Vec<Reply>>>, seen: Arc<Mutex<Vec<Seen>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let Ok(n) = sock.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut content_length = 0usize;
    let mut authorization = None;
    for line in head.lines() {
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
            if k.eq_ignore_ascii_case("authorization") {
                authorization = Some(v.trim().to_string());
            }
        }
    }
    while buf.len() < header_end + content_length {
        let Ok(n) = sock.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[header_end..header_end + content_length])
        .unwrap_or(Value::Null);
    let number = {
        let mut s = seen.lock().unwrap();
        s.push(Seen {
            body: body.clone(),
            authorization,
        });
        s.len()
    };
    let reply = script.lock().unwrap().pop().unwrap_or(Reply::Ok);
    let (status, headers, text) = render(reply, &body, number).await;
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
    let _ = sock.write_all(out.as_bytes()).await;
    let _ = sock.shutdown().await;
}

async fn render(reply: Reply, body: &Value, number: usize) -> (u16, Vec<(String, String)>, String) {
    let mut reply = reply;
    loop {
        match reply {
            Reply::Delay(d, inner) => {
                tokio::time::sleep(d).await;
                reply = *inner;
            }
            Reply::Raw {
                status,
                headers,
                body,
            } => return (status, headers, body),
            Reply::Ok => return (200, vec![], success(body, number)),
        }
    }
}

/// A success body with as many choices as the request's `n`; texts name the request number.
pub fn success(body: &Value, number: usize) -> String {
    let n = body.get("n").and_then(Value::as_u64).unwrap_or(1);
    let want_lp = body
        .get("logprobs")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let choices: Vec<Value> = (0..n)
        .map(|i| {
            let mut c = json!({
                "index": i,
                "message": {"role": "assistant", "content": format!("reply {number} choice {i}"), "refusal": null},
                "finish_reason": "stop"
            });
            if want_lp {
                c["logprobs"] = json!({"content": [{"token": "reply", "logprob": -0.25}, {"token": " x", "logprob": -1.5}]});
            }
            c
        })
        .collect();
    json!({
        "id": format!("chatcmpl-{number}"),
        "object": "chat.completion",
        "model": body.get("model").cloned().unwrap_or(json!("fake")),
        "choices": choices,
        "usage": {"prompt_tokens": 11, "completion_tokens": 4 * n, "total_tokens": 11 + 4 * n}
    })
    .to_string()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Settings pointing at `server`, no API key, quick timeouts.
pub fn settings(server: &FakeServer) -> uq_llm::LlmSettings {
    uq_llm::LlmSettings {
        base_url: server.base_url.clone(),
        model: "fake-model".into(),
        api_key_env: None,
        temperature: 1.0,
        max_tokens: 32,
        timeout_ms: 5_000,
        max_retries: 3,
        concurrency: 4,
        ..uq_llm::LlmSettings::default()
    }
}
