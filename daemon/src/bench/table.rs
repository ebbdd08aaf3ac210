//! `uqd bench table`: a whole-table job (as `uq_score_table` / `uqd score` run it) over the
//! SelfCheckGPT WikiBio passages loaded into a fresh database: rows/s, NLI pairs/s and peak RSS
//! of the job, then a second job over the same table (a new run) on the warm caches, and its
//! speed-up. Prints one JSON object.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rusqlite::{params, Connection};
use serde::Deserialize;
use serde_json::json;

use super::common::{load_jsonl, peak_rss_mb, round};
use crate::engine::Engine;
use crate::jobs::{create::create_job, run::run_job};
use crate::role_llms::LlmService;

#[derive(Deserialize)]
struct Passage {
    gpt3_text: String,
    gpt3_text_samples: Vec<String>,
}

pub struct TableArgs<'a> {
    pub data: &'a Path,
    pub samples: usize,
    pub limit: Option<usize>,
    /// Scoring options of the job (JSON object; default: the default scorers).
    pub options: &'a str,
    pub concurrency: usize,
}

pub fn table(engine: &Engine, llm: &LlmService, args: &TableArgs) -> Result<(), String> {
    let passages: Vec<Passage> = load_jsonl(args.data, args.limit)?;
    let dir = std::env::temp_dir().join(format!("uqd-bench-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let db = dir.join("bench.db");
    let _ = std::fs::remove_file(&db);
    let mut conn = Connection::open(&db).map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE TABLE passages(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
        .map_err(|e| e.to_string())?;
    {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        for (i, p) in passages.iter().enumerate() {
            if p.gpt3_text_samples.len() < args.samples {
                return Err(format!(
                    "--samples {} but passage {i} has only {} samples",
                    args.samples,
                    p.gpt3_text_samples.len()
                ));
            }
            let samples = serde_json::to_string(&p.gpt3_text_samples[..args.samples])
                .map_err(|e| e.to_string())?;
            tx.execute(
                "INSERT INTO passages VALUES (?1, ?2, ?3)",
                params![i as i64, p.gpt3_text, samples],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
    }
    let mut options: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(args.options).map_err(|e| format!("--options: {e}"))?;
    options.insert("concurrency".into(), json!(args.concurrency));
    let mut run = |label: &str| -> Result<(f64, u64, String), String> {
        let job = create_job("uqd bench table", &mut conn, "passages", &options)?;
        let pairs0 = engine.nli_pairs_computed();
        let t = Instant::now();
        let status = run_job(engine, llm, &db, job, &AtomicBool::new(false), &mut |p| {
            eprint!("\r{label}: {}/{} rows", p.done, p.total);
        })?;
        eprintln!();
        Ok((
            t.elapsed().as_secs_f64(),
            engine.nli_pairs_computed() - pairs0,
            status,
        ))
    };
    let (wall, pairs, status) = run("cold")?;
    let rss = peak_rss_mb();
    let (warm_wall, _, warm_status) = run("warm")?;
    let rows = passages.len() as f64;
    let stored: i64 = conn
        .query_row("SELECT count(*) FROM uq_unit_score", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    println!(
        "{}",
        json!({
            "bench": "table", "rows": passages.len(), "samples": args.samples,
            "status": [status, warm_status], "unit_scores_stored": stored,
            "wall_s": round(wall), "rows_per_s": round(rows / wall),
            "nli_pairs": pairs, "nli_pairs_per_s": round(pairs as f64 / wall),
            "peak_rss_mb": round(rss),
            "warm_wall_s": round(warm_wall), "warm_rows_per_s": round(rows / warm_wall),
            "warm_speedup": round(wall / warm_wall),
        })
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
