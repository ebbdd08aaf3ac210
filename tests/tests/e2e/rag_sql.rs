//! A RAG user's first hour, replayed in the real `sqlite3` with the real daemon and NLI model
//! (issue 39): six passages in an FTS5 table, six answers (supported, one invented sentence,
//! off-topic) with the passages their RAG step used in `context`. Invented sentences score below
//! supported ones; the inputs that once hid their real error behind a `samples_json` message
//! give their own (golden texts in `tests/golden/errors/rag.txt`); the LLM-free sentence filter
//! keeps the supported sentences in order; the job and the highlight work. Then every SQL block
//! of docs/reference.md's "Checking RAG answers" runs, in order, on a database file. Scores are
//! compared with each other (invented < supported), never with fixed figures, so another NLI
//! model passes too.

use serde_json::Value;
use uq_integration::golden::Golden;
use uq_integration::*;

/// The six passages (FTS5 table `docs`).
const DOCS: [&str; 6] = [
    "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair.",
    "The Great Wall of China is thousands of kilometres long. Most of the wall standing today was built during the Ming dynasty.",
    "Mount Everest is the highest mountain above sea level. It stands on the border between Nepal and China.",
    "The Amazon river flows through Brazil into the Atlantic Ocean. Its basin holds the largest rainforest on Earth.",
    "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
    "Penicillin was discovered by Alexander Fleming in 1928. It was the first widely used antibiotic.",
];

/// The answers: (question, answer, index of its passage in [`DOCS`], its invented sentence).
const ANSWERS: [(&str, &str, usize, Option<&str>); 6] = [
    (
        "When was the Eiffel Tower completed?",
        "The Eiffel Tower is in Paris. It was completed in 1889.",
        0,
        None,
    ),
    (
        "Where is Mount Everest?",
        "Mount Everest is the highest mountain above sea level. It stands on the border between Nepal and China.",
        2,
        None,
    ),
    (
        "Who discovered penicillin?",
        "Penicillin was discovered by Alexander Fleming in 1928. Fleming later became the mayor of London.",
        5,
        Some("Fleming later became the mayor of London."),
    ),
    (
        "Where was Marie Curie born?",
        "Marie Curie was born in Warsaw in 1867. She was the first woman to climb Mount Everest. She won the Nobel Prize in Physics in 1903.",
        4,
        Some("She was the first woman to climb Mount Everest."),
    ),
    (
        "Where does the Amazon flow?",
        "The Amazon river flows through Brazil into the Atlantic Ocean.",
        3,
        None,
    ),
    (
        "How long is the Great Wall?",
        "Bananas are a good source of potassium.",
        1,
        Some("Bananas are a good source of potassium."),
    ),
];

/// Options of the grounded checks against the FTS5 table.
const FTS: &str = r#""sources":{"fts":"docs","k":3}"#;

/// The SQL that creates and fills `docs` and `answers`.
fn setup_sql() -> String {
    let docs: Vec<String> = DOCS.iter().map(|d| format!("({})", lit(d))).collect();
    let answers: Vec<String> = ANSWERS
        .iter()
        .enumerate()
        .map(|(i, (q, a, doc, _))| {
            format!("({}, {}, {}, {})", i + 1, lit(q), lit(a), lit(DOCS[*doc]))
        })
        .collect();
    format!(
        "CREATE VIRTUAL TABLE docs USING fts5(body);\n\
         INSERT INTO docs(body) VALUES {};\n\
         CREATE TABLE answers(id INTEGER PRIMARY KEY, question TEXT, answer TEXT, context TEXT);\n\
         INSERT INTO answers VALUES {};",
        docs.join(", "),
        answers.join(", ")
    )
}

/// A database file in `sb` holding the scenario's tables.
fn scenario_db(sb: &Sandbox) -> String {
    let db = sb.dir.join("rag.db").display().to_string();
    stdout_ok(&sb.sqlite_on(&db, &setup_sql()), "setup");
    db
}

fn ok_on(sb: &Sandbox, db: &str, sql: &str) -> String {
    stdout_ok(&sb.sqlite_on(db, sql), sql)
}

