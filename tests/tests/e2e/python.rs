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
