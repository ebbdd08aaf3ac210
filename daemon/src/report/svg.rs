//! Small hand-written SVG charts for `uqd report`: a plot frame with linear axes, ticks and
//! labels, and the marks the report draws on it (polylines, points, dashed reference lines,
//! bars, text, a legend). Every text is escaped; nothing refers to an external resource.

use std::fmt::Write as _;

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
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push('\u{fffd}')
            }
            c => out.push(c),
        }
    }
    out
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
}

impl Chart {
    /// A chart with the plot area inside fixed margins; the legend goes to the right of the
    /// plot when `legend_width` > 0.
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
        }
    }

    /// A chart whose legend is one row under the x-axis label instead of a column on the right.
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

    /// A note in the top-left corner of the plot area.
    pub fn note(&mut self, text: &str) {
        let _ = write!(
            self.body,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#555">{}</text>"##,
            self.left + 6.0,
            self.top + 15.0,
            esc(&truncate(text, 110))
        );
    }

    pub fn legend_item(&mut self, item: LegendItem) {
        self.legend.push(item);
    }

    /// The finished SVG document.
    pub fn finish(self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif"><rect width="{w}" height="{h}" fill="#fafafa"/>"##,
            w = self.width,
            h = self.height
        );
        s.push_str(&self.body);
        let mut lx = self.plot_right() + 14.0;
        let slot = (self.width - self.left) / self.legend.len().max(1) as f64;
        let max_chars = if self.legend_below {
            ((slot - 36.0) / 6.5).max(6.0) as usize
        } else {
            28
        };
        for (i, item) in self.legend.iter().enumerate() {
            let mut y = self.top + 8.0 + 18.0 * i as f64;
            if self.legend_below {
                // one row, items spread from the plot's left edge
                lx = self.left + slot * i as f64;
                y = self.height - 14.0;
            }
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
                lx + 30.0,
                y + 4.0,
                esc(&truncate(&item.name, max_chars))
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            esc("<script>a&b\"'</script>\u{1}"),
            "&lt;script&gt;a&amp;b&quot;&#39;&lt;/script&gt;\u{fffd}"
        );
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            nice_ticks(0.0, 1.0, 5),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(nice_ticks(1.0, 10.0, 5), vec![2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(tick_label(0.6000000000000001), "0.6");
        assert_eq!(tick_label(10.0), "10");
        assert_eq!(tick_label(-0.0), "0");
    }

    #[test]
    fn chart_is_one_svg_element() {
        let mut c = Chart::new(400.0, 300.0, (0.0, 1.0), (0.0, 1.0), 100.0);
        c.line(
            &[(0.0, Some(0.0)), (1.0, Some(1.0))],
            "#000",
            Some("4 3"),
            1.0,
        );
        c.points(&[(0.5, 0.5)], "#f00", 3.0, "<x>");
        c.axes("t<", "x", "y", &[0.0, 1.0], &[0.0, 1.0], None);
        c.legend_item(LegendItem {
            color: "#f00".into(),
            dash: None,
            marker: true,
            name: "<b>".into(),
        });
        let s = c.finish();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(!s.contains("<b>") && !s.contains("<x>") && s.contains("t&lt;"));
    }
}
