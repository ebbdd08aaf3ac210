//! The per-user boundary (issue 13, item 3), with a second uid (`setpriv`, tests run as root):
//! another user cannot talk to my daemon nor start one in my socket directory; my daemon refuses
//! other uids (root included) at the socket; a socket directory, a symbolic link or a socket file
//! planted by another user is refused with a clear error (before anything is created there);
//! the API key named by `api_key_env` never lands in a table, a log line, the completion cache or
//! the HTML report, even when the LLM server fails and echoes it back.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use uq_fake_openai::{user_message, FakeOpenAi, Reply};
use uq_integration::users::{as_user, chown};
use uq_integration::*;

const OTHER: u32 = 4243;

fn uqd() -> String {
    dist().join("uqd").display().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Runs `sql` in sqlite3 (extension loaded) with `UQ_SOCKET=socket`, as root; returns stderr.
fn sqlite_with_socket(socket: &Path, sql: &str) -> std::process::Output {
    let script = format!(".load {}\n{sql}\n", ext_path());
    as_user(
        0,
        SQLITE,
        &["-bail", "-batch", ":memory:"],
        &[("UQ_SOCKET", &socket.display().to_string())],
        &script,
    )
}

#[test]
fn another_user_cannot_use_my_daemon_nor_start_one_in_my_directory() {
    let sb = Sandbox::new("boundary-mine");
    assert_eq!(
        sb.sqlite_ok("SELECT uq_nli('A dog runs.', 'An animal moves.') IS NOT NULL;"),
        "1"
    );
    let sock = sb.socket.display().to_string();
    let my_pid = sb.daemon_pid().expect("my daemon runs");

    // uqd status as the other user: the 0700 directory refuses it.
    let out = as_user(OTHER, &uqd(), &["status", "--socket", &sock], &[], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Permission denied"),
        "{}",
        text(&out.stderr)
    );

    // The extension as the other user, pointed at my socket: a clear error, no daemon started.
    let script = format!(".load {}\nSELECT uq_nli('a', 'b');\n", ext_path());
    let out = as_user(
        OTHER,
        SQLITE,
        &["-bail", "-batch", ":memory:"],
        &[("UQ_SOCKET", &sock)],
        &script,
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot connect to uqd") && err.contains("Permission denied"),
        "{err}"
    );

    // uqd serve as the other user on a socket in my directory: refused, nothing created there.
    let theirs = sb.dir.join("run").join("theirs.sock").display().to_string();
    let out = as_user(OTHER, &uqd(), &["serve", "--socket", &theirs], &[], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Permission denied"),
        "{}",
        text(&out.stderr)
    );
    let entries: Vec<String> = std::fs::read_dir(sb.dir.join("run"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !entries.iter().any(|e| e.starts_with("theirs")),
        "{entries:?}"
    );
    assert_eq!(sb.daemon_pid(), Some(my_pid), "my daemon still serves me");
}

#[test]
fn my_daemon_refuses_other_uids_at_the_socket_root_included() {
    let sb = Sandbox::new("boundary-theirs");
    // The other user's own daemon, in a directory of theirs.
    let home = sb.dir.join("other-home");
    std::fs::create_dir_all(&home).unwrap();
    chown(&home, OTHER);
    let sock = home.join("run").join("uqd.sock").display().to_string();
    let script = format!(
        ".load {}\nSELECT uq_nli('A dog runs.', 'An animal moves.') IS NOT NULL;\n",
        ext_path()
    );
    let out = as_user(
        OTHER,
        SQLITE,
        &["-bail", "-batch", ":memory:"],
        &[("UQ_SOCKET", &sock)],
        &script,
    );
    assert_eq!(text(&out.stdout).trim(), "1", "{}", text(&out.stderr));

    // Root bypasses file modes, so the daemon's own check (SO_PEERCRED) is what refuses it.
    let code = format!(
        r#"
import socket, json
s = socket.socket(socket.AF_UNIX)
s.connect({sock:?})
# The daemon answers (and closes) before reading anything from a peer of another uid.
try:
    s.sendall(b'{{"op": "ping"}}\n')
except BrokenPipeError:
    pass
print(s.makefile().readline().strip())
"#
    );
    let reply = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(reply.lines().last().unwrap()).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains(&format!("serves uid {OTHER} only, not uid 0")),
        "{v}"
    );
    // And root's client refuses a socket that is not root's.
    let out = sqlite_with_socket(Path::new(&sock), "SELECT uq_nli('a', 'b');");
    assert!(
        text(&out.stderr).contains(&format!("belongs to uid {OTHER}")),
        "{}",
        text(&out.stderr)
    );
    let _ = as_user(OTHER, &uqd(), &["stop", "--socket", &sock], &[], "");
}

#[test]
fn planted_socket_directories_links_and_files_are_refused() {
    let sb = Sandbox::new("boundary-planted");
    let check = |socket: &Path, want: &str| {
        let out = sqlite_with_socket(socket, "SELECT uq_nli('a', 'b');");
        let err = text(&out.stderr);
        assert!(
            err.contains(want) && err.contains("UQ_SOCKET"),
            "{}: {err}",
            socket.display()
        );
        let out = as_user(
            0,
            &uqd(),
            &["serve", "--socket", &socket.display().to_string()],
            &[],
            "",
        );
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains(want),
            "uqd serve: {}",
            text(&out.stderr)
        );
    };

    // A directory created by the other user where my socket would go (e.g. /tmp/uqlite-0).
    let planted = sb.dir.join("planted-dir");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    chown(&planted, OTHER);
    check(
        &planted.join("uqd.sock"),
        &format!("belongs to uid {OTHER}, not to you (uid 0)"),
    );
    assert_eq!(
        std::fs::read_dir(&planted).unwrap().count(),
        0,
        "no lock, log or socket written there"
    );

    // A symbolic link of the other user's, in place of the directory.
    let target = sb.dir.join("their-target");
    std::fs::create_dir_all(&target).unwrap();
    chown(&target, OTHER);
    let link = sb.dir.join("planted-link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let st = std::process::Command::new("chown")
        .args([
            "-h",
            &format!("{OTHER}:{OTHER}"),
            &link.display().to_string(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    check(
        &link.join("uqd.sock"),
        &format!("is a symbolic link owned by uid {OTHER}"),
    );
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);

    // A shared sticky directory (as /tmp) where the other user planted the socket's name: a
    // symbolic link, or a file of theirs.
    let shared = sb.dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let sock_link = shared.join("link.sock");
    let out = as_user(
        OTHER,
        "/bin/ln",
        &["-s", "/nonexistent", &sock_link.display().to_string()],
        &[],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    check(&sock_link, "is a symbolic link");
    let sock_file = shared.join("file.sock");
    let out = as_user(
        OTHER,
        "/usr/bin/touch",
        &[&sock_file.display().to_string()],
        &[],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    check(&sock_file, &format!("belongs to uid {OTHER}"));

    // A directory anyone may write to, without the sticky bit.
    let open = sb.dir.join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    check(&open.join("uqd.sock"), "writable by other users (mode 777)");
}

/// The planted key: distinctive, so that any copy of it is found.
const KEY: &str = "sk-uqlite-planted-3f9c27d1e8a4b6";

#[test]
fn api_keys_never_reach_tables_logs_caches_or_reports() {
    // The server checks the key, echoes it back in its errors (as some do), and fails some rows.
    let fake = FakeOpenAi::with_handler(|r| {
        let prompt = user_message(&r.body);
        let auth = r.authorization.clone().unwrap_or_default();
        if !auth.contains(KEY) {
            return Reply::Error(401, format!("no key: {auth}"));
        }
        if prompt.contains("(3)") {
            Reply::Error(401, format!("Incorrect API key provided: {auth}"))
        } else if prompt.contains("(5)") {
            Reply::Error(500, format!("internal error while serving {auth}"))
        } else if prompt.contains("(7)") {
            Reply::Error(400, format!("bad request from key {KEY}"))
        } else {
            Reply::Ok
        }
    });
    let sb = Sandbox::new("boundary-key");
    let cache = sb
        .dir
        .join("cache")
        .join("completions.sqlite")
        .display()
        .to_string();
    let sb = sb
        .with_env("UQ_TEST_PLANTED_KEY", KEY)
        .with_env("UQ_CACHE_DB", &cache);
    let db = sb.dir.join("keys.db").display().to_string();
    let mut llm = fake.config();
    llm["api_key_env"] = serde_json::json!("UQ_TEST_PLANTED_KEY");
    let code = format!(
        r#"
import subprocess, signal, time
d = sqlite3.connect({db:?})
d.execute("CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT, wiki TEXT)")
d.executemany("INSERT INTO answers VALUES (?, ?, ?, NULL, ?)",
    [(i, 'Tell me about Marie Curie ({{}}).'.format(i), {resp:?}, 'Marie Curie was a physicist born in Warsaw.') for i in range(1, 11)])
d.commit(); d.close()
c = sqlite3.connect({db:?}, isolation_level=None)
c.enable_load_extension(True)
c.load_extension(EXT)
llm = json.loads({llm:?})
opts = json.dumps(dict(scorers=['entailment'], generate=2, generation_llm=llm, judge_llm=llm, grade=True,
                       reference_column='wiki', chunk_size=2))
job = c.execute("SELECT uq_score_table('answers', ?)", (opts,)).fetchone()[0]
# A daemon killed mid-job, too: the resumed job reads the key again from the environment.
t0 = time.time()
while c.execute("SELECT done FROM uq_job").fetchone()[0] < 2 and time.time() - t0 < 120:
    time.sleep(0.05)
os.kill(json.loads(subprocess.check_output([{uqd:?}, "status", "--socket", {sock:?}]))["pid"], signal.SIGKILL)
status = c.execute("SELECT uq_wait(?, 300)", (job,)).fetchone()[0]
errors = [r[0] for r in c.execute("SELECT error FROM uq_job_error ORDER BY source_key")]
# A direct call that fails: its SQL error is what the user sees.
try:
    c.execute("SELECT * FROM uq_generate('Tell me about Marie Curie (3).', 1, json_object('generation_llm', json(?)))", (json.dumps(llm),)).fetchall()
    direct = None
except sqlite3.Error as e:
    direct = str(e)
print(json.dumps(dict(status=status, errors=errors, direct=direct,
                      answers=c.execute("SELECT count(*) FROM uq_answer").fetchone()[0])))
"#,
        resp = RESPONSE,
        llm = serde_json::to_string(&llm).unwrap(),
        uqd = uqd(),
        sock = sb.socket.display().to_string(),
    );
    let out = sb.python_ok(&code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["status"], "done", "{v}");
    let errors = v["errors"].as_array().unwrap();
    assert!(errors.len() >= 3, "rows 3, 5 and 7 failed: {v}");
    assert!(
        v["errors"].to_string().contains("[API key]"),
        "echoed keys are redacted: {v}"
    );
    assert!(
        !v["direct"].as_str().unwrap_or_default().contains(KEY),
        "{v}"
    );
    assert!(v["answers"].as_i64().unwrap() >= 5, "{v}");
    // The key really went out (so it was there to leak).
    assert!(fake
        .received()
        .iter()
        .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}"))));

    let report = sb.dir.join("report");
    let out = std::process::Command::new(uqd())
        .args(["report", &db, "--out", &report.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains(KEY) && !text(&out.stderr).contains(KEY));
    let _ = sb.uqd(&["stop"]);

    // Every file written: the database (and its WAL), the completion cache, the job registry,
    // the daemon's log, the report.
    let mut files = Vec::new();
    walk(&sb.dir, &mut files);
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    for want in [
        "keys.db",
        "completions.sqlite",
        "uqd.log",
        "index.html",
        "jobs.json",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(want)),
            "{want} not written: {names:?}"
        );
    }
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let found = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
        assert!(!found, "the API key is in {}", f.display());
    }
    println!(
        "KEYS: {} files checked, none holds the key: {names:?}",
        files.len()
    );
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}
