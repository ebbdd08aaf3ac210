//! Answers highlighted by confidence (`uq_highlight`, the Datasette canned query, the report,
//! Jupyter): the answer's text with each unit's span ([`crate::decompose::spans`]) marked by its
//! score.
//!
//! The answer is cut at every span boundary; a piece covered by several units (claims that
//! overlap, or one unit under several scorers) takes the lowest of their scores and lists each
//! of them. A score is one of three levels: *unsupported* below option `unsupported` (0.2),
//! *doubtful* below option `doubtful` (1/3: [`crate::aggregate::DEFAULT_CUT`], the cut where UAD
//! and the sentence filter drop a unit), else *supported*. HTML ([`html`]) colours each
//! piece on a colour-blind-safe scale ([`colour`]) and underlines the two low levels; text
//! ([`text`]) wraps them in `[!…]` and `[?…]` for terminals.

pub mod html;
pub mod marks;
pub mod text;

pub use marks::{
    colour, colour_at, lowest, marks, pieces, Format, Level, Mark, Options, OPTION_KEYS,
};

/// Renders `response` with `marks` in the options' format.
pub fn render(response: &str, marks: &[Mark], o: &Options) -> String {
    match o.format {
        Format::Html => html::render(response, marks, o),
        Format::Text => text::render(response, marks, o),
    }
}

#[cfg(test)]
mod tests;
