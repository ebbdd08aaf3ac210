//! The LLM layer in SQL: the `temp.uq_llms` registry, LLM option resolution, `uq_generate`,
//! `uq_claims`, `claim_confidence`, `uad_filter`, `uad_claims` against the embedded SmolLM2, and
//! an OpenAI-compatible server on 127.0.0.1 that fails (500 then success; 401).

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Value};
use uq_fake_openai::{error_body, FakeOpenAi, Reply, Request};
use uq_integration::*;

/// A sandbox whose daemon keeps its completion cache in the sandbox (no cross-run cache hits).
fn llm_sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("completions.sqlite").display().to_string();
    sb.with_env("UQ_CACHE_DB", &cache)
}

/// Registers the local model with a small `max_tokens` (SmolLM2 writes ~20 tokens/s on 2 cores).
const SMALL: &str = r#"INSERT INTO temp.uq_llms(name, config) VALUES ('small', '{"backend":"local","max_tokens":64}');"#;
const OPTS: &str = r#"'{"llm":"small"}'"#;
const BIO: &str = "Marie Curie was a Polish physicist and chemist. She won two Nobel Prizes.";

#[test]
fn uq_llms_registers_lists_updates_and_deletes() {
    let sb = Sandbox::new("llms-table");
    let out = sb.sqlite_ok(
        r#"
        SELECT count(*) FROM temp.uq_llms;
        INSERT INTO temp.uq_llms(name, config) VALUES
          ('gpt', '{"backend":"openai","base_url":"https://api.example.com/v1","model":"gpt-4o-mini","api_key_env":"OPENAI_API_KEY"}');
        INSERT INTO temp.uq_llms VALUES ('small', '{"max_tokens":64}');
        SELECT name, json_extract(config, '$.model') FROM temp.uq_llms ORDER BY name;
        UPDATE temp.uq_llms SET config = '{"max_tokens":32}' WHERE name = 'small';
        SELECT config FROM temp.uq_llms WHERE name = 'small';
        INSERT OR REPLACE INTO temp.uq_llms VALUES ('gpt', '{"backend":"local"}');
        INSERT OR IGNORE INTO temp.uq_llms VALUES ('gpt', '{"backend":"openai"}');
        SELECT config FROM temp.uq_llms WHERE name = 'gpt';
        DELETE FROM temp.uq_llms WHERE name = 'gpt';
        SELECT group_concat(name) FROM temp.uq_llms;
        SELECT count(*) FROM uq_llms;
        "#,
    );
    assert_eq!(
        out,
        "0\ngpt|gpt-4o-mini\nsmall|\n{\"max_tokens\":32}\n{\"backend\":\"local\"}\nsmall\n1"
    );
    // Registrations belong to a connection; each connection has its own (empty) registry.
    let out = sb.python_ok(
        r#"
conn.execute("INSERT INTO temp.uq_llms VALUES ('mine', '{}')")
other = connect()
print(conn.execute("SELECT count(*) FROM temp.uq_llms").fetchone()[0],
      other.execute("SELECT count(*) FROM temp.uq_llms").fetchone()[0])
conn.load_extension(EXT)  # loading again keeps the registrations
print(conn.execute("SELECT group_concat(name) FROM temp.uq_llms").fetchone()[0])
"#,
    );
    assert_eq!(out, "1 0\nmine");
    assert!(sb.daemon_pid().is_none(), "the registry needs no daemon");
}

#[test]
fn rejected_configs_are_not_stored() {
    // The errors themselves are pinned in full by errors.rs (golden file errors/llm.txt).
    let sb = Sandbox::new("llms-reject");
    let out = sb.python_ok(
        r#"
conn.execute("INSERT INTO temp.uq_llms VALUES ('a', '{}')")
rejected = 0
for sql in ["INSERT INTO temp.uq_llms VALUES ('gpt', '{\"api_key\":\"sk-x\"}')",
            "INSERT INTO temp.uq_llms VALUES ('x', '[1]')",
            "INSERT INTO temp.uq_llms VALUES ('a', '{}')",
            "UPDATE temp.uq_llms SET config = '{\"api_key\":\"k\"}'"]:
    try:
        conn.execute(sql)
    except sqlite3.Error:
        rejected += 1
conn.execute("UPDATE temp.uq_llms SET config = '[2]' WHERE 0")
print(rejected, conn.execute("SELECT group_concat(name || config) FROM temp.uq_llms").fetchone()[0])
"#,
    );
    assert_eq!(out, "4 a{}", "only the valid registration is stored");
}

