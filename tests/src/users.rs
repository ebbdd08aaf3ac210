//! Running a program as another user (tests run as root): `setpriv --reuid/--regid
//! --clear-groups`, for the per-user boundary (boundary.rs) and the read-only database fault
//! (faults.rs), since root ignores file modes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `program args` as `uid` (and gid `uid`) with `env` added and `stdin` fed in.
pub fn as_user(
    uid: u32,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: &str,
) -> Output {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={uid}"),
        &format!("--regid={uid}"),
        "--clear-groups",
        program,
    ])
    .args(args)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run setpriv");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().expect("wait for setpriv");
    let _ = writer.join();
    out
}

/// Hands `path` (recursively) to `uid:uid`.
pub fn chown(path: &Path, uid: u32) {
    let st = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path)
        .status()
        .expect("chown");
    assert!(st.success(), "chown {}", path.display());
}
