//! The kinds a scorer is made of: the granularity of its units (§3.1), its family (§3.3),
//! its consistency function η (§3.2) and, for a graph scorer, its centrality (§3.3.4).

use std::fmt;

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
    /// against the whole sampled answers (uqlm's `BlackBoxUQ`). Response-level only: no unit
    /// scores.
    ShortForm,
    /// Not in the paper: white-box scores from the generation LLM's token log-probabilities
    /// (options `response_logprobs`, `sample_logprobs`; `uq_core::score::white_box`): uqlm's
    /// `WhiteBoxUQ` set at response level, and the tokens inside each unit's span at sentence
    /// and claim level (LM-Polygraph's claim estimators).
    WhiteBox,
    /// Model-free n-gram scorers (SelfCheckGPT's unigram variant, Manakul et al. 2023, §5.3): a
    /// unigram language model with add-one smoothing fitted on the response and its samples;
    /// a unit's confidence is exp(−x), x the mean or max of its tokens' −ln p
    /// (`uq_core::score::ngram`). No model and no LLM.
    Ngram,
    /// Not in the paper: a tuned ensemble (uqlm's `UQEnsemble`), c(s) = Σ_k w_k·c_k(s) over the
    /// unit scorers weighted in option `ensemble_weights` (fitted by `uq_fit_ensemble`).
    Ensemble,
    /// Not in the paper: grounded checking, each unit against the user's sources (option
    /// `sources`) instead of sampled answers, one NLI premise per passage, the most decisive
    /// kept (`uq_core::score::grounded`; SummaC, Laban et al. 2022).
    Grounded,
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
            Family::WhiteBox => "white_box",
            Family::Ngram => "ngram",
            Family::Ensemble => "ensemble",
            Family::Grounded => "grounded",
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
    /// White-box (family [`Family::WhiteBox`]): the formula of `uq_core::score::white_box`
    /// named by the kind.
    TokenProbability(TokenStat),
    /// Not a consistency function: exp(−mean of −ln p) over the unit's tokens under the unigram
    /// model of the response and samples (the geometric-mean token probability).
    UnigramAvg,
    /// Not a consistency function: exp(−max of −ln p) over the unit's tokens under the unigram
    /// model of the response and samples (the lowest token probability).
    UnigramMax,
    /// Not a consistency function: the weighted mean of other scorers' unit scores
    /// (family [`Family::Ensemble`]).
    Weighted,
    /// Not a pairwise η: the larger of the sources' p_e and the samples' score
    /// (`uq_core::score::grounded::max_score`); with a threshold option given, the sources'
    /// verdict where they decide and the samples' score mapped between the thresholds where they
    /// are silent (`uq_core::score::grounded::band_score`).
    SourceElseSamples,
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
            Consistency::TokenProbability(t) => t.as_str(),
            Consistency::UnigramAvg => "exp(-mean(-ln p_unigram))",
            Consistency::UnigramMax => "exp(-max(-ln p_unigram))",
            Consistency::Weighted => "sum_k w_k c_k",
            Consistency::SourceElseSamples => "max(source p_e, samples)",
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
                | Consistency::SourceElseSamples
                | Consistency::TokenProbability(TokenStat::WeightedNegentropy)
                | Consistency::TokenProbability(TokenStat::SemanticDensity)
        )
    }
}

/// What a white-box scorer computes from token log-probabilities (`uq_core::score::white_box`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenStat {
    MinProbability,
    SequenceProbability,
    MeanNegentropy,
    MinNegentropy,
    Margin,
    MonteCarlo,
    CoCoA,
    WeightedNegentropy,
    SemanticDensity,
    PTrue,
    ClaimProbability,
    ClaimNormalizedProbability,
    ClaimMinNegentropy,
}

impl TokenStat {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenStat::MinProbability => "min_t p_t",
            TokenStat::SequenceProbability => "exp(mean logprob) or prod p_t",
            TokenStat::MeanNegentropy => "mean_t (1-H(top_k)/ln k)",
            TokenStat::MinNegentropy => "min_t (1-H(top_k)/ln k)",
            TokenStat::Margin => "mean_t (p_(1)-p_(2))",
            TokenStat::MonteCarlo => "mean over answer and samples of sequence p",
            TokenStat::CoCoA => "cos_hat x sequence p",
            TokenStat::WeightedNegentropy => "1-SE/ln(m+1), clusters weighted by sequence p",
            TokenStat::SemanticDensity => "sum_j w_j K(NLI) / sum_j w_j",
            TokenStat::PTrue => "P(first token True) of the judge's True/False",
            TokenStat::ClaimProbability => "prod of the unit's p_t",
            TokenStat::ClaimNormalizedProbability => {
                "exp(mean of the unit's logprob) = 1/perplexity"
            }
            TokenStat::ClaimMinNegentropy => "min over the unit's tokens of 1-H(top_k)/ln k",
        }
    }
}

/// A graph centrality metric used as a claim scorer (paper §3.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphMetric {
    Betweenness,
    Closeness,
    Harmonic,
    Laplacian,
    PageRank,
}

impl GraphMetric {
    /// Every metric, in the paper's order.
    pub const ALL: &'static [GraphMetric] = &[
        GraphMetric::Betweenness,
        GraphMetric::Closeness,
        GraphMetric::Harmonic,
        GraphMetric::Laplacian,
        GraphMetric::PageRank,
    ];

    /// The scorer name uqlm uses (`GRAPH_SCORERS` of module `uqlm.scorers.longform.graph`).
    pub fn name(self) -> &'static str {
        match self {
            GraphMetric::Betweenness => "betweenness_centrality",
            GraphMetric::Closeness => "closeness_centrality",
            GraphMetric::Harmonic => "harmonic_centrality",
            GraphMetric::Laplacian => "laplacian_centrality",
            GraphMetric::PageRank => "page_rank",
        }
    }

    /// Parses uqlm's scorer name (case-insensitive, surrounding blanks ignored); the short
    /// forms "betweenness", "closeness", "harmonic", "laplacian" and "pagerank" are accepted
    /// too.
    pub fn parse(name: &str) -> Result<GraphMetric, String> {
        let key = name.trim().to_ascii_lowercase();
        if let Some(m) = Self::ALL.iter().find(|m| m.name() == key) {
            return Ok(*m);
        }
        match key.as_str() {
            "betweenness" => Ok(GraphMetric::Betweenness),
            "closeness" => Ok(GraphMetric::Closeness),
            "harmonic" => Ok(GraphMetric::Harmonic),
            "laplacian" => Ok(GraphMetric::Laplacian),
            "pagerank" | "page_rank_centrality" => Ok(GraphMetric::PageRank),
            _ => Err(format!(
                "unknown graph metric {name:?}: use one of {}",
                Self::ALL
                    .iter()
                    .map(|m| format!("{:?}", m.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for GraphMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