/// One JSON value per output line.
fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn rag_scenario_in_sqlite3() {
    let sb = Sandbox::new("rag");
    let db = scenario_db(&sb);

    // Every sentence against the FTS5 table: the invented ones below every supported one.
    let rows = json_lines(&ok_on(
        &sb,
        &db,
        &format!(
            "SELECT json_object('id', a.id, 'unit', u.unit, 'score', u.score) FROM answers a, \
             uq_unit_scores(a.answer, NULL, '{{\"scorers\":[\"grounded_entailment\"],{FTS}}}') u \
             ORDER BY a.id, u.unit_idx;"
        ),
    ));
    let invented: Vec<&str> = ANSWERS.iter().filter_map(|a| a.3).collect();
    let (mut worst_supported, mut best_invented) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in &rows {
        let unit = r["unit"].as_str().unwrap();
        // The off-topic answer retrieves nothing: NULL, which counts as unsupported.
        let score = r["score"].as_f64().unwrap_or(0.0);
        if invented.contains(&unit) {
            best_invented = best_invented.max(score);
        } else {
            worst_supported = worst_supported.min(score);
        }
    }
    assert_eq!(rows.len(), 11, "{rows:?}");
    assert!(
        best_invented < worst_supported,
        "invented {best_invented} vs supported {worst_supported}: {rows:?}"
    );

    // Per answer, min against its own context: every answer with an invented sentence ranks
    // below every fully supported one; the mean hides it (it stays above the min).
    let per_answer = json_lines(&ok_on(
        &sb,
        &db,
        "SELECT json_object('id', id, \
           'min', response_confidence(answer, NULL, json_object('scorers', json_array('grounded_entailment'), 'aggregation', 'min', 'sources', context)), \
           'mean', response_confidence(answer, NULL, json_object('scorers', json_array('grounded_entailment'), 'sources', context))) \
         FROM answers ORDER BY id;",
    ));
    let min_of = |i: usize| per_answer[i]["min"].as_f64().unwrap();
    let flawed = [2, 3, 5];
    for f in flawed {
        for good in [0, 1, 4] {
            assert!(min_of(f) < min_of(good), "{per_answer:?}");
        }
    }
    for i in [2, 3] {
        let mean = per_answer[i]["mean"].as_f64().unwrap();
        assert!(mean > min_of(i), "{per_answer:?}");
    }

    // The LLM-free filter: the sentences scoring at least 0.5, in order, as written; the
    // invented ones gone; the same as the unit scores say; no LLM call (uq_debug's notes).
    let filter = |sources: &str| {
        ok_on(
            &sb,
            &db,
            &format!(
                "SELECT json_object('id', id, 'kept', uad_filter(answer, NULL, \
                   json_object('granularity', 'sentence', 'scorers', json_array('grounded_entailment'), \
                     'sources', {sources}, 'threshold', 0.5)), \
                   'expected', (SELECT coalesce(group_concat(unit, ' '), '') FROM (SELECT unit FROM \
                     uq_unit_scores(answer, NULL, json_object('scorers', json_array('grounded_entailment'), \
                       'sources', {sources})) WHERE score >= 0.5 ORDER BY unit_idx))) \
                 FROM answers ORDER BY id;"
            ),
        )
    };
    for sources in ["context", r#"json('{"fts":"docs","k":3}')"#] {
        let kept = json_lines(&filter(sources));
        for (r, (_, answer, _, bad)) in kept.iter().zip(ANSWERS) {
            let text = r["kept"].as_str().unwrap();
            assert_eq!(text, r["expected"].as_str().unwrap(), "{sources}: {r}");
            if let Some(bad) = bad {
                assert!(!text.contains(bad), "{sources}: {r}");
            }
            let sentences: Vec<&str> = text.split_inclusive(". ").map(str::trim).collect();
            let mut from = 0;
            for s in sentences.iter().filter(|s| !s.is_empty()) {
                let at = answer[from..]
                    .find(s)
                    .unwrap_or_else(|| panic!("{s:?} in order in {answer:?}"));
                from += at + s.len();
            }
        }
        assert_eq!(
            kept[2]["kept"],
            "Penicillin was discovered by Alexander Fleming in 1928."
        );
        assert_eq!(
            kept[3]["kept"],
            "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."
        );
        assert_eq!(kept[5]["kept"], "", "the off-topic answer keeps nothing");
    }
    let claims = ok_on(
        &sb,
        &db,
        &format!(
            "SELECT json_group_array(json_object('claim', claim, 'kept', kept, 'origin', origin, \
               'verified', verified)) FROM uad_claims((SELECT answer FROM answers WHERE id = 4), NULL, \
               '{{\"granularity\":\"sentence\",\"scorers\":[\"grounded_entailment\"],{FTS},\"threshold\":0.5}}');"
        ),
    );
    let claims: Value = serde_json::from_str(&claims).unwrap();
    let kept: Vec<i64> = claims
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kept"].as_i64().unwrap())
        .collect();
    assert_eq!(kept, [1, 0, 1], "{claims}");
    assert!(claims
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["origin"] == "sentence" && c["verified"] == 0));

    // The inputs that used to answer with a samples_json message give their own errors.
    let mut g = Golden::new(
        "errors/rag.txt",
        "# The errors of the RAG scenario (issue 39): options are checked before samples_json.\n\
         # Pinned by tests/tests/e2e/rag_sql.rs: each case runs in its own `sqlite3 -bail -batch` on\n\
         # the scenario's database, whose line 1 is `.load $DIST/uq0`. After an intended change:\n\
         # UQ_BLESS=1 cargo test --release -p uq-integration --test e2e rag_sql::, then review the diff.",
    );
    g.replace(sb.dir.display(), "$SANDBOX");
    g.replace(dist().display(), "$DIST");
    for (title, sql) in [
        (
            "a misspelt scorer, samples_json NULL",
            r#"SELECT * FROM uq_unit_scores((SELECT answer FROM answers WHERE id = 1), NULL, '{"scorers":["grounded_entailmnt"],"sources":{"fts":"docs"}}');"#,
        ),
        (
            "options not JSON, samples_json '[]'",
            r#"SELECT * FROM uq_unit_scores((SELECT answer FROM answers WHERE id = 1), '[]', '{"scorers":["grounded_entailment"],"sources":{"fts":"docs"},}');"#,
        ),
        (
            "a misspelt option, samples_json NULL",
            r#"SELECT response_confidence(answer, NULL, '{"scorers":["grounded_entailment"],"source":{"fts":"docs"}}') FROM answers;"#,
        ),
        (
            "a sample scorer beside a grounded one, samples_json NULL",
            r#"SELECT * FROM answers, uq_unit_scores(answer, NULL, '{"scorers":["grounded_entailment","entailment"],"sources":{"fts":"docs"}}');"#,
        ),
        (
            "a job: source_column for sources_column",
            r#"SELECT uq_score_table('answers', '{"source_column":"context","scorers":["grounded_entailment"]}');"#,
        ),
        (
            "a job: chunk for chunk_size",
            r#"SELECT uq_score_table('answers', '{"sources_column":"context","scorers":["grounded_entailment"],"chunk":2}');"#,
        ),
    ] {
        let err = stderr_err(&sb.sqlite_on(&db, sql), sql);
        assert!(
            !err.contains("samples_json") || title.contains("sample scorer"),
            "{err}"
        );
        g.add(title, sql, "error", &err);
    }
    g.check();

    // The job over the context column: the filtered answers as the function gives them, the
    // flawed answers' min below the others', and the highlight marks the invented sentences.
    let status = ok_on(
        &sb,
        &db,
        r#"SELECT uq_wait(uq_score_table('answers', '{"sources_column":"context","scorers":["grounded_entailment"],"aggregation":"min","uad":true,"threshold":0.5}'), 300);"#,
    );
    assert_eq!(status, "done");
    let jobs = ok_on(
        &sb,
        &db,
        "SELECT job_id, status, total, done, errors FROM uq_jobs;",
    );
    assert_eq!(jobs, "1|done|6|6|0");
    let same = ok_on(
        &sb,
        &db,
        "SELECT count(*), sum(d.refined_response = uad_filter(x.answer, NULL, json_object('granularity', 'sentence', \
           'scorers', json_array('grounded_entailment'), 'sources', x.context, 'threshold', 0.5))) \
         FROM uq_uad d JOIN uq_answer a ON a.answer_id = d.answer_id JOIN answers x ON x.id = a.source_key;",
    );
    assert_eq!(same, "6|6");
    let order = ok_on(
        &sb,
        &db,
        "SELECT group_concat(source_key, ',') FROM (SELECT source_key FROM uq_scored_answers \
         WHERE scorer = 'grounded_entailment' ORDER BY score);",
    );
    let ranked: Vec<&str> = order.split(',').collect();
    let mut low: Vec<&str> = ranked[..3].to_vec();
    low.sort();
    assert_eq!(low, ["3", "4", "6"], "{order}");
    let highlighted = ok_on(
        &sb,
        &db,
        "SELECT json_object('id', a.source_key, 'text', uq_highlight(a.answer, u.unit, u.score, u.scorer, '{\"format\":\"text\"}')) \
         FROM uq_scored_units u JOIN uq_answer a ON a.answer_id = u.answer_id \
         WHERE u.scorer = 'grounded_entailment' GROUP BY a.answer_id ORDER BY a.answer_id;",
    );
    // The view carries each unit's answer text (schema v6), the same as uq_answer's.
    let carried = ok_on(
        &sb,
        &db,
        "SELECT count(*), sum(u.answer = a.answer) FROM uq_scored_units u \
         JOIN uq_answer a ON a.answer_id = u.answer_id;",
    );
    assert_eq!(carried, "11|11");
    for (h, (_, answer, _, bad)) in json_lines(&highlighted).iter().zip(ANSWERS) {
        let text = h["text"].as_str().unwrap();
        match bad {
            Some(bad) => assert!(marked(text, bad), "{h}"),
            None => assert_eq!(text, answer, "nothing marked: {h}"),
        }
    }
}

