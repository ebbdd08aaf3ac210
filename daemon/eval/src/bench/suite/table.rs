//! The suite's JSON lines as the table it prints (and [`grid`], the aligned text table that
//! `--compare` prints too).

use serde_json::Value;

/// Rows of cells as aligned columns (two spaces apart), the first row a header underlined.
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|x| x.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, x)| format!("{x:<w$}", w = width[c]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if n == 0 {
            let rule: Vec<String> = width.iter().map(|&w| "-".repeat(w)).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
    }
    out
}

/// "0.746 [0.701, 0.789]", or "—" when undefined.
pub fn interval(l: &Value) -> String {
    match (
        l["estimate"].as_f64(),
        l["low"].as_f64(),
        l["high"].as_f64(),
    ) {
        (Some(e), Some(lo), Some(hi)) => format!("{e:.3} [{lo:.3}, {hi:.3}]"),
        (Some(e), _, _) => format!("{e:.3}"),
        _ => "—".into(),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => format!("{x:.3}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The lines of kind `suite`.
fn of<'a>(lines: &'a [Value], suite: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    lines.iter().filter(move |l| l["suite"] == suite)
}

/// The whole table of a suite run.
pub fn render(lines: &[Value]) -> String {
    let mut out = String::new();
    if let Some(s) = of(lines, "settings").next() {
        out.push_str(&format!(
            "uqd bench suite {}: NLI {} ({}, {}, {} threads), m = {} samples, premise {}, {} \
             resamples of the answers (seed {}){}\n\n",
            text(&s["version"]),
            text(&s["nli_file"]),
            text(&s["precision"]),
            text(&s["device"]),
            text(&s["threads"]),
            text(&s["samples"]),
            if s["premise"].is_null() {
                "default".to_string()
            } else {
                s["premise"].to_string()
            },
            text(&s["resamples"]),
            text(&s["seed"]),
            if s["quick"] == true {
                ", --quick (first answers of each file)"
            } else {
                ""
            },
        ));
    }
    out.push_str("Figures, 95 % intervals over resampled answers\n");
    let mut rows = vec![vec![
        "dataset".to_string(),
        "scorer".into(),
        "units".into(),
        "answers".into(),
        "AUROC".into(),
        "AUC-PR".into(),
        "NonFact AUC-PR".into(),
        "NonFact* AUC-PR".into(),
    ]];
    let figures: Vec<&Value> = of(lines, "figure").collect();
    let mut seen: Vec<(String, String)> = Vec::new();
    for l in &figures {
        let key = (text(&l["dataset"]), text(&l["scorer"]));
        if seen.contains(&key) {
            continue;
        }
        let cell = |f: &str| {
            figures
                .iter()
                .find(|x| {
                    x["dataset"] == l["dataset"] && x["scorer"] == l["scorer"] && x["figure"] == f
                })
                .map_or("—".into(), |x| interval(x))
        };
        rows.push(vec![
            key.0.clone(),
            key.1.clone(),
            text(&l["units"]),
            text(&l["answers"]),
            cell("auroc"),
            cell("auc_pr"),
            cell("nonfact_auc_pr"),
            cell("nonfact_star_auc_pr"),
        ]);
        seen.push(key);
    }
    out.push_str(&grid(&rows));
    out.push_str(
        "AUC-PR: the true units positive (on WikiBio, SelfCheckGPT's Factual); NonFact: the false \
         units positive, score 1 − confidence; NonFact*: the major-inaccurate sentences positive, \
         over the passages not wholly major-inaccurate (WikiBio)\n",
    );

    let aggregations: Vec<&Value> = of(lines, "aggregation").collect();
    if !aggregations.is_empty() {
        out.push_str(
            "\nAnswer-level datasets: AUROC of the answers' min minus their mean, paired\n",
        );
        let mut rows = vec![vec![
            "dataset".to_string(),
            "scorer".into(),
            "min − mean".into(),
        ]];
        for l in aggregations {
            rows.push(vec![text(&l["dataset"]), text(&l["scorer"]), interval(l)]);
        }
        out.push_str(&grid(&rows));
    }

    let transfers: Vec<&Value> = of(lines, "transfer").collect();
    if !transfers.is_empty() {
        let alpha = of(lines, "settings")
            .next()
            .map_or("0.1".into(), |s| text(&s["alpha"]));
        out.push_str(&format!(
            "\nFitted on one file, tested on the other: ECE (10 bins) raw and after Platt, \
             conformal threshold at alpha {alpha}\n"
        ));
        let mut rows = vec![vec![
            "fit → test".to_string(),
            "scorer".into(),
            "ECE raw".into(),
            "ECE Platt".into(),
            "conformal coverage".into(),
            "kept share".into(),
        ]];
        let mut seen: Vec<(String, String, String)> = Vec::new();
        for l in &transfers {
            let key = (text(&l["fit"]), text(&l["test"]), text(&l["scorer"]));
            if seen.contains(&key) {
                continue;
            }
            let cell = |f: &str| {
                transfers
                    .iter()
                    .find(|x| {
                        x["fit"] == l["fit"]
                            && x["test"] == l["test"]
                            && x["scorer"] == l["scorer"]
                            && x["figure"] == f
                    })
                    .map_or("—".into(), |x| interval(x))
            };
            rows.push(vec![
                format!("{} → {}", key.0, key.1),
                key.2.clone(),
                cell("ece_raw"),
                cell("ece_platt"),
                cell("conformal_coverage"),
                cell("conformal_kept"),
            ]);
            seen.push(key);
        }
        out.push_str(&grid(&rows));
    }

    let refits: Vec<&Value> = of(lines, "refit")
        .filter(|l| l["scorer"] == "entailment")
        .collect();
    if !refits.is_empty() {
        out.push_str(
            "\nRefit on K labelled answers of the test file, entailment: ECE on its other answers, \
             mean over the draws (target at K = 10: chosen ≤ min(old, Platt on K) + 0.01)\n",
        );
        let mut rows = vec![vec![
            "fit → test".to_string(),
            "K".into(),
            "old".into(),
            "Platt on K".into(),
            "refit (fixed)".into(),
            "chosen".into(),
            "chosen from guarded".into(),
            "log2 scale".into(),
            "met".into(),
        ]];
        for l in refits {
            let get = |k: &str| l[k].as_f64();
            let met = match (get("ece_chosen"), get("ece_old"), get("ece_platt_k")) {
                (Some(c), Some(o), Some(p)) => {
                    if c <= o.min(p) + super::super::refit::CHOSEN_SLACK {
                        "yes"
                    } else {
                        "no"
                    }
                }
                _ => "",
            };
            rows.push(vec![
                format!("{} → {}", text(&l["fit"]), text(&l["test"])),
                text(&l["target_labels"]),
                text(&l["ece_old"]),
                text(&l["ece_platt_k"]),
                text(&l["ece_refit"]),
                text(&l["ece_chosen"]),
                text(&l["ece_chosen_guarded"]),
                text(&l["scale_log2"]),
                met.into(),
            ]);
        }
        out.push_str(&grid(&rows));
    }

    out.push_str("\nCost\n");
    let mut rows = vec![vec![
        "dataset".to_string(),
        "answers".into(),
        "NLI pairs".into(),
        "NLI tokens".into(),
        "LLM calls".into(),
        "wall s".into(),
    ]];
    let (mut pairs, mut tokens, mut calls, mut wall) = (0u64, 0u64, 0u64, 0.0);
    for l in of(lines, "cost") {
        pairs += l["nli_pairs"].as_u64().unwrap_or(0);
        tokens += l["nli_tokens"].as_u64().unwrap_or(0);
        calls += l["llm_calls"].as_u64().unwrap_or(0);
        wall += l["wall_s"].as_f64().unwrap_or(0.0);
        rows.push(vec![
            text(&l["dataset"]),
            text(&l["answers"]),
            text(&l["nli_pairs"]),
            text(&l["nli_tokens"]),
            text(&l["llm_calls"]),
            format!("{:.1}", l["wall_s"].as_f64().unwrap_or(0.0)),
        ]);
    }
    rows.push(vec![
        "all".into(),
        String::new(),
        pairs.to_string(),
        tokens.to_string(),
        calls.to_string(),
        format!("{wall:.1}"),
    ]);
    out.push_str(&grid(&rows));
    out
}
