//! The NLI backend on inference servers (`engine::remote`) under faults, against fake KServe v2
//! servers on loopback: a server down at start that comes back through the health checks, a
//! failing one taken out while the other answers, round-robin once both are up, a time-out, a
//! malformed reply, and start-up errors that name the URL and the fix. The scores through a real
//! Triton server are compared with the local ones in tests/tests/triton.rs.

#[path = "common/dist_config.rs"]
mod dist_config;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use uqd::config::{resolve_with, CliOverrides, Config, Device, NliBackend, Precision};
use uqd::engine::Engine;

/// The logits every fake server returns for each row, in the shared models' label order
/// (contradiction, entailment, neutral): entailment wins.
const LOGITS: [f64; 3] = [0.0, 2.0, 1.0];

/// How a fake server answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Ok,
    /// 503 to everything (infer and health).
    Down,
    /// Answers infer after this long.
    Slow(Duration),
    /// A 200 reply that is not an inference response.
    Garbage,
}

struct FakeKserve {
    url: String,
    mode: Arc<std::sync::Mutex<Mode>>,
    infers: Arc<AtomicUsize>,
}

impl FakeKserve {
    fn start(mode: Mode, inputs: &[&str]) -> FakeKserve {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let mode = Arc::new(std::sync::Mutex::new(mode));
        let infers = Arc::new(AtomicUsize::new(0));
        let inputs: Vec<Value> = inputs
            .iter()
            .map(|n| json!({"name": n, "datatype": "INT64", "shape": [-1, -1]}))
            .collect();
        let meta = json!({"name": "nli", "inputs": inputs,
                          "outputs": [{"name": "logits", "datatype": "FP32", "shape": [-1, 3]}]})
        .to_string();
        let (m, n) = (mode.clone(), infers.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (m, n, meta) = (m.clone(), n.clone(), meta.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                        let mut len = 0;
                        loop {
                            let mut h = String::new();
                            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                                return;
                            }
                            if h.trim().is_empty() {
                                break;
                            }
                            if let Some((k, v)) = h.split_once(':') {
                                if k.eq_ignore_ascii_case("content-length") {
                                    len = v.trim().parse().unwrap_or(0);
                                }
                            }
                        }
                        let mut body = vec![0u8; len];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let mode = *m.lock().unwrap();
                        let (status, text) = match (mode, path.as_str()) {
                            (Mode::Down, _) => (503, r#"{"error":"server is down"}"#.to_string()),
                            (_, "/v2/models/nli") => (200, meta.clone()),
                            (_, "/v2/models/nli/ready") => (200, String::new()),
                            (_, "/v2/models/nli/infer") => {
                                n.fetch_add(1, Ordering::SeqCst);
                                let req: Value = serde_json::from_slice(&body).unwrap();
                                let rows = req["inputs"][0]["shape"][0].as_u64().unwrap() as usize;
                                let data: Vec<f64> = (0..rows).flat_map(|_| LOGITS).collect();
                                if let Mode::Slow(d) = mode {
                                    std::thread::sleep(d);
                                }
                                if mode == Mode::Garbage {
                                    (200, r#"{"outputs": [{"name": "logits", "shape": [1], "data": [1]}]}"#.into())
                                } else {
                                    (200, json!({"model_name": "nli", "outputs": [
                                        {"name": "logits", "datatype": "FP32", "shape": [rows, 3], "data": data}]})
                                    .to_string())
                                }
                            }
                            _ => (404, r#"{"error":"no such model"}"#.to_string()),
                        };
                        let out = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
                            text.len()
                        );
                        let mut s = reader.get_ref();
                        if s.write_all(out.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        FakeKserve { url, mode, infers }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn infers(&self) -> usize {
        self.infers.load(Ordering::SeqCst)
    }
}

const BERT_INPUTS: &[&str] = &["input_ids", "attention_mask", "token_type_ids"];

fn config(urls: &[&str], timeout_ms: u64, retries: usize) -> Config {
    Config {
        embed_model: None,
        max_batch: Some(4),
        nli_backend: Some(NliBackend {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            model: "nli".into(),
            timeout_ms,
            retries,
            health_ms: 100,
        }),
        ..dist_config::test_config()
    }
}

/// `n` distinct pairs (the engine caches pairs, so every call needs new ones).
fn pairs(tag: &str, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            (
                format!("Sample {tag} {i} says the sky is blue."),
                format!("The sky {tag} is blue {i}."),
            )
        })
        .collect()
}

fn expected_entailment() -> f64 {
    let e: Vec<f64> = LOGITS.iter().map(|x| x.exp()).collect();
    e[1] / e.iter().sum::<f64>()
}

fn wait_for(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_down_at_start_is_skipped_then_used_once_its_health_check_passes() {
    let a = FakeKserve::start(Mode::Down, BERT_INPUTS);
    let b = FakeKserve::start(Mode::Ok, BERT_INPUTS);
    let engine = Engine::load(&config(&[&a.url, &b.url], 5000, 2)).unwrap();
    let info = engine.info();
    assert_eq!(
        (info.device.as_str(), info.precision.as_str()),
        ("remote", "remote")
    );
    assert!(
        info.nli_file.contains(&format!("{}/v2/models/nli", a.url)),
        "{}",
        info.nli_file
    );
    let eps = info.nli_endpoints.clone().expect("endpoints listed");
    assert_eq!((eps[0].healthy, eps[1].healthy), (false, true), "{eps:?}");
    assert!(
        eps[0].last_error.as_deref().unwrap_or("").contains("503"),
        "{eps:?}"
    );

    // Every batch goes to b: a is down.
    let r = engine.nli(&pairs("first", 12)).unwrap();
    assert!(
        r.iter()
            .all(|p| (p.entailment - expected_entailment()).abs() < 1e-6),
        "{r:?}"
    );
    assert_eq!(a.infers(), 0);
    assert!(
        b.infers() >= 3,
        "12 windows in batches of at most 4: {}",
        b.infers()
    );

    // a comes back: the health check takes it in, and batches go to both in turn.
    a.set(Mode::Ok);
    wait_for("a healthy", || {
        engine.info().nli_endpoints.unwrap()[0].healthy
    });
    let before_b = b.infers();
    let r = engine.nli(&pairs("second", 40)).unwrap();
    assert_eq!(r.len(), 40);
    assert!(
        a.infers() >= 3 && b.infers() - before_b >= 3,
        "a {} b {}",
        a.infers(),
        b.infers() - before_b
    );

    // a fails: its batches are retried on b, nothing is lost, and a is taken out.
    a.set(Mode::Down);
    let r = engine.nli(&pairs("third", 20)).unwrap();
    assert!(r
        .iter()
        .all(|p| (p.entailment - expected_entailment()).abs() < 1e-6));
    wait_for("a taken out", || {
        !engine.info().nli_endpoints.unwrap()[0].healthy
    });
    let served_a = engine.info().nli_endpoints.unwrap()[0].served;
    engine.nli(&pairs("fourth", 8)).unwrap();
    assert_eq!(
        engine.info().nli_endpoints.unwrap()[0].served,
        served_a,
        "a is skipped while down"
    );
}

#[test]
fn failures_are_errors_that_name_the_server_and_the_fix() {
    // Nothing listens: the daemon does not start, and says where it looked and what to do.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let e = Engine::load(&config(&[&dead], 2000, 0))
        .err()
        .expect("an error");
    assert!(
        e.contains("no NLI inference server answered")
            && e.contains(&dead)
            && e.contains("UQ_NLI_BACKEND"),
        "{e}"
    );

    // The server has no such model.
    let s = FakeKserve::start(Mode::Ok, BERT_INPUTS);
    let mut c = config(&[&s.url], 2000, 0);
    c.nli_backend.as_mut().unwrap().model = "other".into();
    let e = Engine::load(&c).err().expect("an error");
    assert!(
        e.contains("has no model \"other\"") && e.contains("--nli-backend-model"),
        "{e}"
    );

    // A model with an input uqd cannot fill.
    let odd = FakeKserve::start(Mode::Ok, &["input_ids", "pixel_values"]);
    let e = Engine::load(&config(&[&odd.url], 2000, 0))
        .err()
        .expect("an error");
    assert!(e.contains("unsupported input \"pixel_values\""), "{e}");

    // Too slow: a time-out, retried, then an error naming the limit and the retries.
    let slow = FakeKserve::start(Mode::Ok, BERT_INPUTS);
    let engine = Engine::load(&config(&[&slow.url], 300, 1)).unwrap();
    slow.set(Mode::Slow(Duration::from_millis(1500)));
    let e = engine.nli(&pairs("slow", 1)).unwrap_err();
    assert!(
        e.contains("no answer within 300 ms")
            && e.contains("2 attempt(s)")
            && e.contains("--nli-backend-retries"),
        "{e}"
    );

    // A malformed reply is an error, not a wrong score.
    slow.set(Mode::Garbage);
    let e = engine.nli(&pairs("garbage", 1)).unwrap_err();
    assert!(
        e.contains("not a KServe v2 inference response") && e.contains("shape"),
        "{e}"
    );
    // And the server is used again once it answers properly.
    slow.set(Mode::Ok);
    wait_for("healthy", || {
        engine.info().nli_endpoints.unwrap()[0].healthy
    });
    assert_eq!(engine.nli(&pairs("fine", 2)).unwrap().len(), 2);
}
