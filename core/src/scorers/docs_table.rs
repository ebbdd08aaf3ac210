//! The docs' scorer table, generated from the catalogue (docs/reference.md, between two marker
//! lines; the catalogue test checks it and regenerates it with `UQ_BLESS=1`).

use super::catalogue::CATALOGUE;

/// The docs' scorer table (docs/reference.md, between the [`DOCS_BEGIN`] and [`DOCS_END`]
/// marker lines): a header, then one line per catalogue row. Options in the last column are
/// those read beyond [`UNIT_SCORER_OPTIONS`](super::UNIT_SCORER_OPTIONS).
pub fn markdown_table() -> String {
    let code = |items: &[&str]| {
        items
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::from(
        "| scorer | aliases | family | granularities | consistency η | cost | paper name | options read |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for row in CATALOGUE {
        let p = row.paper_name;
        let paper = if p.sentence == p.claim || row.scorer.is_response_level() {
            p.claim.to_string()
        } else {
            format!("{} (sentence), {} (claim)", p.sentence, p.claim)
        };
        let cells = [
            format!("`{}`", row.name),
            code(row.aliases),
            row.family.as_str().to_string(),
            row.scorer.granularity_names().join(", "),
            row.consistency.as_str().to_string(),
            row.cost.to_string(),
            paper,
            code(row.options),
        ];
        for c in cells {
            out += &if c.is_empty() {
                "| ".to_string()
            } else {
                format!("| {c} ")
            };
        }
        out += "|\n";
    }
    out
}

/// The line after which docs/reference.md holds [`markdown_table`].
pub const DOCS_BEGIN: &str = "<!-- scorers:begin (generated from core/src/scorers/catalogue.rs; UQ_BLESS=1 cargo test -p uq-core catalogue regenerates it) -->";
/// The line before which docs/reference.md's generated scorer table ends.
pub const DOCS_END: &str = "<!-- scorers:end -->";
