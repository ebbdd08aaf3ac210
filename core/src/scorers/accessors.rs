//! What a [`Scorer`] says about itself, read from its catalogue row: its kinds, granularities,
//! paper names and cost, what it needs (samples, models, an LLM, the prompt), and its names
//! (canonical, aliases, parsing).

use std::fmt;

use super::catalogue::{Scorer, ScorerInfo, ALL, CATALOGUE};
use super::kinds::{Consistency, Family, Granularity, GraphMetric, TokenStat};

/// Every alias [`Scorer::parse`] accepts and the scorer it names, in catalogue order.
pub fn aliases() -> impl Iterator<Item = (&'static str, Scorer)> {
    CATALOGUE
        .iter()
        .flat_map(|row| row.aliases.iter().map(move |a| (*a, row.scorer)))
}

impl Scorer {
    /// This scorer's catalogue row.
    pub fn info(self) -> &'static ScorerInfo {
        &CATALOGUE[self as usize]
    }

    /// Canonical snake_case name (as uqlm).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn family(self) -> Family {
        self.info().family
    }

    pub fn consistency(self) -> Consistency {
        self.info().consistency
    }

    /// The graph metric of a graph scorer (family [`Family::Graph`]); `None` otherwise.
    pub fn graph_metric(self) -> Option<GraphMetric> {
        self.info().graph_metric
    }

    /// Name of the method in the paper's novelty table for this scorer at granularity `g`.
    pub fn paper_name(self, g: Granularity) -> &'static str {
        let p = self.info().paper_name;
        match g {
            Granularity::Sentence => p.sentence,
            Granularity::Claim => p.claim,
        }
    }

    /// Granularities the scorer works at: graph scorers only at claims (§3.3.4), short-form
    /// scorers at none (they score the whole response, see [`Scorer::granularity_names`]), the
    /// rest at both.
    pub fn granularities(self) -> &'static [Granularity] {
        self.info().granularities
    }

    /// Names of the granularities the scorer works at, as `uq_scorers()` lists them: `"response"`
    /// for short-form scorers, else those of [`Scorer::granularities`].
    pub fn granularity_names(self) -> Vec<&'static str> {
        if self.is_response_level() {
            vec!["response"]
        } else {
            self.granularities().iter().map(|g| g.as_str()).collect()
        }
    }

    /// Name of the method in the paper for this scorer at granularity name `g` (`"sentence"`,
    /// `"claim"` or `"response"`).
    pub fn paper_name_at(self, g: &str) -> &'static str {
        match Granularity::parse(g) {
            Ok(g) => self.paper_name(g),
            Err(_) => self.paper_name(Granularity::Claim),
        }
    }

    /// True for scorers that score the whole response and have no unit scores (short-form and
    /// the response-level white-box ones).
    pub fn is_response_level(self) -> bool {
        self.granularities().is_empty()
    }

    /// True when the scorer compares against `samples` (everything except verbalized
    /// confidence, the unit-QA scorers, which sample their own answers, the grounded scorers,
    /// which read sources (`grounded_fallback` uses samples where given: NULL without them), and
    /// `normalized_probability`).
    /// The ensemble's needs are those of its components (`ScoringOptions::computed`).
    pub fn needs_samples(self) -> bool {
        match self.family() {
            Family::Verbalized | Family::UnitQa | Family::Ensemble | Family::Grounded => false,
            Family::WhiteBox => matches!(
                self.consistency(),
                Consistency::TokenProbability(
                    TokenStat::MonteCarlo
                        | TokenStat::CoCoA
                        | TokenStat::WeightedNegentropy
                        | TokenStat::SemanticDensity
                )
            ),
            _ => true,
        }
    }

    /// What one response costs, for m samples (the paper's cost table in the appendix): the model calls.
    pub fn cost_class(self) -> &'static str {
        self.info().cost
    }

    /// True when the scorer needs the NLI model.
    pub fn needs_nli(self) -> bool {
        self.consistency().is_nli()
    }

    /// True when the scorer needs the embedding model.
    pub fn needs_embeddings(self) -> bool {
        matches!(
            self.consistency(),
            Consistency::Cosine
                | Consistency::BertScore
                | Consistency::TokenProbability(TokenStat::CoCoA)
        )
    }

    /// True when the scorer always needs an LLM: verbalized confidence and `p_true` (judge
    /// role) and the unit-QA scorers (question and generation roles).
    pub fn needs_llm(self) -> bool {
        matches!(self.family(), Family::Verbalized | Family::UnitQa) || self == Scorer::PTrue
    }

    /// True when the scorer needs `options.prompt` (the question the response answers).
    pub fn needs_prompt(self) -> bool {
        self.family() == Family::Verbalized || self == Scorer::PTrue
    }

    /// Parses a canonical name or an alias (`luq`, `luq_atomic`, `luq_pair`),
    /// case-insensitive and trimmed.
    pub fn parse(name: &str) -> Result<Scorer, String> {
        let key = name.trim().to_ascii_lowercase();
        if let Some(row) = CATALOGUE
            .iter()
            .find(|row| row.name == key || row.aliases.contains(&key.as_str()))
        {
            return Ok(row.scorer);
        }
        Err(format!(
            "unknown scorer {name:?}: {}valid scorers are {} (aliases: {})",
            crate::suggest::did_you_mean(
                &key,
                all_names().into_iter().chain(aliases().map(|(a, _)| a))
            ),
            all_names().join(", "),
            aliases().map(|(a, _)| a).collect::<Vec<_>>().join(", ")
        ))
    }
}

impl fmt::Display for Scorer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Canonical names of every scorer, in catalogue order.
pub fn all_names() -> Vec<&'static str> {
    ALL.iter().map(|s| s.name()).collect()
}
