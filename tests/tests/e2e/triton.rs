//! NLI on a real Triton Inference Server: PyTriton (PyPI `nvidia-pytriton`, which bundles the
//! server; scripts/triton-server.sh installs it into .cache/triton-venv, `make test` runs it)
//! serves the NLI model's `model.onnx` with ONNX Runtime on the CPU (scripts/triton_nli.py), on
//! 127.0.0.1. A daemon with `UQ_NLI_BACKEND` set to two such servers scores WikiBio sentences
//! through the real extension in `/usr/bin/sqlite3`: the scores equal a local daemon's on the same
//! file to 1e-5, both servers answer requests in turn, and when one is killed the other answers
//! everything and `uq_debug()` shows it down. The test fails (never skips) when PyTriton is not
//! installed.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use uq_integration::*;

/// A Triton server started by scripts/triton_nli.py in its own process group, killed with it.
struct Triton {
    child: Child,
    port: u16,
    log: PathBuf,
}

/// A port p with p + 1 and p + 2 free as well (HTTP, gRPC, metrics).
fn three_free_ports() -> u16 {
    loop {
        let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let p = l.local_addr().unwrap().port();
        if p < 65000
            && TcpListener::bind(("127.0.0.1", p + 1)).is_ok()
            && TcpListener::bind(("127.0.0.1", p + 2)).is_ok()
        {
            return p;
        }
    }
}

impl Triton {
    fn start(dir: &std::path::Path, name: &str) -> Triton {
        let python = root().join(".cache/triton-venv/bin/python");
        assert!(
            python.is_file(),
            "{} is missing: run `bash scripts/triton-server.sh` (`make test` does) to install PyTriton",
            python.display()
        );
        let port = three_free_ports();
        let log = dir.join(format!("triton-{name}.log"));
        let out = std::fs::File::create(&log).expect("server log");
        let child = Command::new(&python)
            .arg(root().join("scripts/triton_nli.py"))
            .arg("--model-dir")
            .arg(dist().join("models/nli"))
            .args(["--port", &port.to_string(), "--threads", "1"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("start scripts/triton_nli.py");
        Triton { child, port, log }
    }

    fn wait_ready(&mut self) {
        let port = self.port;
        let ready = wait_until(Duration::from_secs(240), || {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("triton_nli.py exited ({status}):\n{}", self.log_text());
            }
            curl(&format!("http://127.0.0.1:{port}/v2/models/nli/ready")) == "200"
        });
        assert!(
            ready,
            "Triton did not get ready in 240 s:\n{}",
            self.log_text()
        );
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL to the whole group: the Python process, tritonserver and its backend stubs.
    fn kill(&mut self) {
        // SAFETY: kill(2) on our own child's process group.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Triton {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The HTTP status of a GET (by curl: no HTTP client in this crate), "000" when nothing answers.
fn curl(url: &str) -> String {
    Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-m",
            "5",
            "-w",
            "%{http_code}",
            url,
        ])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default()
}

/// WikiBio records (`gpt3_text`, `gpt3_text_samples`, `gpt3_sentences`).
fn passages(range: std::ops::Range<usize>) -> Vec<Value> {
    let path = root().join("../shared/data/selfcheck_wikibio_dev.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared data lies beside the clone)",
            path.display()
        )
    });
    text.lines()
        .skip(range.start)
        .take(range.len())
        .map(|l| serde_json::from_str(l).expect("a WikiBio record"))
        .collect()
}

