//! The extension in the stock sqlite3 CLI, against the real daemon and the real NLI model.

use uq_integration::*;

fn floats(s: &str) -> Vec<f64> {
    s.lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a number: {l:?}"))
        })
        .collect()
}

#[test]
fn version_sentences_and_debug() {
    let sb = Sandbox::new("cli-basic");
    let v = sb.sqlite_ok("SELECT uq_version();");
    // The extension crate's own version (ext/Cargo.toml), with a "v".
    let manifest = std::fs::read_to_string(root().join("ext/Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .expect("ext/Cargo.toml has a version")
        .trim_matches('"');
    assert_eq!(v, format!("v{version}"));

    let rows = sb.sqlite_ok(
        "SELECT idx || '|' || sentence FROM uq_sentences('Dr. Smith went to Washington. He arrived at 5 p.m. on Monday. It cost 3.5 dollars.');",
    );
    assert_eq!(
        rows.lines().collect::<Vec<_>>(),
        vec![
            "0|Dr. Smith went to Washington.",
            "1|He arrived at 5 p.m. on Monday.",
            "2|It cost 3.5 dollars."
        ]
    );
    assert_eq!(
        sb.sqlite_ok("SELECT count(*) FROM uq_sentences('   ');"),
        "0"
    );

    // uq_debug never starts the daemon; after a daemon-backed call it reports it.
    let before = sb.sqlite_ok("SELECT uq_debug();");
    assert!(
        before.contains(&sb.socket.display().to_string()),
        "{before}"
    );
    let after = sb.sqlite_ok("SELECT uq_nli('a', 'a') IS NOT NULL; SELECT uq_debug();");
    assert!(
        after.contains("nli-minilm-l6") || after.contains("models/nli"),
        "debug lacks the model: {after}"
    );
    assert!(
        after.contains("cpu") || after.contains("cuda"),
        "debug lacks the device: {after}"
    );
    // Which NLI file runs: make setup optimizes the default model, and auto runs int8 on the CPU.
    assert!(
        after.contains("precision: int8") && after.contains("model_opt_int8.onnx"),
        "debug lacks the NLI file and precision: {after}"
    );
}

#[test]
fn nli_reads_label_order_from_the_model() {
    let sb = Sandbox::new("cli-nli");
    let out = sb.sqlite_ok(
        "SELECT json_extract(uq_nli('A man is playing a guitar on stage.', 'A person plays an instrument.'), '$.entailment');
         SELECT json_extract(uq_nli('A man is playing a guitar on stage.', 'Nobody is playing music.'), '$.contradiction');
         SELECT json_extract(j, '$.entailment') + json_extract(j, '$.neutral') + json_extract(j, '$.contradiction')
           FROM (SELECT uq_nli('The cat sat on the mat.', 'A dog barked.') AS j);",
    );
    let v = floats(&out);
    assert!(v[0] > 0.5, "entailment {}", v[0]);
    assert!(v[1] > 0.5, "contradiction {}", v[1]);
    assert!((v[2] - 1.0).abs() < 1e-6, "probabilities sum to {}", v[2]);
}

#[test]
fn unit_scores_rows_and_response_confidence() {
    let sb = Sandbox::new("cli-scores");
    let samples = json_lit(&SAMPLES);
    let resp = lit(RESPONSE);
    let out = sb.sqlite_ok(&format!(
        "SELECT unit_idx || '|' || scorer || '|' || score FROM uq_unit_scores({resp}, {samples}, NULL) ORDER BY unit_idx, scorer;"
    ));
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 9, "3 sentences x 3 default scorers: {out}");
    let scorers: Vec<&str> = rows[..3].iter().map(|r| r[1]).collect();
    assert_eq!(
        scorers,
        vec!["contrasted_entailment", "entailment", "noncontradiction"]
    );
    let score = |unit: &str, scorer: &str| -> f64 {
        rows.iter()
            .find(|r| r[0] == unit && r[1] == scorer)
            .expect("row")[2]
            .parse()
            .expect("f64")
    };
    for r in &rows {
        let s: f64 = r[2].parse().expect("f64");
        assert!((0.0..=1.0).contains(&s), "score out of [0,1]: {r:?}");
    }
    // The supported sentences are more entailed by the samples than the invented birthplace.
    assert!(score("0", "entailment") > score("2", "entailment"));
    assert!(score("1", "entailment") > score("2", "entailment"));

    // response_confidence = mean of the unit scores (default scorer: entailment); min with "min".
    let check = sb.sqlite_ok(&format!(
        "SELECT response_confidence({resp}, {samples}) - (SELECT avg(score) FROM uq_unit_scores({resp}, {samples}, '{{\"scorers\":[\"entailment\"]}}'));
         SELECT response_confidence({resp}, {samples}, '{{\"aggregation\":\"min\",\"scorers\":[\"noncontradiction\"]}}')
              - (SELECT min(score) FROM uq_unit_scores({resp}, {samples}, '{{\"scorers\":\"noncontradiction\"}}'));"
    ));
    for d in floats(&check) {
        assert!(d.abs() < 1e-9, "aggregate differs from SQL by {d}");
    }
}

#[test]
fn matched_unit_scorers_units_option_and_aliases() {
    let sb = Sandbox::new("cli-matched");
    let samples = json_lit(&SAMPLES);
    let out = sb.sqlite_ok(&format!(
        "SELECT scorer || '|' || count(*) || '|' || (min(score) >= 0 AND max(score) <= 1)
           FROM uq_unit_scores('', {samples}, '{{\"units\":[\"Marie Curie was a chemist.\",\"She was born in Vienna.\"],
              \"scorers\":[\"luq_pair\",\"matched_entailment\",\"matched_noncontradiction\",\"matched_cosine_sim\",\"matched_bert_score\",\"luq\"]}}')
          GROUP BY scorer ORDER BY scorer;"
    ));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec![
            "contrasted_entailment|2|1",
            "matched_bert_score|2|1",
            "matched_contrasted_entailment|2|1",
            "matched_cosine_sim|2|1",
            "matched_entailment|2|1",
            "matched_noncontradiction|2|1",
        ]
    );
    // The unit given verbatim is the unit scored.
    let unit = sb.sqlite_ok(&format!(
        "SELECT DISTINCT unit FROM uq_unit_scores('ignored when units are given', {samples}, '{{\"units\":[\"Marie Curie was a chemist.\"]}}');"
    ));
    assert_eq!(unit, "Marie Curie was a chemist.");
    // A supported claim is closer to the samples' sentences than an invented one, by every matched scorer.
    let cmp = sb.sqlite_ok(&format!(
        "SELECT a.scorer || '|' || (a.score > b.score) FROM
           uq_unit_scores('', {samples}, '{{\"units\":[\"Marie Curie won the Nobel Prize in Physics in 1903.\",\"Marie Curie invented the telephone in Canada.\"],\"scorers\":[\"matched_entailment\",\"matched_cosine_sim\",\"matched_bert_score\"]}}') a
           JOIN uq_unit_scores('', {samples}, '{{\"units\":[\"Marie Curie won the Nobel Prize in Physics in 1903.\",\"Marie Curie invented the telephone in Canada.\"],\"scorers\":[\"matched_entailment\",\"matched_cosine_sim\",\"matched_bert_score\"]}}') b
           ON a.scorer = b.scorer AND a.unit_idx = 0 AND b.unit_idx = 1 ORDER BY a.scorer;"
    ));
    assert_eq!(
        cmp.lines().collect::<Vec<_>>(),
        vec![
            "matched_bert_score|1",
            "matched_cosine_sim|1",
            "matched_entailment|1"
        ]
    );
}

#[test]
fn scorer_catalogue_lists_every_scorer_and_granularity() {
    let sb = Sandbox::new("cli-scorers");
    let out = sb.sqlite_ok(
        "SELECT count(*), count(DISTINCT scorer), sum(granularity = 'claim'), sum(family = 'graph') FROM uq_scorers();
         SELECT paper_name FROM uq_scorers WHERE scorer = 'contrasted_entailment' ORDER BY granularity;
         SELECT paper_name FROM uq_scorers WHERE scorer = 'matched_contrasted_entailment' AND granularity = 'sentence';
         SELECT count(*) FROM uq_scorers WHERE family = 'graph' AND granularity = 'sentence';",
    );
    // 43 scorers: 23 at both granularities (incl. the 5 unit-QA ones, the 2 n-gram ones, the 3
    // grounded ones, the ensemble and the 3 claim_* white-box ones), the 5 graph scorers at
    // claims only, the 4 short-form and 11 white-box scorers at the response level.
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec!["66|43|28|5", "LUQ-atomic", "LUQ", "LUQ-pair", "0"],
        "{out}"
    );
    let names = sb.sqlite_ok("SELECT group_concat(DISTINCT scorer) FROM uq_scorers();");
    assert!(
        names.contains("page_rank") && names.contains("verbalized_confidence"),
        "{names}"
    );
}
