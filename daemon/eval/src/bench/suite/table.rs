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

/// The header row of a table.
pub(super) fn header(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

/// One entry per distinct `keys` of `lines` (in order of first appearance): its first line and,
/// per figure of `figures`, the interval of the line of that key and figure ("—" when none).
fn keyed<'a>(
    lines: &[&'a Value],
    keys: &[&str],
    figures: &[&str],
) -> Vec<(&'a Value, Vec<String>)> {
    let mut seen: Vec<Vec<String>> = Vec::new();
    let mut out = Vec::new();
    for &l in lines {
        let key: Vec<String> = keys.iter().map(|k| text(&l[*k])).collect();
        if seen.contains(&key) {
            continue;
        }
        let cells = figures
            .iter()
            .map(|f| {
                lines
                    .iter()
                    .find(|x| keys.iter().all(|k| x[*k] == l[*k]) && x["figure"] == *f)
                    .map_or("—".into(), |x| interval(x))
            })
            .collect();
        out.push((l, cells));
        seen.push(key);
    }
    out
}

/// The whole table of a suite run.
pub fn render(lines: &[Value]) -> String {
    let mut out = String::new();
    if let Some(s) = of(lines, "settings").next() {
        out.push_str(&title(s));
    }
    out.push_str(&figures(lines));
    out.push_str(&aggregations(lines));
    out.push_str(&transfers(lines));
    out.push_str(&refits(lines));
    out.push_str(&cost(lines));
    out
}

/// The first line: the version, the NLI model and the run's settings.
fn title(s: &Value) -> String {
    format!(
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
    )
}

/// Per dataset and scorer: AUROC, AUC-PR, NonFact and NonFact* AUC-PR.
fn figures(lines: &[Value]) -> String {
    let mut out = String::from("Figures, 95 % intervals over resampled answers\n");
    let mut rows = vec![header(&[
        "dataset",
        "scorer",
        "units",
        "answers",
        "AUROC",
        "AUC-PR",
        "NonFact AUC-PR",
        "NonFact* AUC-PR",
    ])];
    let figures: Vec<&Value> = of(lines, "figure").collect();
    let names = ["auroc", "auc_pr", "nonfact_auc_pr", "nonfact_star_auc_pr"];
    for (l, cells) in keyed(&figures, &["dataset", "scorer"], &names) {
        let mut row = vec![
            text(&l["dataset"]),
            text(&l["scorer"]),
            text(&l["units"]),
            text(&l["answers"]),
        ];
        row.extend(cells);
        rows.push(row);
    }
    out.push_str(&grid(&rows));
    out.push_str(
        "AUC-PR: the true units positive (on WikiBio, SelfCheckGPT's Factual); NonFact: the false \
         units positive, score 1 − confidence; NonFact*: the major-inaccurate sentences positive, \
         over the passages not wholly major-inaccurate (WikiBio)\n",
    );
    out
}

/// The answer-level datasets: the paired AUROC difference of min and mean (none: "").
fn aggregations(lines: &[Value]) -> String {
    let aggregations: Vec<&Value> = of(lines, "aggregation").collect();
    if aggregations.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nAnswer-level datasets: AUROC of the answers' min minus their mean, paired\n",
    );
    let mut rows = vec![header(&["dataset", "scorer", "min − mean"])];
    for l in aggregations {
        rows.push(vec![text(&l["dataset"]), text(&l["scorer"]), interval(l)]);
    }
    out.push_str(&grid(&rows));
    out
}

/// Fitted on one claim file, tested on the other: ECE raw and after Platt, the conformal
/// threshold's coverage and kept share (none: "").
fn transfers(lines: &[Value]) -> String {
    let transfers: Vec<&Value> = of(lines, "transfer").collect();
    if transfers.is_empty() {
        return String::new();
    }
    let alpha = of(lines, "settings")
        .next()
        .map_or("0.1".into(), |s| text(&s["alpha"]));
    let mut out = format!(
        "\nFitted on one file, tested on the other: ECE (10 bins) raw and after Platt, \
         conformal threshold at alpha {alpha}\n"
    );
    let mut rows = vec![header(&[
        "fit → test",
        "scorer",
        "ECE raw",
        "ECE Platt",
        "conformal coverage",
        "kept share",
    ])];
    let names = [
        "ece_raw",
        "ece_platt",
        "conformal_coverage",
        "conformal_kept",
    ];
    for (l, cells) in keyed(&transfers, &["fit", "test", "scorer"], &names) {
        let mut row = vec![
            format!("{} → {}", text(&l["fit"]), text(&l["test"])),
            text(&l["scorer"]),
        ];
        row.extend(cells);
        rows.push(row);
    }
    out.push_str(&grid(&rows));
    out
}

/// The refit of entailment on K labelled answers of the test file (none: "").
fn refits(lines: &[Value]) -> String {
    let refits: Vec<&Value> = of(lines, "refit")
        .filter(|l| l["scorer"] == "entailment")
        .collect();
    if refits.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nRefit on K labelled answers of the test file, entailment: ECE on its other answers, \
         mean over the draws (target at K = 10: chosen ≤ min(old, Platt on K) + 0.01)\n",
    );
    let mut rows = vec![header(&[
        "fit → test",
        "K",
        "old",
        "Platt on K",
        "refit (fixed)",
        "chosen",
        "chosen from guarded",
        "log2 scale",
        "met",
    ])];
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
    out
}

/// Per dataset and in all: NLI pairs, tokens, LLM calls and wall time.
fn cost(lines: &[Value]) -> String {
    let mut out = String::from("\nCost\n");
    let mut rows = vec![header(&[
        "dataset",
        "answers",
        "NLI pairs",
        "NLI tokens",
        "LLM calls",
        "wall s",
    ])];
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
