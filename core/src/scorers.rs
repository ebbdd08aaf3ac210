//! The scorer catalogue (paper §3.3, Table "novelty"; names follow uqlm).
//!
//! A scorer is a (family, η) pair: the *family* fixes the functional form of the unit
//! score (unit-response, §3.3.1, or matched-unit, §3.3.2) and η is the semantic
//! consistency function of §3.2. Granularity is an option, not part of the name.
//!
//! The rows are in `catalogue` (one table of data); what is read from them in `accessors` (the
//! [`Scorer`] methods, names and parsing) and `docs_table` (the docs' scorer table).

mod accessors;
mod catalogue;
mod cells;
mod docs_table;
mod kinds;

pub use accessors::{aliases, all_names};
pub use catalogue::{Scorer, ScorerInfo, ALL, CATALOGUE};
pub use cells::{PaperName, UNIT_SCORER_OPTIONS};
pub use docs_table::{markdown_table, DOCS_BEGIN, DOCS_END};
pub use kinds::{Consistency, Family, Granularity, GraphMetric, TokenStat};

#[cfg(test)]
mod tests;
