//! The extension loaded into Debian's /usr/bin/python3 sqlite3 module.

use uq_integration::*;

#[test]
fn python_sqlite3_scores_and_errors() {
    let sb = Sandbox::new("py");
    let code = format!(
        r#"
resp = {resp:?}
samples = json.dumps({samples})
print(conn.execute("SELECT uq_version()").fetchone()[0])
rows = conn.execute("SELECT unit_idx, unit, scorer, score FROM uq_unit_scores(?, ?, ?)", (resp, samples, json.dumps({{"scorers": ["contrasted_entailment"]}}))).fetchall()
print(len(rows), rows[0][2])
conf = conn.execute("SELECT response_confidence(?, ?, ?)", (resp, samples, json.dumps({{"scorers": ["luq"], "aggregation": "geometric_mean"}}))).fetchone()[0]
import math
gm = math.exp(sum(math.log(r[3]) for r in rows) / len(rows))
print(abs(conf - gm) < 1e-9)
try:
    conn.execute("SELECT response_confidence(?, ?)", (resp, "[1]")).fetchone()
    print("no error")
except sqlite3.OperationalError as e:
    print("error:", e)
"#,
        resp = RESPONSE,
        samples = serde_json::to_string(&SAMPLES).unwrap()
    );
    let out = sb.python_ok(&code);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with('v'), "{out}");
    assert_eq!(lines[1], "3 contrasted_entailment", "{out}");
    assert_eq!(lines[2], "True", "geometric mean matches: {out}");
    assert!(
        lines[3].starts_with("error:") && lines[3].contains("samples_json"),
        "{out}"
    );
}

/// `uqlite.load` takes ONNX Runtime from `UQ_ORT_LIB` when it is set, so a package installed
/// without its dependencies (no `onnxruntime` module, as in Debian's python3) loads; unset, or
/// naming no file, it says what to do. The package's Python files with `uq0.so`, `uqd` and the
/// models beside them, as a wheel lays them out.
#[test]
fn uqlite_load_honours_uq_ort_lib_without_the_onnxruntime_package() {
    let sb = Sandbox::new("py-ort-lib");
    let pkg = sb.dir.join("site").join("uqlite");
    std::fs::create_dir_all(&pkg).unwrap();
    for f in std::fs::read_dir(root().join("python/uqlite")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "py") {
            std::fs::copy(&f, pkg.join(f.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(dist().join("uq0.so"), pkg.join("uq0.so")).unwrap();
    std::fs::copy(dist().join("uqd"), pkg.join("uqd")).unwrap();
    std::os::unix::fs::symlink(dist().join("models"), pkg.join("models")).unwrap();
    let ort = dist().join("lib/libonnxruntime.so.1.31.1");
    let code = r#"
import sqlite3, uqlite
try:
    import onnxruntime
    print("onnxruntime importable")
except ImportError:
    pass
conn = sqlite3.connect(":memory:")
try:
    uqlite.load(conn)
    print(conn.execute("SELECT json_extract(uq_nli('It rains.', 'It rains.'), '$.entailment') > 0.5").fetchone()[0])
except RuntimeError as e:
    print("error:", e)
"#;
    let run = |ort_lib: Option<&str>| {
        let mut c = std::process::Command::new(PYTHON);
        c.args(["-c", code])
            .env("PYTHONPATH", sb.dir.join("site"))
            .env("UQ_SOCKET", &sb.socket)
            .env_remove("UQ_ORT_LIB");
        if let Some(v) = ort_lib {
            c.env("UQ_ORT_LIB", v);
        }
        stdout_ok(&c.output().unwrap(), code)
    };
    let unset = run(None);
    assert!(
        unset.starts_with(
            "error: uqlite needs ONNX Runtime: pip install onnxruntime==1.31.1, or set UQ_ORT_LIB"
        ),
        "{unset}"
    );
    let missing = run(Some("/nonexistent/libonnxruntime.so"));
    assert!(
        missing.starts_with(
            "error: UQ_ORT_LIB is '/nonexistent/libonnxruntime.so', which is not a file"
        ),
        "{missing}"
    );
    assert_eq!(run(Some(&ort.display().to_string())), "1");
}
