//! The scorer catalogue: one row per scorer, from which [`Scorer`], [`ALL`] and [`CATALOGUE`]
//! are declared. This file is one table of data (the catalogue), exempt from the 450-line
//! limit.

use super::cells::*;
use super::kinds::{Consistency, Family, Granularity, GraphMetric, TokenStat};

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