/// One `unit_idx|scorer|score` line per unit and scorer, passage by passage.
fn score_sql(ps: &[Value]) -> String {
    ps.iter()
        .map(|p| {
            let samples: Vec<&str> = p["gpt3_text_samples"]
                .as_array()
                .expect("samples")
                .iter()
                .take(5)
                .map(|s| s.as_str().expect("a sample"))
                .collect();
            let options = serde_json::json!({
                "units": p["gpt3_sentences"],
                "scorers": ["entailment", "noncontradiction", "contrasted_entailment"],
            });
            format!(
                "SELECT unit_idx, scorer, printf('%.9f', score) FROM uq_unit_scores({}, {}, {});",
                lit(p["gpt3_text"].as_str().expect("gpt3_text")),
                json_lit(&samples),
                lit(&options.to_string())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The scores of `out` (lines of `idx|scorer|score`).
fn scores(out: &str) -> Vec<(String, f64)> {
    out.lines()
        .map(|l| {
            let (key, v) = l.rsplit_once('|').expect("idx|scorer|score");
            (key.to_string(), v.parse().expect("a score"))
        })
        .collect()
}

fn assert_same(local: &str, remote: &str) -> usize {
    let (a, b) = (scores(local), scores(remote));
    assert_eq!(a.len(), b.len(), "local:\n{local}\nremote:\n{remote}");
    let mut worst: f64 = 0.0;
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        assert_eq!(ka, kb);
        worst = worst.max((va - vb).abs());
    }
    println!(
        "{} scores, largest difference local vs Triton {worst:.2e}",
        a.len()
    );
    assert!(worst <= 1e-5, "largest difference {worst}");
    a.len()
}

fn status(sb: &Sandbox) -> Value {
    serde_json::from_str(&stdout_ok(&sb.uqd(&["status"]), "uqd status")).expect("status JSON")
}

#[test]
fn scores_through_two_triton_servers_equal_the_local_ones_and_survive_one_dying() {
    let dir = std::env::temp_dir().join(format!("uqt-triton-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut t1 = Triton::start(&dir, "1");
    let mut t2 = Triton::start(&dir, "2");
    t1.wait_ready();
    t2.wait_ready();

    // The same model file on both sides: the original model.onnx.
    let local = Sandbox::new("triton-local").with_env("UQ_PRECISION", "original");
    let remote = Sandbox::new("triton-remote")
        .with_env("UQ_NLI_BACKEND", &format!("{},{}", t1.url(), t2.url()))
        .with_env("UQ_NLI_BACKEND_HEALTH_MS", "200");

    let first = passages(0..4);
    let n = assert_same(
        &local.sqlite_ok(&score_sql(&first)),
        &remote.sqlite_ok(&score_sql(&first)),
    );
    assert!(n >= 60, "{n} scores");

    let s = status(&remote);
    assert_eq!(
        (s["device"].as_str(), s["precision"].as_str()),
        (Some("remote"), Some("remote")),
        "{s}"
    );
    let eps = s["nli_endpoints"]
        .as_array()
        .expect("nli_endpoints")
        .clone();
    assert_eq!(eps.len(), 2, "{s}");
    for e in &eps {
        assert_eq!(e["healthy"], Value::Bool(true), "{s}");
        assert!(
            e["served"].as_u64().unwrap() >= 2,
            "both servers answer in turn: {s}"
        );
    }
    let debug = remote.sqlite_ok("SELECT uq_debug();");
    assert!(
        debug.contains(&format!("nli server 1: {} (up,", t1.url())),
        "{debug}"
    );
    let served_before = eps[0]["served"].as_u64().unwrap();

    // The second server dies: the first answers everything, and nothing is lost.
    t2.kill();
    let more = passages(4..7);
    assert_same(
        &local.sqlite_ok(&score_sql(&more)),
        &remote.sqlite_ok(&score_sql(&more)),
    );
    let s = status(&remote);
    let eps = s["nli_endpoints"].as_array().unwrap();
    assert_eq!(eps[1]["healthy"], Value::Bool(false), "{s}");
    assert!(eps[0]["served"].as_u64().unwrap() > served_before, "{s}");
    let debug = remote.sqlite_ok("SELECT uq_debug();");
    assert!(
        debug.contains(&format!("nli server 2: {} (down,", t2.url())),
        "{debug}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
