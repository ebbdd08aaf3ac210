//! The scorer catalogue (paper §3.3, Table "novelty"; names follow uqlm).
//!
//! A scorer is a (family, η) pair: the *family* fixes the functional form of the unit
//! score (unit-response, §3.3.1, or matched-unit, §3.3.2) and η is the semantic
//! consistency function of §3.2. Granularity is an option, not part of the name.

use std::fmt;

use crate::score::graph::GraphMetric;

/// Unit granularity g ∈ {sent, claim} of the decomposition δ_g (paper §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Granularity {
    #[default]
    Sentence,
    Claim,
}

impl Granularity {
    pub const ALL: &'static [Granularity] = &[Granularity::Sentence, Granularity::Claim];

    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Sentence => "sentence",
            Granularity::Claim => "claim",
        }
    }

    /// Parses `"sentence"` (alias `"sent"`) or `"claim"`, case-insensitive and trimmed.
    pub fn parse(name: &str) -> Result<Granularity, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "sentence" | "sent" => Ok(Granularity::Sentence),
            "claim" => Ok(Granularity::Claim),
            _ => Err(format!(
                "unknown granularity {name:?}: use \"sentence\" or \"claim\""
            )),
        }
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Scorer family (paper §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// §3.3.1: c(s) = (1/m) Σ_j η(y_j, s).
    UnitResponse,
    /// §3.3.2: c(s) = (1/m) Σ_j max_{s'∈δ(y_j)} η(s', s).
    MatchedUnit,
    /// Verbalized confidence (paper appendix prompt): an LLM states how likely each unit is
    /// correct; no sampled responses are compared.
    Verbalized,
    /// §3.3.4: a centrality of the claim node in the bipartite claim–response entailment graph
    /// (claim granularity only; the union of unique claims is `options.claim_union` or comes
    /// from LLM claim merging).
    Graph,
    /// §3.3.3: each unit is inverted into questions by the question LLM; the generation LLM
    /// answers each question m_qa + 1 times and c(s) = mean over questions of
    /// (1/m_qa) Σ_j η(y_0^(s), y_j^(s)) (or the semantic negentropy of the m_qa + 1 answers).
    UnitQa,
    /// Short-form baselines (paper §4, "Response-Level Scoring"): the whole original answer
    /// against the whole sampled answers (uqlm's `BlackBoxUQ`), or the answer's normalised
    /// token probability (uqlm's `WhiteBoxUQ`). Response-level only: no unit scores.
    ShortForm,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::UnitResponse => "unit_response",
            Family::MatchedUnit => "matched_unit",
            Family::Verbalized => "verbalized",
            Family::Graph => "graph",
            Family::UnitQa => "unit_qa",
            Family::ShortForm => "short_form",
        }
    }
}

/// Semantic consistency function η (paper §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// p_e(a, b): NLI entailment probability.
    Entailment,
    /// 1 − p_c(a, b): complement of the NLI contradiction probability.
    Noncontradiction,
    /// p_e / (p_e + p_c): entailment with the neutral class excluded.
    ContrastedEntailment,
    /// ĉos(a, b) = (cos(a, b) + 1) / 2 on sentence embeddings.
    Cosine,
    /// BERTScore F1 on token embeddings.
    BertScore,
    /// Not a consistency function: the judge LLM's verbalized confidence phrase, mapped to
    /// 0, 0.2, …, 1 (family [`Family::Verbalized`]).
    Verbalized,
    /// 𝕀[a = b] (§3.2, sixth bullet): exact string match.
    ExactMatch,
    /// Not a pairwise η: 1 − SE / ln(n) over the clusters of the n = m + 1 answers (semantic
    /// negentropy, §3.3.3 footnote; uqlm's `semantic_negentropy`).
    SemanticNegentropy,
    /// Not a pairwise η: black-box non-contradiction as uqlm's `BlackBoxUQ` computes it between
    /// two whole answers, the mean of 1 − p_c over both NLI directions (1 for identical texts).
    MeanNoncontradiction,
    /// Not a consistency function: exp of the mean token log-probability of the original
    /// answer (white-box; uqlm's `normalized_probability`).
    NormalizedProbability,
}

