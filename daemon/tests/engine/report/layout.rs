//! `uqd report` of the analyst's database (issue 48): 59 biographies scored twice at sentence
//! granularity with the same options (so one m, and the AUROC-vs-m figure's note), long model
//! paths and four scorers. The header counts 59 answers, not 118; the page's tables and figures
//! are laid out for reading: highlighted answers left-aligned, the runs table inside the page
//! (its long texts wrap, its box scrolls), every figure's legend and notes apart.
//!
//! Checked in the HTML and SVG text, and, when a headless Chromium is on PATH (`uq_browser`;
//! `UQ_REQUIRE_BROWSER=1` makes it mandatory), in the layout the browser computes.

use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::{params, Connection};

const SCORERS: [&str; 4] = [
    "entailment",
    "noncontradiction",
    "contrasted_entailment",
    "cosine_sim",
];
const ANSWERS: usize = 59;
const NLI_MODEL: &str = "/home/analyst/.local/share/uqlite/models/nli-deberta-v3-large-mnli-fever-anli-ling-wanli/model_quantized.onnx";
const EMBED_MODEL: &str =
    "/home/analyst/.local/share/uqlite/models/sentence-transformers_all-MiniLM-L6-v2/model.onnx";
const LLM_MODEL: &str =
    "/home/analyst/models/TheBloke_Mistral-7B-Instruct-v0.2-GGUF/mistral-7b-instruct-v0.2.Q4_K_M.gguf";

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uq-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The three sentences of biography `a`, with their character spans.
fn sentences(a: usize) -> (String, Vec<(String, usize, usize)>) {
    let parts = [
        format!("Person {a} was born in {} in a small town.", 1800 + a),
        format!("They studied mathematics and wrote {} papers.", a + 2),
        format!("They died in {}.", 1870 + a),
    ];
    let mut text = String::new();
    let mut spans = Vec::new();
    for p in parts {
        if !text.is_empty() {
            text.push(' ');
        }
        let start = text.chars().count();
        text.push_str(&p);
        spans.push((p.clone(), start, text.chars().count()));
    }
    (text, spans)
}

/// Two runs of the same 59 answers of table `bios`, sentence granularity, the same options.
fn analyst_db(dir: &Path) -> PathBuf {
    let path = dir.join("bios.db");
    Connection::open(&path).unwrap();
    let mut conn = uqd::store::open(&path).unwrap();
    uqd::store::migrate(&mut conn).unwrap();
    let tx = conn.transaction().unwrap();
    for run in 1..=2i64 {
        tx.execute(
            "INSERT INTO uq_run(run_id, uqlite_version, options_json, granularity, scorers_json,
                                aggregation, num_samples, nli_model, embed_model, llm_model, device)
             VALUES (?1, '0.1.0', ?2, 'sentence', ?3, 'mean', 5, ?4, ?5, ?6, 'cpu')",
            params![
                run,
                serde_json::json!({"scorers": SCORERS, "granularity": "sentence", "num_samples": 5})
                    .to_string(),
                serde_json::to_string(&SCORERS).unwrap(),
                NLI_MODEL,
                EMBED_MODEL,
                LLM_MODEL
            ],
        )
        .unwrap();
        for a in 0..ANSWERS {
            let (text, spans) = sentences(a);
            tx.execute(
                "INSERT INTO uq_answer(run_id, source_table, source_key, prompt, answer)
                 VALUES (?1, 'bios', ?2, ?3, ?4)",
                params![
                    run,
                    a.to_string(),
                    format!("Write a biography of person {a}."),
                    text
                ],
            )
            .unwrap();
            let answer_id = tx.last_insert_rowid();
            for (pos, (unit, start, end)) in spans.iter().enumerate() {
                tx.execute(
                    "INSERT INTO uq_unit(answer_id, granularity, position, text, start, end)
                     VALUES (?1, 'sentence', ?2, ?3, ?4, ?5)",
                    params![answer_id, pos as i64, unit, *start as i64, *end as i64],
                )
                .unwrap();
                let unit_id = tx.last_insert_rowid();
                let factual = (a + pos) % 3 != 0;
                for (k, scorer) in SCORERS.iter().enumerate() {
                    let jitter = ((a * 7 + pos * 3 + k * 5 + run as usize) % 10) as f64 / 40.0;
                    let score = if factual { 0.6 + jitter } else { 0.1 + jitter };
                    tx.execute(
                        "INSERT INTO uq_unit_score(unit_id, scorer, score) VALUES (?1, ?2, ?3)",
                        params![unit_id, scorer, score],
                    )
                    .unwrap();
                }
                tx.execute(
                    "INSERT INTO uq_label(unit_id, kind, grader, label) VALUES (?1, 'factual', 'analyst', ?2)",
                    params![unit_id, factual as i64],
                )
                .unwrap();
            }
        }
    }
    tx.commit().unwrap();
    path
}

