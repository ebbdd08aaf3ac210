//! The soak's load: each client's loop of `score`, `nli` and small whole-table jobs
//! (`job_start` / `job_status`) into a database of its own, and the same queries on a fresh
//! daemon.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection};
use serde::Deserialize;
use serde_json::{json, Value};
use uq_core::protocol::Request;

use super::client::{Conn, Scores, Shared};

/// A SelfCheckGPT WikiBio passage and its sampled passages.
#[derive(Deserialize)]
pub(super) struct Passage {
    pub gpt3_text: String,
    pub gpt3_text_samples: Vec<String>,
}

/// The scores of a `score` result, in order (NULL as NaN).
fn flatten(result: &Value) -> Scores {
    let mut out: Scores = result["scores"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s["score"].as_f64().unwrap_or(f64::NAN))
                .collect()
        })
        .unwrap_or_default();
    if let Some(m) = result["response_scores"].as_object() {
        out.extend(m.values().map(|v| v.as_f64().unwrap_or(f64::NAN)));
    }
    out
}

/// A small table of `rows` passages in `db`, for the jobs.
fn make_job_db(
    db: &Path,
    passages: &[Passage],
    samples: usize,
    first: usize,
    rows: usize,
) -> Result<(), String> {
    let _ = std::fs::remove_file(db);
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE TABLE answers(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
        .map_err(|e| e.to_string())?;
    for i in 0..rows {
        let p = &passages[(first + i) % passages.len()];
        let s =
            serde_json::to_string(&p.gpt3_text_samples[..samples]).map_err(|e| e.to_string())?;
        conn.execute(
            "INSERT INTO answers VALUES (?1, ?2, ?3)",
            params![((first + i) % passages.len()) as i64, p.gpt3_text, s],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The job's stored scores by source key (its rows are passages: each key is a passage index).
fn job_scores(db: &Path, job: i64) -> Result<Vec<(String, Scores)>, String> {
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    let mut st = conn
        .prepare(
            "SELECT a.source_key, s.score FROM uq_answer a JOIN uq_unit u USING (answer_id) \
             JOIN uq_unit_score s USING (unit_id) WHERE a.job_id = ?1 ORDER BY a.source_key, u.position, s.scorer",
        )
        .map_err(|e| e.to_string())?;
    let rows = st
        .query_map([job], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<f64>>(1)?))
        })
        .and_then(|r| r.collect::<Result<Vec<_>, _>>())
        .map_err(|e| e.to_string())?;
    let mut out: Vec<(String, Scores)> = Vec::new();
    for (k, s) in rows {
        match out.last_mut() {
            Some((last, v)) if *last == k => v.push(s.unwrap_or(f64::NAN)),
            _ => out.push((k, vec![s.unwrap_or(f64::NAN)])),
        }
    }
    Ok(out)
}

pub(super) const JOB_OPTIONS: &str =
    r#"{"scorers": ["entailment", "noncontradiction"], "chunk_size": 1, "concurrency": 1}"#;
pub(super) const SCORE_OPTIONS: &str = r#"{"scorers": ["entailment", "noncontradiction", "contrasted_entailment", "luq", "matched_cosine_sim"]}"#;

/// One client's loop: score, nli and job requests in turn until the soak ends.
pub(super) fn run_client(
    id: usize,
    shared: &Shared,
    passages: &[Passage],
    samples: usize,
    dir: &Path,
) {
    let mut conn = Conn::new(shared);
    let score_opts: Value = serde_json::from_str(SCORE_OPTIONS).unwrap_or_default();
    let mut i = id;
    while !shared.stop.load(Ordering::SeqCst) {
        let p = (i * 7 + id) % passages.len();
        let passage = &passages[p];
        match i % 6 {
            0..=3 => {
                let req = Request::Score {
                    response: passage.gpt3_text.clone(),
                    samples: passage.gpt3_text_samples[..samples].to_vec(),
                    options: score_opts.clone(),
                };
                match conn.call(&req) {
                    Ok(r) => shared.check(&format!("score/{p}"), flatten(&r)),
                    Err(e) => shared.error(format!("score: {e}")),
                }
            }
            4 => {
                let pairs: Vec<(String, String)> = passage.gpt3_text_samples[..samples]
                    .iter()
                    .map(|s| (s.clone(), passage.gpt3_text.clone()))
                    .collect();
                match conn.call(&Request::Nli { pairs }) {
                    Ok(r) => {
                        let v: Scores = r
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .map(|x| x["entailment"].as_f64().unwrap_or(f64::NAN))
                                    .collect()
                            })
                            .unwrap_or_default();
                        shared.check(&format!("nli/{p}"), v);
                    }
                    Err(e) => shared.error(format!("nli: {e}")),
                }
            }
            _ => {
                if let Err(e) = run_small_job(&mut conn, shared, passages, samples, dir, id, i) {
                    shared.error(format!("job: {e}"));
                }
            }
        }
        i += 1;
    }
}

