//! The scorer catalogue (paper §3.3, Table "novelty"; names follow uqlm).
//!
//! A scorer is a (family, η) pair: the *family* fixes the functional form of the unit
//! score (unit-response, §3.3.1, or matched-unit, §3.3.2) and η is the semantic
//! consistency function of §3.2. Granularity is an option, not part of the name.

mod cells;
mod kinds;

use std::fmt;

use cells::*;
pub use cells::{PaperName, UNIT_SCORER_OPTIONS};
pub use kinds::{Consistency, Family, Granularity, GraphMetric, TokenStat};

/// One row of the scorer catalogue: everything uqlite states about a scorer, in one place.
/// Every accessor of [`Scorer`] reads its row; `uq_scorers()`, the option checks and the docs'
/// scorer table (`markdown_table`) are derived from the rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScorerInfo {
    pub scorer: Scorer,
    /// Canonical snake_case name (as uqlm).
    pub name: &'static str,
    /// Other names [`Scorer::parse`] accepts.
    pub aliases: &'static [&'static str],
    pub family: Family,
    /// Granularities the scorer works at; empty for the response-level (short-form) scorers.
    pub granularities: &'static [Granularity],
    pub consistency: Consistency,
    /// What one response costs, for m samples (the paper's cost table in the appendix): the
    /// model calls.
    pub cost: &'static str,
    /// The method's name in the paper's novelty table, per granularity.
    pub paper_name: PaperName,
    /// The options this scorer reads beyond those every unit scorer reads
    /// ([`UNIT_SCORER_OPTIONS`]).
    pub options: &'static [&'static str],
    /// The centrality of a graph scorer (family [`Family::Graph`]).
    pub graph_metric: Option<GraphMetric>,
}

/// Declares [`Scorer`] (one variant per row, in row order), [`ALL`] and [`CATALOGUE`] from one
/// list, so that a scorer without a row (or a row with a missing field) does not compile.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $variant:ident { $($field:ident: $value:expr),* $(,)? })*) => {
        /// One scorer of the catalogue (docs/reference.md, scorer table). Its row in
        /// [`CATALOGUE`] holds everything said about it: [`Scorer::info`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Scorer {
            $($(#[$doc])* $variant,)*
        }

        /// Every scorer, in catalogue order.
        pub const ALL: &[Scorer] = &[$(Scorer::$variant,)*];

        /// The catalogue: one row per scorer, `CATALOGUE[s as usize]` is the row of `s`.
        pub static CATALOGUE: &[ScorerInfo] = &[
            $(ScorerInfo { scorer: Scorer::$variant, $($field: $value),* },)*
        ];
    };
}

