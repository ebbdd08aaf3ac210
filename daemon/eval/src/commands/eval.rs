//! `uqd eval`: the evaluation suite's figures on the labelled answers stored in a database, or
//! on a labels table of the user's own (`--labels`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value};

use crate::eval::labels::LabelsSpec;

#[derive(Args)]
pub struct EvalArgs {
    /// SQLite database holding scored answers with labels (a job's labels_column, or grade).
    db: PathBuf,
    /// Only the answers of this source table (default: every table; needed with --labels).
    table: Option<String>,
    /// Resamples of the answers per interval.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::RESAMPLES)]
    resamples: usize,
    /// Seed of the resamples.
    #[arg(long, default_value_t = uq_core::metrics::bootstrap::SEED)]
    seed: u64,
    /// Level of the conformal fit: P(all kept claims true) ≥ 1 − alpha.
    #[arg(long, default_value_t = 0.1)]
    alpha: f64,
    /// Print only; write nothing to DB.
    #[arg(long)]
    dry_run: bool,
    /// Print the evaluations as JSON.
    #[arg(long)]
    json: bool,
    /// The labels from this table of DB (one row per labelled sentence) instead of the job's,
    /// aligned to the scored units by text, then containment (by index without a text column).
    #[arg(long, value_name = "LABELS_TABLE")]
    labels: Option<String>,
    /// Label value → 1 (factual), 0 or null (left out), e.g.
    /// '{"accurate":1,"minor_inaccurate":0,"major_inaccurate":0}'.
    #[arg(long, value_name = "JSON")]
    label_map: Option<String>,
    /// A SQL expression over the labels table's columns, true = factual, e.g.
    /// "label = 'accurate'".
    #[arg(long, value_name = "SQL")]
    label_expr: Option<String>,
    /// The labels table's column holding the scored row's key (its id_column, else rowid).
    #[arg(long, value_name = "COL")]
    labels_key: Option<String>,
    /// The column of each sentence's index from 0 (default: sent_idx, if present).
    #[arg(long, value_name = "COL")]
    labels_index: Option<String>,
    /// The column of each sentence's text (default: sentence, if present).
    #[arg(long, value_name = "COL")]
    labels_text: Option<String>,
    /// The column of the labels (default: label).
    #[arg(long, value_name = "COL")]
    labels_label: Option<String>,
}

pub fn run(args: EvalArgs) -> Result<ExitCode, String> {
    if args.resamples == 0 {
        return Err("--resamples must be at least 1 (1000 for 95 % intervals)".into());
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(format!(
            "--alpha must be strictly between 0 and 1, got {}: e.g. --alpha 0.1 for a 90 % \
             guarantee",
            args.alpha
        ));
    }
    let spec = labels_spec(&args)?;
    let eval_args = crate::eval::EvalArgs {
        db: &args.db,
        table: args.table.as_deref(),
        resamples: args.resamples,
        seed: args.seed,
        alpha: args.alpha,
        write: !args.dry_run,
        labels: spec.as_ref(),
    };
    let (evals, text) = crate::eval::eval(&eval_args)?;
    if args.json {
        println!("{}", crate::eval::json::evaluations(&eval_args, &evals));
    } else {
        print!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--labels` flags checked; `None` without `--labels`.
fn labels_spec(args: &EvalArgs) -> Result<Option<LabelsSpec>, String> {
    let Some(table) = &args.labels else {
        let given = [
            ("--label-map", args.label_map.is_some()),
            ("--label-expr", args.label_expr.is_some()),
            ("--labels-key", args.labels_key.is_some()),
            ("--labels-index", args.labels_index.is_some()),
            ("--labels-text", args.labels_text.is_some()),
            ("--labels-label", args.labels_label.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|g| g.1) {
            return Err(format!(
                "{flag} needs --labels LABELS_TABLE, the table of labelled sentences: e.g. uqd \
                 eval DB TABLE --labels labels {flag} …"
            ));
        }
        return Ok(None);
    };
    if args.label_map.is_some() && args.label_expr.is_some() {
        return Err(
            "--label-map and --label-expr both given: give one (--label-map '{\"accurate\":1,\
             \"minor_inaccurate\":0}' maps the label column's values, --label-expr \"label = \
             'accurate'\" is a SQL expression)"
                .into(),
        );
    }
    let map = args.label_map.as_deref().map(label_map).transpose()?;
    Ok(Some(LabelsSpec {
        table: table.clone(),
        map,
        expr: args.label_expr.clone(),
        key: args.labels_key.clone(),
        index: args.labels_index.clone(),
        text: args.labels_text.clone(),
        label: args.labels_label.clone(),
    }))
}

/// `--label-map`: a JSON object of label → 1, 0, true, false or null.
fn label_map(s: &str) -> Result<Map<String, Value>, String> {
    const FIX: &str = "e.g. --label-map '{\"accurate\":1,\"minor_inaccurate\":0,\
                       \"major_inaccurate\":0}' (1 = factual, 0 = not, null = left out)";
    let map = match serde_json::from_str::<Value>(s) {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            return Err(format!(
                "--label-map must be a JSON object, got {other}: {FIX}"
            ))
        }
        Err(e) => return Err(format!("--label-map is not JSON ({e}): {FIX}")),
    };
    for (k, v) in &map {
        let ok = matches!(v, Value::Null | Value::Bool(_))
            || v.as_f64().is_some_and(|x| x == 0.0 || x == 1.0);
        if !ok {
            return Err(format!(
                "--label-map maps {k:?} to {v}: each value must be 1, 0, true, false or null; {FIX}"
            ));
        }
    }
    Ok(map)
}