/// A job over 3 passages (fewer when there are fewer) into a fresh database of this client; its scores are compared with
/// the first job over the same passages.
fn run_small_job(
    conn: &mut Conn<'_>,
    shared: &Shared,
    passages: &[Passage],
    samples: usize,
    dir: &Path,
    client: usize,
    i: usize,
) -> Result<(), String> {
    let first = (i / 6) % passages.len();
    let db = dir.join(format!("client-{client}.db"));
    let rows = passages.len().min(3);
    make_job_db(&db, passages, samples, first, rows)?;
    let options: serde_json::Map<String, Value> =
        serde_json::from_str(JOB_OPTIONS).map_err(|e| e.to_string())?;
    let job = {
        let mut c = uqd::store::open(&db)?;
        uqd::jobs::create::create_job("uqd bench soak", &mut c, "answers", &options)?
    };
    let dbs = db.display().to_string();
    conn.call(&Request::JobStart {
        db: dbs.clone(),
        job_id: job,
    })?;
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let info = conn.call(&Request::JobStatus {
            db: dbs.clone(),
            job_id: job,
        })?;
        let status = info["status"].as_str().unwrap_or("").to_string();
        if uq_core::jobs::is_final(&status) {
            if status != "done" || info["errors"].as_i64() != Some(0) {
                return Err(format!("job ended {info}"));
            }
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("job still {status} after 600 s"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let scores = job_scores(&db, job)?;
    let distinct: std::collections::BTreeSet<&String> = scores.iter().map(|(k, _)| k).collect();
    if scores.len() != rows || distinct.len() != rows {
        return Err(format!(
            "job {job} stored {} rows ({} distinct keys), not {rows}",
            scores.len(),
            distinct.len()
        ));
    }
    shared.counters.jobs_done.fetch_add(1, Ordering::SeqCst);
    shared
        .counters
        .job_rows
        .fetch_add(rows as u64, Ordering::SeqCst);
    for (k, s) in scores {
        shared.check(&format!("job/{k}"), s);
    }
    Ok(())
}

/// The scores of one soak query (`score/P`, `job/P` or `nli/P` of passage P) on `conn`.
pub(super) fn fresh_scores(
    conn: &mut Conn,
    kind: &str,
    passage: &Passage,
    samples: &[String],
    score_opts: &Value,
) -> Result<Scores, String> {
    match kind {
        "score" | "job" => {
            let opts = if kind == "score" {
                score_opts.clone()
            } else {
                json!({"scorers": ["entailment", "noncontradiction"]})
            };
            conn.call(&Request::Score {
                response: passage.gpt3_text.clone(),
                samples: samples.to_vec(),
                options: opts,
            })
            .map(|r| {
                if kind == "score" {
                    flatten(&r)
                } else {
                    job_order(&r)
                }
            })
        }
        _ => {
            let pairs: Vec<(String, String)> = samples
                .iter()
                .map(|s| (s.clone(), passage.gpt3_text.clone()))
                .collect();
            conn.call(&Request::Nli { pairs }).map(|r| {
                r.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x["entailment"].as_f64().unwrap_or(f64::NAN))
                            .collect()
                    })
                    .unwrap_or_default()
            })
        }
    }
}

/// The unit scores of a `score` result in the order a job stores them: by position, then scorer.
fn job_order(r: &Value) -> Scores {
    let mut by: Vec<(i64, String, f64)> = r["scores"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["unit_idx"].as_i64().unwrap_or(0),
                        s["scorer"].as_str().unwrap_or("").to_string(),
                        s["score"].as_f64().unwrap_or(f64::NAN),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    by.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    by.into_iter().map(|x| x.2).collect()
}
