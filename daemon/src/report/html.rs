//! index.html of the report: one self-contained page (inline CSS, no script, no external
//! resource) that shows the tables and embeds the SVG figures written beside it.

use std::fmt::Write as _;

use super::analyse::Report;
use super::figures::{Figure, Section};
use super::svg::{esc, fmt3, truncate};

const CSS: &str = "
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:24px 32px;color:#222;background:#fff;max-width:1400px}
h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;margin-top:34px;border-bottom:1px solid #ccc;padding-bottom:4px}
p.meta{color:#555;margin-top:0}
table{border-collapse:collapse;font-size:13px;margin:10px 0}
th,td{border:1px solid #d5d5d5;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f1f1f1}td.t,th.t{text-align:left}
tr:nth-child(even) td{background:#fafafa}
.notes li{margin:3px 0}.notes{background:#fff8e1;border:1px solid #f0d98a;padding:10px 28px}
.figs{display:flex;flex-wrap:wrap;gap:18px}
figure{margin:0;border:1px solid #e2e2e2;padding:8px;background:#fff;display:table}
figcaption{display:table-caption;caption-side:bottom;font-size:12px;color:#444;padding:4px 8px 8px;background:#fff}
figure img{display:block}
.expl{font-size:13px;color:#333;max-width:1000px}
td.unit{max-width:520px;text-align:left}td.prompt{max-width:300px;text-align:left;color:#555}
td.answer{max-width:760px;text-align:left}
.wide{overflow-x:auto;max-width:100%}
.wide td.t{overflow-wrap:break-word}
";

fn cell(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}

fn tcell(s: &str) -> String {
    format!("<td class=\"t\">{}</td>", esc(s))
}

/// A text cell whose long tokens (model paths, scorer names) may break after `/`, `_`, `-`,
/// `.` and `,` (`<wbr>`), so the column narrows without cutting words apart.
fn wrapping_cell(s: &str) -> String {
    let mut out = String::from("<td class=\"t\">");
    for c in s.chars() {
        out.push_str(&esc(c.encode_utf8(&mut [0; 4])));
        if matches!(c, '/' | '_' | '-' | '.' | ',') {
            out.push_str("<wbr>");
        }
    }
    out.push_str("</td>");
    out
}

/// `n` and `what`, plural unless `n` is 1: "1 run", "2 runs".
fn count(n: i64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn figures_of(figs: &[Figure], section: Section) -> String {
    let mut s = String::from("<div class=\"figs\">");
    for f in figs.iter().filter(|f| f.section == section) {
        let _ = write!(
            s,
            "<figure><a href=\"{file}\"><img src=\"{file}\" alt=\"{alt}\"></a><figcaption><b>{alt}.</b> {cap}</figcaption></figure>",
            file = esc(&f.file),
            alt = esc(&f.title),
            cap = esc(&f.caption)
        );
    }
    s.push_str("</div>");
    s
}

/// The whole page: header and notes, then (when there are runs) the tables and figures.
pub fn page(r: &Report, figs: &[Figure]) -> String {
    let mut h = String::new();
    header(&mut h, r);
    if r.data.runs.is_empty() {
        h.push_str("</body></html>\n");
        return h;
    }
    runs_table(&mut h, r);
    unit_table(&mut h, r);
    super::evals::section(&mut h, &r.data.evals);
    response_table(&mut h, r);
    uad_and_ablation(&mut h, figs);
    calibration(&mut h, r, figs);
    highlighted_answers(&mut h, r);
    lowest_units(&mut h, r);
    h.push_str("</body></html>\n");
    h
}

/// The document head, the title line and the notes. *Answers* are the distinct source rows
/// (`source_table`, `source_key`) scored, *scored answers* their `uq_answer` rows over all runs.
fn header(h: &mut String, r: &Report) {
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>uqlite report: {}</title><style>{CSS}</style></head><body>",
        esc(&r.db)
    );
    let _ = write!(
        h,
        "<h1>uqlite report</h1><p class=\"meta\">database <code>{}</code> · schema version {} · {} · {} · {} · {} unit scores · uqd {}</p>",
        esc(&r.db),
        r.data.schema_version,
        count(r.data.n_sources, "answer"),
        count(r.data.runs.len() as i64, "run"),
        count(
            r.data.runs.iter().map(|x| x.n_answers).sum::<i64>(),
            "scored answer"
        ),
        r.data.units.len(),
        env!("CARGO_PKG_VERSION")
    );
    if !r.notes.is_empty() {
        h.push_str("<ul class=\"notes\">");
        for n in &r.notes {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>");
    }
}

/// The runs table, in a box of its own that scrolls sideways should it still be too wide once
/// its long texts (model paths, scorers) wrap ([`wrapping_cell`]).
fn runs_table(h: &mut String, r: &Report) {
    h.push_str("<h2>Runs</h2><div class=\"wide\"><table id=\"runs\"><tr><th>run</th><th class=\"t\">created</th><th class=\"t\">granularity</th><th class=\"t\">scorers</th><th class=\"t\">aggregation</th><th>num_samples</th><th>m</th><th>answers</th><th class=\"t\">NLI model</th><th class=\"t\">embedding model</th><th class=\"t\">LLM</th><th class=\"t\">device</th></tr>");
    for run in &r.data.runs {
        let o = |v: &Option<String>| v.clone().unwrap_or_default();
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            cell(&run.id.to_string()),
            tcell(&run.created_at),
            tcell(&run.granularity),
            wrapping_cell(&run.scorers.join(", ")),
            tcell(&run.aggregation),
            cell(
                &run.num_samples
                    .map(|m| m.to_string())
                    .unwrap_or_else(|| "all".into())
            ),
            cell(&run.m.map(|m| m.to_string()).unwrap_or_else(|| "?".into())),
            cell(&run.n_answers.to_string()),
            wrapping_cell(&truncate(&o(&run.nli_model), 60)),
            wrapping_cell(&truncate(&o(&run.embed_model), 60)),
            wrapping_cell(&truncate(&o(&run.llm_model), 60)),
            tcell(&o(&run.device)),
        );
    }
    h.push_str("</table></div>");
}

/// Unit-level hallucination detection: the metrics table.
fn unit_table(h: &mut String, r: &Report) {
    h.push_str("<h2>Unit-level hallucination detection</h2><p class=\"expl\">Per run, granularity and scorer: the unit confidence scores against the factual labels (<code>uq_label</code> kind 'factual', latest grader; 1 = factual). <b>AUROC</b> and <b>AUPRC (factual)</b> take factual units as the positive class; <b>AUPRC (non-factual)</b> takes non-factual units as the positive class with the score negated (SelfCheckGPT's NonFact AUC-PR). <b>Brier</b> and <b>ECE</b> (10 equal bins) measure calibration; <b>best F1</b> is the threshold τ maximising F1 when predicting factual for score ≥ τ. <i>Evaluated</i>: units with a score and a label (only objective units when the run has 'objective' labels, as the paper). n/a: undefined (a single class, no labelled units, or scores outside [0, 1] for Brier/ECE).</p>");
    h.push_str("<div class=\"wide\"><table id=\"unit-metrics\"><tr><th>run</th><th class=\"t\">granularity</th><th class=\"t\">scorer</th><th>units</th><th>labelled</th><th>evaluated</th><th class=\"t\">objective only</th><th>factual rate</th><th>AUROC</th><th>AUPRC (factual)</th><th>AUPRC (non-factual)</th><th>Brier</th><th>ECE</th><th>best F1 τ</th><th>F1</th></tr>");
    for m in &r.unit_metrics {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            cell(&m.run_id.to_string()),
            tcell(&m.granularity),
            tcell(&m.scorer),
            cell(&m.n_units.to_string()),
            cell(&m.n_labelled.to_string()),
            cell(&m.n_evaluated.to_string()),
            tcell(if m.objective_only { "yes" } else { "no" }),
            cell(&fmt3(m.factual_rate)),
            cell(&fmt3(m.auroc)),
            cell(&fmt3(m.auprc_factual)),
            cell(&fmt3(m.auprc_nonfactual)),
            cell(&fmt3(m.brier)),
            cell(&fmt3(m.ece)),
            cell(&fmt3(m.best_f1.map(|b| b.0))),
            cell(&fmt3(m.best_f1.map(|b| b.1))),
        );
    }
    h.push_str("</table></div>");
}

/// Response-level correlations with the answer grade.
fn response_table(h: &mut String, r: &Report) {
    h.push_str("<h2>Response-level confidence vs answer grade</h2><p class=\"expl\">Per run, scorer and aggregation: Pearson and Spearman correlation between the response-level confidence (<code>uq_response_score</code>) and the answer's grade, the mean factual label of its units (view <code>uq_scored_answers</code>). <i>Graded</i>: answers with both a score and a grade. n/a: fewer than 2 graded answers or no variance.</p>");
    h.push_str("<table id=\"response-metrics\"><tr><th>run</th><th class=\"t\">scorer</th><th class=\"t\">aggregation</th><th>answers</th><th>graded</th><th>Pearson</th><th>Spearman</th></tr>");
    for m in &r.response_metrics {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}{}</tr>",
            cell(&m.run_id.to_string()),
            tcell(&m.scorer),
            tcell(&m.aggregation),
            cell(&m.n_answers.to_string()),
            cell(&m.n_graded.to_string()),
            cell(&fmt3(m.pearson)),
            cell(&fmt3(m.spearman)),
        );
    }
    h.push_str("</table>");
    if r.response_metrics.is_empty() {
        h.push_str("<p class=\"expl\">No response-level scores in the database.</p>");
    }
}

/// The UAD and AUROC-vs-m sections: explanation and figures.
fn uad_and_ablation(h: &mut String, figs: &[Figure]) {
    let empty = |s: Section| !figs.iter().any(|f| f.section == s);
    h.push_str("<h2>Uncertainty-aware decoding: accuracy vs percentile threshold</h2><p class=\"expl\">As the paper's UAD figure: for q = 10, 20, …, 90, each answer keeps the units scoring at or above the q-th percentile (tied units stay together) (numpy's linear method) of its own unit scores, as the daemon's <code>uad</code> op with <code>threshold_percentile</code>; the accuracy is the factual share of the kept labelled units, pooled over answers. q = 0 is the baseline, nothing filtered.</p>");
    if empty(Section::Uad) {
        h.push_str("<p class=\"expl\">No labelled units: nothing to draw.</p>");
    } else {
        h.push_str(&figures_of(figs, Section::Uad));
    }
    h.push_str("<h2>AUROC vs number of sampled answers m</h2><p class=\"expl\">As the paper's ablation: runs that scored the same answers (same <code>source_table</code> and <code>source_key</code>s, same granularity) with different <code>num_samples</code>, one line per scorer.</p>");
    if empty(Section::Ablation) {
        h.push_str("<p class=\"expl\">No labelled runs: nothing to draw.</p>");
    } else {
        h.push_str(&figures_of(figs, Section::Ablation));
    }
}

/// Calibration: the before/after table of calibrated scorers and the reliability diagrams.
fn calibration(h: &mut String, r: &Report, figs: &[Figure]) {
    let empty = |s: Section| !figs.iter().any(|f| f.section == s);
    h.push_str("<h2>Calibration (reliability diagrams)</h2>");
    let calibrated: Vec<_> = r
        .unit_metrics
        .iter()
        .filter_map(|m| Some((m, m.calibrated.as_ref()?)))
        .collect();
    if !calibrated.is_empty() {
        h.push_str("<p class=\"expl\">Scorers with calibrated scores (runs with option <code>calibration</code>, column <code>calibrated</code>): ECE (10 equal bins) and Brier of the raw and the calibrated scores of the same evaluated units. A calibrated score is a probability: of the units calibrated to 0.8, about 80 % should be factual.</p>");
        h.push_str("<table id=\"calibration-metrics\"><tr><th>run</th><th class=\"t\">granularity</th><th class=\"t\">scorer</th><th>evaluated</th><th>ECE raw</th><th>ECE calibrated</th><th>Brier raw</th><th>Brier calibrated</th></tr>");
        for (m, c) in calibrated {
            let _ = write!(
                h,
                "<tr>{}{}{}{}{}{}{}{}</tr>",
                cell(&m.run_id.to_string()),
                tcell(&m.granularity),
                tcell(&m.scorer),
                cell(&c.n_evaluated.to_string()),
                cell(&fmt3(c.ece_raw)),
                cell(&fmt3(c.ece)),
                cell(&fmt3(c.brier_raw)),
                cell(&fmt3(c.brier)),
            );
        }
        h.push_str("</table>");
    }
    if empty(Section::Calibration) {
        h.push_str("<p class=\"expl\">No evaluated units (scores in [0, 1] with factual labels): nothing to draw.</p>");
    } else {
        h.push_str(&figures_of(figs, Section::Calibration));
    }
}

/// The least confident answers of each (run, granularity), highlighted by their units' scores.
fn highlighted_answers(h: &mut String, r: &Report) {
    h.push_str("<h2>Least confident answers, highlighted</h2><p class=\"expl\">Per run and granularity, the answers with the lowest response confidence under the run's first scorer, each unit marked where it stands in the answer by its score: orange below 0.2 (unsupported, double underline), light orange below 0.5 (doubtful, dotted underline), lilac above. Hover a mark for its units and scores; a claim that could not be placed in the answer follows it.</p>");
    for ((run, gran), scorer, answers) in &r.highlighted {
        let _ = write!(
            h,
            "<h3>run {} · {} · {}</h3><table class=\"highlighted\"><tr><th class=\"t\">answer</th><th class=\"t\">prompt</th><th>confidence</th><th class=\"t\">highlighted</th></tr>",
            run,
            esc(gran),
            esc(scorer)
        );
        for a in answers {
            // a.html is uq_core::highlight's output: every text in it is escaped.
            let _ = write!(
                h,
                "<tr>{}<td class=\"prompt\">{}</td>{}<td class=\"answer\">{}</td></tr>",
                tcell(&truncate(&a.source_key, 40)),
                esc(&truncate(a.prompt.as_deref().unwrap_or(""), 120)),
                cell(&fmt3(a.score)),
                a.html,
            );
        }
        h.push_str("</table>");
    }
}

/// The lowest-scored units of each (run, granularity).
fn lowest_units(h: &mut String, r: &Report) {
    h.push_str("<h2>Least confident units</h2><p class=\"expl\">Per run and granularity, the lowest-scored units of the run's first scorer.</p>");
    for ((run, gran), scorer, rows) in &r.lowest {
        let _ = write!(
            h,
            "<h3>run {} · {} · {}</h3><table class=\"lowest\"><tr><th class=\"t\">answer</th><th class=\"t\">prompt</th><th>#</th><th class=\"t\">unit</th><th>score</th><th>factual</th></tr>",
            run,
            esc(gran),
            esc(scorer)
        );
        for u in rows {
            let _ = write!(
                h,
                "<tr>{}<td class=\"prompt\">{}</td>{}<td class=\"unit\">{}</td>{}{}</tr>",
                tcell(&truncate(&u.source_key, 40)),
                esc(&truncate(u.prompt.as_deref().unwrap_or(""), 120)),
                cell(&u.position.to_string()),
                esc(&truncate(&u.unit, 300)),
                cell(&fmt3(u.score)),
                cell(match u.label {
                    Some(true) => "1",
                    Some(false) => "0",
                    None => "",
                }),
            );
        }
        h.push_str("</table>");
    }
}
