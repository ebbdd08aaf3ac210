//! Small hand-written SVG charts for `uqd report`: a plot frame with linear axes, ticks and
//! labels, and the marks the report draws on it (polylines, points, dashed reference lines,
//! bars, text, a legend, notes). The legend has room of its own (a column right of the plot or
//! rows under it) and the notes go under everything, so neither covers the other or the plot,
//! whatever the number of series. Every text is escaped; nothing refers to an external resource.

use std::fmt::Write as _;

use uq_core::highlight::html::escape_with;

/// Okabe–Ito colours (distinguishable for colour-blind readers), then a few more.
const PALETTE: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B", "#F0E442",
    "#7F7F7F", "#17BECF", "#BCBD22", "#1F3A93",
];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML/HTML content and attribute values, and replaces the characters XML 1.0
/// forbids (control characters other than tab, newline and carriage return) with U+FFFD.
pub fn esc(s: &str) -> String {
    escape_with(s, |c| match c {
        '\t' | '\n' | '\r' => c,
        c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
        c => c,
    })
}

/// At most `max` characters of `s`, with "…" when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A metric as the page shows it: 3 decimals, or "n/a" when undefined.
pub fn fmt3(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.3}"),
        _ => "n/a".into(),
    }
}

/// A number for a tick label: no trailing zeros ("0.2", "10", "0.25").
pub fn tick_label(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// About `target` "nice" ticks (steps 1, 2, 5 × 10^k) covering [lo, hi].
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo || target == 0 {
        return vec![lo];
    }
    let raw = (hi - lo) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// One series of the legend: a colour, a dash pattern (solid when `None`) and a name.
pub struct LegendItem {
    pub color: String,
    pub dash: Option<&'static str>,
    pub marker: bool,
    pub name: String,
}

/// A chart under construction: an SVG of `width` × `height` pixels with a plot area mapped
/// linearly from data ranges `x` and `y`.
pub struct Chart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    body: String,
    legend: Vec<LegendItem>,
    legend_below: bool,
    notes: Vec<String>,
}

impl Chart {
    /// A chart with the plot area inside fixed margins; the legend goes in a column of
    /// `legend_width` right of the plot (under it when longer than the plot is high).
    pub fn new(width: f64, height: f64, x: (f64, f64), y: (f64, f64), legend_width: f64) -> Chart {
        Chart {
            width,
            height,
            left: 62.0,
            right: 18.0 + legend_width,
            top: 46.0,
            bottom: 56.0,
            x,
            y,
            body: String::new(),
            legend: Vec::new(),
            legend_below: false,
            notes: Vec::new(),
        }
    }

    /// A chart whose legend is in rows under the x-axis label instead of a column on the right.
    pub fn with_legend_below(mut self) -> Chart {
        self.legend_below = true;
        self.bottom += 22.0;
        self
    }

    fn plot_right(&self) -> f64 {
        self.width - self.right
    }

    fn plot_bottom(&self) -> f64 {
        self.height - self.bottom
    }

    /// Pixel x of data x.
    pub fn px(&self, v: f64) -> f64 {
        let (a, b) = self.x;
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        self.left + t * (self.plot_right() - self.left)
    }

    /// Pixel y of data y.
    pub fn py(&self, v: f64) -> f64 {
        let (a, b) = self.y;
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        self.plot_bottom() - t * (self.plot_bottom() - self.top)
    }

