//! Harness for the end-to-end tests: each `Sandbox` has its own socket (so its own daemon,
//! started by the extension on first use) and drives the stock `/usr/bin/sqlite3` CLI and
//! `/usr/bin/python3` with `dist/uq0.so` loaded. Run `make setup` first (`make test` does).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub mod browser;
pub mod golden;
pub mod users;

pub const SQLITE: &str = "/usr/bin/sqlite3";
pub const PYTHON: &str = "/usr/bin/python3";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// `dist/`, checked to hold the extension and the daemon.
pub fn dist() -> PathBuf {
    let d = root().join("dist");
    for f in ["uq0.so", "uqd"] {
        assert!(
            d.join(f).exists(),
            "{} is missing: run `make setup` first",
            d.join(f).display()
        );
    }
    d
}

/// Path given to `.load` / `load_extension` (SQLite appends `.so`).
pub fn ext_path() -> String {
    dist().join("uq0").display().to_string()
}

pub struct Sandbox {
    pub dir: PathBuf,
    pub socket: PathBuf,
    env: Vec<(String, String)>,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl Sandbox {
    pub fn new(name: &str) -> Sandbox {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("uqt-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create sandbox dir");
        let socket = dir.join("run").join("uqd.sock");
        let env = vec![("UQ_SOCKET".to_string(), socket.display().to_string())];
        Sandbox { dir, socket, env }
    }

    /// Adds an environment variable for every process this sandbox starts.
    pub fn with_env(mut self, key: &str, value: &str) -> Sandbox {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Runs `sql` in `sqlite3 -bail :memory:` with the extension loaded.
    pub fn sqlite(&self, sql: &str) -> Output {
        self.sqlite_on(":memory:", sql)
    }

    /// Runs `sql` in `sqlite3 -bail DB` with the extension loaded.
    pub fn sqlite_on(&self, db: &str, sql: &str) -> Output {
        let script = format!(".load {}\n{sql}\n", ext_path());
        self.run_stdin(self.command(SQLITE).args(["-bail", "-batch", db]), &script)
    }

    /// Like `sqlite` but asserts success and returns stdout, trimmed.
    pub fn sqlite_ok(&self, sql: &str) -> String {
        stdout_ok(&self.sqlite(sql), sql)
    }

    /// Runs `sql` expecting an error; returns stderr.
    pub fn sqlite_err(&self, sql: &str) -> String {
        stderr_err(&self.sqlite(sql), sql)
    }

    /// Runs a Python script under /usr/bin/python3; `conn` is a connection with the extension loaded.
    pub fn python(&self, code: &str) -> Output {
        let prelude = format!(
            "import sqlite3, json, os, sys\nEXT = {ext:?}\ndef connect():\n    c = sqlite3.connect(':memory:', check_same_thread=False)\n    c.enable_load_extension(True)\n    c.load_extension(EXT)\n    return c\nconn = connect()\n",
            ext = ext_path()
        );
        self.run_stdin(self.command(PYTHON).arg("-"), &format!("{prelude}{code}\n"))
    }

    pub fn python_ok(&self, code: &str) -> String {
        stdout_ok(&self.python(code), code)
    }

    /// `uqd ARGS --socket <this sandbox's socket>`.
    pub fn uqd(&self, args: &[&str]) -> Output {
        self.command(&dist().join("uqd").display().to_string())
            .args(args)
            .arg("--socket")
            .arg(&self.socket)
            .stdin(Stdio::null())
            .output()
            .expect("run uqd")
    }

    /// Pid of the daemon serving this sandbox, if one answers.
    pub fn daemon_pid(&self) -> Option<u32> {
        let out = self.uqd(&["status"]);
        if !out.status.success() {
            return None;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        v["pid"].as_u64().map(|p| p as u32)
    }

    fn run_stdin(&self, cmd: &mut Command, input: &str) -> Output {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_string();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = child.wait_with_output().expect("wait");
        let _ = writer.join();
        out
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.uqd(&["stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The stdout of `out`, trimmed; it must have succeeded (`what`: what ran, for the message).
pub fn stdout_ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "failed:\n{what}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The stderr of `out`; it must have failed (an exit status or a message on stderr).
pub fn stderr_err(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() || !stderr.is_empty(),
        "expected an error from\n{what}\nstdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// Waits until `f` holds, up to `timeout`.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < timeout {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// SQL string literal for `s`.
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// JSON array literal of `items`, as an SQL string.
pub fn json_lit(items: &[&str]) -> String {
    lit(&serde_json::to_string(items).expect("json"))
}

/// A small answer with one unsupported sentence, and samples that support the rest.
pub const RESPONSE: &str = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna.";
pub const SAMPLES: [&str; 3] = [
    "Marie Curie was a physicist and chemist who was born in Warsaw. She won the Nobel Prize in Physics in 1903.",
    "Born in Warsaw, Marie Curie was a chemist and physicist. In 1903 she won the Nobel Prize in Physics.",
    "Marie Curie, a physicist and chemist from Warsaw, won the 1903 Nobel Prize in Physics.",
];
