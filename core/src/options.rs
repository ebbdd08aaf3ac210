//! `options_json` and `samples_json` parsing and validation (docs/design.md, "Options").
//!
//! The options choose the paper's design axes: granularity g (§3.1), the scorers (family ×
//! η, §3.3), the aggregation operator A (§3.4), and m, the number of sampled responses
//! (§3.2). The LLM options (docs/design.md, "Options added for LLM work") choose the LLM of each
//! role (claim decomposition, generation, judging, reconstruction…), the temperatures of
//! `uq_generate`, the question (`prompt`) and the UAD filter (§3.4). Every error names the
//! offending option and says how to fix it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::aggregate::Aggregation;
use crate::score::black_box::Clustering;
use crate::score::graph::{DEFAULT_DAMPING, DEFAULT_EDGE_THRESHOLD};
use crate::scorers::{self, Family, Granularity, Scorer};

/// Every option name `options_json` accepts.
pub const OPTION_NAMES: &[&str] = &[
    "granularity",
    "scorers",
    "aggregation",
    "num_samples",
    "units",
    "sample_units",
    "llm",
    "generation_llm",
    "decomposition_llm",
    "question_llm",
    "merge_llm",
    "reconstruction_llm",
    "judge_llm",
    "temperature",
    "sampling_temperature",
    "prompt",
    "threshold",
    "threshold_percentile",
    "uad_scorer",
    "claim_union",
    "graph_threshold",
    "pagerank_damping",
    "num_questions",
    "qa_samples",
    "semantic_clustering",
    "response_logprobs",
];

/// Unit-QA: questions per unit when `num_questions` is not given (uqlm's default).
pub const DEFAULT_NUM_QUESTIONS: usize = 1;
/// Unit-QA: sampled answers per question (m_qa) when `qa_samples` is not given (the paper's and
/// uqlm's `num_claim_qa_responses` default).
pub const DEFAULT_QA_SAMPLES: usize = 5;
/// Largest `num_questions` / `qa_samples` accepted (each multiplies the LLM calls).
pub const MAX_QA: usize = 100;

/// UAD's default claim filter threshold: keep claims scoring strictly above 1/3 (uqlm's
/// `response_refinement_threshold` default).
pub const DEFAULT_UAD_THRESHOLD: f64 = 1.0 / 3.0;
/// Default temperature of the original answer (`uq_generate` row 0).
pub const DEFAULT_TEMPERATURE: f64 = 0.0;
/// Default temperature of the sampled answers (`uq_generate` rows 1..n; uqlm's default).
pub const DEFAULT_SAMPLING_TEMPERATURE: f64 = 1.0;

/// An LLM role: which LLM does which job. Each role's option falls back to `llm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LlmRole {
    /// Writes the original and the sampled answers (`generate`).
    Generation,
    /// Splits a response into claims (paper's decomposition prompt).
    Decomposition,
    /// Writes the questions of unit-QA scorers.
    Question,
    /// Merges claim sets (graph scorers).
    Merge,
    /// Rewrites the kept claims into the refined response (UAD).
    Reconstruction,
    /// Judges units (verbalized confidence).
    Judge,
}

impl LlmRole {
    pub const ALL: &'static [LlmRole] = &[
        LlmRole::Generation,
        LlmRole::Decomposition,
        LlmRole::Question,
        LlmRole::Merge,
        LlmRole::Reconstruction,
        LlmRole::Judge,
    ];

    /// The option that sets this role's LLM, e.g. `decomposition_llm`.
    pub fn option_name(self) -> &'static str {
        match self {
            LlmRole::Generation => "generation_llm",
            LlmRole::Decomposition => "decomposition_llm",
            LlmRole::Question => "question_llm",
            LlmRole::Merge => "merge_llm",
            LlmRole::Reconstruction => "reconstruction_llm",
            LlmRole::Judge => "judge_llm",
        }
    }

    fn from_option_name(name: &str) -> Option<LlmRole> {
        LlmRole::ALL
            .iter()
            .copied()
            .find(|r| r.option_name() == name)
    }
}

/// Backend of an LLM config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LlmBackendKind {
    /// The embedded SmolLM2-135M-Instruct (GGUF), or another GGUF file named by `model`.
    #[default]
    Local,
    /// An OpenAI-compatible chat-completions server.
    OpenAi,
}

impl LlmBackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmBackendKind::Local => "local",
            LlmBackendKind::OpenAi => "openai",
        }
    }
}

/// Every key an LLM config object accepts.
pub const LLM_CONFIG_KEYS: &[&str] = &[
    "backend",
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "n_supported",
    "timeout_ms",
    "max_retries",
    "concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "logprobs",
];

/// One LLM config object (docs/design.md, "LLM settings"). Every key is optional: `None` keeps
/// the backend's default. For `backend: "local"`, `model` is the path of a `.gguf` file (default:
/// the daemon's SmolLM2) and the HTTP-only keys (`base_url`, `api_key_env`, `n_supported`,
/// `timeout_ms`, `max_retries`, `concurrency`, `requests_per_minute`, `tokens_per_minute`) are
/// accepted and ignored, so that a config can switch backend by changing `backend` alone.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmConfig {
    pub backend: LlmBackendKind,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `None`: key absent (the client's default variable, `OPENAI_API_KEY`); `Some(None)`: JSON
    /// null (send no Authorization header); `Some(Some(var))`: read the key from `var`.
    pub api_key_env: Option<Option<String>>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    pub n_supported: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
    pub concurrency: Option<usize>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    pub logprobs: Option<bool>,
}