    /// Title (top), axis labels, the frame, grid lines and tick labels at `xticks`/`yticks`.
    /// `xtick_text` overrides the label of each x tick when given.
    pub fn axes(
        &mut self,
        title: &str,
        xlabel: &str,
        ylabel: &str,
        xticks: &[f64],
        yticks: &[f64],
        xtick_text: Option<&[String]>,
    ) {
        let (l, r, t, b) = (self.left, self.plot_right(), self.top, self.plot_bottom());
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<rect x="{l:.1}" y="{t:.1}" width="{:.1}" height="{:.1}" fill="#ffffff" stroke="none"/>"##,
            r - l,
            b - t
        );
        for &v in yticks {
            let y = self.py(v);
            let _ = write!(
                s,
                r##"<line x1="{l:.1}" y1="{y:.1}" x2="{r:.1}" y2="{y:.1}" stroke="#e3e3e3"/><line x1="{:.1}" y1="{y:.1}" x2="{l:.1}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                l - 4.0,
                l - 7.0,
                y + 4.0,
                esc(&tick_label(v))
            );
        }
        for (i, &v) in xticks.iter().enumerate() {
            let x = self.px(v);
            let label = xtick_text
                .and_then(|t| t.get(i).cloned())
                .unwrap_or_else(|| tick_label(v));
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{t:.1}" x2="{x:.1}" y2="{b:.1}" stroke="#f0f0f0"/><line x1="{x:.1}" y1="{b:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##,
                b + 4.0,
                b + 17.0,
                esc(&label)
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{l:.1}" y="{t:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#333"/>"##,
            r - l,
            b - t
        );
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"##,
            self.width / 2.0,
            esc(&truncate(title, 90))
        );
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
            (l + r) / 2.0,
            self.plot_bottom() + 42.0,
            esc(xlabel)
        );
        let cy = (t + b) / 2.0;
        let _ = write!(
            s,
            r##"<text x="16" y="{cy:.1}" text-anchor="middle" font-size="12" transform="rotate(-90 16 {cy:.1})">{}</text>"##,
            esc(ylabel)
        );
        // Grid and frame go under the marks drawn so far and after.
        self.body.insert_str(0, &s);
    }

    /// A polyline through the points (data coordinates); `None` breaks the line.
    pub fn line(
        &mut self,
        points: &[(f64, Option<f64>)],
        color: &str,
        dash: Option<&str>,
        width: f64,
    ) {
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let mut segments = Vec::new();
        for &(x, y) in points {
            match y {
                Some(y) if y.is_finite() && x.is_finite() => segment.push((self.px(x), self.py(y))),
                _ => {
                    if !segment.is_empty() {
                        segments.push(std::mem::take(&mut segment));
                    }
                }
            }
        }
        if !segment.is_empty() {
            segments.push(segment);
        }
        let dash = dash
            .map(|d| format!(r#" stroke-dasharray="{d}""#))
            .unwrap_or_default();
        for seg in segments.iter().filter(|s| s.len() > 1) {
            let pts: Vec<String> = seg.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                self.body,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{width}"{dash}/>"#,
                pts.join(" ")
            );
        }
    }

    /// Filled circles at the points, with a tooltip each.
    pub fn points(&mut self, points: &[(f64, f64)], color: &str, radius: f64, tooltip: &str) {
        for &(x, y) in points {
            if !x.is_finite() || !y.is_finite() {
                continue;
            }
            let _ = write!(
                self.body,
                r##"<circle cx="{:.1}" cy="{:.1}" r="{radius}" fill="{color}" stroke="#fff" stroke-width="1"><title>{}</title></circle>"##,
                self.px(x),
                self.py(y),
                esc(&format!("{tooltip} ({}, {})", tick_label(x), tick_label(y)))
            );
        }
    }

    /// A bar from data y = `y0` to `y1` spanning data x in [x0, x1].
    pub fn bar(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, color: &str, opacity: f64) {
        let (a, b) = (self.px(x0), self.px(x1));
        let (top, bot) = (self.py(y1.max(y0)), self.py(y1.min(y0)));
        let _ = write!(
            self.body,
            r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="{opacity}"/>"#,
            a.min(b),
            (b - a).abs(),
            (bot - top).max(0.0)
        );
    }

    /// Text centred at data coordinates, nudged down by `dy` pixels (up when negative).
    pub fn text_at(&mut self, x: f64, y: f64, dy: f64, text: &str, size: f64, color: &str) {
        let _ = write!(
            self.body,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{size}" fill="{color}">{}</text>"#,
            self.px(x),
            self.py(y) + dy,
            esc(text)
        );
    }

    /// A note under the chart, below the plot, the axis labels and the legend, wrapped to the
    /// chart's width (the SVG grows to hold it).
    pub fn note(&mut self, text: &str) {
        self.notes.push(text.to_string());
    }

    pub fn legend_item(&mut self, item: LegendItem) {
        self.legend.push(item);
    }

    /// Where each legend item goes (the left end of its line, its baseline) and how many
    /// characters of its name fit: a column right of the plot while it fits beside the plot,
    /// else rows under the x-axis label (as many items per row as fit [`MIN_SLOT`], the rows
    /// growing downwards, as a chart [`Chart::with_legend_below`] has them).
    fn legend_slots(&self) -> (Vec<(f64, f64)>, usize) {
        let n = self.legend.len();
        let column_y = |i: usize| self.top + 8.0 + LEGEND_ROW * i as f64;
        if !self.legend_below && column_y(n.saturating_sub(1)) <= self.plot_bottom() + 10.0 {
            let x = self.plot_right() + 14.0;
            let room = self.right - 14.0 - LEGEND_TEXT_X - 6.0;
            return ((0..n).map(|i| (x, column_y(i))).collect(), chars_in(room));
        }
        let first_row = if self.legend_below {
            self.height - 14.0
        } else {
            self.height + 10.0
        };
        let span = self.width - self.left;
        let per_row = ((span / MIN_SLOT).floor() as usize).clamp(1, n.max(1));
        let slot = span / per_row as f64;
        let slots = (0..n).map(|i| {
            let (row, col) = (i / per_row, i % per_row);
            (
                self.left + slot * col as f64,
                first_row + LEGEND_ROW * row as f64,
            )
        });
        (slots.collect(), chars_in(slot - LEGEND_TEXT_X - 6.0))
    }

    /// The legend: one `<g class="legend">`.
    fn legend_svg(&self, slots: &[(f64, f64)], max_chars: usize) -> String {
        let mut s = String::from(r#"<g class="legend">"#);
        for (item, &(lx, y)) in self.legend.iter().zip(slots) {
            let dash = item
                .dash
                .map(|d| format!(r#" stroke-dasharray="{d}""#))
                .unwrap_or_default();
            let _ = write!(
                s,
                r#"<line x1="{lx:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="2.5"{dash}/>"#,
                lx + 24.0,
                c = item.color
            );
            if item.marker {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{y:.1}" r="3.5" fill="{}"/>"#,
                    lx + 12.0,
                    item.color
                );
            }
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
                lx + LEGEND_TEXT_X,
                y + 4.0,
                esc(&truncate(&item.name, max_chars))
            );
        }
        s.push_str("</g>");
        s
    }

    /// The notes' lines (`<text class="note">`) from `top` down; the y under the last one.
    fn notes_svg(&self, top: f64) -> (String, f64) {
        let mut s = String::new();
        let mut y = top;
        let width = chars_in(self.width - self.left - 12.0);
        for line in self.notes.iter().flat_map(|n| wrap(n, width)) {
            y += NOTE_LINE;
            let _ = write!(
                s,
                r##"<text class="note" x="{:.1}" y="{y:.1}" font-size="11" fill="#555">{}</text>"##,
                self.left,
                esc(&line)
            );
        }
        (s, if self.notes.is_empty() { top } else { y + 8.0 })
    }

    /// The finished SVG document: the marks, the legend, and the notes under both, the height
    /// grown to hold a legend longer than the plot and the notes.
    pub fn finish(self) -> String {
        let (slots, max_chars) = self.legend_slots();
        let legend = self.legend_svg(&slots, max_chars);
        let legend_bottom = slots.iter().map(|&(_, y)| y + 8.0).fold(0.0, f64::max);
        let (notes, height) = self.notes_svg(self.height.max(legend_bottom + 6.0));
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif"><rect width="{w}" height="{h}" fill="#fafafa"/>"##,
            w = self.width,
            h = height
        );
        s.push_str(&self.body);
        s.push_str(&legend);
        s.push_str(&notes);
        s.push_str("</svg>\n");
        s
    }
}

/// The narrowest legend slot of a legend under the plot, in pixels.
const MIN_SLOT: f64 = 150.0;
/// The distance between two rows of a legend (and two items of a legend column).
const LEGEND_ROW: f64 = 18.0;
/// Where a legend item's name starts, right of its line's left end.
const LEGEND_TEXT_X: f64 = 30.0;
/// The distance between two lines of the notes.
const NOTE_LINE: f64 = 15.0;
mod wrap;
use wrap::chars_in;
pub use wrap::wrap;

#[cfg(test)]
mod tests;