/// Whether `sentence` is marked in a text-format highlight: `[!…]` unsupported or `[?…]`
/// doubtful.
fn marked(text: &str, sentence: &str) -> bool {
    text.contains(&format!("[!{sentence}]")) || text.contains(&format!("[?{sentence}]"))
}

/// The ```sql blocks of docs/reference.md's "Checking RAG answers", in order.
fn reference_rag_blocks() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/reference.md")).expect("reference");
    let start = text
        .find("\n## Checking RAG answers\n")
        .expect("the RAG section");
    let section = &text[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    section
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

#[test]
fn reference_rag_section_runs_in_sqlite3() {
    let blocks = reference_rag_blocks();
    assert_eq!(blocks.len(), 6, "the section's SQL blocks");
    let sb = Sandbox::new("rag-doc");
    let db = sb.dir.join("rag.db").display().to_string();
    let outputs: Vec<String> = blocks
        .iter()
        .map(|b| {
            // The first block loads the extension as a user would; the sandbox loads it already.
            let sql = b.replace(".load dist/uq0\n", "");
            ok_on(&sb, &db, &sql)
        })
        .collect();
    // Scores per sentence: the invented and the off-topic sentence below the supported ones.
    let score = |line: &str| line.rsplit('|').next().unwrap().parse::<f64>().unwrap();
    let lines: Vec<&str> = outputs[1].lines().collect();
    assert_eq!(lines.len(), 5, "{}", outputs[1]);
    let (bad, good): (Vec<&str>, Vec<&str>) = lines
        .iter()
        .partition(|l| l.contains("mayor of London") || l.contains("Bananas"));
    let best_bad = bad
        .iter()
        .map(|l| score(l))
        .fold(f64::NEG_INFINITY, f64::max);
    let worst_good = good.iter().map(|l| score(l)).fold(f64::INFINITY, f64::min);
    assert!(best_bad < worst_good, "{}", outputs[1]);
    // The answer's weakest sentence: the supported answer above the two others, both ways.
    let weakest: Vec<Vec<f64>> = outputs[2]
        .lines()
        .map(|l| l.split('|').skip(1).map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(weakest.len(), 3, "{}", outputs[2]);
    assert_eq!(weakest[1].len(), 2, "{}", outputs[2]);
    for ((first, second), third) in weakest[0].iter().zip(&weakest[1]).zip(&weakest[2]) {
        assert!(second > first && second > third, "{}", outputs[2]);
    }
    // The filter keeps the supported sentences.
    assert_eq!(
        outputs[3],
        "1|Penicillin was discovered by Alexander Fleming in 1928.\n\
         2|Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.\n\
         3|"
    );
    // The job: done, then the answers from the least supported up, each filtered as above.
    let mut job = outputs[4].lines();
    assert_eq!(job.next(), Some("done"));
    let rows: Vec<&str> = job.collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[2].starts_with("2|") && rows[2].ends_with("|Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."), "{rows:?}");
    // Highlighting: the invented and the off-topic sentence marked, the supported answer not.
    let lines: Vec<&str> = outputs[5].lines().collect();
    assert_eq!(lines.len(), 3, "{}", outputs[5]);
    assert!(
        marked(lines[0], "Fleming later became the mayor of London."),
        "{}",
        outputs[5]
    );
    assert!(lines[0].starts_with("1|Penicillin was discovered by Alexander Fleming in 1928. ["));
    assert_eq!(
        lines[1],
        "2|Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."
    );
    assert!(
        marked(lines[2], "Bananas are a good source of potassium."),
        "{}",
        outputs[5]
    );
}
