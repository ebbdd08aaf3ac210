//! `uqd bench table`: a whole-table job (as `uq_score_table` / `uqd score` run it) over the
//! SelfCheckGPT WikiBio passages loaded into a fresh database: rows/s, NLI pairs/s and peak RSS
//! of the job, the NLI batch it ran at, its padding (`pad_ratio`) and tokens per comparison, the
//! raw model's pairs/s at that batch (on a sample of the job's pairs), then a second job over the
//! same table (a new run) on the warm caches, and its speed-up. Prints one JSON object.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rusqlite::{params, Connection};
use serde::Deserialize;
use serde_json::json;

use uq_core::decompose::split_sentences;
use uq_core::score::premise::{default_premise, Premise};
use uq_core::scorers::Granularity;

use super::host::HostStart;
use super::lines::{load_jsonl, round};
use super::options::Job;
use super::procfs::peak_rss_mb;
use super::raw::raw_ceiling;
use uqd::engine::Engine;
use uqd::jobs::{create::create_job, run::run_job};
use uqd::role_llms::LlmService;

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
    /// Rows scored at once (`None`: the device's default).
    pub concurrency: Option<usize>,
    /// NLI pairs of the raw-model measurement (0: skipped).
    pub raw_pairs: usize,
}

/// Runs the benchmark and prints its JSON line.
pub fn table(engine: &Engine, llm: &LlmService, args: &TableArgs) -> Result<(), String> {
    let passages: Vec<Passage> = load_jsonl(args.data, args.limit)?;
    let dir = std::env::temp_dir().join(format!("uqd-bench-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let db = dir.join("bench.db");
    let mut conn = passages_db(&db, &passages, args.samples)?;
    let (options, concurrency, premise) = job_options(engine, args)?;
    let (tokens0, pad0) = (engine.nli_tokens_computed(), engine.nli_pad_stats());
    let host0 = HostStart::now(engine);
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
    let tokens = engine.nli_tokens_computed() - tokens0;
    let pad = engine.nli_pad_stats().since(&pad0);
    let host = host0.fields(engine, pairs, &pad);
    let (warm_wall, _, warm_status) = run("warm")?;
    let rows = passages.len() as f64;
    // The raw model on a sample of the job's unit-response pairs (sentences of the answer).
    let jobs = sentence_jobs(&passages, args.samples);
    let (raw, raw_pairs) = raw_ceiling(engine, &jobs, false, false, premise, args.raw_pairs)?;
    let stored: i64 = conn
        .query_row("SELECT count(*) FROM uq_unit_score", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    let mut line = json!({
            "bench": "table", "rows": passages.len(), "samples": args.samples,
            "status": [status, warm_status], "unit_scores_stored": stored,
            "wall_s": round(wall), "rows_per_s": round(rows / wall),
            "nli_pairs": pairs, "nli_pairs_per_s": round(pairs as f64 / wall),
            "premise": premise.label(),
            "tokens_per_comparison": (pairs > 0).then(|| round(tokens as f64 / pairs as f64)),
            "pad_ratio": pad.pad_ratio().map(round), "mean_batch": pad.mean_batch().map(round),
            "max_batch": engine.nli_batch(), "concurrency": concurrency,
            "device": engine.info().device,
            "attention_fused": engine.info().attention_fused,
            "raw_nli_pairs_per_s": raw.map(round), "raw_pairs": raw_pairs,
            "path_vs_raw": raw.filter(|_| pairs > 0).map(|r| round(pairs as f64 / wall / r)),
            "peak_rss_mb": round(rss),
            "warm_wall_s": round(warm_wall), "warm_rows_per_s": round(rows / warm_wall),
            "warm_speedup": round(wall / warm_wall),
    });
    if let Some(o) = line.as_object_mut() {
        o.extend(host);
    }
    println!("{line}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A fresh database at `db` with table `passages(id, answer, samples)`: each passage's text
/// and its first `samples` samples (a JSON array).
fn passages_db(db: &Path, passages: &[Passage], samples: usize) -> Result<Connection, String> {
    let _ = std::fs::remove_file(db);
    let mut conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE TABLE passages(id INTEGER PRIMARY KEY, answer TEXT, samples TEXT)")
        .map_err(|e| e.to_string())?;
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    for (i, p) in passages.iter().enumerate() {
        if p.gpt3_text_samples.len() < samples {
            return Err(format!(
                "--samples {} but passage {i} has only {} samples",
                samples,
                p.gpt3_text_samples.len()
            ));
        }
        let kept =
            serde_json::to_string(&p.gpt3_text_samples[..samples]).map_err(|e| e.to_string())?;
        tx.execute(
            "INSERT INTO passages VALUES (?1, ?2, ?3)",
            params![i as i64, p.gpt3_text, kept],
        )
        .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())?;
    Ok(conn)
}

/// The job's options (`--options` with `concurrency` set), that concurrency, and the premise
/// setting the job scores with.
fn job_options(
    engine: &Engine,
    args: &TableArgs,
) -> Result<(serde_json::Map<String, serde_json::Value>, usize, Premise), String> {
    let mut options: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(args.options).map_err(|e| format!("--options: {e}"))?;
    let concurrency = args
        .concurrency
        .unwrap_or(engine.device_defaults().job_concurrency);
    options.insert("concurrency".into(), json!(concurrency));
    let premise = match options.get("premise") {
        Some(p) => Premise::parse(p).map_err(|e| format!("--options: {e}"))?,
        None => default_premise(match options.get("granularity").and_then(|g| g.as_str()) {
            Some(g) => Granularity::parse(g).map_err(|e| format!("--options: {e}"))?,
            None => Granularity::Sentence,
        }),
    };
    Ok((options, concurrency, premise))
}

/// The passages as benchmark jobs at sentence granularity, for the raw-model measurement.
fn sentence_jobs(passages: &[Passage], samples: usize) -> Vec<Job> {
    passages
        .iter()
        .map(|p| Job {
            response: p.gpt3_text.clone(),
            units: split_sentences(&p.gpt3_text),
            samples: p.gpt3_text_samples[..samples].to_vec(),
            sample_units: None,
            claim_union: None,
            granularity: Granularity::Sentence,
        })
        .collect()
}