impl Consistency {
    pub fn as_str(self) -> &'static str {
        match self {
            Consistency::Entailment => "p_e",
            Consistency::Noncontradiction => "1-p_c",
            Consistency::ContrastedEntailment => "p_e/(p_e+p_c)",
            Consistency::Cosine => "cos_hat",
            Consistency::BertScore => "bert_f1",
            Consistency::Verbalized => "verbalized",
            Consistency::ExactMatch => "exact_match",
            Consistency::SemanticNegentropy => "semantic_negentropy",
            Consistency::MeanNoncontradiction => "1-(p_c(a,b)+p_c(b,a))/2",
            Consistency::NormalizedProbability => "exp(mean logprob)",
        }
    }

    /// True for the η computed from NLI probabilities.
    pub fn is_nli(self) -> bool {
        matches!(
            self,
            Consistency::Entailment
                | Consistency::Noncontradiction
                | Consistency::ContrastedEntailment
                | Consistency::SemanticNegentropy
                | Consistency::MeanNoncontradiction
        )
    }
}

/// One scorer of the catalogue (docs/design.md, "Scorer catalogue").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scorer {
    Entailment,
    Noncontradiction,
    ContrastedEntailment,
    MatchedEntailment,
    MatchedNoncontradiction,
    MatchedContrastedEntailment,
    MatchedCosineSim,
    MatchedBertScore,
    /// One judge-LLM call per unit with the paper's verbalized-confidence prompt; needs
    /// `options.prompt` (the question the response answers).
    VerbalizedConfidence,
    /// Graph scorers (§3.3.4): centrality of the claim in the claim–response entailment graph.
    BetweennessCentrality,
    ClosenessCentrality,
    HarmonicCentrality,
    LaplacianCentrality,
    PageRank,
    /// Unit-QA scorers (§3.3.3).
    QaNoncontradiction,
    QaCosineSim,
    QaBertScore,
    QaExactMatch,
    QaSemanticNegentropy,
    /// Short-form baselines (response level only).
    ShortformSemanticNegentropy,
    ShortformNoncontradiction,
    ShortformBertScore,
    ShortformCosineSim,
    NormalizedProbability,
}

/// Every scorer, in catalogue order.
pub const ALL: &[Scorer] = &[
    Scorer::Entailment,
    Scorer::Noncontradiction,
    Scorer::ContrastedEntailment,
    Scorer::MatchedEntailment,
    Scorer::MatchedNoncontradiction,
    Scorer::MatchedContrastedEntailment,
    Scorer::MatchedCosineSim,
    Scorer::MatchedBertScore,
    Scorer::VerbalizedConfidence,
    Scorer::BetweennessCentrality,
    Scorer::ClosenessCentrality,
    Scorer::HarmonicCentrality,
    Scorer::LaplacianCentrality,
    Scorer::PageRank,
    Scorer::QaNoncontradiction,
    Scorer::QaCosineSim,
    Scorer::QaBertScore,
    Scorer::QaExactMatch,
    Scorer::QaSemanticNegentropy,
    Scorer::ShortformSemanticNegentropy,
    Scorer::ShortformNoncontradiction,
    Scorer::ShortformBertScore,
    Scorer::ShortformCosineSim,
    Scorer::NormalizedProbability,
];

/// Accepted aliases and the scorer each names.
pub const ALIASES: &[(&str, Scorer)] = &[
    ("luq", Scorer::ContrastedEntailment),
    ("luq_atomic", Scorer::ContrastedEntailment),
    ("luq_pair", Scorer::MatchedContrastedEntailment),
];

