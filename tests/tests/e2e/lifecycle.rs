//! Daemon lifecycle: auto-start on first use, restart after a kill, per-user socket 0600,
//! `uqd status|stop`, several connections and processes sharing one daemon. (The errors of a
//! daemon that cannot start are pinned by errors.rs.)

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use uq_integration::*;

#[test]
fn autostart_kill_and_restart() {
    let sb = Sandbox::new("life-restart");
    assert_eq!(sb.daemon_pid(), None);
    // One python connection across the kill: the next query restarts the daemon.
    let code = format!(
        r#"
import signal, subprocess, time
q = "SELECT json_extract(uq_nli('A dog runs in the park.', 'An animal is outside.'), '$.entailment')"
first = conn.execute(q).fetchone()[0]
pid = json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"]
os.kill(pid, signal.SIGKILL)
time.sleep(0.2)
second = conn.execute(q).fetchone()[0]
pid2 = json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"]
print(first, second, pid != pid2)
"#,
        uqd = dist().join("uqd").display().to_string(),
        sock = sb.socket.display().to_string()
    );
    let out = sb.python_ok(&code);
    let parts: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(parts.len(), 3, "{out}");
    let (a, b): (f64, f64) = (parts[0].parse().unwrap(), parts[1].parse().unwrap());
    assert!(
        a > 0.5 && (a - b).abs() < 1e-9,
        "same answer before and after the restart: {a} {b}"
    );
    assert_eq!(parts[2], "True", "a new daemon answered");

    // The socket is private to the user.
    let mode = std::fs::metadata(&sb.socket)
        .expect("socket exists")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(sb.socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);

    // `uqd stop` stops it; the socket is removed.
    assert!(sb.uqd(&["stop"]).status.success());
    assert!(wait_until(Duration::from_secs(10), || sb
        .daemon_pid()
        .is_none()));
    assert!(!sb.socket.exists());
    assert!(!sb.uqd(&["status"]).status.success());
}

#[test]
fn concurrent_connections_and_processes_share_one_daemon() {
    let sb = Sandbox::new("life-concurrent");
    // 3 processes x 4 threads, each thread with its own connection, all starting at once.
    let code = r#"
import threading
units = ["Paris is the capital of France.", "The Seine flows through Paris.", "Paris has ten million moons."]
samples = json.dumps(["Paris, the capital of France, lies on the Seine.", "The Seine runs through Paris, France's capital."])
results, errors = [], []
def work(i):
    try:
        c = connect()
        opts = json.dumps({"units": units, "scorers": ["entailment"]})
        rows = c.execute("SELECT unit_idx, score FROM uq_unit_scores('', ?, ?) ORDER BY unit_idx", (samples, opts)).fetchall()
        results.append(tuple(round(s, 9) for _, s in rows))
    except Exception as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps({"errors": errors, "distinct": len(set(results)), "n": len(results), "r": results[0] if results else None}))
"#;
    let outs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3).map(|_| s.spawn(|| sb.python_ok(code))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut firsts = Vec::new();
    for o in &outs {
        let v: serde_json::Value = serde_json::from_str(o).expect(o);
        assert_eq!(v["errors"], serde_json::json!([]), "{o}");
        assert_eq!(v["n"], 4);
        assert_eq!(v["distinct"], 1, "every thread got the same scores: {o}");
        firsts.push(v["r"].clone());
    }
    assert!(
        firsts.windows(2).all(|w| w[0] == w[1]),
        "every process got the same scores"
    );
    let r = &firsts[0];
    assert!(
        r[0].as_f64().unwrap() > r[2].as_f64().unwrap(),
        "supported unit beats the absurd one: {r}"
    );
    // Exactly one daemon serves the socket.
    let pid = sb.daemon_pid().expect("daemon running");
    let n = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| {
            let c = String::from_utf8_lossy(c);
            c.contains("uqd") && c.contains("serve") && c.contains(&sb.socket.display().to_string())
        })
        .count();
    assert_eq!(n, 1, "one daemon (pid {pid}) for all processes");
}