impl LlmConfig {
    /// A stable text identifying the config (for memoising backends): two configs with the same
    /// key build the same backend.
    pub fn memo_key(&self) -> String {
        format!("{self:?}")
    }
}

/// Scorers used when `scorers` is not given.
pub const DEFAULT_SCORERS: &[Scorer] = &[
    Scorer::Entailment,
    Scorer::Noncontradiction,
    Scorer::ContrastedEntailment,
];

/// Validated options of one scoring call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreOptions {
    pub granularity: Granularity,
    /// Non-empty, without duplicates, in the order given.
    pub scorers: Vec<Scorer>,
    pub aggregation: Aggregation,
    /// Use the first m samples; `None` = all.
    pub num_samples: Option<usize>,
    /// Pre-split units of the response; `None` = split it.
    pub units: Option<Vec<String>>,
    /// Pre-split units of each sample (matched-unit scorers); `None` = split each sample.
    pub sample_units: Option<Vec<Vec<String>>>,
    /// Option `llm`: the LLM of every role not set on its own; `None` = the local model.
    pub llm: Option<LlmConfig>,
    /// Per-role LLMs (`generation_llm`, `decomposition_llm`, …).
    pub role_llms: BTreeMap<LlmRole, LlmConfig>,
    /// Temperature of the original answer (`generate` row 0), in [0, 2].
    pub temperature: f64,
    /// Temperature of the sampled answers (`generate` rows 1..n), in (0, 2].
    pub sampling_temperature: f64,
    /// The question the response answers (verbalized confidence needs it).
    pub prompt: Option<String>,
    /// UAD: fixed threshold (keep claims with score > threshold); `None` = the default 1/3,
    /// unless `threshold_percentile` is set.
    pub threshold: Option<f64>,
    /// UAD: threshold = this percentile (0–100) of the answer's claim scores.
    pub threshold_percentile: Option<f64>,
    /// UAD: the scorer whose claim scores filter; `None` = the first of `scorers`.
    pub uad_scorer: Option<Scorer>,
    /// Graph scorers: the union of unique claims across the original and the sampled answers
    /// (e.g. stored merges from `uq_claim_union`). The response's own claims are appended when
    /// missing. `None`: the daemon builds the union by LLM claim merging (the merge LLM merges
    /// each sample's claims into the response's, in order, as uqlm's `ClaimMerger`).
    pub claim_union: Option<Vec<String>>,
    /// Graph scorers: a claim–response edge exists iff p_e ≥ this (uqlm's
    /// `binary_edge_threshold`, default 0.5).
    pub graph_threshold: f64,
    /// Graph scorers: PageRank's damping d (networkx's default 0.85).
    pub pagerank_damping: f64,
    /// Unit-QA: questions per unit (Q, default 1 as uqlm).
    pub num_questions: usize,
    /// Unit-QA: sampled answers per question (m_qa, default 5); the original answer is one more.
    pub qa_samples: usize,
    /// Semantic negentropy (unit-QA and short-form): how answers are clustered (default uqlm's).
    pub semantic_clustering: Clustering,
    /// `normalized_probability`: the token log-probabilities of the response, when the caller has
    /// them (e.g. from `uq_generate` with `"generation_llm":{"logprobs":true}`).
    pub response_logprobs: Option<Vec<f64>>,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            granularity: Granularity::Sentence,
            scorers: DEFAULT_SCORERS.to_vec(),
            aggregation: Aggregation::Mean,
            num_samples: None,
            units: None,
            sample_units: None,
            llm: None,
            role_llms: BTreeMap::new(),
            temperature: DEFAULT_TEMPERATURE,
            sampling_temperature: DEFAULT_SAMPLING_TEMPERATURE,
            prompt: None,
            threshold: None,
            threshold_percentile: None,
            uad_scorer: None,
            claim_union: None,
            graph_threshold: DEFAULT_EDGE_THRESHOLD,
            pagerank_damping: DEFAULT_DAMPING,
            num_questions: DEFAULT_NUM_QUESTIONS,
            qa_samples: DEFAULT_QA_SAMPLES,
            semantic_clustering: Clustering::Uqlm,
            response_logprobs: None,
        }
    }
}

impl ScoreOptions {
    /// True when any chosen scorer is of the matched-unit family (needs sample units).
    /// Whether some scorer compares the answer with sampled answers (all but verbalized
    /// confidence, which asks a judge, and the scorers that sample answers of their own).
    pub fn needs_samples(&self) -> bool {
        self.scorers.iter().any(|s| s.needs_samples())
    }

    pub fn has_matched_unit(&self) -> bool {
        self.scorers
            .iter()
            .any(|s| s.family() == Family::MatchedUnit)
    }

    /// True when any chosen scorer is a graph scorer (family [`Family::Graph`]).
    pub fn has_graph(&self) -> bool {
        self.scorers.iter().any(|s| s.family() == Family::Graph)
    }

    /// True when any chosen scorer is a unit-QA scorer (family [`Family::UnitQa`]).
    pub fn has_unit_qa(&self) -> bool {
        self.scorers.iter().any(|s| s.family() == Family::UnitQa)
    }

    /// True when any chosen scorer scores units (all but the short-form, response-level ones):
    /// only then is the response decomposed.
    pub fn needs_units(&self) -> bool {
        self.scorers.iter().any(|s| !s.is_response_level())
    }

    /// Graph scorers' requirement: claim granularity (the union of sentences is not well
    /// defined, §3.3.4). The claim union is `claim_union`, or LLM claim merging without it.
    pub fn check_graph(&self) -> Result<(), String> {
        match self.scorers.iter().find(|s| s.family() == Family::Graph) {
            Some(scorer) if self.granularity != Granularity::Claim => Err(format!(
                "scorer {} is a graph scorer and works on claims only (the union of sentences is \
                 not well defined): set \"granularity\":\"claim\"",
                scorer.name()
            )),
            _ => Ok(()),
        }
    }

