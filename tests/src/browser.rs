//! Headless Chromium for the tests that look at pages as a reader does: `run` (a DOM dump or a
//! screenshot) and `marks`, the highlighted spans of a page (`uq_highlight`'s output) with the
//! styles the browser computed for them.
//!
//! The browser itself is found and run by the `uq-browser` crate (`tests/browser`), shared with
//! the report's render check in `daemon/tests/engine/report.rs`.

use std::path::{Path, PathBuf};

/// The first headless Chromium on PATH (`uq_browser::BROWSERS`, in order); panics with how to
/// install one when there is none.
pub fn chromium() -> PathBuf {
    uq_browser::require().path
}

/// Runs headless Chromium with `args` on `url`, at most 120 s; returns stdout.
pub fn run(profile: &Path, args: &[String], url: &str) -> String {
    uq_browser::require().run(profile, args, url)
}

/// A page that loads `target` (same origin) in a frame and, once it has loaded, writes into
/// `<pre id="out">` a JSON object: `marks`, per `.uq-hl` element its data-score, data-units,
/// class, title, text and computed background colour and underline style; `highlights`, per
/// `.uq-highlight` block its text and the tag names inside it.
pub fn checker_page(target: &str) -> String {
    format!(
        r#"<!doctype html><html><body><pre id="out">pending</pre>
<iframe id="f" src="{target}" style="width:1200px;height:2400px"></iframe>
<script>
document.getElementById('f').addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument;
  const marks = [...d.querySelectorAll('.uq-hl')].map(e => {{
    const s = getComputedStyle(e);
    return {{score: e.dataset.score, units: e.dataset.units, cls: e.className, title: e.title,
      text: e.textContent, background: s.backgroundColor, underline: s.textDecorationStyle,
      line: s.textDecorationLine}};
  }});
  const highlights = [...d.querySelectorAll('.uq-highlight')].map(e => ({{
    text: e.textContent,
    tags: [...new Set([...e.querySelectorAll('*')].map(x => x.tagName))]}}));
  document.getElementById('out').textContent = JSON.stringify({{marks, highlights}});
}});
</script></body></html>"#
    )
}

/// Opens `checker_url` (a [`checker_page`]) and returns its JSON object.
pub fn marks(profile: &Path, checker_url: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--dump-dom".to_string(),
        "--virtual-time-budget=20000".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let dom = run(profile, &args, checker_url);
    let start = dom.find("<pre id=\"out\">").expect("checker page") + "<pre id=\"out\">".len();
    let end = start + dom[start..].find("</pre>").expect("</pre>");
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("checker page output {text:?}: {e}"))
}

/// The CSS colour the browser computes for `rgb`.
pub fn css_rgb([r, g, b]: [u8; 3]) -> String {
    format!("rgb({r}, {g}, {b})")
}
