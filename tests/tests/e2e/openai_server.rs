//! A real OpenAI-compatible server: the `llama-cpp-python` server (PyPI, built from source by
//! scripts/llama-server.sh into .cache/llama-venv; `make test` runs it) on 127.0.0.1 with the
//! SmolLM2 GGUF of `make setup`, and an LLM registered with `"backend":"openai"` in
//! `temp.uq_llms`: `uq_generate` (with the server's token log-probabilities), `uq_claims`,
//! `claim_confidence` and a `uq_score_table` job that generates its samples. Real HTTP, real JSON.
//! The test fails (never skips) when the server is not installed.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use uq_integration::*;

/// The llama-cpp-python server, stopped (by its pid) when dropped.
struct LlamaServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl LlamaServer {
    fn start(dir: &std::path::Path) -> LlamaServer {
        let python = root().join(".cache/llama-venv/bin/python");
        assert!(
            python.is_file(),
            "{} is missing: run `bash scripts/llama-server.sh` (`make test` does) to build the \
             llama-cpp-python server into .cache/llama-venv",
            python.display()
        );
        let model = dist().join("models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
        assert!(
            model.is_file(),
            "{} is missing: run `make setup`",
            model.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = dir.join("llama-server.log");
        let out = std::fs::File::create(&log).expect("server log");
        let child = Command::new(&python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // One thread: ggml's spinning worker threads slow to a crawl on a busy 2-core machine.
            .args(["--n_ctx", "2048", "--n_threads", "1", "--verbose", "false"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start llama_cpp.server");
        let mut server = LlamaServer { child, port, log };
        let ready = wait_until(Duration::from_secs(180), || {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("llama_cpp.server exited ({status}):\n{}", server.log_text());
            }
            http(port, "GET", "/v1/models", "").is_some_and(|(code, _)| code == 200)
        });
        assert!(
            ready,
            "llama_cpp.server did not answer in 180 s:\n{}",
            server.log_text()
        );
        server
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn log_text(&mut self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Chat-completion requests the server has answered with 200, from its access log.
    fn completions_served(&mut self) -> usize {
        self.log_text()
            .lines()
            .filter(|l| l.contains("\"POST /v1/chat/completions HTTP/1.1\" 200"))
            .count()
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request on loopback: (status, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, text.split_once("\r\n\r\n")?.1.to_string()))
}

/// The registration of the server as LLM `llama`. One request at a time (the server answers
/// one at a time; queued requests would count against `timeout_ms`), and a long timeout: the
/// machine running the tests may be busy. `logprobs`: llama-cpp-python computes them over the
/// whole vocabulary per token, which is slow on a CPU, so only `uq_generate` asks for them.
fn register(server: &LlamaServer, max_tokens: u32, logprobs: bool) -> String {
    format!(
        r#"INSERT INTO temp.uq_llms(name, config) VALUES ('llama', '{{"backend":"openai","base_url":"{}","model":"smollm2-135m-instruct","api_key_env":null,"logprobs":{logprobs},"max_tokens":{max_tokens},"seed":7,"concurrency":1,"timeout_ms":300000,"max_retries":1}}');"#,
        server.base_url()
    )
}

#[test]
fn llama_cpp_server_generates_decomposes_and_scores() {
    let sb = Sandbox::new("llama-server");
    let cache = sb.dir.join("completions.sqlite").display().to_string();
    let sb = sb.with_env("UQ_CACHE_DB", &cache);
    let mut server = LlamaServer::start(&sb.dir);

    // The server's own answer with logprobs, asked directly: the shape the client parses.
    let (code, body) = http(
        server.port,
        "POST",
        "/v1/chat/completions",
        r#"{"messages":[{"role":"user","content":"Say hello."}],"max_tokens":4,"temperature":0,"logprobs":true,"top_logprobs":0}"#,
    )
    .expect("direct request");
    assert_eq!(code, 200, "{body}");
    let direct: Value = serde_json::from_str(&body).expect("JSON reply");
    assert!(
        direct["choices"][0]["logprobs"]["content"][0]["logprob"].is_f64(),
        "the server sends no token logprobs: {direct}"
    );

    // uq_generate: the answer (temperature 0) and 2 samples, each with token logprobs.
    let reg = register(&server, 32, true);
    let prompt = lit("Who was Marie Curie? Answer in one sentence.");
    let sql = format!(
        "{reg}
         SELECT json_group_array(json_object('idx', idx, 'response', response, 'temperature', temperature,
           'model', model, 'completion_tokens', completion_tokens, 'cached', cached,
           'p', normalized_probability, 'logprobs', json(logprobs)))
         FROM (SELECT * FROM uq_generate({prompt}, 2, '{{\"llm\":\"llama\"}}') ORDER BY idx);"
    );
    let before = server.completions_served();
    let rows: Vec<Value> = serde_json::from_str(&sb.sqlite_ok(&sql)).expect("json rows");
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        server.completions_served() >= before + 2,
        "the answers did not come from the server (its log):\n{}",
        server.log_text()
    );
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["idx"], i, "{r}");
        assert_eq!(r["cached"], 0, "{r}");
        assert_eq!(r["model"], "smollm2-135m-instruct", "{r}");
        assert!(
            !r["response"].as_str().unwrap_or("").trim().is_empty(),
            "{r}"
        );
        let lps: Vec<f64> = r["logprobs"]
            .as_array()
            .unwrap_or_else(|| panic!("row {i} has no logprobs: {r}"))
            .iter()
            .map(|v| v["logprob"].as_f64().expect("a number"))
            .collect();
        assert!(!lps.is_empty() && lps.iter().all(|&x| x <= 0.0), "{r}");
        // Each token with its text and the 5 alternatives asked for (top_logprobs' default);
        // llama-cpp-python adds the chosen token as a sixth where it is not among them.
        for t in r["logprobs"].as_array().unwrap() {
            assert!(t["token"].is_string(), "{t}");
            let top = t["top_logprobs"].as_array().map_or(0, Vec::len);
            assert!(top == 5 || top == 6, "{t}");
        }
        if i == 0 {
            // Its own call: one logprob per completion token the server counted.
            assert_eq!(
                lps.len() as i64,
                r["completion_tokens"].as_i64().unwrap(),
                "{r}"
            );
        }
        let p = (lps.iter().sum::<f64>() / lps.len() as f64).exp();
        assert!(
            (r["p"].as_f64().unwrap() - p).abs() < 1e-9,
            "normalized_probability: {r}"
        );
    }
    // The samples come from one call asking for n = 2 (llama-cpp-python answers one choice, the
    // client asks for the other): its usage sits on the first sample, so compare the totals.
    let count = |r: &Value| r["logprobs"].as_array().map_or(0, Vec::len) as i64;
    let tokens = |r: &Value| r["completion_tokens"].as_i64().unwrap_or(-1);
    assert_eq!(
        count(&rows[1]) + count(&rows[2]),
        tokens(&rows[1]) + tokens(&rows[2]),
        "one logprob per completion token: {rows:?}"
    );
    assert_eq!(rows[0]["temperature"].as_f64(), Some(0.0));
    assert_eq!(rows[1]["temperature"].as_f64(), Some(1.0));

    // The answer's logprobs score it with normalized_probability; its samples with entailment.
    let answer = rows[0]["response"].as_str().unwrap().to_string();
    let samples: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r["response"].as_str().unwrap())
        .collect();
    let opts = serde_json::json!({
        "scorers": ["normalized_probability"],
        "response_logprobs": rows[0]["logprobs"],
    });
    // The white-box scorers on the server's tokens: the margin and negentropy from its
    // alternatives, the Monte Carlo probability with the samples' tokens; none is NULL.
    for scorer in [
        "mean_token_negentropy",
        "probability_margin",
        "monte_carlo_probability",
    ] {
        let wb = serde_json::json!({
            "scorers": [scorer],
            "response_logprobs": rows[0]["logprobs"],
            "sample_logprobs": [rows[1]["logprobs"], rows[2]["logprobs"]],
        });
        let got = sb.sqlite_ok(&format!(
            "SELECT response_confidence({}, {}, {});",
            lit(&answer),
            json_lit(&samples),
            lit(&wb.to_string())
        ));
        let x: f64 = got.parse().unwrap_or_else(|_| panic!("{scorer}: {got:?}"));
        assert!((0.0..=1.0).contains(&x), "{scorer}: {x}");
    }
    let np = sb.sqlite_ok(&format!(
        "SELECT response_confidence({}, {}, {});",
        lit(&answer),
        json_lit(&samples),
        lit(&opts.to_string())
    ));
    let np: f64 = np
        .parse()
        .unwrap_or_else(|_| panic!("normalized_probability: {np:?}"));
    assert!(
        (np - rows[0]["p"].as_f64().unwrap()).abs() < 1e-9,
        "{np} vs {}",
        rows[0]["p"]
    );

    // uq_claims: the server decomposes a biography with the paper's prompt. SmolLM2-135M often
    // ignores the `### claim` format over the chat API (then there are no claims), so the rows
    // are checked against the server's reply, read back from the completion cache: each claim is
    // one of its `###` items, and a reply with a `###` item that is not NONE gives claims.
    let reg = register(&server, 128, false);
    let bio = lit("Marie Curie was a Polish physicist and chemist. She won two Nobel Prizes.");
    let claims_of = |text: &str| -> Vec<String> {
        let rows = sb.sqlite_ok(&format!(
            "{reg} SELECT json_group_array(claim) FROM (SELECT claim FROM uq_claims({text}, '{{\"llm\":\"llama\"}}') ORDER BY idx);"
        ));
        serde_json::from_str(&rows).expect("claims JSON")
    };
    let before = server.completions_served();
    let claims = claims_of(&bio);
    assert_eq!(
        server.completions_served(),
        before + 1,
        "uq_claims: one request to the server"
    );
    let reply = sb.python_ok(&format!(
        "c = sqlite3.connect({cache:?})\nprint(c.execute('SELECT text FROM completions ORDER BY rowid DESC LIMIT 1').fetchone()[0])"
    ));
    let items: Vec<String> = reply
        .split("###")
        .skip(1)
        .map(|i| i.lines().next().unwrap_or("").trim().to_string())
        .filter(|i| {
            !i.is_empty() && !i.eq_ignore_ascii_case("none") && !i.eq_ignore_ascii_case("none.")
        })
        .collect();
    for c in &claims {
        assert!(
            items.iter().any(|i| i.contains(c.as_str())),
            "claim {c:?} is not in the reply {reply:?}"
        );
    }
    assert_eq!(
        claims.is_empty(),
        items.is_empty(),
        "claims {claims:?} from the reply {reply:?}"
    );

    // claim_confidence: the answer's claims scored against the samples. By default a sentence
    // its claims do not cover is scored as a unit of its own, so there is always a score; with
    // "coverage":"off" it is NULL exactly when the answer has no claims (the same decomposition
    // request, answered from the completion cache).
    let confidence = |extra: &str| {
        sb.sqlite_ok(&format!(
            "{reg} SELECT coalesce(x BETWEEN 0 AND 1, 'null') FROM \
             (SELECT claim_confidence({}, {}, '{{\"llm\":\"llama\"{extra}}}') AS x);",
            lit(&answer),
            json_lit(&samples)
        ))
    };
    assert_eq!(confidence(""), "1", "claim_confidence in [0, 1]");
    let answer_claims = claims_of(&lit(&answer));
    assert_eq!(
        confidence(r#","coverage":"off""#),
        if answer_claims.is_empty() {
            "null"
        } else {
            "1"
        },
        "claim_confidence without coverage, with claims {answer_claims:?}"
    );

    // A uq_score_table job that generates the answers and 2 samples per row with the server.
    let db = sb.dir.join("answers.db").display().to_string();
    let reg = register(&server, 32, false);
    let before = server.completions_served();
    let out = sb.python_ok(&format!(
        r#"
db = sqlite3.connect({db:?}, isolation_level=None)
db.enable_load_extension(True)
db.load_extension(EXT)
db.execute("CREATE TABLE answers(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT)")
db.executemany("INSERT INTO answers VALUES (?, ?, NULL, NULL)",
               [(1, "Who was Ada Lovelace? One sentence."), (2, "What is the capital of France? One sentence.")])
db.execute({reg:?})
job = db.execute("SELECT uq_score_table('answers', json_object('llm', 'llama', 'generate', 2, 'scorers', json_array('entailment'), 'concurrency', 2))").fetchone()[0]
status = db.execute("SELECT uq_wait(?, 600)", (job,)).fetchone()[0]
errors = db.execute("SELECT group_concat(error, ' | ') FROM uq_job_error").fetchone()[0]
print(json.dumps(dict(
    status=status, errors=errors,
    job=db.execute("SELECT done, total, llm_calls, completion_tokens FROM uq_jobs WHERE job_id = ?", (job,)).fetchone(),
    answers=db.execute("SELECT count(*), sum(generated), group_concat(DISTINCT model) FROM uq_answer").fetchone(),
    scores=db.execute("SELECT count(*), min(score), max(score) FROM uq_unit_score WHERE score IS NOT NULL").fetchone(),
)))
"#
    ));
    let job: Value = serde_json::from_str(&out).expect("job JSON");
    assert_eq!(job["status"], "done", "{job}");
    assert_eq!(job["errors"], Value::Null, "{job}");
    assert_eq!(job["job"][0], 2, "{job}");
    assert_eq!(
        job["answers"],
        serde_json::json!([2, 2, "smollm2-135m-instruct"]),
        "{job}"
    );
    assert!(job["job"][2].as_i64().unwrap_or(0) >= 2, "llm_calls: {job}");
    assert!(job["job"][3].as_i64().unwrap_or(0) > 0, "tokens: {job}");
    let scores = &job["scores"];
    assert!(scores[0].as_i64().unwrap_or(0) >= 2, "{job}");
    assert!(
        scores[1].as_f64().unwrap() >= 0.0 && scores[2].as_f64().unwrap() <= 1.0,
        "{job}"
    );
    assert!(
        server.completions_served() >= before + 2,
        "the job's generations did not come from the server"
    );
}

/// The NLI judge (option `nli_llm`, docs/reference.md "NLI judge") on the real server: a pair
/// SmolLM2-135M answers with "No." under the yes/no chat prompt gets p_e = 1 − exp(the server's
/// log-probability of "No"), not 0/1; a `uq_score_table` job judges with it; and a rerun, in SQL
/// and as a job, is answered from the completion cache (0 new requests to the server).
#[test]
fn llama_cpp_server_as_nli_judge() {
    let sb = Sandbox::new("llama-judge");
    let cache = sb.dir.join("completions.sqlite").display().to_string();
    let sb = sb.with_env("UQ_CACHE_DB", &cache);
    let mut server = LlamaServer::start(&sb.dir);
    let reg = register(&server, 8, true);

    // unit-response (entailment): one unit, one sample, one pair.
    let sql = format!(
        "{reg}
         SELECT json_object('score', (SELECT score FROM uq_unit_scores('Marie Curie was born in Warsaw.',
           '[\"Marie Curie was born in Paris.\"]',
           '{{\"scorers\":[\"entailment\"],\"nli_llm\":\"llama\",\"nli_prompt\":\"binary\"}}')),
           'notes', uq_debug());"
    );
    let before = server.completions_served();
    let first: Value = serde_json::from_str(&sb.sqlite_ok(&sql)).expect("json");
    let served = server.completions_served();
    assert!(served > before, "the judge did not call the server");
    let reply = sb.python_ok(&format!(
        "c = sqlite3.connect({cache:?})\nprint(json.dumps(c.execute('SELECT text, logprobs FROM completions ORDER BY rowid LIMIT 1').fetchone()))"
    ));
    let reply: Value = serde_json::from_str(&reply).expect("cached reply");
    let text = reply[0].as_str().unwrap_or("");
    assert!(
        text.trim_start().to_lowercase().starts_with("no"),
        "SmolLM2's reply no longer starts with the label: {reply}"
    );
    let lps: Value =
        serde_json::from_str(reply[1].as_str().expect("logprobs stored")).expect("logprobs JSON");
    let lp0 = lps[0]["logprob"]
        .as_f64()
        .expect("the first token's logprob");
    let p_no = lp0.exp();
    let score = first["score"].as_f64().unwrap_or_else(|| panic!("{first}"));
    assert!(
        (score - (1.0 - p_no)).abs() < 1e-9 && score > 0.0 && score < 1.0,
        "entailment {score} is not 1 − exp({lp0}) (from the real logprob): {first}"
    );
    let notes = first["notes"].as_str().unwrap_or("");
    assert!(
        notes.contains(
            "judged 1 NLI pairs: 1 with probabilities from the answer word's log-probability"
        ),
        "{notes}"
    );

    // The rerun: the same score, from the completion cache.
    let again: Value = serde_json::from_str(&sb.sqlite_ok(&sql)).expect("json");
    assert_eq!(again["score"], first["score"], "{again}");
    assert_eq!(
        server.completions_served(),
        served,
        "the rerun called the server"
    );

    // A job with the judge, through /usr/bin/sqlite3 and the extension; then the same rows in a
    // second table: every pair is in the cache.
    let db = sb.dir.join("answers.db").display().to_string();
    let rows = "(1, 'Where was Marie Curie born?', 'Marie Curie was born in Warsaw.', '[\"Marie Curie was born in Paris.\"]'), \
                (2, 'Who is Tom?', 'Tom was born in 1970.', '[\"Tom plays guitar.\"]')";
    let job_sql = |table: &str| {
        format!(
            "{reg}
             CREATE TABLE {table}(id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT, samples TEXT);
             INSERT INTO {table} VALUES {rows};
             SELECT json_object('status', uq_wait(job, 600), 'job', job) FROM
               (SELECT uq_score_table('{table}', '{{\"nli_llm\":\"llama\",\"nli_prompt\":\"binary\",\"scorers\":[\"entailment\"]}}') AS job);
             SELECT json_object('errors', (SELECT group_concat(error, ' | ') FROM uq_job_error),
               'llm_calls', (SELECT llm_calls FROM uq_jobs WHERE source_table = '{table}'),
               'message', (SELECT message FROM uq_jobs WHERE source_table = '{table}'),
               'scores', json((SELECT json_group_array(score) FROM (SELECT s.score FROM uq_unit_score s
                          JOIN uq_unit u USING (unit_id) JOIN uq_answer a USING (answer_id)
                          WHERE a.source_table = '{table}' ORDER BY a.source_key, u.position))));"
        )
    };
    let run = |table: &str| -> Vec<Value> {
        let out = sb.sqlite_on(&db, &job_sql(table));
        let text = stdout_ok(&out, table);
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    };
    let job = run("answers");
    assert_eq!(job[0]["status"], "done", "{job:?}");
    assert_eq!(job[1]["errors"], Value::Null, "{job:?}");
    let message = job[1]["message"].as_str().unwrap_or("");
    // Every pair parsed (row 2's reply names "true" after its first word: 1/0), so the message
    // has no unparsed-pairs note.
    assert!(!message.contains("nli_llm:"), "{job:?}");
    assert_eq!(
        job[1]["llm_calls"], 1,
        "row 1's pair is cached, row 2's is one call: {job:?}"
    );
    let scores = &job[1]["scores"];
    assert_eq!(scores.as_array().map(Vec::len), Some(2), "{job:?}");
    assert_eq!(
        scores[0], first["score"],
        "the job scores row 1 as the SQL call: {job:?}"
    );
    let served = server.completions_served();
    let rerun = run("answers_again");
    assert_eq!(rerun[0]["status"], "done", "{rerun:?}");
    assert_eq!(rerun[1]["scores"], job[1]["scores"], "{rerun:?}");
    assert_eq!(
        server.completions_served(),
        served,
        "the rerun job called the server: {rerun:?}"
    );
    assert_eq!(rerun[1]["llm_calls"], 0, "{rerun:?}");
}