    /// The LLM config of `role`: its own option, else `llm`, else the default (local model).
    pub fn llm_for(&self, role: LlmRole) -> LlmConfig {
        self.role_llms
            .get(&role)
            .or(self.llm.as_ref())
            .cloned()
            .unwrap_or_default()
    }

    /// UAD's scorer: `uad_scorer`, else the first of `scorers`.
    pub fn uad_scorer(&self) -> Scorer {
        self.uad_scorer
            .or_else(|| self.scorers.first().copied())
            .unwrap_or(Scorer::Entailment)
    }

    /// The question for scorers that need one (`prompt`), or an error naming the option.
    pub fn require_prompt(&self, scorer: Scorer) -> Result<&str, String> {
        self.prompt.as_deref().ok_or_else(|| {
            format!(
                "scorer {} needs the question the response answers: pass it as option prompt, e.g. \
                 \"prompt\":\"Who was Marie Curie?\"",
                scorer.name()
            )
        })
    }
}

/// JSON type of `v`, for error messages ("a string", "an array", …).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string_option<'a>(name: &str, v: &'a Value, example: &str) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| {
        format!(
            "option {name} must be a string, e.g. \"{name}\":{example}; got {}",
            type_name(v)
        )
    })
}

fn parse_scorers(v: &Value) -> Result<Vec<Scorer>, String> {
    let example = "\"scorers\":[\"entailment\",\"matched_cosine_sim\"]";
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().ok_or_else(|| {
                    format!(
                        "option scorers[{i}] is {}, not a string: give scorer names, e.g. {example}",
                        type_name(item)
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "option scorers must be an array of scorer names, e.g. {example}; got {}",
                type_name(other)
            ))
        }
    };
    let mut out: Vec<Scorer> = Vec::with_capacity(names.len());
    for name in names {
        let s = Scorer::parse(name).map_err(|e| format!("option scorers: {e}"))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "option scorers is empty: name at least one of {} (or leave scorers out for the \
             defaults)",
            scorers::all_names().join(", ")
        ));
    }
    Ok(out)
}

fn parse_num_samples(v: &Value) -> Result<usize, String> {
    match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "option num_samples must be a positive integer (the number of samples to use), \
             e.g. \"num_samples\":5; got {}",
            if v.is_number() {
                v.to_string()
            } else {
                type_name(v).to_string()
            }
        )),
    }
}

fn string_array(name: &str, v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option {name} must be an array of strings, e.g. \"{name}\":[\"First unit.\",\"Second unit.\"]; got {}",
            type_name(v)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                format!(
                    "option {name}[{i}] is {}, not a string: every unit must be a JSON string",
                    type_name(item)
                )
            })
        })
        .collect()
}

fn parse_sample_units(v: &Value) -> Result<Vec<Vec<String>>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "option sample_units must be an array with one array of strings per sample, e.g. \
             \"sample_units\":[[\"Unit of sample 1.\"],[\"Unit of sample 2.\"]]; got {}",
            type_name(v)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| string_array(&format!("sample_units[{i}]"), item))
        .collect()
}

/// An integer option in 1..=[`MAX_QA`] (`num_questions`, `qa_samples`).
fn bounded_count(name: &str, v: &Value, example: &str) -> Result<usize, String> {
    match v.as_u64() {
        Some(n) if n >= 1 && n <= MAX_QA as u64 => Ok(n as usize),
        _ => Err(format!(
            "option {name} must be an integer in 1..={MAX_QA}, e.g. \"{name}\":{example}; got {}",
            if v.is_number() {
                v.to_string()
            } else {
                type_name(v).to_string()
            }
        )),
    }
}

fn number_option(name: &str, v: &Value, example: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!(
            "option {name} must be a number, e.g. \"{name}\":{example}; got {}",
            type_name(v)
        )),
    }
}

fn ranged(
    name: &str,
    v: &Value,
    example: &str,
    ok: impl Fn(f64) -> bool,
    range: &str,
) -> Result<f64, String> {
    let x = number_option(name, v, example)?;
    if ok(x) {
        Ok(x)
    } else {
        Err(format!(
            "option {name} is {x}, outside {range}: e.g. \"{name}\":{example}"
        ))
    }
}

