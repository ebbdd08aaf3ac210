//! Unit-QA, short-form and claim-union functions through the real extension and daemon:
//! `uq_scorers()` lists the new scorers, `response_confidence` returns short-form scores (and
//! `uq_debug()` the note of a NULL one), `uq_unit_scores` runs unit-QA on the embedded SmolLM2,
//! and `uq_claim_union` returns a JSON array that graph scorers take back as `claim_union`.

use uq_integration::*;

fn llm_sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(name);
    let cache = sb.dir.join("completions.sqlite").display().to_string();
    sb.with_env("UQ_CACHE_DB", &cache)
}

const RESPONSE: &str = "Paris is the capital of France.";
const SAMPLES: [&str; 2] = [
    "The capital of France is Paris.",
    "France's capital city is Paris.",
];

#[test]
fn catalogue_lists_unit_qa_and_short_form_scorers() {
    let sb = Sandbox::new("unit-qa-catalogue");
    let out = sb.sqlite_ok(
        "SELECT scorer || '|' || family || '|' || granularity || '|' || consistency FROM uq_scorers() \
         WHERE family IN ('unit_qa', 'short_form') ORDER BY scorer, granularity;",
    );
    let rows: Vec<&str> = out.lines().collect();
    for want in [
        "qa_noncontradiction|unit_qa|claim|1-(p_c(a,b)+p_c(b,a))/2",
        "qa_noncontradiction|unit_qa|sentence|1-(p_c(a,b)+p_c(b,a))/2",
        "qa_cosine_sim|unit_qa|claim|cos_hat",
        "qa_bert_score|unit_qa|sentence|bert_f1",
        "qa_exact_match|unit_qa|claim|exact_match",
        "qa_semantic_negentropy|unit_qa|sentence|semantic_negentropy",
        "shortform_semantic_negentropy|short_form|response|semantic_negentropy",
        "shortform_noncontradiction|short_form|response|1-(p_c(a,b)+p_c(b,a))/2",
        "shortform_bert_score|short_form|response|bert_f1",
        "shortform_cosine_sim|short_form|response|cos_hat",
    ] {
        assert!(rows.contains(&want), "{want} missing from\n{out}");
    }
    assert_eq!(rows.len(), 5 * 2 + 4, "{out}");
    let out = sb.sqlite_ok(
        "SELECT count(*) FROM uq_scorers() WHERE family IN ('unit_qa','short_form') \
         AND (cost = '' OR paper_name = '' OR cost IS NULL OR paper_name IS NULL);",
    );
    assert_eq!(out.trim(), "0");
}

#[test]
fn short_form_response_confidence_and_debug_notes() {
    let sb = Sandbox::new("short-form-sql");
    let out = sb.sqlite_ok(&format!(
        "SELECT response_confidence({r}, {s}, '{{\"scorers\":[\"shortform_cosine_sim\"]}}');
         SELECT response_confidence({r}, {s}, '{{\"scorers\":[\"normalized_probability\"],\"response_logprobs\":[-0.6931471805599453,-1.3862943611198906,0]}}');
         SELECT count(*) FROM uq_unit_scores({r}, {s}, '{{\"scorers\":[\"shortform_noncontradiction\"]}}');
         SELECT coalesce(response_confidence({r}, {s}, '{{\"scorers\":[\"normalized_probability\"]}}'), 'NULL');
         SELECT uq_debug();",
        r = lit(RESPONSE),
        s = json_lit(&SAMPLES)
    ));
    let lines: Vec<&str> = out.lines().collect();
    let cos: f64 = lines[0].parse().unwrap_or_else(|_| panic!("{out}"));
    assert!(cos > 0.5 && cos <= 1.0, "{out}");
    let np: f64 = lines[1].parse().unwrap_or_else(|_| panic!("{out}"));
    assert!(
        (np - 0.5).abs() < 1e-9,
        "exp(mean(ln .5, ln .25, 0)) = 0.5: {out}"
    );
    assert_eq!(lines[2], "0", "short-form scorers have no unit rows: {out}");
    assert_eq!(lines[3], "NULL", "{out}");
    assert!(
        out.contains("last score notes: normalized_probability is NULL")
            && out.contains("response_logprobs"),
        "{out}"
    );
    // A bad num_questions is an error: pinned by errors.rs (golden file errors/arguments.txt).
}

#[test]
fn unit_qa_and_claim_union_on_the_local_model() {
    let sb = llm_sandbox("unit-qa-sql");
    let opts = r#"{"llm":{"backend":"local","max_tokens":24},"units":["Paris is the capital of France."],"scorers":["qa_exact_match","qa_noncontradiction"],"qa_samples":2,"prompt":"What is the capital of France?"}"#;
    let out = sb.sqlite_ok(&format!(
        "SELECT unit_idx || '|' || scorer || '|' || score FROM uq_unit_scores({}, {}, {}) ORDER BY scorer;",
        lit(RESPONSE),
        json_lit(&SAMPLES),
        lit(opts)
    ));
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(rows[0][1], "qa_exact_match", "{out}");
    assert_eq!(rows[1][1], "qa_noncontradiction", "{out}");
    for r in &rows {
        let x: f64 = r[2].parse().unwrap_or_else(|_| panic!("{out}"));
        assert!((0.0..=1.0).contains(&x), "{out}");
    }

    // The union starts with the response's claims (here given as units); stored, it is taken
    // back by the graph scorers as claim_union.
    let union_opts = r#"{"granularity":"claim","llm":{"backend":"local","max_tokens":48},"units":["Paris is the capital of France."]}"#;
    let union = sb.sqlite_ok(&format!(
        "SELECT uq_claim_union({}, {}, {});",
        lit(RESPONSE),
        json_lit(&SAMPLES),
        lit(union_opts)
    ));
    let claims: Vec<String> =
        serde_json::from_str(union.trim()).unwrap_or_else(|e| panic!("{e}: {union}"));
    assert_eq!(claims[0], "Paris is the capital of France.", "{union}");
    let graph_opts =
        serde_json::json!({"granularity": "claim", "units": ["Paris is the capital of France."],
        "claim_union": claims, "scorers": ["page_rank"]})
        .to_string();
    let out = sb.sqlite_ok(&format!(
        "SELECT score FROM uq_unit_scores({}, {}, {});",
        lit(RESPONSE),
        json_lit(&SAMPLES),
        lit(&graph_opts)
    ));
    let x: f64 = out.trim().parse().unwrap_or_else(|_| panic!("{out}"));
    assert!((0.0..=1.0).contains(&x), "{out}");

    // Its errors (no server, no samples) are pinned by errors.rs (golden files
    // errors/llm_calls.txt and errors/arguments.txt).
}