#[test]
fn blank_inputs_have_no_claims_without_the_daemon() {
    let sb = Sandbox::new("llm-args");
    let samples = json_lit(&SAMPLES);
    // The errors of bad arguments are pinned in full by errors.rs (golden file errors/llm.txt).
    // Blank inputs have no claims: answered without the daemon.
    let out = sb.sqlite_ok(&format!(
        "SELECT count(*) FROM uq_claims('');
         SELECT count(*) FROM uq_claims(NULL);
         SELECT count(*) FROM uq_claims(' \n ', {OPTS_INLINE});
         SELECT claim_confidence('', {samples}) IS NULL;
         SELECT '[' || uad_filter('  ', {samples}) || ']';
         SELECT count(*) FROM uad_claims('', {samples});",
        OPTS_INLINE = r#"'{"llm":{"max_tokens":8}}'"#
    ));
    assert_eq!(out, "0\n0\n0\n1\n[  ]\n0");
    assert!(sb.daemon_pid().is_none(), "blank inputs need no daemon");
}

/// The happy path against the embedded SmolLM2 (the default backend), with small outputs.
#[test]
fn local_model_generates_decomposes_and_filters() {
    let sb = llm_sandbox("llm-local");
    let samples = json_lit(&SAMPLES);
    let response = lit(RESPONSE);

    // uq_generate: the original answer and 2 samples.
    let prompt = lit("Who was Marie Curie? Answer in one sentence.");
    let sql = format!(
        "{SMALL}
         SELECT json_group_array(json_object('idx', idx, 'response', response, 'temperature', temperature,
           'model', model, 'prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens,
           'cached', cached)) FROM (SELECT * FROM uq_generate({prompt}, 2, {OPTS}) ORDER BY idx);"
    );
    let rows: Vec<Value> = serde_json::from_str(&sb.sqlite_ok(&sql)).expect("json rows");
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["idx"], json!(i), "{r}");
        assert!(r["response"].is_string(), "{r}");
        assert!(!r["model"].as_str().unwrap_or("").is_empty(), "{r}");
        assert!(r["prompt_tokens"].as_i64().is_some_and(|n| n >= 0), "{r}");
        assert!(
            r["completion_tokens"]
                .as_i64()
                .is_some_and(|n| (0..=64).contains(&n)),
            "{r}"
        );
        assert!(matches!(r["cached"].as_i64(), Some(0 | 1)), "{r}");
    }
    assert_eq!(rows[0]["temperature"].as_f64(), Some(0.0), "{rows:?}");
    assert_eq!(rows[1]["temperature"].as_f64(), Some(1.0), "{rows:?}");
    // The same request again comes from the completion cache.
    let again = sb.sqlite_ok(&format!(
        "{SMALL} SELECT cached, response FROM uq_generate({prompt}, 2, {OPTS}) WHERE idx = 0;"
    ));
    assert_eq!(
        again,
        format!("1|{}", rows[0]["response"].as_str().unwrap_or_default()),
        "second call"
    );

    // claim_confidence: in [0, 1], or NULL when the model found no claims.
    let c = sb.sqlite_ok(&format!(
        "{SMALL} SELECT coalesce(x BETWEEN 0 AND 1, 'null') FROM \
         (SELECT claim_confidence({response}, {samples}, {OPTS}) AS x);"
    ));
    assert!(c == "1" || c == "null", "claim_confidence: {c}");

    // UAD on caller-supplied claims (`units`): the filter and the reconstruction, whatever the
    // decomposer does.
    let units = r#""units":["Marie Curie was a physicist and chemist.","Marie Curie won the Nobel Prize in Physics in 1903.","Marie Curie was born in Vienna."]"#;
    let with_units = format!("'{{\"llm\":\"small\",{units}}}'");
    let rows = uad_rows(&sb, &response, &samples, &with_units);
    assert_eq!(rows.len(), 3, "one row per given claim: {rows:?}");
    let refined = sb.sqlite_ok(&format!(
        "{SMALL} SELECT typeof(r), r FROM (SELECT uad_filter({response}, {samples}, {with_units}) AS r);"
    ));
    assert!(refined.starts_with("text|"), "{refined}");
    assert_eq!(
        refined.trim_start_matches("text|"),
        rows[0]["refined"].as_str().unwrap_or_default().trim(),
        "uad_filter and uad_claims disagree"
    );

    // UAD with the decomposition LLM, and uad_filter: text.
    uad_rows(&sb, &response, &samples, OPTS);
    let refined = sb.sqlite_ok(&format!(
        "{SMALL} SELECT typeof(uad_filter({response}, {samples}, {OPTS}));"
    ));
    assert_eq!(refined, "text");

    // uq_claims: at least one claim, idx from 0.
    let claims = sb.sqlite_ok(&format!(
        "{SMALL} SELECT idx, claim FROM uq_claims({}, {OPTS});",
        lit(BIO)
    ));
    let lines: Vec<&str> = claims.lines().collect();
    assert!(
        !lines.is_empty(),
        "the local decomposition LLM found no claims in {BIO:?} (uq_claims returned no rows)"
    );
    assert!(lines[0].starts_with("0|"), "{claims}");
}