/// Parses one LLM config object (the value of `llm` or of a role option named `name`). A string
/// is refused: names are resolved by the extension from `temp.uq_llms` before the options reach
/// the daemon.
pub fn parse_llm_config(name: &str, v: &Value) -> Result<LlmConfig, String> {
    let obj: &Map<String, Value> = match v {
        Value::Object(o) => o,
        Value::String(s) => {
            return Err(format!(
                "option {name} is the name {s:?}, but no LLM of that name reached uqd: register it in \
                 temp.uq_llms (INSERT INTO temp.uq_llms(name, config) VALUES ('{sq}', '{{\"backend\":\"openai\",\"model\":\"gpt-4o-mini\"}}')) \
                 or pass the LLM config object itself, e.g. \"{name}\":{{\"backend\":\"local\"}}",
                sq = s.replace('\'', "''")
            ))
        }
        other => {
            return Err(format!(
                "option {name} must be an LLM config object (or the name of one registered in temp.uq_llms), \
                 e.g. \"{name}\":{{\"backend\":\"openai\",\"model\":\"gpt-4o-mini\"}}; got {}",
                type_name(other)
            ))
        }
    };
    let mut c = LlmConfig::default();
    for (key, val) in obj {
        let k = key.as_str();
        if !LLM_CONFIG_KEYS.contains(&k) {
            return Err(format!(
                "unknown key {key:?} in option {name}: valid LLM config keys are {}",
                LLM_CONFIG_KEYS.join(", ")
            ));
        }
        let full = format!("{name}.{k}");
        if val.is_null() {
            if k == "api_key_env" {
                c.api_key_env = Some(None);
            }
            continue;
        }
        let string = |example: &str| string_option(&full, val, example).map(str::to_owned);
        let boolean = || {
            val.as_bool().ok_or_else(|| {
                format!(
                    "option {full} must be true or false; got {}",
                    type_name(val)
                )
            })
        };
        let integer = |min: u64, max: u64, example: &str| -> Result<u64, String> {
            match val.as_u64() {
                Some(n) if n >= min && n <= max => Ok(n),
                _ => Err(format!(
                    "option {full} must be an integer in {min}..={max}, e.g. \"{k}\":{example}; got {}",
                    if val.is_number() { val.to_string() } else { type_name(val).to_string() }
                )),
            }
        };
        match k {
            "backend" => {
                let b = string("\"openai\"")?;
                c.backend = match b.trim().to_ascii_lowercase().as_str() {
                    "local" => LlmBackendKind::Local,
                    "openai" => LlmBackendKind::OpenAi,
                    _ => {
                        return Err(format!(
                            "option {full} is {b:?}: use \"local\" (the embedded SmolLM2) or \"openai\" (any \
                             OpenAI-compatible server)"
                        ))
                    }
                }
            }
            "base_url" => c.base_url = Some(string("\"https://api.openai.com/v1\"")?),
            "model" => c.model = Some(string("\"gpt-4o-mini\"")?),
            "api_key_env" => c.api_key_env = Some(Some(string("\"OPENAI_API_KEY\"")?)),
            "temperature" => {
                c.temperature = Some(ranged(
                    &full,
                    val,
                    "0.7",
                    |x| (0.0..=2.0).contains(&x),
                    "0..=2",
                )?)
            }
            "top_p" => {
                c.top_p = Some(ranged(
                    &full,
                    val,
                    "0.9",
                    |x| x > 0.0 && x <= 1.0,
                    "(0, 1]",
                )?)
            }
            "max_tokens" => c.max_tokens = Some(integer(1, u32::MAX as u64, "512")? as u32),
            "seed" => c.seed = Some(integer(0, u64::MAX, "42")?),
            "n_supported" => c.n_supported = Some(boolean()?),
            "timeout_ms" => c.timeout_ms = Some(integer(1, u64::MAX, "60000")?),
            "max_retries" => c.max_retries = Some(integer(0, 20, "5")? as u32),
            "concurrency" => c.concurrency = Some(integer(1, 4096, "8")? as usize),
            "requests_per_minute" => {
                c.requests_per_minute = Some(integer(1, u32::MAX as u64, "500")? as u32)
            }
            "tokens_per_minute" => {
                c.tokens_per_minute = Some(integer(1, u32::MAX as u64, "200000")? as u32)
            }
            "logprobs" => c.logprobs = Some(boolean()?),
            _ => {}
        }
    }
    Ok(c)
}