/// A box: x0, y0, x1, y1.
type Bbox = [f64; 4];

fn overlap(a: Bbox, b: Bbox) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

fn attr(tag: &str, name: &str) -> f64 {
    let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
}

/// The baselines of the `<text>` elements of `svg` whose tag contains `marker`.
fn text_ys(svg: &str, marker: &str) -> Vec<f64> {
    svg.match_indices("<text ")
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .filter(|tag| tag.contains(marker))
        .map(|tag| attr(tag, "y"))
        .collect()
}

#[test]
fn report_of_two_runs_of_the_same_answers_reads_well() {
    let dir = tmp_dir("layout");
    let db = analyst_db(&dir);
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_uqd"))
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();

    // The header: 59 source rows, 2 runs, 118 answer rows.
    assert!(
        html.contains(" · 59 answers · 2 runs · 118 scored answers · "),
        "{}",
        &html[html.find("<p class=\"meta\">").unwrap()..][..300]
    );
    // Highlighted answers: left-aligned by the page and by the highlight itself.
    assert!(html.contains("td.answer{max-width:760px;text-align:left}"));
    let cells: Vec<&str> = html.split("<td class=\"answer\">").skip(1).collect();
    assert!(!cells.is_empty());
    for c in &cells {
        assert!(
            c.starts_with("<div class=\"uq-highlight\" style=\"")
                && c[..120].contains("text-align:left"),
            "{}",
            &c[..120]
        );
    }
    // The runs table in a box of its own; its model paths may break after each `/`.
    assert!(html.contains("<div class=\"wide\"><table id=\"runs\">"));
    assert!(html.contains(".wide{overflow-x:auto"));
    assert!(html.contains("/<wbr>home/<wbr>analyst/<wbr>"), "{html}");

    // The AUROC-vs-m figure (one m: run 2 left out): its note under the plot and the legend.
    let ablation = std::fs::read_to_string(out.join("ablation-0.svg")).unwrap();
    let notes = text_ys(&ablation, "class=\"note\"");
    assert!(!notes.is_empty(), "the one-m note: {ablation}");
    let legend = &ablation[ablation.find("<g class=\"legend\">").unwrap()..];
    let legend = &legend[..legend.find("</g>").unwrap()];
    let lowest = text_ys(legend, "").into_iter().fold(0.0, f64::max);
    let frame = &ablation[ablation.find("fill=\"none\" stroke=\"#333\"").unwrap() - 80..];
    let frame = &frame[frame.find("<rect").unwrap()..];
    let plot_bottom = attr(frame, "y") + attr(frame, "height");
    for y in &notes {
        assert!(
            y - 11.0 > lowest + 3.0 && y - 11.0 > plot_bottom + 45.0,
            "note at {y}: legend down to {lowest}, plot to {plot_bottom}"
        );
    }

    render_check(&out, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The script the browser runs on a copy of the page: the alignment of the highlighted answers,
/// the widths of the runs table's box and of the page, then every figure inlined and the boxes
/// of its legend, notes and other marks; the JSON into `<pre id="uq-out">`.
const MEASURE: &str = r#"
const out = {};
out.align = [...document.querySelectorAll('td.answer, td.answer .uq-highlight')]
  .map(e => getComputedStyle(e).textAlign);
const box = document.getElementById('runs').parentElement;
out.runs = {overflow: getComputedStyle(box).overflowX, scroll: box.scrollWidth, client: box.clientWidth};
out.page = {scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth};
const holder = document.createElement('div');
holder.innerHTML = FIGURES.join('');
document.body.appendChild(holder);
out.figures = [...holder.querySelectorAll('svg')].map(svg => {
  const r = svg.getBoundingClientRect();
  const bb = e => { const b = e.getBoundingClientRect();
    return [b.left - r.left, b.top - r.top, b.right - r.left, b.bottom - r.top]; };
  const parts = [...svg.children].slice(1);
  return {
    size: [svg.width.baseVal.value, svg.height.baseVal.value],
    legend: [...svg.querySelectorAll('.legend > *')].map(bb),
    notes: [...svg.querySelectorAll('.note')].map(bb),
    others: parts.filter(e => !e.matches('.legend, .note')).map(bb),
  };
});
document.getElementById('uq-out').textContent = JSON.stringify(out);
"#;

/// The page as Chromium lays it out (module docs), when a headless Chromium is on PATH: in a
/// window 1000 px wide (the runs table may scroll in its box, the page not) and 1440 px wide
/// (the runs table fits, its model paths wrapped).
fn render_check(out: &Path, dir: &Path) {
    let Some(browser) = uq_browser::find_or_skip("report layout check") else {
        return;
    };
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    files.sort();
    let svgs: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
        .collect();
    let script = format!(
        "<pre id=\"uq-out\">pending</pre><script>const FIGURES = {};{MEASURE}</script></body>",
        serde_json::to_string(&svgs).unwrap()
    );
    let page = out.join("measure.html");
    std::fs::write(&page, html.replace("</body>", &script)).unwrap();
    for width in [1000, 1440] {
        let dom = browser.run(
            &dir.join("chromium-profile"),
            &[
                "--dump-dom".to_string(),
                format!("--window-size={width},3000"),
            ],
            &format!("file://{}", page.display()),
        );
        let at = dom.find("<pre id=\"uq-out\">").expect("the measuring page") + 17;
        let text = dom[at..at + dom[at..].find("</pre>").unwrap()]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let m: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        check_page(&m, width);
        let figures = m["figures"].as_array().unwrap();
        assert_eq!(figures.len(), svgs.len());
        for (file, f) in files.iter().zip(figures) {
            check_figure(file, f);
        }
        let notes: usize = figures
            .iter()
            .map(|f| f["notes"].as_array().unwrap().len())
            .sum();
        assert!(notes > 0, "no note measured");
        eprintln!("report layout at {width} px ({}): {m}", browser.name);
    }
}

/// The highlighted answers read left-aligned; the page never overflows sideways, the runs
/// table's box scrolls instead, and at 1440 px the table fits.
fn check_page(m: &serde_json::Value, width: u32) {
    let align = m["align"].as_array().unwrap();
    assert!(!align.is_empty());
    assert!(
        align.iter().all(|a| a == "left" || a == "start"),
        "highlighted answers aligned {align:?}"
    );
    let (runs, page) = (&m["runs"], &m["page"]);
    assert_eq!(runs["overflow"], "auto", "{m}");
    assert!(
        page["scroll"].as_f64() <= page["client"].as_f64(),
        "the page overflows sideways at {width} px: {page}"
    );
    if width >= 1440 {
        assert!(
            runs["scroll"].as_f64() <= runs["client"].as_f64(),
            "the runs table is wider than the page at {width} px: {runs}"
        );
    }
}

/// The boxes of a list of `[x0, y0, x1, y1]`.
fn boxes(v: &serde_json::Value) -> Vec<Bbox> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let b: Vec<f64> = b
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            [b[0], b[1], b[2], b[3]]
        })
        .collect()
}

/// A figure's legend and notes lie inside it, and neither covers the other or any other mark.
fn check_figure(name: &str, f: &serde_json::Value) {
    let (w, h) = (
        f["size"][0].as_f64().unwrap(),
        f["size"][1].as_f64().unwrap(),
    );
    let (legend, notes, others) = (boxes(&f["legend"]), boxes(&f["notes"]), boxes(&f["others"]));
    for b in legend.iter().chain(&notes) {
        assert!(
            b[0] >= 0.0 && b[1] >= 0.0 && b[2] <= w + 0.5 && b[3] <= h + 0.5,
            "{name}: {b:?} outside the figure ({w} × {h})"
        );
    }
    for n in &notes {
        for o in legend.iter().chain(&others) {
            assert!(!overlap(*n, *o), "{name}: note {n:?} overlaps {o:?}");
        }
    }
    for l in &legend {
        for o in &others {
            assert!(!overlap(*l, *o), "{name}: legend {l:?} overlaps {o:?}");
        }
    }
}