/// `uad_claims` rows as JSON objects, checked: idx from 0; kept = score ≥ threshold (a NULL
/// score never kept); pre_confidence = mean of the scores, post_confidence = mean of the kept
/// scores (NULL when none is kept, and then the refined response is the response).
fn uad_rows(sb: &Sandbox, response: &str, samples: &str, options: &str) -> Vec<Value> {
    let sql = format!(
        "{SMALL}
         SELECT json_group_array(json_object('idx', idx, 'claim', claim, 'score', score, 'kept', kept,
           'threshold', threshold, 'pre', pre_confidence, 'post', post_confidence,
           'refined', refined_response)) FROM uad_claims({response}, {samples}, {options});"
    );
    let rows: Vec<Value> = serde_json::from_str(&sb.sqlite_ok(&sql)).expect("json rows");
    let mut kept_scores = Vec::new();
    let mut all_scores = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["idx"], json!(i), "{r}");
        assert!(r["claim"].is_string(), "{r}");
        let threshold = r["threshold"].as_f64().expect("threshold");
        assert!(
            (threshold - 1.0 / 3.0).abs() < 1e-9,
            "default threshold: {r}"
        );
        let kept = r["kept"].as_i64().expect("kept");
        match r["score"].as_f64() {
            Some(s) => {
                assert!((0.0..=1.0).contains(&s), "{r}");
                assert_eq!(
                    kept,
                    (s >= threshold) as i64,
                    "kept = score ≥ threshold: {r}"
                );
                all_scores.push(s);
                if kept == 1 {
                    kept_scores.push(s);
                }
            }
            None => assert_eq!(kept, 0, "a NULL score is never kept: {r}"),
        }
        assert!(!r["refined"].as_str().unwrap_or("").is_empty(), "{r}");
        assert_eq!(
            r["refined"], rows[0]["refined"],
            "one refined response per answer"
        );
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    if let Some(r) = rows.first() {
        match r["post"].as_f64() {
            Some(p) => assert!(
                (p - mean(&kept_scores)).abs() < 1e-9,
                "post_confidence: {rows:?}"
            ),
            None => assert!(
                kept_scores.is_empty(),
                "post_confidence NULL with kept claims: {rows:?}"
            ),
        }
        if !all_scores.is_empty() {
            let pre = r["pre"].as_f64().expect("pre_confidence");
            assert!(
                (pre - mean(&all_scores)).abs() < 1e-9,
                "pre_confidence: {rows:?}"
            );
        }
        if kept_scores.is_empty() {
            assert_eq!(
                r["refined"].as_str(),
                Some(RESPONSE),
                "nothing kept → the response"
            );
        }
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// A fake OpenAI-compatible server

const FAKE_KEY_ENV: &str = "UQ_TEST_FAKE_LLM_KEY";
const FAKE_KEY: &str = "sk-test-fake";
const FAKE_ANSWER: &str = "Marie Curie was a physicist.";
const FAKE_CLAIMS: &str = "### Marie Curie was a physicist.\n### She won two Nobel Prizes.";

/// The shared fake server, answering by model: `flaky` answers 500 the first time and then
/// succeeds; `denied` always answers 401; `claimer` answers two claims in the format of the
/// paper's decomposition prompt; anything else answers [`FAKE_ANSWER`]. A request without the
/// expected bearer key gets 401 too. Errors say `Retry-After: 0`.
fn fake_openai() -> FakeOpenAi {
    let flaky_failed = AtomicBool::new(false);
    FakeOpenAi::with_handler(move |r: &Request| {
        let error = |status, message: &str| {
            Reply::with_header(status, "Retry-After", "0", &error_body(message))
        };
        if r.authorization.as_deref() != Some(&format!("Bearer {FAKE_KEY}"))
            || r.model() == "denied"
        {
            error(401, "Incorrect API key provided")
        } else if r.model() == "flaky" && !flaky_failed.swap(true, Ordering::SeqCst) {
            error(500, "The server had an error, try again")
        } else if r.model() == "claimer" {
            Reply::Text(FAKE_CLAIMS.into())
        } else {
            Reply::Text(FAKE_ANSWER.into())
        }
    })
}

#[test]
fn openai_server_faults_are_retried_or_reported() {
    let fake = fake_openai();
    let sb = llm_sandbox("llm-fake").with_env(FAKE_KEY_ENV, FAKE_KEY);
    let register = |name: &str, model: &str| {
        format!(
            "INSERT INTO temp.uq_llms(name, config) VALUES ('{name}', \
             '{{\"backend\":\"openai\",\"base_url\":\"{}\",\"model\":\"{model}\",\
             \"api_key_env\":\"{FAKE_KEY_ENV}\",\"max_retries\":3,\"timeout_ms\":20000}}');",
            fake.base_url
        )
    };
    // A unique prompt: never in a completion cache.
    let prompt = lit(&format!(
        "Who was Marie Curie? (test {} {})",
        std::process::id(),
        fake.port()
    ));

    // 500, then success: the retry gives the answer.
    let out = sb.sqlite_ok(&format!(
        "{}\nSELECT idx, response, model, prompt_tokens, completion_tokens, cached \
         FROM uq_generate({prompt}, 0, '{{\"llm\":\"flaky-llm\"}}');",
        register("flaky-llm", "flaky")
    ));
    // The model the server names, its usage (10 prompt, 3 completion tokens), not cached.
    assert_eq!(out, format!("0|{FAKE_ANSWER}|flaky-0001|10|3|0"));
    assert_eq!(fake.hits("flaky"), 2, "one 500 and one retry");

    // 401: not retried; the SQL error names the function, the status and the LLM.
    // (its full text is pinned by errors.rs, golden file errors/llm_calls.txt)
    let err = sb.sqlite_err(&format!(
        "{}\nSELECT * FROM uq_generate({prompt}, 0, '{{\"generation_llm\":\"locked-llm\"}}');",
        register("locked-llm", "denied")
    ));
    assert!(
        !err.contains(FAKE_KEY),
        "the key leaked into the error: {err}"
    );
    assert_eq!(fake.hits("denied"), 1, "a 401 is not retried");

    // A registered server decomposes too.
    let out = sb.sqlite_ok(&format!(
        "{}\nSELECT idx, claim FROM uq_claims({}, '{{\"decomposition_llm\":\"claims-llm\"}}');",
        register("claims-llm", "claimer"),
        lit(BIO)
    ));
    assert_eq!(
        out,
        "0|Marie Curie was a physicist.\n1|She won two Nobel Prizes."
    );
    assert_eq!(fake.hits("claimer"), 1);

    // claim_confidence over the fake decomposition (coverage off, so no uncovered sentence is
    // added) equals response_confidence over the same claims given as units: the value is the
    // real NLI model's, the claims are pinned.
    let samples = json_lit(&SAMPLES);
    let out = sb.sqlite_ok(&format!(
        "{}\nSELECT abs(claim_confidence({bio}, {samples}, '{{\"decomposition_llm\":\"claims-llm\",\"coverage\":\"off\"}}') \
                - response_confidence({bio}, {samples}, '{{\"granularity\":\"claim\",\"units\":[\"Marie Curie was a physicist.\",\"She won two Nobel Prizes.\"]}}')) < 1e-12;",
        register("claims-llm", "claimer"),
        bio = lit(BIO)
    ));
    assert_eq!(out, "1");
}

/// UAD never splits tied claims (kept ⇔ score ≥ threshold): three copies of one claim get the
/// same entailment score, so with `threshold_percentile` they are kept together at every
/// percentile, even at 90 and 100 where the threshold IS their score; the fourth claim, which
/// the samples contradict, is kept only when it reaches the threshold. Real daemon and NLI
/// model; the reconstruction LLM is the fake server (`uad_filter` returns its answer).
#[test]
fn uad_claims_keeps_tied_claims_at_every_percentile() {
    let fake = fake_openai();
    let sb = llm_sandbox("uad-ties").with_env(FAKE_KEY_ENV, FAKE_KEY);
    let register = format!(
        "INSERT INTO temp.uq_llms(name, config) VALUES ('rebuilder', \
         '{{\"backend\":\"openai\",\"base_url\":\"{}\",\"model\":\"rebuilder\",\
         \"api_key_env\":\"{FAKE_KEY_ENV}\",\"timeout_ms\":20000}}');",
        fake.base_url
    );
    let tied = "Marie Curie won the Nobel Prize in Physics in 1903.";
    let other = "Marie Curie was born in Vienna.";
    let response = lit(RESPONSE);
    let samples = json_lit(&SAMPLES);
    for q in [0, 10, 50, 90, 100] {
        let options = lit(
            &json!({"scorers": ["entailment"], "units": [tied, tied, tied, other],
                    "threshold_percentile": q, "reconstruction_llm": "rebuilder",
                    // FAKE_ANSWER does not state the tied claim: returned as written.
                    "reconstruction_fallback": false})
            .to_string(),
        );
        let out = sb.sqlite_ok(&format!(
            "{register}
             SELECT json_group_array(json_array(claim, score, kept, threshold))
               FROM uad_claims({response}, {samples}, {options});
             SELECT uad_filter({response}, {samples}, {options});"
        ));
        let (rows, refined) = out.split_once('\n').expect("two results");
        let rows: Vec<Value> = serde_json::from_str(rows).expect("json rows");
        assert_eq!(rows.len(), 4, "q = {q}: {rows:?}");
        let score = |i: usize| rows[i][1].as_f64().expect("score");
        let kept = |i: usize| rows[i][2].as_i64().expect("kept");
        let threshold = rows[0][3].as_f64().expect("threshold");
        assert!(
            score(0) == score(1) && score(1) == score(2),
            "one claim, one score: {rows:?}"
        );
        assert!(
            score(3) < score(0),
            "the contradicted claim scores lower: {rows:?}"
        );
        assert_eq!(
            (kept(0), kept(1), kept(2)),
            (1, 1, 1),
            "q = {q}: tied claims are kept together (threshold {threshold}): {rows:?}"
        );
        assert_eq!(
            kept(3),
            i64::from(score(3) >= threshold),
            "q = {q}: {rows:?}"
        );
        assert_eq!(kept(3), i64::from(q == 0), "q = {q}: {rows:?}");
        assert_eq!(
            refined, FAKE_ANSWER,
            "q = {q}: kept claims are reconstructed"
        );
    }
    assert_eq!(
        fake.hits("rebuilder"),
        2,
        "two kept sets (q = 0 and the rest), each asked once"
    );
}

/// One registered LLM with two replicas (`base_url` a list): the first refuses connections (a
/// port nobody listens on), so every request is answered by the second, through the real
/// extension and daemon; the registry keeps the list as given.
#[test]
fn a_registered_llm_fails_over_across_its_replicas() {
    let fake = fake_openai();
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/v1", l.local_addr().unwrap().port())
    };
    let sb = llm_sandbox("llm-replicas").with_env(FAKE_KEY_ENV, FAKE_KEY);
    let register = format!(
        "INSERT INTO temp.uq_llms(name, config) VALUES ('pool', \
         '{{\"backend\":\"openai\",\"base_url\":[\"{dead}\",\"{}\"],\"model\":\"pooled\",\
         \"api_key_env\":\"{FAKE_KEY_ENV}\",\"max_retries\":0,\"timeout_ms\":20000}}');",
        fake.base_url
    );
    let prompts: Vec<String> = (0..3)
        .map(|i| {
            lit(&format!(
                "Who was Marie Curie? (replicas {i} {} {})",
                std::process::id(),
                fake.port()
            ))
        })
        .collect();
    let selects: String = prompts
        .iter()
        .map(|p| format!("SELECT response FROM uq_generate({p}, 0, '{{\"llm\":\"pool\"}}');\n"))
        .collect();
    let out = sb.sqlite_ok(&format!(
        "{register}\nSELECT json_array_length(config, '$.base_url') FROM temp.uq_llms WHERE name = 'pool';\n{selects}"
    ));
    let expected = std::iter::once("2".to_string())
        .chain(std::iter::repeat_n(FAKE_ANSWER.to_string(), prompts.len()))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        out, expected,
        "with max_retries 0, only failover to the live replica answers"
    );
    assert_eq!(
        fake.hits("pooled"),
        prompts.len(),
        "each prompt reached the live replica once"
    );
}