/// Parses `options_json`: JSON null (all defaults) or an object with any of
/// [`OPTION_NAMES`]. A key whose value is null keeps its default.
///
/// Errors name the option: unknown keys (listing the valid ones), wrong types, unknown
/// scorer/aggregation/granularity names, an empty `scorers`, `num_samples` < 1, an LLM given
/// by name (the extension resolves names from `temp.uq_llms`; the daemon only takes objects),
/// temperatures outside their range, and both `threshold` and `threshold_percentile`.
/// `granularity: "claim"` without `units` is valid: the daemon decomposes the response (and,
/// for matched-unit scorers without `sample_units`, every sample) with the decomposition LLM.
pub fn parse_options(v: &Value) -> Result<ScoreOptions, String> {
    let obj = match v {
        Value::Null => return Ok(ScoreOptions::default()),
        Value::Object(o) => o,
        _ => {
            return Err(
                "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
                    .to_string(),
            )
        }
    };
    let mut o = ScoreOptions::default();
    for (key, val) in obj {
        if !OPTION_NAMES.contains(&key.as_str()) {
            return Err(format!(
                "unknown option {key:?} in options_json: valid options are {}",
                OPTION_NAMES.join(", ")
            ));
        }
        if val.is_null() {
            continue;
        }
        match key.as_str() {
            "granularity" => {
                let s = string_option(key, val, "\"sentence\"")?;
                o.granularity =
                    Granularity::parse(s).map_err(|e| format!("option granularity: {e}"))?;
            }
            "scorers" => o.scorers = parse_scorers(val)?,
            "aggregation" => {
                let s = string_option(key, val, "\"mean\"")?;
                o.aggregation =
                    Aggregation::parse(s).map_err(|e| format!("option aggregation: {e}"))?;
            }
            "num_samples" => o.num_samples = Some(parse_num_samples(val)?),
            "units" => o.units = Some(string_array("units", val)?),
            "sample_units" => o.sample_units = Some(parse_sample_units(val)?),
            "llm" => o.llm = Some(parse_llm_config(key, val)?),
            "temperature" => {
                o.temperature = ranged(key, val, "0", |x| (0.0..=2.0).contains(&x), "0..=2")?
            }
            "sampling_temperature" => {
                o.sampling_temperature = ranged(
                    key,
                    val,
                    "1.0",
                    |x| x > 0.0 && x <= 2.0,
                    "(0, 2] (sampled answers need a temperature above 0)",
                )?
            }
            "prompt" => {
                let p = string_option(key, val, "\"Who was Marie Curie?\"")?;
                if p.trim().is_empty() {
                    return Err("option prompt is empty: pass the question the response answers, or leave prompt out".to_string());
                }
                o.prompt = Some(p.to_string());
            }
            "threshold" => {
                o.threshold = Some(ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (claim scores lie in [0, 1])",
                )?)
            }
            "threshold_percentile" => {
                o.threshold_percentile = Some(ranged(
                    key,
                    val,
                    "25",
                    |x| (0.0..=100.0).contains(&x),
                    "0..=100",
                )?)
            }
            "uad_scorer" => {
                let s = string_option(key, val, "\"entailment\"")?;
                o.uad_scorer =
                    Some(Scorer::parse(s).map_err(|e| format!("option uad_scorer: {e}"))?);
            }
            "claim_union" => {
                let union = string_array("claim_union", val)?;
                if let Some(i) = union.iter().position(|c| c.trim().is_empty()) {
                    return Err(format!(
                        "option claim_union[{i}] is empty; every claim must be a non-empty string"
                    ));
                }
                o.claim_union = Some(union);
            }
            "graph_threshold" => {
                o.graph_threshold = ranged(
                    key,
                    val,
                    "0.5",
                    |x| (0.0..=1.0).contains(&x),
                    "0..=1 (an edge joins a claim and a response iff p_e >= graph_threshold)",
                )?
            }
            "pagerank_damping" => {
                o.pagerank_damping =
                    ranged(key, val, "0.85", |x| (0.0..=1.0).contains(&x), "0..=1")?
            }
            "num_questions" => o.num_questions = bounded_count(key, val, "1")?,
            "qa_samples" => o.qa_samples = bounded_count(key, val, "5")?,
            "semantic_clustering" => {
                let s = string_option(key, val, "\"uqlm\"")?;
                o.semantic_clustering =
                    Clustering::parse(s).map_err(|e| format!("option semantic_clustering: {e}"))?;
            }
            "response_logprobs" => {
                let items = val.as_array().ok_or_else(|| {
                    format!(
                        "option response_logprobs must be an array of numbers (the response's token \
                         log-probabilities), e.g. \"response_logprobs\":[-0.01,-0.3]; got {}",
                        type_name(val)
                    )
                })?;
                let lp = items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| match x.as_f64() {
                        Some(x) if !x.is_nan() && x <= 0.0 => Ok(x),
                        _ => Err(format!(
                            "option response_logprobs[{i}] is {x}: every token log-probability must be a number <= 0"
                        )),
                    })
                    .collect::<Result<Vec<f64>, String>>()?;
                o.response_logprobs = Some(lp);
            }
            other => {
                if let Some(role) = LlmRole::from_option_name(other) {
                    o.role_llms.insert(role, parse_llm_config(key, val)?);
                }
            }
        }
    }
    if o.threshold.is_some() && o.threshold_percentile.is_some() {
        return Err(
            "options threshold and threshold_percentile both given: UAD filters with one of them; \
                    drop one"
                .to_string(),
        );
    }
    o.check_graph()?;
    Ok(o)
}

/// Parses `samples_json`: a non-empty JSON array of strings (the m sampled responses).
pub fn parse_samples(v: &Value) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| {
        format!(
            "samples_json must be a JSON array of strings, e.g. [\"sampled answer 1\",\"sampled answer 2\"]; got {}",
            type_name(v)
        )
    })?;
    if items.is_empty() {
        return Err(
            "samples_json must hold at least one sampled response, e.g. [\"sampled answer 1\"]"
                .to_string(),
        );
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                format!(
                    "samples_json[{i}] is {}, not a string: every sample must be a JSON string",
                    type_name(item)
                )
            })
        })
        .collect()
}

/// The first `num_samples` samples (all when `None`). Errors when more are asked for than
/// were given.
pub fn select_samples(
    samples: &[String],
    num_samples: Option<usize>,
) -> Result<Vec<String>, String> {
    match num_samples {
        None => Ok(samples.to_vec()),
        Some(m) if m <= samples.len() => Ok(samples[..m].to_vec()),
        Some(m) => Err(format!(
            "option num_samples is {m} but samples_json holds only {} sample{}: lower num_samples \
             or pass more samples",
            samples.len(),
            if samples.len() == 1 { "" } else { "s" }
        )),
    }
}

