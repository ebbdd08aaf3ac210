//! The HTML of a highlighted answer: one `<div class="uq-highlight">` with inline styles only
//! (it renders the same in Datasette, Jupyter, the report and a browser, with no stylesheet;
//! left-aligned, whatever alignment the cell it is put in has), every text escaped.
//!
//! Each marked piece is `<span class="uq-hl uq-LEVEL" data-score="…" data-units="N"
//! style="background-color:rgb(…)…" title="…">`: the background [`colour_at`] of its lowest
//! score, a double underline when unsupported and a dotted one when doubtful (not colour
//! alone), and a tooltip with one line per unit covering it (score, scorer, the unit). Units
//! with no place in the answer follow the text as chips of their own
//! (`<div class="uq-unplaced">`); option `legend` adds the levels' key.

use super::marks::{colour_at, lowest, pieces, Level, Mark, Options};

/// `&`, `<`, `>`, `"`, `'` escaped: safe in text and in a quoted attribute.
pub fn escape(s: &str) -> String {
    escape_with(s, |c| c)
}

/// `&`, `<`, `>`, `"`, `'` escaped as [`escape`] does, and every other character mapped by
/// `other` (e.g. an SVG's characters that XML forbids replaced).
pub fn escape_with(s: &str, other: impl Fn(char) -> char) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(other(c)),
        }
    }
    out
}

/// The inline style of a piece at `level` with lowest score `score`, coloured at the levels
/// of `o`.
pub fn style(level: Level, score: Option<f64>, o: &Options) -> String {
    let background = match score {
        Some(s) => {
            let [r, g, b] = colour_at(s, o);
            format!("background-color:rgb({r}, {g}, {b});")
        }
        None => "outline:1px dashed #888;".to_string(),
    };
    let line = match level {
        Level::Unsupported => "text-decoration:underline double;",
        Level::Doubtful => "text-decoration:underline dotted;",
        Level::Supported | Level::Unscored => "",
    };
    format!("{background}{line}color:#000;border-radius:2px;padding:0 1px")
}

/// One tooltip line per mark: `0.337 luq_atomic · Marie Curie was born in 1867.`
fn tooltip(marks: &[Mark], covering: &[usize]) -> String {
    let mut order = covering.to_vec();
    order.sort_by(|&a, &b| {
        let key = |k: usize| marks[k].score.unwrap_or(f64::INFINITY);
        key(a).total_cmp(&key(b))
    });
    order
        .iter()
        .map(|&k| {
            let m = &marks[k];
            let score = m
                .score
                .map_or("no score".to_string(), |s| format!("{s:.3}"));
            let mut line = score;
            if let Some(s) = &m.scorer {
                line.push(' ');
                line.push_str(s);
            }
            if let Some(u) = &m.unit {
                line.push_str(" · ");
                line.push_str(u);
            }
            escape(&line)
        })
        .collect::<Vec<_>>()
        .join("&#10;")
}

fn marked(out: &mut String, text: &str, marks: &[Mark], covering: &[usize], o: &Options) {
    let score = lowest(marks, covering);
    let level = o.level(score);
    out.push_str(&format!(
        "<span class=\"uq-hl uq-{}\" data-score=\"{}\" data-units=\"{}\" style=\"{}\" title=\"{}\">{}</span>",
        level.as_str(),
        score.map_or(String::new(), |s| format!("{s:.6}")),
        covering.len(),
        style(level, score, o),
        tooltip(marks, covering),
        escape(text)
    ));
}

/// The highlighted answer as HTML (module docs).
pub fn render(response: &str, marks: &[Mark], o: &Options) -> String {
    let chars: Vec<char> = response.chars().collect();
    let mut out =
        String::from("<div class=\"uq-highlight\" style=\"white-space:pre-wrap;line-height:1.7;text-align:left\">");
    for (a, b, covering) in pieces(chars.len(), marks) {
        let text: String = chars[a..b].iter().collect();
        if covering.is_empty() {
            out.push_str(&escape(&text));
        } else {
            marked(&mut out, &text, marks, &covering, o);
        }
    }
    let unplaced: Vec<usize> = (0..marks.len())
        .filter(|&k| marks[k].span.is_none())
        .collect();
    if !unplaced.is_empty() {
        out.push_str(
            "<div class=\"uq-unplaced\" style=\"margin-top:.4em;font-size:90%\">Not found in the answer: ",
        );
        for (n, &k) in unplaced.iter().enumerate() {
            if n > 0 {
                out.push(' ');
            }
            let text = marks[k].unit.as_deref().unwrap_or("(unit without text)");
            marked(&mut out, text, marks, &[k], o);
        }
        out.push_str("</div>");
    }
    if o.legend {
        out.push_str(&legend(o));
    }
    out.push_str("</div>");
    out
}

/// The key of the levels at the options' thresholds.
fn legend(o: &Options) -> String {
    let chip = |level: Level, score: f64, label: String| {
        format!(
            "<span class=\"uq-key uq-{}\" style=\"{}\">{}</span>",
            level.as_str(),
            style(level, Some(score), o),
            escape(&label)
        )
    };
    format!(
        "<div class=\"uq-legend\" style=\"margin-top:.4em;font-size:85%\">{} {} {}</div>",
        chip(
            Level::Unsupported,
            0.0,
            format!("unsupported: below {}", super::marks::short(o.unsupported))
        ),
        chip(
            Level::Doubtful,
            (o.unsupported + o.doubtful) / 2.0,
            format!("doubtful: below {}", super::marks::short(o.doubtful))
        ),
        chip(Level::Supported, 1.0, "supported".to_string()),
    )
}
