//! The SVG primitives: escaping, ticks, one well-formed document, and the legend and notes
//! laid out so they cannot overlap.

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

/// A box: x0, y0, x1, y1.
type Bbox = (f64, f64, f64, f64);

fn attr(tag: &str, name: &str) -> Option<f64> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..at + tag[at..].find('"')?].parse().ok()
}

/// The boxes of the `<text>` elements of `svg` (11 px high, 7 px a character: at least as wide
/// as the browser draws them) whose opening tag contains `marker`.
fn text_boxes(svg: &str, marker: &str) -> Vec<Bbox> {
    svg.match_indices("<text ")
        .filter_map(|(i, _)| {
            let tag = &svg[i..i + svg[i..].find('>')?];
            let text = &svg[i + tag.len() + 1..i + svg[i..].find("</text>")?];
            let (x, y) = (attr(tag, "x")?, attr(tag, "y")?);
            let w = text.chars().count() as f64 * 7.0;
            tag.contains(marker)
                .then_some((x, y - 11.0, x + w, y + 3.0))
        })
        .collect()
}

fn overlap(a: Bbox, b: Bbox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The legend's boxes: each item's line and name.
fn legend_boxes(svg: &str) -> Vec<Bbox> {
    let g = &svg[svg.find("<g class=\"legend\">").unwrap()..];
    let g = &g[..g.find("</g>").unwrap()];
    let mut boxes = text_boxes(g, "");
    for (i, _) in g.match_indices("<line ") {
        let tag = &g[i..i + g[i..].find('>').unwrap()];
        let (x1, x2, y) = (
            attr(tag, "x1").unwrap(),
            attr(tag, "x2").unwrap(),
            attr(tag, "y1").unwrap(),
        );
        boxes.push((x1, y - 4.0, x2, y + 4.0));
    }
    boxes
}

/// A chart of `series` legend items, the legend right of the plot or under it, and `notes`.
fn chart(series: usize, below: bool, notes: &[&str]) -> (Chart, Bbox) {
    let c = Chart::new(
        680.0,
        420.0,
        (0.0, 1.0),
        (0.0, 1.0),
        if below { 0.0 } else { 210.0 },
    );
    let mut c = if below { c.with_legend_below() } else { c };
    for k in 0..series {
        c.legend_item(LegendItem {
            color: color(k).into(),
            dash: None,
            marker: true,
            name: format!("scorer number {k} with a long name"),
        });
    }
    for n in notes {
        c.note(n);
    }
    let plot = (c.left, c.top, c.plot_right(), c.plot_bottom() + 46.0);
    (c, plot)
}

#[test]
fn the_notes_go_under_the_plot_and_the_legend_for_any_number_of_series() {
    let long =
        "one m only: more runs with other num_samples over the same answers fill the curve, \
        and a second sentence long enough to need a line of its own under the first";
    for below in [false, true] {
        for series in 0..=24 {
            for notes in [
                &[][..],
                &["ECE 0.1 · Brier 0.2 · 30 units"][..],
                &[long, long][..],
            ] {
                let (mut c, plot) = chart(series, below, notes);
                c.axes("t", "x", "y", &[0.0, 1.0], &[0.0, 1.0], None);
                let svg = c.finish();
                let (w, h) = (attr(&svg, "width").unwrap(), attr(&svg, "height").unwrap());
                let legend = legend_boxes(&svg);
                let note = text_boxes(&svg, "class=\"note\"");
                let what = format!(
                    "{series} series, legend below: {below}, {} notes",
                    notes.len()
                );
                assert_eq!(legend.len(), 2 * series, "{what}");
                assert_eq!(note.is_empty(), notes.is_empty(), "{what}");
                for b in legend.iter().chain(&note) {
                    assert!(
                        b.0 >= 0.0 && b.2 <= w && b.1 >= 0.0 && b.3 <= h,
                        "{what}: {b:?} outside {w}×{h}"
                    );
                }
                for n in &note {
                    assert!(
                        !overlap(*n, plot),
                        "{what}: note {n:?} on the plot {plot:?}"
                    );
                    for l in &legend {
                        assert!(!overlap(*n, *l), "{what}: note {n:?} on the legend {l:?}");
                    }
                }
                for (i, a) in legend.iter().enumerate() {
                    assert!(
                        !overlap(*a, plot),
                        "{what}: legend {a:?} on the plot {plot:?}"
                    );
                    for b in &legend[i + 1..] {
                        assert!(!overlap(*a, *b), "{what}: legend {a:?} on {b:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn wrap_cuts_at_spaces_and_long_words_anywhere() {
    assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
    assert_eq!(wrap("abcdefghij x", 4), ["abcd", "efgh", "ij x"]);
    assert!(wrap("  ", 5).is_empty());
}