catalogue! {
    Entailment {
        name: "entailment", aliases: &[], family: Family::UnitResponse, granularities: BOTH,
        consistency: Consistency::Entailment, cost: COST_UNIT_RESPONSE,
        paper_name: LUQ_EXTENSION, options: OPTS_UNIT_RESPONSE, graph_metric: None,
    }
    Noncontradiction {
        name: "noncontradiction", aliases: &[], family: Family::UnitResponse, granularities: BOTH,
        consistency: Consistency::Noncontradiction, cost: COST_UNIT_RESPONSE,
        paper_name: LUQ_EXTENSION, options: OPTS_UNIT_RESPONSE, graph_metric: None,
    }
    ContrastedEntailment {
        name: "contrasted_entailment", aliases: &["luq", "luq_atomic"],
        family: Family::UnitResponse, granularities: BOTH,
        consistency: Consistency::ContrastedEntailment, cost: COST_UNIT_RESPONSE,
        paper_name: PaperName::by_granularity("LUQ", "LUQ-atomic"),
        options: OPTS_UNIT_RESPONSE, graph_metric: None,
    }
    MatchedEntailment {
        name: "matched_entailment", aliases: &[], family: Family::MatchedUnit, granularities: BOTH,
        consistency: Consistency::Entailment, cost: COST_MATCHED_NLI,
        paper_name: LUQ_PAIR_EXTENSION, options: OPTS_MATCHED, graph_metric: None,
    }
    MatchedNoncontradiction {
        name: "matched_noncontradiction", aliases: &[], family: Family::MatchedUnit,
        granularities: BOTH, consistency: Consistency::Noncontradiction, cost: COST_MATCHED_NLI,
        paper_name: LUQ_PAIR_EXTENSION, options: OPTS_MATCHED, graph_metric: None,
    }
    MatchedContrastedEntailment {
        name: "matched_contrasted_entailment", aliases: &["luq_pair"],
        family: Family::MatchedUnit, granularities: BOTH,
        consistency: Consistency::ContrastedEntailment, cost: COST_MATCHED_NLI,
        paper_name: PaperName::by_granularity("LUQ-pair", "extension of LUQ-pair (granularity)"),
        options: OPTS_MATCHED, graph_metric: None,
    }
    MatchedCosineSim {
        name: "matched_cosine_sim", aliases: &[], family: Family::MatchedUnit, granularities: BOTH,
        consistency: Consistency::Cosine, cost: COST_MATCHED_EMBEDDINGS,
        paper_name: LUQ_PAIR_EXTENSION, options: OPTS_MATCHED, graph_metric: None,
    }
    MatchedBertScore {
        name: "matched_bert_score", aliases: &[], family: Family::MatchedUnit, granularities: BOTH,
        consistency: Consistency::BertScore, cost: COST_MATCHED_EMBEDDINGS,
        paper_name: LUQ_PAIR_EXTENSION, options: OPTS_MATCHED, graph_metric: None,
    }
    /// One judge-LLM call per unit with the paper's verbalized-confidence prompt; needs
    /// `options.prompt` (the question the response answers).
    VerbalizedConfidence {
        name: "verbalized_confidence", aliases: &[], family: Family::Verbalized,
        granularities: BOTH, consistency: Consistency::Verbalized,
        cost: "LLM: one call per unit", paper_name: PaperName::same("verbalized confidence"),
        options: &["prompt", "judge_llm"], graph_metric: None,
    }
    /// Graph scorers (§3.3.4): centrality of the claim in the claim–response entailment graph,
    /// whose edges are claim–response entailment p_e ≥ `graph_threshold`.
    BetweennessCentrality {
        name: "betweenness_centrality", aliases: &[], family: Family::Graph, granularities: CLAIM,
        consistency: Consistency::Entailment, cost: COST_GRAPH, paper_name: JIANG,
        options: OPTS_GRAPH, graph_metric: Some(GraphMetric::Betweenness),
    }
    ClosenessCentrality {
        name: "closeness_centrality", aliases: &[], family: Family::Graph, granularities: CLAIM,
        consistency: Consistency::Entailment, cost: COST_GRAPH, paper_name: JIANG,
        options: OPTS_GRAPH, graph_metric: Some(GraphMetric::Closeness),
    }
    HarmonicCentrality {
        name: "harmonic_centrality", aliases: &[], family: Family::Graph, granularities: CLAIM,
        consistency: Consistency::Entailment, cost: COST_GRAPH, paper_name: NEW,
        options: OPTS_GRAPH, graph_metric: Some(GraphMetric::Harmonic),
    }
    LaplacianCentrality {
        name: "laplacian_centrality", aliases: &[], family: Family::Graph, granularities: CLAIM,
        consistency: Consistency::Entailment, cost: COST_GRAPH, paper_name: NEW,
        options: OPTS_GRAPH, graph_metric: Some(GraphMetric::Laplacian),
    }
    PageRank {
        name: "page_rank", aliases: &[], family: Family::Graph, granularities: CLAIM,
        consistency: Consistency::Entailment, cost: COST_GRAPH, paper_name: JIANG,
        options: OPTS_PAGE_RANK, graph_metric: Some(GraphMetric::PageRank),
    }
    /// Unit-QA scorers (§3.3.3). Their non-contradiction is uqlm's black-box one: both NLI
    /// directions averaged (the paper's 1 − p_c applied symmetrically to two answers of equal
    /// standing).
    QaNoncontradiction {
        name: "qa_noncontradiction", aliases: &[], family: Family::UnitQa, granularities: BOTH,
        consistency: Consistency::MeanNoncontradiction, cost: COST_QA_NLI, paper_name: UNIT_QA,
        options: OPTS_QA, graph_metric: None,
    }
    QaCosineSim {
        name: "qa_cosine_sim", aliases: &[], family: Family::UnitQa, granularities: BOTH,
        consistency: Consistency::Cosine, cost: COST_QA_EMBEDDINGS, paper_name: UNIT_QA,
        options: OPTS_QA, graph_metric: None,
    }
    QaBertScore {
        name: "qa_bert_score", aliases: &[], family: Family::UnitQa, granularities: BOTH,
        consistency: Consistency::BertScore, cost: COST_QA_EMBEDDINGS, paper_name: UNIT_QA,
        options: OPTS_QA, graph_metric: None,
    }
    QaExactMatch {
        name: "qa_exact_match", aliases: &[], family: Family::UnitQa, granularities: BOTH,
        consistency: Consistency::ExactMatch, cost: COST_QA_EXACT, paper_name: UNIT_QA,
        options: OPTS_QA, graph_metric: None,
    }
    QaSemanticNegentropy {
        name: "qa_semantic_negentropy", aliases: &[], family: Family::UnitQa, granularities: BOTH,
        consistency: Consistency::SemanticNegentropy, cost: COST_QA_NEGENTROPY,
        paper_name: PaperName::same(
            "generalisation of long-form semantic entropy (Farquhar et al. 2024)"
        ),
        options: OPTS_QA_NEGENTROPY, graph_metric: None,
    }
    /// Model-free n-gram scorers (SelfCheckGPT's unigram variant, Manakul et al. 2023, §5.3):
    /// the mean or the max of the unit's token −ln p under a unigram model of the response and
    /// samples, mapped to a confidence by exp(−x).
    UnigramAvg {
        name: "unigram_avg", aliases: &[], family: Family::Ngram, granularities: BOTH,
        consistency: Consistency::UnigramAvg, cost: COST_NGRAM,
        paper_name: PaperName::same("SelfCheckGPT unigram, Avg(−log p) (Manakul et al. 2023)"),
        options: OPTS_SAMPLES, graph_metric: None,
    }
    UnigramMax {
        name: "unigram_max", aliases: &[], family: Family::Ngram, granularities: BOTH,
        consistency: Consistency::UnigramMax, cost: COST_NGRAM,
        paper_name: PaperName::same("SelfCheckGPT unigram, Max(−log p) (Manakul et al. 2023)"),
        options: OPTS_SAMPLES, graph_metric: None,
    }
    /// Short-form baselines (response level only).
    ShortformSemanticNegentropy {
        name: "shortform_semantic_negentropy", aliases: &[], family: Family::ShortForm,
        granularities: RESPONSE, consistency: Consistency::SemanticNegentropy,
        cost: "NLI: up to (m + 1)² pairs",
        paper_name: PaperName::same("semantic negentropy (short-form baseline; Kuhn et al. 2023)"),
        options: &["num_samples", "semantic_clustering"], graph_metric: None,
    }
    ShortformNoncontradiction {
        name: "shortform_noncontradiction", aliases: &[], family: Family::ShortForm,
        granularities: RESPONSE, consistency: Consistency::MeanNoncontradiction,
        cost: COST_SHORT_NLI,
        paper_name: PaperName::same("non-contradiction (short-form baseline; Lin et al. 2024)"),
        options: OPTS_SAMPLES, graph_metric: None,
    }
    ShortformBertScore {
        name: "shortform_bert_score", aliases: &[], family: Family::ShortForm,
        granularities: RESPONSE, consistency: Consistency::BertScore,
        cost: COST_SHORT_EMBEDDINGS,
        paper_name: PaperName::same("BERTScore (short-form baseline; Manakul et al. 2023)"),
        options: OPTS_SAMPLES, graph_metric: None,
    }
    ShortformCosineSim {
        name: "shortform_cosine_sim", aliases: &[], family: Family::ShortForm,
        granularities: RESPONSE, consistency: Consistency::Cosine, cost: COST_SHORT_EMBEDDINGS,
        paper_name: PaperName::same(
            "cosine similarity (short-form baseline; Shorinwa et al. 2024)"
        ),
        options: OPTS_SAMPLES, graph_metric: None,
    }
    NormalizedProbability {
        name: "normalized_probability", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE, consistency: Consistency::NormalizedProbability,
        cost: "none: the answer's token log-probabilities",
        paper_name: PaperName::same(
            "normalized sequence probability (short-form white-box baseline; Malinin & Gales 2021)"
        ),
        options: &["response_logprobs"], graph_metric: None,
    }
    /// White-box, response level (uqlm 0.6.7's `WhiteBoxUQ` names; formulas in
    /// `uq_core::score::white_box`).
    MinProbability {
        name: "min_probability", aliases: &[], family: Family::WhiteBox, granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::MinProbability), cost: COST_TOKENS,
        paper_name: PaperName::same("minimum token probability (white-box; Manakul et al. 2023)"),
        options: OPTS_TOKENS, graph_metric: None,
    }
    SequenceProbability {
        name: "sequence_probability", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::SequenceProbability),
        cost: COST_TOKENS,
        paper_name: PaperName::same("sequence probability (white-box; Malinin & Gales 2021)"),
        options: &["response_logprobs", "length_normalize"], graph_metric: None,
    }
    MeanTokenNegentropy {
        name: "mean_token_negentropy", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::MeanNegentropy), cost: COST_TOP,
        paper_name: PaperName::same("mean token negentropy (white-box; Manakul et al. 2023)"),
        options: OPTS_TOKENS, graph_metric: None,
    }
    MinTokenNegentropy {
        name: "min_token_negentropy", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::MinNegentropy), cost: COST_TOP,
        paper_name: PaperName::same("minimum token negentropy (white-box; Manakul et al. 2023)"),
        options: OPTS_TOKENS, graph_metric: None,
    }
    ProbabilityMargin {
        name: "probability_margin", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE, consistency: Consistency::TokenProbability(TokenStat::Margin),
        cost: COST_TOP,
        paper_name: PaperName::same("probability margin (white-box; Farr et al. 2024)"),
        options: OPTS_TOKENS, graph_metric: None,
    }
    MonteCarloProbability {
        name: "monte_carlo_probability", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::MonteCarlo),
        cost: "none: the answer's and the m samples' token log-probabilities",
        paper_name: PaperName::same("Monte Carlo sequence probability (white-box; Kuhn et al. 2023)"),
        options: OPTS_SAMPLED_TOKENS, graph_metric: None,
    }
    ConsistencyAndConfidence {
        name: "consistency_and_confidence", aliases: &["cocoa"], family: Family::WhiteBox,
        granularities: RESPONSE, consistency: Consistency::TokenProbability(TokenStat::CoCoA),
        cost: "embeddings: response + m samples; the answer's token log-probabilities",
        paper_name: PaperName::same("CoCoA (white-box; Vashurin et al. 2025)"),
        options: &["response_logprobs", "length_normalize", "num_samples"], graph_metric: None,
    }
    SemanticNegentropy {
        name: "semantic_negentropy", aliases: &[], family: Family::WhiteBox,
        granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::WeightedNegentropy),
        cost: "NLI: up to (m + 1)² pairs; the answers' token log-probabilities",
        paper_name: PaperName::same(
            "semantic negentropy weighted by token probability (white-box; Farquhar et al. 2024)"
        ),
        options: &["response_logprobs", "sample_logprobs", "length_normalize", "num_samples",
                   "semantic_clustering"],
        graph_metric: None,
    }
    SemanticDensity {
        name: "semantic_density", aliases: &[], family: Family::WhiteBox, granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::SemanticDensity),
        cost: "NLI: m pairs; the samples' token log-probabilities",
        paper_name: PaperName::same("semantic density (white-box; Qiu & Miikkulainen 2024)"),
        options: &["sample_logprobs", "length_normalize", "num_samples", "prompt"],
        graph_metric: None,
    }
    PTrue {
        name: "p_true", aliases: &[], family: Family::WhiteBox, granularities: RESPONSE,
        consistency: Consistency::TokenProbability(TokenStat::PTrue),
        cost: "LLM: one judge call per response, with log-probabilities",
        paper_name: PaperName::same("P(True) (white-box; Kadavath et al. 2022)"),
        options: &["prompt", "judge_llm"], graph_metric: None,
    }
    /// White-box, unit level: the tokens inside the unit's span in the answer.
    ClaimProbability {
        name: "claim_probability", aliases: &["max_claim_probability"], family: Family::WhiteBox,
        granularities: BOTH,
        consistency: Consistency::TokenProbability(TokenStat::ClaimProbability),
        cost: COST_TOKENS, paper_name: CLAIM_WHITE_BOX, options: &["response_logprobs"],
        graph_metric: None,
    }
    ClaimNormalizedProbability {
        name: "claim_normalized_probability", aliases: &["claim_perplexity"],
        family: Family::WhiteBox, granularities: BOTH,
        consistency: Consistency::TokenProbability(TokenStat::ClaimNormalizedProbability),
        cost: COST_TOKENS, paper_name: CLAIM_WHITE_BOX, options: &["response_logprobs"],
        graph_metric: None,
    }
    ClaimMinTokenNegentropy {
        name: "claim_min_token_negentropy", aliases: &["claim_max_token_entropy"],
        family: Family::WhiteBox, granularities: BOTH,
        consistency: Consistency::TokenProbability(TokenStat::ClaimMinNegentropy),
        cost: COST_TOP, paper_name: CLAIM_WHITE_BOX, options: &["response_logprobs"],
        graph_metric: None,
    }
    /// Grounded scorers (beyond the paper): the unit against the user's sources (option
    /// `sources`), not sampled answers; no LLM call. c(s) = max over the passages' premises of
    /// p_e, or 1 − max p_c.
    GroundedEntailment {
        name: "grounded_entailment", aliases: &[], family: Family::Grounded, granularities: BOTH,
        consistency: Consistency::Entailment, cost: COST_GROUNDED, paper_name: GROUNDED,
        options: OPTS_GROUNDED, graph_metric: None,
    }
    GroundedNoncontradiction {
        name: "grounded_noncontradiction", aliases: &[], family: Family::Grounded,
        granularities: BOTH, consistency: Consistency::Noncontradiction, cost: COST_GROUNDED,
        paper_name: GROUNDED, options: OPTS_GROUNDED, graph_metric: None,
    }
    /// Sources and samples together: the larger of the sources' p_e and `fallback_scorer` on
    /// the samples (NULL without them); with option `source_entailment_threshold` or
    /// `source_contradiction_threshold` given, the sources' verdict where p_e or p_c passes its
    /// threshold, else the samples (a band: only the open units need samples).
    GroundedFallback {
        name: "grounded_fallback", aliases: &[], family: Family::Grounded, granularities: BOTH,
        consistency: Consistency::SourceElseSamples,
        cost: "as grounded_entailment, plus the fallback scorer's cost (with a threshold option: on the units the sources leave open only)",
        paper_name: GROUNDED, options: OPTS_GROUNDED_FALLBACK, graph_metric: None,
    }
    /// Tuned ensemble (not in the paper; uqlm's `UQEnsemble` for units): the weighted mean of
    /// the unit scores of the scorers in `ensemble_weights`, which are computed for it. Works
    /// at the granularities all of them work at.
    Ensemble {
        name: "ensemble", aliases: &[], family: Family::Ensemble, granularities: BOTH,
        consistency: Consistency::Weighted, cost: "the weighted scorers' costs",
        paper_name: PaperName::same("tuned ensemble (uqlm's UQEnsemble; not in the paper)"),
        options: &["ensemble_weights"], graph_metric: None,
    }
}

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

/// The docs' scorer table (docs/reference.md, between the [`DOCS_BEGIN`] and [`DOCS_END`]
/// marker lines): a header, then one line per catalogue row. Options in the last column are
/// those read beyond [`UNIT_SCORER_OPTIONS`].
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
pub const DOCS_BEGIN: &str = "<!-- scorers:begin (generated from core/src/scorers.rs; UQ_BLESS=1 cargo test -p uq-core catalogue regenerates it) -->";
/// The line before which docs/reference.md's generated scorer table ends.
pub const DOCS_END: &str = "<!-- scorers:end -->";

#[cfg(test)]
mod tests;
