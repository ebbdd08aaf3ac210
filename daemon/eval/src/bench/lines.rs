//! JSON lines in and out: reading a data file, rounding the printed figures, the line
//! comparing premise settings.

use serde_json::{json, Map, Value};

/// Reads a JSON-lines file, at most `limit` records (all when `None`).
pub fn load_jsonl<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    limit: Option<usize>,
) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let r: T = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        out.push(r);
    }
    Ok(out)
}

pub fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

pub fn pct(x: f64) -> f64 {
    round(x * 100.0)
}

/// One line comparing the runs of several premise settings (each run's scorer lines and its
/// summary line last): per setting its NLI tokens per comparison, how many times fewer than the
/// first setting's (`token_cut`), pairs/s and padding, and per scorer its AUROC and the change
/// against the first setting's.
pub fn compare_premises(runs: &[Vec<Value>]) -> Value {
    let summary = |run: &[Value]| {
        run.iter()
            .find(|l| l["summary"] == json!(true))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let auroc = |run: &[Value], scorer: &str| {
        run.iter()
            .find(|l| l["scorer"] == json!(scorer))
            .and_then(|l| l["auroc"].as_f64())
    };
    let base = &runs[0];
    let base_tokens = summary(base)["tokens_per_comparison"].as_f64();
    let settings: Vec<Value> = runs
        .iter()
        .map(|run| {
            let s = summary(run);
            let mut per_scorer = Map::new();
            for l in run.iter().filter(|l| l["scorer"].is_string()) {
                let name = l["scorer"].as_str().unwrap_or_default();
                let a = l["auroc"].as_f64();
                let d = a.zip(auroc(base, name)).map(|(a, b)| round(a - b));
                per_scorer.insert(name.into(), json!({"auroc": a, "delta": d}));
            }
            let tokens = s["tokens_per_comparison"].as_f64();
            json!({
                "premise": s["premise"],
                "tokens_per_comparison": tokens,
                "token_cut": base_tokens.zip(tokens).map(|(b, t)| round(b / t)),
                "nli_pairs_per_s": s["nli_pairs_per_s"],
                "pad_ratio": s["pad_ratio"],
                "scorers": per_scorer,
            })
        })
        .collect();
    json!({
        "premise_comparison": true,
        "baseline": summary(base)["premise"],
        "settings": settings,
    })
}
