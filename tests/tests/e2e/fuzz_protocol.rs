//! Hostile socket frames sent to a real `uqd` (started by the real extension in sqlite3): random
//! bytes, truncated and mutated requests, wrong field types, deep nesting, invalid UTF-8, a frame
//! with no newline left open, and a frame over the 64 MiB line limit. Each connection gets an
//! error reply or is closed, never a hang; after every case a separate, long-lived connection
//! still gets its ping answered and the daemon's pid is unchanged (it neither died nor was
//! restarted). Fixed budget and seed; the cases run are printed (`--nocapture`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};
use uq_integration::*;

#[path = "../../../core/tests/common/fuzz.rs"]
mod fuzz_runner;
use fuzz_runner::fuzz;

const TIMEOUT: Duration = Duration::from_secs(30);

/// What the daemon sent back on one connection.
#[derive(Debug)]
enum Answer {
    Reply(Value),
    Closed,
}

fn connect(sb: &Sandbox) -> UnixStream {
    let s = UnixStream::connect(&sb.socket).expect("the daemon accepts connections");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s
}

/// Sends `frame` on a fresh connection, closes the write half, and reads one line back.
fn send(sb: &Sandbox, frame: &[u8]) -> Result<Answer, String> {
    let mut s = connect(sb);
    // The daemon may close the connection before reading everything (an oversized line).
    let _ = s.write_all(frame);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut line = String::new();
    match BufReader::new(&s).read_line(&mut line) {
        Ok(0) => Ok(Answer::Closed),
        Ok(_) => serde_json::from_str(&line)
            .map(Answer::Reply)
            .map_err(|e| format!("the reply is not JSON ({e}): {line:?}")),
        Err(e)
            if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::TimedOut =>
        {
            Err(format!(
                "no answer within {TIMEOUT:?}: the connection hangs"
            ))
        }
        Err(_) => Ok(Answer::Closed), // reset by the daemon
    }
}

/// The daemon still answers a ping on the long-lived connection `other`.
fn still_serving(other: &mut BufReader<UnixStream>) -> Result<(), String> {
    other
        .get_mut()
        .write_all(b"{\"op\":\"ping\"}\n")
        .map_err(|e| format!("ping write: {e}"))?;
    let mut line = String::new();
    other
        .read_line(&mut line)
        .map_err(|e| format!("ping read: {e}"))?;
    let v: Value = serde_json::from_str(&line).map_err(|e| format!("ping reply {line:?}: {e}"))?;
    if v["ok"] != json!(true) {
        return Err(format!("ping failed: {v}"));
    }
    Ok(())
}

/// Requests the daemon answers quickly and locally (no LLM, no job, never `shutdown`).
fn valid_request() -> impl Strategy<Value = Value> + Clone {
    let text = prop_oneof![
        ".{0,30}",
        Just("The sky is blue. Grass is green.".to_string())
    ];
    let any_json = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        ".{0,10}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"scorers": ["entailment"]})),
        Just(json!({"scorers": "entailment", "num_samples": -1})),
    ];
    prop_oneof![
        Just(json!({"op": "ping"})),
        (text.clone(), text.clone()).prop_map(|(a, b)| json!({"op": "nli", "pairs": [[a, b]]})),
        (
            text.clone(),
            prop::collection::vec(text.clone(), 0..3),
            any_json.clone()
        )
            .prop_map(
                |(r, s, o)| json!({"op": "score", "response": r, "samples": s, "options": o})
            ),
        any_json
            .clone()
            .prop_map(|v| json!({"op": "nli", "pairs": v})),
        any_json
            .clone()
            .prop_map(|v| json!({"op": "score", "response": v, "samples": v})),
        any_json.clone().prop_map(|v| json!({"op": v})),
        ".{0,12}".prop_map(|op| json!({"op": op})),
        any_json
            .clone()
            .prop_map(|v| json!({"op": "generate", "prompt": "x", "n": v})),
    ]
}

#[derive(Debug, Clone)]
enum Frame {
    /// Random bytes, newline-terminated or not.
    Garbage(Vec<u8>, bool),
    /// A request cut after `n` bytes, newline-terminated or not.
    Truncated(String, usize, bool),
    /// A request with random bytes overwritten.
    Mutated(String, Vec<(usize, u8)>),
    /// A whole request (fields of wrong types, unknown ops).
    Whole(String),
    /// `depth` nested arrays or objects.
    Deep(usize, bool),
    /// Several requests on one line or several lines in one write.
    Batch(Vec<String>, bool),
}

