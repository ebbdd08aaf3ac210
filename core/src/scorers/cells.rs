//! The cells the catalogue's rows share (`super::catalogue!`): the paper-name type, granularity
//! lists, cost texts and option lists. A leaf: it imports only the kinds.

use super::kinds::Granularity;

/// The name of a scorer's method in the paper, at sentence and at claim granularity (the same
/// for scorers whose name does not depend on it; response-level scorers use `claim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaperName {
    pub sentence: &'static str,
    pub claim: &'static str,
}

impl PaperName {
    pub(super) const fn same(name: &'static str) -> PaperName {
        PaperName {
            sentence: name,
            claim: name,
        }
    }

    pub(super) const fn by_granularity(sentence: &'static str, claim: &'static str) -> PaperName {
        PaperName { sentence, claim }
    }
}

/// Options every unit scorer (all but the short-form ones) reads, not repeated in
/// [`ScorerInfo::options`]. Each `*_llm` role falls back to `llm`.
pub const UNIT_SCORER_OPTIONS: &[&str] =
    &["granularity", "units", "aggregation", "decomposition_llm"];

pub(super) const BOTH: &[Granularity] = Granularity::ALL;
pub(super) const CLAIM: &[Granularity] = &[Granularity::Claim];
pub(super) const RESPONSE: &[Granularity] = &[];

pub(super) const COST_UNIT_RESPONSE: &str = "NLI: m × units pairs";
pub(super) const COST_MATCHED_NLI: &str = "NLI: units × units of the m samples pairs";
pub(super) const COST_MATCHED_EMBEDDINGS: &str = "embeddings: units + units of the m samples";
pub(super) const COST_GRAPH: &str = "NLI: claim union × (m + 1) pairs";
pub(super) const COST_QA_NLI: &str =
    "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; NLI: units × Q × 2 m_qa pairs";
pub(super) const COST_QA_EMBEDDINGS: &str =
    "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; embeddings of the answers";
pub(super) const COST_QA_EXACT: &str =
    "LLM: units × Q question calls + units × Q × (m_qa + 1) answers";
pub(super) const COST_QA_NEGENTROPY: &str = "LLM: units × Q question calls + units × Q × (m_qa + 1) answers; NLI: up to units × Q × (m_qa + 1)² pairs";
pub(super) const COST_SHORT_NLI: &str = "NLI: 2m pairs";
pub(super) const COST_SHORT_EMBEDDINGS: &str = "embeddings: response + m samples";
pub(super) const COST_NGRAM: &str = "none: token counts of the response and m samples";

pub(super) const OPTS_SAMPLES: &[&str] = &["num_samples"];
pub(super) const OPTS_TOKENS: &[&str] = &["response_logprobs"];
pub(super) const OPTS_SAMPLED_TOKENS: &[&str] = &[
    "response_logprobs",
    "sample_logprobs",
    "length_normalize",
    "num_samples",
];
pub(super) const COST_TOKENS: &str = "none: the answer's token log-probabilities";
pub(super) const COST_TOP: &str = "none: the answer's top-k token log-probabilities (top_logprobs)";
pub(super) const CLAIM_WHITE_BOX: PaperName =
    PaperName::same("claim-level white-box (beyond the paper; LM-Polygraph, Fadeeva et al. 2024)");
pub(super) const OPTS_GROUNDED: &[&str] = &[
    "sources",
    "source_premise",
    "source_entailment_threshold",
    "source_contradiction_threshold",
];
pub(super) const OPTS_GROUNDED_FALLBACK: &[&str] = &[
    "sources",
    "source_premise",
    "source_entailment_threshold",
    "source_contradiction_threshold",
    "fallback_scorer",
    "num_samples",
    "premise",
];
pub(super) const COST_GROUNDED: &str =
    "NLI: units × up to K pairs (K = source_premise top_k; whole: units × passages)";
pub(super) const GROUNDED: PaperName =
    PaperName::same("grounded checking (beyond the paper; SummaC, Laban et al. 2022)");
pub(super) const OPTS_UNIT_RESPONSE: &[&str] = &["num_samples", "premise"];
pub(super) const OPTS_MATCHED: &[&str] = &["num_samples", "sample_units"];
pub(super) const OPTS_GRAPH: &[&str] = &[
    "num_samples",
    "claim_union",
    "graph_threshold",
    "premise",
    "sample_units",
    "merge_llm",
];
pub(super) const OPTS_PAGE_RANK: &[&str] = &[
    "num_samples",
    "claim_union",
    "graph_threshold",
    "pagerank_damping",
    "premise",
    "sample_units",
    "merge_llm",
];
pub(super) const OPTS_QA: &[&str] = &[
    "prompt",
    "num_questions",
    "qa_samples",
    "temperature",
    "sampling_temperature",
    "question_llm",
    "generation_llm",
];
pub(super) const OPTS_QA_NEGENTROPY: &[&str] = &[
    "prompt",
    "num_questions",
    "qa_samples",
    "temperature",
    "sampling_temperature",
    "semantic_clustering",
    "question_llm",
    "generation_llm",
];

pub(super) const LUQ_EXTENSION: PaperName =
    PaperName::by_granularity("extension of LUQ", "extension of LUQ-atomic");
pub(super) const LUQ_PAIR_EXTENSION: PaperName = PaperName::same("extension of LUQ-pair");
pub(super) const JIANG: PaperName = PaperName::same("Jiang et al. 2024");
pub(super) const NEW: PaperName = PaperName::same("new (this work)");
pub(super) const UNIT_QA: PaperName =
    PaperName::by_granularity("sentence-QA (new, this work)", "claim-QA (new, this work)");