impl Scorer {
    /// Canonical snake_case name (as uqlm).
    pub fn name(self) -> &'static str {
        match self {
            Scorer::Entailment => "entailment",
            Scorer::Noncontradiction => "noncontradiction",
            Scorer::ContrastedEntailment => "contrasted_entailment",
            Scorer::MatchedEntailment => "matched_entailment",
            Scorer::MatchedNoncontradiction => "matched_noncontradiction",
            Scorer::MatchedContrastedEntailment => "matched_contrasted_entailment",
            Scorer::MatchedCosineSim => "matched_cosine_sim",
            Scorer::MatchedBertScore => "matched_bert_score",
            Scorer::VerbalizedConfidence => "verbalized_confidence",
            Scorer::BetweennessCentrality => "betweenness_centrality",
            Scorer::ClosenessCentrality => "closeness_centrality",
            Scorer::HarmonicCentrality => "harmonic_centrality",
            Scorer::LaplacianCentrality => "laplacian_centrality",
            Scorer::PageRank => "page_rank",
            Scorer::QaNoncontradiction => "qa_noncontradiction",
            Scorer::QaCosineSim => "qa_cosine_sim",
            Scorer::QaBertScore => "qa_bert_score",
            Scorer::QaExactMatch => "qa_exact_match",
            Scorer::QaSemanticNegentropy => "qa_semantic_negentropy",
            Scorer::ShortformSemanticNegentropy => "shortform_semantic_negentropy",
            Scorer::ShortformNoncontradiction => "shortform_noncontradiction",
            Scorer::ShortformBertScore => "shortform_bert_score",
            Scorer::ShortformCosineSim => "shortform_cosine_sim",
            Scorer::NormalizedProbability => "normalized_probability",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Scorer::Entailment | Scorer::Noncontradiction | Scorer::ContrastedEntailment => {
                Family::UnitResponse
            }
            Scorer::VerbalizedConfidence => Family::Verbalized,
            Scorer::BetweennessCentrality
            | Scorer::ClosenessCentrality
            | Scorer::HarmonicCentrality
            | Scorer::LaplacianCentrality
            | Scorer::PageRank => Family::Graph,
            Scorer::QaNoncontradiction
            | Scorer::QaCosineSim
            | Scorer::QaBertScore
            | Scorer::QaExactMatch
            | Scorer::QaSemanticNegentropy => Family::UnitQa,
            Scorer::ShortformSemanticNegentropy
            | Scorer::ShortformNoncontradiction
            | Scorer::ShortformBertScore
            | Scorer::ShortformCosineSim
            | Scorer::NormalizedProbability => Family::ShortForm,
            _ => Family::MatchedUnit,
        }
    }

    pub fn consistency(self) -> Consistency {
        match self {
            Scorer::Entailment | Scorer::MatchedEntailment => Consistency::Entailment,
            Scorer::Noncontradiction | Scorer::MatchedNoncontradiction => {
                Consistency::Noncontradiction
            }
            Scorer::ContrastedEntailment | Scorer::MatchedContrastedEntailment => {
                Consistency::ContrastedEntailment
            }
            Scorer::MatchedCosineSim | Scorer::QaCosineSim | Scorer::ShortformCosineSim => {
                Consistency::Cosine
            }
            Scorer::MatchedBertScore | Scorer::QaBertScore | Scorer::ShortformBertScore => {
                Consistency::BertScore
            }
            // uqlm's black-box non-contradiction: both NLI directions averaged (the paper's
            // 1 − p_c applied symmetrically to two answers of equal standing).
            Scorer::QaNoncontradiction | Scorer::ShortformNoncontradiction => {
                Consistency::MeanNoncontradiction
            }
            Scorer::QaExactMatch => Consistency::ExactMatch,
            Scorer::QaSemanticNegentropy | Scorer::ShortformSemanticNegentropy => {
                Consistency::SemanticNegentropy
            }
            Scorer::NormalizedProbability => Consistency::NormalizedProbability,
            Scorer::VerbalizedConfidence => Consistency::Verbalized,
            // The graph's edges are claim–response entailment: p_e ≥ `graph_threshold`.
            Scorer::BetweennessCentrality
            | Scorer::ClosenessCentrality
            | Scorer::HarmonicCentrality
            | Scorer::LaplacianCentrality
            | Scorer::PageRank => Consistency::Entailment,
        }
    }

    /// The graph metric of a graph scorer (family [`Family::Graph`]); `None` otherwise.
    pub fn graph_metric(self) -> Option<GraphMetric> {
        match self {
            Scorer::BetweennessCentrality => Some(GraphMetric::Betweenness),
            Scorer::ClosenessCentrality => Some(GraphMetric::Closeness),
            Scorer::HarmonicCentrality => Some(GraphMetric::Harmonic),
            Scorer::LaplacianCentrality => Some(GraphMetric::Laplacian),
            Scorer::PageRank => Some(GraphMetric::PageRank),
            _ => None,
        }
    }

    /// Name of the method in the paper's novelty table for this scorer at granularity `g`.
    pub fn paper_name(self, g: Granularity) -> &'static str {
        use Granularity::*;
        match (self, g) {
            (Scorer::ContrastedEntailment, Sentence) => "LUQ",
            (Scorer::ContrastedEntailment, Claim) => "LUQ-atomic",
            (Scorer::Entailment | Scorer::Noncontradiction, Sentence) => "extension of LUQ",
            (Scorer::Entailment | Scorer::Noncontradiction, Claim) => "extension of LUQ-atomic",
            (Scorer::MatchedContrastedEntailment, Sentence) => "LUQ-pair",
            (Scorer::MatchedContrastedEntailment, Claim) => "extension of LUQ-pair (granularity)",
            (Scorer::VerbalizedConfidence, _) => "verbalized confidence",
            (Scorer::BetweennessCentrality | Scorer::ClosenessCentrality | Scorer::PageRank, _) => {
                "Jiang et al. 2024"
            }
            (Scorer::HarmonicCentrality | Scorer::LaplacianCentrality, _) => "new (this work)",
            (Scorer::QaSemanticNegentropy, _) => {
                "generalisation of long-form semantic entropy (Farquhar et al. 2024)"
            }
            (
                Scorer::QaNoncontradiction
                | Scorer::QaCosineSim
                | Scorer::QaBertScore
                | Scorer::QaExactMatch,
                Sentence,
            ) => "sentence-QA (new, this work)",
            (
                Scorer::QaNoncontradiction
                | Scorer::QaCosineSim
                | Scorer::QaBertScore
                | Scorer::QaExactMatch,
                Claim,
            ) => "claim-QA (new, this work)",
            (Scorer::ShortformSemanticNegentropy, _) => {
                "semantic negentropy (short-form baseline; Kuhn et al. 2023)"
            }
            (Scorer::ShortformNoncontradiction, _) => {
                "non-contradiction (short-form baseline; Lin et al. 2024)"
            }
            (Scorer::ShortformBertScore, _) => "BERTScore (short-form baseline; Manakul et al. 2023)",
            (Scorer::ShortformCosineSim, _) => {
                "cosine similarity (short-form baseline; Shorinwa et al. 2024)"
            }
            (Scorer::NormalizedProbability, _) => {
                "normalized sequence probability (short-form white-box baseline; Malinin & Gales 2021)"
            }
            _ => "extension of LUQ-pair",
        }
    }

    /// Granularities the scorer works at: graph scorers only at claims (§3.3.4), short-form
    /// scorers at none (they score the whole response, see [`Scorer::granularity_names`]), the
    /// rest at both.
    pub fn granularities(self) -> &'static [Granularity] {
        match self.family() {
            Family::Graph => &[Granularity::Claim],
            Family::ShortForm => &[],
            _ => Granularity::ALL,
        }
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

    /// True for scorers that score the whole response and have no unit scores (short-form).
    pub fn is_response_level(self) -> bool {
        self.family() == Family::ShortForm
    }

    /// True when the scorer compares against `samples` (everything except verbalized
    /// confidence, the unit-QA scorers, which sample their own answers, and
    /// `normalized_probability`).
    pub fn needs_samples(self) -> bool {
        !matches!(self.family(), Family::Verbalized | Family::UnitQa)
            && self != Scorer::NormalizedProbability
    }

    /// What one response costs, for m samples (the paper's cost table in the appendix): the model calls.
    pub fn cost_class(self) -> &'static str {
        match (self.family(), self.consistency()) {
            (Family::UnitResponse, _) => "NLI: m × units pairs",
            (Family::MatchedUnit, Consistency::Cosine | Consistency::BertScore) => {
                "embeddings: units + units of the m samples"
            }
            (Family::MatchedUnit, _) => "NLI: units × units of the m samples pairs",
            (Family::Graph, _) => "NLI: claim union × (m + 1) pairs",
            (Family::Verbalized, _) => "LLM: one call per unit",
            (Family::UnitQa, Consistency::Cosine | Consistency::BertScore) => {
                "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; embeddings of the answers"
            }
            (Family::UnitQa, Consistency::ExactMatch) => {
                "LLM: units × Q question calls + units × Q × (m_qa + 1) answers"
            }
            (Family::UnitQa, Consistency::SemanticNegentropy) => {
                "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; NLI: up to units × Q × (m_qa + 1)² pairs"
            }
            (Family::UnitQa, _) => {
                "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; NLI: units × Q × 2 m_qa pairs"
            }
            (Family::ShortForm, Consistency::NormalizedProbability) => {
                "none: the answer's token log-probabilities"
            }
            (Family::ShortForm, Consistency::Cosine | Consistency::BertScore) => {
                "embeddings: response + m samples"
            }
            (Family::ShortForm, Consistency::SemanticNegentropy) => "NLI: up to (m + 1)² pairs",
            (Family::ShortForm, _) => "NLI: 2m pairs",
        }
    }

    /// True when the scorer needs the NLI model.
    pub fn needs_nli(self) -> bool {
        self.consistency().is_nli()
    }

    /// True when the scorer needs the embedding model.
    pub fn needs_embeddings(self) -> bool {
        matches!(
            self.consistency(),
            Consistency::Cosine | Consistency::BertScore
        )
    }

    /// True when the scorer always needs an LLM: verbalized confidence (judge role) and the
    /// unit-QA scorers (question and generation roles).
    pub fn needs_llm(self) -> bool {
        matches!(self.family(), Family::Verbalized | Family::UnitQa)
    }

    /// True when the scorer needs `options.prompt` (the question the response answers).
    pub fn needs_prompt(self) -> bool {
        self == Scorer::VerbalizedConfidence
    }

    /// Parses a canonical name or an alias (`luq`, `luq_atomic`, `luq_pair`),
    /// case-insensitive and trimmed.
    pub fn parse(name: &str) -> Result<Scorer, String> {
        let key = name.trim().to_ascii_lowercase();
        if let Some(s) = ALL.iter().find(|s| s.name() == key) {
            return Ok(*s);
        }
        if let Some((_, s)) = ALIASES.iter().find(|(a, _)| *a == key) {
            return Ok(*s);
        }
        Err(format!(
            "unknown scorer {name:?}: valid scorers are {} (aliases: {})",
            all_names().join(", "),
            ALIASES
                .iter()
                .map(|(a, _)| *a)
                .collect::<Vec<_>>()
                .join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in ALL {
            assert_eq!(Scorer::parse(s.name()), Ok(*s));
            assert_eq!(s.to_string(), s.name());
        }
        assert_eq!(ALL.len(), 24);
    }

    #[test]
    fn aliases_case_and_whitespace() {
        assert_eq!(Scorer::parse("LUQ"), Ok(Scorer::ContrastedEntailment));
        assert_eq!(
            Scorer::parse(" luq_atomic "),
            Ok(Scorer::ContrastedEntailment)
        );
        assert_eq!(
            Scorer::parse("Luq_Pair"),
            Ok(Scorer::MatchedContrastedEntailment)
        );
        assert_eq!(
            Scorer::parse("MATCHED_BERT_SCORE"),
            Ok(Scorer::MatchedBertScore)
        );
    }

    #[test]
    fn unknown_lists_valid_names() {
        let e = Scorer::parse("bertscore").unwrap_err();
        assert!(e.contains("\"bertscore\""), "{e}");
        for s in ALL {
            assert!(e.contains(s.name()), "{e}");
        }
        assert!(e.contains("luq_pair"), "{e}");
        assert!(Scorer::parse("").is_err());
    }

    #[test]
    fn families_and_consistency() {
        use Consistency as C;
        let expect = [
            (
                Scorer::Entailment,
                Family::UnitResponse,
                C::Entailment,
                "p_e",
            ),
            (
                Scorer::Noncontradiction,
                Family::UnitResponse,
                C::Noncontradiction,
                "1-p_c",
            ),
            (
                Scorer::ContrastedEntailment,
                Family::UnitResponse,
                C::ContrastedEntailment,
                "p_e/(p_e+p_c)",
            ),
            (
                Scorer::MatchedEntailment,
                Family::MatchedUnit,
                C::Entailment,
                "p_e",
            ),
            (
                Scorer::MatchedNoncontradiction,
                Family::MatchedUnit,
                C::Noncontradiction,
                "1-p_c",
            ),
            (
                Scorer::MatchedContrastedEntailment,
                Family::MatchedUnit,
                C::ContrastedEntailment,
                "p_e/(p_e+p_c)",
            ),
            (
                Scorer::MatchedCosineSim,
                Family::MatchedUnit,
                C::Cosine,
                "cos_hat",
            ),
            (
                Scorer::MatchedBertScore,
                Family::MatchedUnit,
                C::BertScore,
                "bert_f1",
            ),
        ];
        for (s, f, c, cs) in expect {
            assert_eq!(s.family(), f);
            assert_eq!(s.consistency(), c);
            assert_eq!(c.as_str(), cs);
            assert_eq!(s.needs_nli(), !s.needs_embeddings());
        }
        assert_eq!(Family::UnitResponse.as_str(), "unit_response");
        assert_eq!(Family::MatchedUnit.as_str(), "matched_unit");
        assert_eq!(Family::Verbalized.as_str(), "verbalized");
        let v = Scorer::VerbalizedConfidence;
        assert_eq!(Scorer::parse(" Verbalized_Confidence "), Ok(v));
        assert_eq!(
            (v.family(), v.consistency()),
            (Family::Verbalized, C::Verbalized)
        );
        assert!(!v.needs_nli() && !v.needs_embeddings() && v.needs_llm() && v.needs_prompt());
        assert!(ALL.iter().filter(|s| s.needs_llm()).count() == 6);
        assert_eq!(v.paper_name(Granularity::Claim), "verbalized confidence");
        assert!(Scorer::MatchedCosineSim.needs_embeddings());
        assert!(Scorer::MatchedBertScore.needs_embeddings());
        assert!(Scorer::MatchedEntailment.needs_nli());
    }

    #[test]
    fn paper_names() {
        use Granularity::*;
        assert_eq!(Scorer::ContrastedEntailment.paper_name(Sentence), "LUQ");
        assert_eq!(Scorer::ContrastedEntailment.paper_name(Claim), "LUQ-atomic");
        assert_eq!(Scorer::Entailment.paper_name(Sentence), "extension of LUQ");
        assert_eq!(
            Scorer::Noncontradiction.paper_name(Claim),
            "extension of LUQ-atomic"
        );
        assert_eq!(
            Scorer::MatchedContrastedEntailment.paper_name(Sentence),
            "LUQ-pair"
        );
        assert_eq!(
            Scorer::MatchedContrastedEntailment.paper_name(Claim),
            "extension of LUQ-pair (granularity)"
        );
        assert_eq!(
            Scorer::MatchedBertScore.paper_name(Sentence),
            "extension of LUQ-pair"
        );
        assert_eq!(
            Scorer::MatchedCosineSim.paper_name(Claim),
            "extension of LUQ-pair"
        );
    }

    #[test]
    fn graph_scorers() {
        let graph: Vec<Scorer> = ALL
            .iter()
            .copied()
            .filter(|s| s.family() == Family::Graph)
            .collect();
        assert_eq!(graph.len(), 5);
        for s in &graph {
            let m = s.graph_metric().unwrap_or(GraphMetric::Betweenness);
            assert_eq!(m.name(), s.name(), "scorer and metric share uqlm's name");
            assert_eq!(Scorer::parse(&s.name().to_uppercase()), Ok(*s));
            assert!(s.needs_nli() && !s.needs_embeddings() && !s.needs_llm());
            assert_eq!(s.consistency(), Consistency::Entailment);
        }
        assert_eq!(Family::Graph.as_str(), "graph");
        assert_eq!(Scorer::Entailment.graph_metric(), None);
        use Granularity::Claim;
        assert_eq!(Scorer::PageRank.paper_name(Claim), "Jiang et al. 2024");
        assert_eq!(
            Scorer::BetweennessCentrality.paper_name(Claim),
            "Jiang et al. 2024"
        );
        assert_eq!(
            Scorer::ClosenessCentrality.paper_name(Claim),
            "Jiang et al. 2024"
        );
        assert_eq!(
            Scorer::HarmonicCentrality.paper_name(Claim),
            "new (this work)"
        );
        assert_eq!(
            Scorer::LaplacianCentrality.paper_name(Claim),
            "new (this work)"
        );
    }

    #[test]
    fn unit_qa_and_short_form_scorers() {
        use Consistency as C;
        let qa = [
            (
                Scorer::QaNoncontradiction,
                "qa_noncontradiction",
                C::MeanNoncontradiction,
            ),
            (Scorer::QaCosineSim, "qa_cosine_sim", C::Cosine),
            (Scorer::QaBertScore, "qa_bert_score", C::BertScore),
            (Scorer::QaExactMatch, "qa_exact_match", C::ExactMatch),
            (
                Scorer::QaSemanticNegentropy,
                "qa_semantic_negentropy",
                C::SemanticNegentropy,
            ),
        ];
        for (s, name, c) in qa {
            assert_eq!(Scorer::parse(name), Ok(s));
            assert_eq!((s.family(), s.consistency()), (Family::UnitQa, c));
            assert!(s.needs_llm() && !s.needs_samples() && !s.is_response_level());
            assert_eq!(s.granularities(), Granularity::ALL);
            assert_eq!(s.granularity_names(), vec!["sentence", "claim"]);
        }
        assert_eq!(
            Scorer::QaCosineSim.paper_name(Granularity::Claim),
            "claim-QA (new, this work)"
        );
        assert_eq!(
            Scorer::QaExactMatch.paper_name(Granularity::Sentence),
            "sentence-QA (new, this work)"
        );
        assert!(Scorer::QaNoncontradiction.needs_nli() && !Scorer::QaExactMatch.needs_nli());
        assert!(Scorer::QaBertScore.needs_embeddings());
        let short = [
            (
                Scorer::ShortformSemanticNegentropy,
                "shortform_semantic_negentropy",
                C::SemanticNegentropy,
            ),
            (
                Scorer::ShortformNoncontradiction,
                "shortform_noncontradiction",
                C::MeanNoncontradiction,
            ),
            (
                Scorer::ShortformBertScore,
                "shortform_bert_score",
                C::BertScore,
            ),
            (
                Scorer::ShortformCosineSim,
                "shortform_cosine_sim",
                C::Cosine,
            ),
            (
                Scorer::NormalizedProbability,
                "normalized_probability",
                C::NormalizedProbability,
            ),
        ];
        for (s, name, c) in short {
            assert_eq!(Scorer::parse(name), Ok(s));
            assert_eq!((s.family(), s.consistency()), (Family::ShortForm, c));
            assert!(s.is_response_level() && !s.needs_llm());
            assert!(s.granularities().is_empty());
            assert_eq!(s.granularity_names(), vec!["response"]);
            assert!(!s.paper_name_at("response").is_empty());
        }
        assert!(!Scorer::NormalizedProbability.needs_samples());
        assert!(Scorer::ShortformCosineSim.needs_samples());
        assert!(
            !Scorer::NormalizedProbability.needs_nli()
                && !Scorer::NormalizedProbability.needs_embeddings()
        );
        assert_eq!(Family::UnitQa.as_str(), "unit_qa");
        assert_eq!(Family::ShortForm.as_str(), "short_form");
        for s in ALL {
            assert!(!s.cost_class().is_empty() && !s.granularity_names().is_empty());
        }
    }

    #[test]
    fn granularity_parse() {
        assert_eq!(Granularity::parse("sentence"), Ok(Granularity::Sentence));
        assert_eq!(Granularity::parse(" SENT "), Ok(Granularity::Sentence));
        assert_eq!(Granularity::parse("Claim"), Ok(Granularity::Claim));
        let e = Granularity::parse("word").unwrap_err();
        assert!(
            e.contains("\"word\"") && e.contains("sentence") && e.contains("claim"),
            "{e}"
        );
        assert_eq!(Granularity::default(), Granularity::Sentence);
        assert_eq!(Granularity::Claim.as_str(), "claim");
        assert_eq!(Granularity::Sentence.to_string(), "sentence");
    }
}