/// Checks that `sample_units` has one entry per given sample (before `num_samples` picks the
/// first m; the same first m entries are then used).
pub fn check_sample_units(sample_units: &[Vec<String>], n_samples: usize) -> Result<(), String> {
    if sample_units.len() == n_samples {
        Ok(())
    } else {
        Err(format!(
            "option sample_units has {} entries but samples_json holds {n_samples} samples: give \
             one array of units per sample, in the same order",
            sample_units.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_and_empty_object_are_defaults() {
        let d = ScoreOptions::default();
        assert_eq!(parse_options(&Value::Null), Ok(d.clone()));
        assert_eq!(parse_options(&json!({})), Ok(d.clone()));
        assert_eq!(d.granularity, Granularity::Sentence);
        assert_eq!(d.aggregation, Aggregation::Mean);
        assert_eq!(
            d.scorers,
            vec![
                Scorer::Entailment,
                Scorer::Noncontradiction,
                Scorer::ContrastedEntailment
            ]
        );
        assert_eq!((d.num_samples, d.units, d.sample_units), (None, None, None));
        // null values keep defaults
        assert_eq!(
            parse_options(&json!({"scorers": null, "units": null})),
            Ok(ScoreOptions::default())
        );
    }

    #[test]
    fn not_an_object() {
        for v in [json!([1]), json!("x"), json!(3), json!(true)] {
            let e = parse_options(&v).unwrap_err();
            assert_eq!(
                e,
                "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
            );
        }
    }

    #[test]
    fn unknown_key() {
        let e = parse_options(&json!({"scorer": ["entailment"]})).unwrap_err();
        assert!(e.contains("\"scorer\""), "{e}");
        for k in OPTION_NAMES {
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn full_options() {
        let o = parse_options(&json!({
            "granularity": "claim",
            "scorers": ["LUQ_PAIR", "entailment", "matched_contrasted_entailment", "luq"],
            "aggregation": "gmean",
            "num_samples": 3,
            "units": ["a", "b"],
            "sample_units": [["x"], [], ["y", "z"]]
        }))
        .unwrap_or_default();
        assert_eq!(o.granularity, Granularity::Claim);
        assert_eq!(
            o.scorers,
            vec![
                Scorer::MatchedContrastedEntailment,
                Scorer::Entailment,
                Scorer::ContrastedEntailment
            ]
        );
        assert_eq!(o.aggregation, Aggregation::GeometricMean);
        assert_eq!(o.num_samples, Some(3));
        assert_eq!(o.units, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(o.sample_units.as_ref().map(Vec::len), Some(3));
        assert!(o.has_matched_unit());
    }

    #[test]
    fn scorers_string_or_array() {
        let o = parse_options(&json!({"scorers": "matched_bert_score"})).unwrap_or_default();
        assert_eq!(o.scorers, vec![Scorer::MatchedBertScore]);
        let e = parse_options(&json!({"scorers": []})).unwrap_err();
        assert!(e.contains("scorers") && e.contains("empty"), "{e}");
        let e = parse_options(&json!({"scorers": ["entailment", 3]})).unwrap_err();
        assert!(e.contains("scorers[1]") && e.contains("a number"), "{e}");
        let e = parse_options(&json!({"scorers": {"a": 1}})).unwrap_err();
        assert!(e.contains("scorers") && e.contains("an object"), "{e}");
        let e = parse_options(&json!({"scorers": ["nope"]})).unwrap_err();
        assert!(
            e.contains("scorers") && e.contains("\"nope\"") && e.contains("matched_cosine_sim"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_name_the_option() {
        let cases = [
            (json!({"granularity": 1}), "granularity"),
            (json!({"granularity": "word"}), "granularity"),
            (json!({"aggregation": ["mean"]}), "aggregation"),
            (json!({"aggregation": "median"}), "aggregation"),
            (json!({"num_samples": 0}), "num_samples"),
            (json!({"num_samples": -2}), "num_samples"),
            (json!({"num_samples": 2.5}), "num_samples"),
            (json!({"num_samples": "5"}), "num_samples"),
            (json!({"units": "one unit"}), "units"),
            (json!({"units": ["ok", null]}), "units[1]"),
            (json!({"sample_units": ["a"]}), "sample_units[0]"),
            (json!({"sample_units": [["a"], [1]]}), "sample_units[1][0]"),
            (json!({"sample_units": "a"}), "sample_units"),
        ];
        for (v, name) in cases {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(name), "{v}: {e}");
        }
        let e = parse_options(&json!({"num_samples": 0})).unwrap_err();
        assert!(e.contains("positive integer") && e.contains("got 0"), "{e}");
    }

    #[test]
    fn claim_without_units_is_decomposed_by_the_daemon() {
        let o = parse_options(&json!({"granularity": "claim"})).unwrap_or_default();
        assert_eq!((o.granularity, o.units), (Granularity::Claim, None));
        let o = parse_options(&json!({"granularity": "claim", "scorers": ["luq_pair"]}))
            .unwrap_or_default();
        assert_eq!(o.sample_units, None);
        assert!(parse_options(&json!({"granularity": "claim", "units": ["c"]})).is_ok());
    }

    #[test]
    fn llm_options() {
        let o = parse_options(&json!({
            "llm": {"backend": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1",
                    "api_key_env": null, "temperature": 0.5, "top_p": 0.9, "max_tokens": 64, "seed": 7,
                    "n_supported": false, "timeout_ms": 1000, "max_retries": 2, "concurrency": 3,
                    "requests_per_minute": 60, "tokens_per_minute": 1000, "logprobs": true},
            "decomposition_llm": {},
            "judge_llm": {"backend": "LOCAL", "model": "/m/x.gguf", "seed": null}
        }))
        .unwrap_or_default();
        let llm = o.llm.clone().unwrap_or_default();
        assert_eq!(llm.backend, LlmBackendKind::OpenAi);
        assert_eq!(llm.model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(llm.api_key_env, Some(None), "null = no key");
        assert_eq!((llm.temperature, llm.top_p), (Some(0.5), Some(0.9)));
        assert_eq!(
            (llm.max_tokens, llm.seed, llm.n_supported),
            (Some(64), Some(7), Some(false))
        );
        assert_eq!(
            (llm.timeout_ms, llm.max_retries, llm.concurrency),
            (Some(1000), Some(2), Some(3))
        );
        assert_eq!(
            (llm.requests_per_minute, llm.tokens_per_minute, llm.logprobs),
            (Some(60), Some(1000), Some(true))
        );
        // Roles fall back to llm; an empty object is the local default.
        assert_eq!(o.llm_for(LlmRole::Generation), llm);
        assert_eq!(o.llm_for(LlmRole::Reconstruction), llm);
        assert_eq!(o.llm_for(LlmRole::Decomposition), LlmConfig::default());
        let judge = o.llm_for(LlmRole::Judge);
        assert_eq!(
            (judge.backend, judge.model.as_deref(), judge.seed),
            (LlmBackendKind::Local, Some("/m/x.gguf"), None)
        );
        assert_eq!(
            ScoreOptions::default().llm_for(LlmRole::Judge),
            LlmConfig::default()
        );
        assert_eq!(LlmConfig::default().backend, LlmBackendKind::Local);
        assert_ne!(judge.memo_key(), LlmConfig::default().memo_key());
        let absent = parse_llm_config("llm", &json!({"backend": "openai"})).unwrap_or_default();
        assert_eq!(
            absent.api_key_env, None,
            "absent = the client's default variable"
        );
        for r in LlmRole::ALL {
            assert!(OPTION_NAMES.contains(&r.option_name()));
            assert_eq!(LlmRole::from_option_name(r.option_name()), Some(*r));
        }
    }

    #[test]
    fn llm_by_name_says_register_it() {
        for key in std::iter::once("llm").chain(LlmRole::ALL.iter().map(|r| r.option_name())) {
            let e = parse_options(&json!({ key: "gpt" })).unwrap_err();
            assert!(
                e.contains(key)
                    && e.contains("\"gpt\"")
                    && e.contains("temp.uq_llms")
                    && e.contains("object"),
                "{e}"
            );
        }
        let e = parse_options(&json!({"llm": "o'brien"})).unwrap_err();
        assert!(e.contains("'o''brien'"), "{e}");
    }

    #[test]
    fn llm_config_errors_name_the_key() {
        let cases = [
            (json!({"llm": 3}), "option llm must be an LLM config object"),
            (
                json!({"llm": {"modle": "x"}}),
                "unknown key \"modle\" in option llm",
            ),
            (json!({"llm": {"backend": "vllm"}}), "llm.backend"),
            (json!({"llm": {"backend": 1}}), "llm.backend"),
            (
                json!({"judge_llm": {"temperature": 3}}),
                "judge_llm.temperature",
            ),
            (json!({"llm": {"temperature": "hot"}}), "llm.temperature"),
            (json!({"llm": {"top_p": 0}}), "llm.top_p"),
            (json!({"llm": {"max_tokens": 0}}), "llm.max_tokens"),
            (json!({"llm": {"seed": -1}}), "llm.seed"),
            (json!({"llm": {"n_supported": "yes"}}), "llm.n_supported"),
            (json!({"llm": {"max_retries": 99}}), "llm.max_retries"),
            (json!({"llm": {"concurrency": 0}}), "llm.concurrency"),
            (json!({"llm": {"api_key_env": 5}}), "llm.api_key_env"),
        ];
        for (v, want) in cases {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
        let e = parse_options(&json!({"llm": {"modle": "x"}})).unwrap_err();
        for k in LLM_CONFIG_KEYS {
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn generation_and_uad_options() {
        let d = ScoreOptions::default();
        assert_eq!((d.temperature, d.sampling_temperature), (0.0, 1.0));
        assert_eq!(
            (
                d.prompt.clone(),
                d.threshold,
                d.threshold_percentile,
                d.uad_scorer
            ),
            (None, None, None, None)
        );
        assert_eq!(d.uad_scorer(), Scorer::Entailment);
        assert!((DEFAULT_UAD_THRESHOLD - 1.0 / 3.0).abs() < 1e-15);
        let o = parse_options(&json!({
            "temperature": 0.2, "sampling_temperature": 1.5, "prompt": "Who?",
            "threshold": 0.5, "uad_scorer": "luq", "scorers": ["noncontradiction", "verbalized_confidence"]
        }))
        .unwrap_or_default();
        assert_eq!((o.temperature, o.sampling_temperature), (0.2, 1.5));
        assert_eq!(o.prompt.as_deref(), Some("Who?"));
        assert_eq!(o.threshold, Some(0.5));
        assert_eq!(o.uad_scorer(), Scorer::ContrastedEntailment);
        assert_eq!(o.require_prompt(Scorer::VerbalizedConfidence), Ok("Who?"));
        let o = parse_options(
            &json!({"scorers": ["matched_cosine_sim", "entailment"], "threshold_percentile": 25}),
        )
        .unwrap_or_default();
        assert_eq!((o.threshold, o.threshold_percentile), (None, Some(25.0)));
        assert_eq!(o.uad_scorer(), Scorer::MatchedCosineSim);
        let e = o.require_prompt(Scorer::VerbalizedConfidence).unwrap_err();
        assert!(
            e.contains("prompt") && e.contains("verbalized_confidence"),
            "{e}"
        );
        let cases = [
            (json!({"temperature": 2.5}), "temperature"),
            (json!({"temperature": "0"}), "temperature"),
            (json!({"sampling_temperature": 0}), "sampling_temperature"),
            (json!({"prompt": 3}), "prompt"),
            (json!({"prompt": "  "}), "prompt"),
            (json!({"threshold": 1.5}), "threshold"),
            (json!({"threshold_percentile": 101}), "threshold_percentile"),
            (json!({"threshold_percentile": -1}), "threshold_percentile"),
            (json!({"uad_scorer": "nope"}), "uad_scorer"),
            (json!({"uad_scorer": ["entailment"]}), "uad_scorer"),
            (
                json!({"threshold": 0.3, "threshold_percentile": 30}),
                "threshold_percentile",
            ),
        ];
        for (v, name) in cases {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(name), "{v}: {e}");
        }
    }

    #[test]
    fn graph_options() {
        let d = ScoreOptions::default();
        assert_eq!((d.graph_threshold, d.pagerank_damping), (0.5, 0.85));
        assert_eq!(d.claim_union, None);
        let o = parse_options(&json!({
            "granularity": "claim", "scorers": ["page_rank", "entailment"],
            "claim_union": ["a", "b"], "graph_threshold": 0.7, "pagerank_damping": 0.9
        }))
        .unwrap_or_default();
        assert!(o.has_graph());
        assert_eq!(o.claim_union, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!((o.graph_threshold, o.pagerank_damping), (0.7, 0.9));
        assert_eq!(o.check_graph(), Ok(()));
        let e =
            parse_options(&json!({"scorers": ["page_rank"], "claim_union": ["a"]})).unwrap_err();
        assert!(
            e.contains("page_rank") && e.contains("granularity") && e.contains("claim"),
            "{e}"
        );
        // Without claim_union the daemon merges claims with the merge LLM.
        let o = parse_options(&json!({"granularity": "claim", "scorers": ["harmonic_centrality"]}))
            .unwrap_or_default();
        assert_eq!((o.claim_union.clone(), o.check_graph()), (None, Ok(())));
        assert!(o.has_graph());
        // Without graph scorers the options are accepted and unused.
        assert!(parse_options(&json!({"claim_union": ["a"], "graph_threshold": 0.2})).is_ok());
        for (v, name) in [
            (json!({"claim_union": "a"}), "claim_union"),
            (json!({"claim_union": ["a", 1]}), "claim_union[1]"),
            (json!({"claim_union": ["a", " "]}), "claim_union[1]"),
            (json!({"graph_threshold": 1.5}), "graph_threshold"),
            (json!({"pagerank_damping": -0.1}), "pagerank_damping"),
            (json!({"pagerank_damping": "x"}), "pagerank_damping"),
        ] {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(name), "{v}: {e}");
        }
    }

    #[test]
    fn unit_qa_and_short_form_options() {
        let d = ScoreOptions::default();
        assert_eq!((d.num_questions, d.qa_samples), (1, 5));
        assert_eq!(d.semantic_clustering, Clustering::Uqlm);
        assert_eq!(d.response_logprobs, None);
        let o = parse_options(&json!({
            "scorers": ["qa_exact_match", "shortform_cosine_sim", "normalized_probability"],
            "num_questions": 2, "qa_samples": 3, "semantic_clustering": "bidirectional",
            "response_logprobs": [-0.5, 0, -1e-3]
        }))
        .unwrap_or_default();
        assert_eq!((o.num_questions, o.qa_samples), (2, 3));
        assert_eq!(o.semantic_clustering, Clustering::Bidirectional);
        assert_eq!(o.response_logprobs, Some(vec![-0.5, 0.0, -1e-3]));
        assert!(o.has_unit_qa() && o.needs_units());
        let short = parse_options(
            &json!({"scorers": ["shortform_noncontradiction", "normalized_probability"]}),
        )
        .unwrap_or_default();
        assert!(!short.needs_units() && !short.has_unit_qa());
        for (v, want) in [
            (
                json!({"num_questions": 0}),
                "num_questions must be an integer in 1..=100",
            ),
            (json!({"num_questions": "2"}), "num_questions"),
            (json!({"qa_samples": 101}), "qa_samples"),
            (json!({"qa_samples": 1.5}), "qa_samples"),
            (
                json!({"semantic_clustering": "kmeans"}),
                "semantic_clustering",
            ),
            (
                json!({"response_logprobs": "x"}),
                "response_logprobs must be an array",
            ),
            (
                json!({"response_logprobs": [-1, 0.5]}),
                "response_logprobs[1]",
            ),
            (json!({"response_logprobs": [null]}), "response_logprobs[0]"),
        ] {
            let e = parse_options(&v).unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
        let e = parse_options(&json!({"semantic_clustering": "kmeans"})).unwrap_err();
        assert!(e.contains("uqlm") && e.contains("bidirectional"), "{e}");
    }

    #[test]
    fn samples() {
        assert_eq!(
            parse_samples(&json!(["a", "b"])),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        let e = parse_samples(&json!([])).unwrap_err();
        assert!(
            e.contains("samples_json must hold at least one sampled response"),
            "{e}"
        );
        let e = parse_samples(&json!(["a", 2, "c"])).unwrap_err();
        assert!(
            e.contains("samples_json[1]") && e.contains("a number"),
            "{e}"
        );
        let e = parse_samples(&json!({"a": "b"})).unwrap_err();
        assert!(e.contains("samples_json") && e.contains("array"), "{e}");
        assert!(parse_samples(&Value::Null).is_err());
    }

    #[test]
    fn selecting_samples() {
        let s: Vec<String> = ["a", "b", "c"].iter().map(|x| x.to_string()).collect();
        assert_eq!(select_samples(&s, None), Ok(s.clone()));
        assert_eq!(select_samples(&s, Some(2)), Ok(s[..2].to_vec()));
        assert_eq!(select_samples(&s, Some(3)), Ok(s.clone()));
        let e = select_samples(&s, Some(5)).unwrap_err();
        assert!(
            e.contains("num_samples is 5") && e.contains("only 3 samples"),
            "{e}"
        );
        let e = select_samples(&s[..1], Some(2)).unwrap_err();
        assert!(e.contains("only 1 sample:"), "{e}");
    }

    #[test]
    fn sample_units_count() {
        assert!(check_sample_units(&[vec![], vec![]], 2).is_ok());
        let e = check_sample_units(&[vec![]], 2).unwrap_err();
        assert!(
            e.contains("sample_units") && e.contains("1 entries") && e.contains("2 samples"),
            "{e}"
        );
    }
}