/// Claims by the bundled SmolLM2: `uad_filter` warns on stderr once per connection (two calls on
/// one connection, one on another), `uq_debug()` has the warning after each call, and
/// `uad_claims` has it in its column `warnings`; given claims bring no such warning.
#[test]
fn uad_filter_warns_once_per_connection_of_claims_by_the_bundled_llm() {
    let sb = llm_sandbox("uad-bundled");
    let out = sb.python(&format!(
        r#"
answer = {answer:?}
samples = json.dumps({samples:?})
given = json.dumps({{"units": ["Marie Curie was a physicist and chemist."]}})
claims = json.dumps({{"granularity": "claim"}})
other = connect()
debug = []
for c, name, options in [(conn, "a", claims), (conn, "a", claims), (other, "b", claims), (other, "b", given)]:
    print(f"-- {{name}}", file=sys.stderr, flush=True)
    c.execute("SELECT uad_filter(?, ?, ?)", (answer, samples, options)).fetchone()
    debug.append("warning: the claims were written by the bundled SmolLM2" in c.execute("SELECT uq_debug()").fetchone()[0])
warnings = [json.loads(r[0]) for r in conn.execute("SELECT DISTINCT warnings FROM uad_claims(?, ?, ?)", (answer, samples, claims))]
# Without option granularity (no capable LLM configured): the sentences, said once.
third = connect()
print("-- c", file=sys.stderr, flush=True)
cleaned = [third.execute("SELECT uad_filter(?, ?)", (answer, samples)).fetchone()[0] for _ in range(2)]
note = third.execute("SELECT uq_debug()").fetchone()[0]
origins = [r[0] for r in third.execute("SELECT origin FROM uad_claims(?, ?)", (answer, samples))]
print(json.dumps(dict(debug=debug, warnings=warnings, cleaned=cleaned, note=note, origins=origins)))
"#,
        answer = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in 1903. She was born in Vienna in 1867.",
        samples = SAMPLES,
    ));
    let stdout = stdout_ok(&out, "the script");
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["debug"], json!([true, true, true, false]), "{v}");
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "one value on every row: {v}");
    assert!(
        warnings[0]
            .as_array()
            .unwrap()
            .contains(&json!(uq_core::protocol::UAD_BUNDLED_LLM_WARNING)),
        "{v}"
    );
    let warning = format!(
        "uad_filter: warning: {}",
        uq_core::protocol::UAD_BUNDLED_LLM_WARNING
    );
    let note = format!(
        "uad_filter: {}",
        uq_core::protocol::UAD_SENTENCE_DEFAULT_NOTE
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("-- a\n{warning}\n-- a\n-- b\n{warning}\n-- b\n-- c\n{note}\n"),
        "once per connection"
    );
    // The sentence filter: the answer's own sentences, no LLM call.
    assert_eq!(
        v["origins"],
        json!(["sentence", "sentence", "sentence"]),
        "{v}"
    );
    let cleaned = v["cleaned"][0].as_str().unwrap();
    assert!(
        cleaned.is_empty() || answer_has_each_sentence_of(cleaned),
        "{v}"
    );
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains(uq_core::protocol::UAD_SENTENCE_DEFAULT_NOTE),
        "{v}"
    );
}

/// Whether every sentence of `cleaned` is a sentence of the answer of
/// [`uad_filter_warns_once_per_connection_of_claims_by_the_bundled_llm`], as written.
fn answer_has_each_sentence_of(cleaned: &str) -> bool {
    let answer = "Marie Curie was a physicist and chemist. She won the Nobel Prize in Physics in \
                  1903. She was born in Vienna in 1867.";
    cleaned
        .split_inclusive(". ")
        .all(|s| answer.contains(s.trim()))
}