impl Frame {
    fn bytes(&self) -> Vec<u8> {
        let nl = |mut b: Vec<u8>, yes: bool| {
            if yes {
                b.push(b'\n');
            }
            b
        };
        match self {
            Frame::Garbage(b, n) => nl(b.clone(), *n),
            Frame::Truncated(r, n, yes) => nl(r.as_bytes()[..(*n).min(r.len())].to_vec(), *yes),
            Frame::Mutated(r, edits) => {
                let mut b = r.as_bytes().to_vec();
                for &(at, byte) in edits {
                    let i = at % b.len();
                    b[i] = byte;
                }
                nl(b, true)
            }
            Frame::Whole(r) => nl(r.as_bytes().to_vec(), true),
            Frame::Deep(d, obj) => {
                let (open, close) = if *obj { ("{\"a\":", "}") } else { ("[", "]") };
                nl(
                    format!("{}1{}", open.repeat(*d), close.repeat(*d)).into_bytes(),
                    true,
                )
            }
            Frame::Batch(rs, one_line) => nl(
                rs.join(if *one_line { " " } else { "\n" }).into_bytes(),
                true,
            ),
        }
    }
}

fn frame() -> impl Strategy<Value = Frame> {
    let req = valid_request().prop_map(|v| v.to_string());
    prop_oneof![
        1 => (prop::collection::vec(any::<u8>(), 0..300), any::<bool>()).prop_map(|(b, n)| Frame::Garbage(b, n)),
        1 => (req.clone(), 0usize..200, any::<bool>()).prop_map(|(r, n, nl)| Frame::Truncated(r, n, nl)),
        1 => (req.clone(), prop::collection::vec((any::<usize>(), any::<u8>()), 1..6))
            .prop_map(|(r, e)| Frame::Mutated(r, e)),
        3 => req.clone().prop_map(Frame::Whole),
        1 => (prop_oneof![1usize..200, 100_000usize..200_000], any::<bool>()).prop_map(|(d, o)| Frame::Deep(d, o)),
        1 => (prop::collection::vec(req, 1..4), any::<bool>()).prop_map(|(r, o)| Frame::Batch(r, o)),
    ]
}

#[test]
fn hostile_frames_close_or_error_and_the_daemon_keeps_serving() {
    let sb = Sandbox::new("fuzz-proto");
    sb.sqlite_ok("SELECT uq_nli('The sky is blue.', 'The sky is blue.') IS NOT NULL;");
    let pid = sb.daemon_pid().expect("a daemon serves the sandbox");
    let mut other = BufReader::new(connect(&sb));
    still_serving(&mut other).unwrap();

    // A connection left open mid-frame does not hold up the others.
    let mut stalled = connect(&sb);
    stalled
        .write_all(b"{\"op\":\"nli\",\"pairs\":[[\"a\",")
        .unwrap();
    still_serving(&mut other).unwrap();

    // A line over the 64 MiB limit: an error reply (or a reset), then the connection closes.
    let big = vec![b'x'; 64 * 1024 * 1024 + 16];
    match send(&sb, &big).unwrap() {
        Answer::Reply(v) => {
            assert_eq!(v["ok"], json!(false), "{v}");
            assert!(v["error"].as_str().unwrap().contains("larger than"), "{v}");
        }
        Answer::Closed => {}
    }
    still_serving(&mut other).unwrap();

    // Invalid UTF-8 gets its own message.
    match send(&sb, b"{\"op\":\"ping\xff\xfe\"}\n").unwrap() {
        Answer::Reply(v) => assert!(v["error"].as_str().unwrap_or("").contains("UTF-8"), "{v}"),
        Answer::Closed => panic!("no reply to invalid UTF-8"),
    }

    let (mut replies, mut closed) = (0u64, 0u64);
    fuzz("socket_frames", 400, frame(), |f| {
        match send(&sb, &f.bytes())? {
            Answer::Reply(v) if v["ok"].is_boolean() => replies += 1,
            Answer::Reply(v) => return Err(format!("not a reply object: {v}")),
            Answer::Closed => closed += 1,
        }
        still_serving(&mut other)
    });
    println!(
        "fuzz socket_frames: {replies} answered, {closed} closed without a reply, plus an oversized, an open and an invalid UTF-8 frame"
    );
    drop(stalled);
    assert_eq!(
        sb.daemon_pid(),
        Some(pid),
        "the same daemon serves after the fuzz"
    );
    let mut buf = Vec::new();
    let _ = connect(&sb).read_to_end(&mut buf); // a bare connect and close is harmless too
    assert_eq!(sb.daemon_pid(), Some(pid));
}
