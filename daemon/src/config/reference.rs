//! docs/reference.md's table of the settings, written from [`SETTINGS`].

use super::settings::SETTINGS;

/// docs/reference.md's table of the settings.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| setting | flag | variable | config key | default |\n|---|---|---|---|---|\n",
    );
    for s in SETTINGS {
        let value = s
            .value_name
            .map(|v| format!(" {}", v.replace("...", "…")))
            .unwrap_or_default();
        let note = s.key_note.map(|n| format!(" {n}")).unwrap_or_default();
        out += &format!(
            "| {} | `{}{value}` | `{}` | `{}`{note} | {} |\n",
            s.label,
            s.flag(),
            s.env,
            s.key,
            s.default_doc()
        );
    }
    out
}

/// The line after which docs/reference.md holds [`markdown_table`].
pub const DOCS_BEGIN: &str = "<!-- settings:begin (generated from daemon/src/config/settings.rs; UQ_BLESS=1 cargo test -p uq-daemon settings_table regenerates it) -->";
/// The line before which docs/reference.md's generated settings table ends.
pub const DOCS_END: &str = "<!-- settings:end -->";
