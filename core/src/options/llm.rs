//! The LLM of each role (docs/reference.md, "LLM config"): options `llm` and `<role>_llm`, each
//! an LLM config object.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::values::{ranged, string_option};
use crate::json::{number_or_type, type_name};

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
    /// Judges (premise, hypothesis) pairs in place of the NLI model (option `nli_llm`; no
    /// fallback to `llm`: without it the NLI model judges).
    Nli,
}

impl LlmRole {
    pub const ALL: &'static [LlmRole] = &[
        LlmRole::Generation,
        LlmRole::Decomposition,
        LlmRole::Question,
        LlmRole::Merge,
        LlmRole::Reconstruction,
        LlmRole::Judge,
        LlmRole::Nli,
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
            LlmRole::Nli => "nli_llm",
        }
    }

    pub(super) fn from_option_name(name: &str) -> Option<LlmRole> {
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
    "top_logprobs",
    "replica_retry_ms",
];

/// One LLM config object (docs/reference.md, "LLM config"). Every key is optional: `None` keeps
/// the backend's default. For `backend: "local"`, `model` is the path of a `.gguf` file (default:
/// the daemon's SmolLM2) and the HTTP-only keys (`base_url`, `api_key_env`, `n_supported`,
/// `timeout_ms`, `max_retries`, `concurrency`, `requests_per_minute`, `tokens_per_minute`) are
/// accepted and ignored, so that a config can switch backend by changing `backend` alone.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmConfig {
    pub backend: LlmBackendKind,
    /// The first (or only) URL of `base_url`.
    pub base_url: Option<String>,
    /// The other URLs when `base_url` is an array of replicas.
    pub replicas: Vec<String>,
    pub replica_retry_ms: Option<u64>,
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
    /// With `logprobs`: the alternatives asked for at each position (0..=20; default 5).
    pub top_logprobs: Option<u32>,
}

impl LlmConfig {
    /// A stable text identifying the config (for memoising backends): two configs with the same
    /// key build the same backend.
    pub fn memo_key(&self) -> String {
        format!("{self:?}")
    }
}

/// Parses one LLM config object (the value of `llm` or of a role option named `name`). A string
/// is refused: names are resolved by the extension from `temp.uq_llms` before the options reach
/// the daemon.
pub fn parse_llm_config(name: &str, v: &Value) -> Result<LlmConfig, String> {
    let obj = config_object(name, v)?;
    let mut c = LlmConfig::default();
    for (key, val) in obj {
        let k = key.as_str();
        if !LLM_CONFIG_KEYS.contains(&k) {
            return Err(format!(
                "unknown key {key:?} in option {name}: valid LLM config keys are {}",
                LLM_CONFIG_KEYS.join(", ")
            ));
        }
        if val.is_null() {
            if k == "api_key_env" {
                c.api_key_env = Some(None);
            }
            continue;
        }
        let full = format!("{name}.{k}");
        set_key(&mut c, &ConfigValue { full, key: k, val })?;
    }
    Ok(c)
}

/// The config object of option `name`; a name or any other value is refused with the fix.
fn config_object<'a>(name: &str, v: &'a Value) -> Result<&'a Map<String, Value>, String> {
    match v {
        Value::Object(o) => Ok(o),
        Value::String(s) => Err(format!(
            "option {name} is the name {s:?}, but no LLM of that name reached uqd: register it in \
             temp.uq_llms (INSERT INTO temp.uq_llms(name, config) VALUES ('{sq}', '{{\"backend\":\"openai\",\"model\":\"gpt-4o-mini\"}}')) \
             or pass the LLM config object itself, e.g. \"{name}\":{{\"backend\":\"local\"}}",
            sq = s.replace('\'', "''")
        )),
        other => Err(format!(
            "option {name} must be an LLM config object (or the name of one registered in temp.uq_llms), \
             e.g. \"{name}\":{{\"backend\":\"openai\",\"model\":\"gpt-4o-mini\"}}; got {}",
            type_name(other)
        )),
    }
}

/// One non-null key of an LLM config object: `full` (`llm.model`) names it in errors.
struct ConfigValue<'a> {
    full: String,
    key: &'a str,
    val: &'a Value,
}

impl ConfigValue<'_> {
    fn string(&self, example: &str) -> Result<String, String> {
        string_option(&self.full, self.val, example).map(str::to_owned)
    }

    fn boolean(&self) -> Result<bool, String> {
        self.val.as_bool().ok_or_else(|| {
            format!(
                "option {} must be true or false; got {}",
                self.full,
                type_name(self.val)
            )
        })
    }

    fn integer(&self, min: u64, max: u64, example: &str) -> Result<u64, String> {
        match self.val.as_u64() {
            Some(n) if n >= min && n <= max => Ok(n),
            _ => Err(format!(
                "option {} must be an integer in {min}..={max}, e.g. \"{}\":{example}; got {}",
                self.full,
                self.key,
                number_or_type(self.val)
            )),
        }
    }

    fn ranged(&self, example: &str, ok: impl Fn(f64) -> bool, range: &str) -> Result<f64, String> {
        ranged(&self.full, self.val, example, ok, range)
    }
}

/// Sets the field of config key `v`.
fn set_key(c: &mut LlmConfig, v: &ConfigValue) -> Result<(), String> {
    match v.key {
        "backend" => c.backend = backend(v)?,
        "base_url" => match v.val {
            // Several replicas of one model: ["http://gpu1:8000/v1", "http://gpu2:8000/v1"].
            Value::Array(items) => {
                let mut urls = replica_urls(v, items)?;
                c.base_url = Some(urls.remove(0));
                c.replicas = urls;
            }
            _ => c.base_url = Some(v.string("\"https://api.openai.com/v1\"")?),
        },
        "replica_retry_ms" => c.replica_retry_ms = Some(v.integer(1, 3_600_000, "30000")?),
        "model" => c.model = Some(v.string("\"gpt-4o-mini\"")?),
        "api_key_env" => c.api_key_env = Some(Some(v.string("\"OPENAI_API_KEY\"")?)),
        "temperature" => {
            c.temperature = Some(v.ranged("0.7", |x| (0.0..=2.0).contains(&x), "0..=2")?)
        }
        "top_p" => c.top_p = Some(v.ranged("0.9", |x| x > 0.0 && x <= 1.0, "(0, 1]")?),
        "max_tokens" => c.max_tokens = Some(v.integer(1, u32::MAX as u64, "512")? as u32),
        "seed" => c.seed = Some(v.integer(0, u64::MAX, "42")?),
        "n_supported" => c.n_supported = Some(v.boolean()?),
        "timeout_ms" => c.timeout_ms = Some(v.integer(1, u64::MAX, "60000")?),
        "max_retries" => c.max_retries = Some(v.integer(0, 20, "5")? as u32),
        "concurrency" => c.concurrency = Some(v.integer(1, 4096, "8")? as usize),
        "requests_per_minute" => {
            c.requests_per_minute = Some(v.integer(1, u32::MAX as u64, "500")? as u32)
        }
        "tokens_per_minute" => {
            c.tokens_per_minute = Some(v.integer(1, u32::MAX as u64, "200000")? as u32)
        }
        "logprobs" => c.logprobs = Some(v.boolean()?),
        "top_logprobs" => c.top_logprobs = Some(v.integer(0, 20, "5")? as u32),
        _ => {}
    }
    Ok(())
}

/// Config key `backend`.
fn backend(v: &ConfigValue) -> Result<LlmBackendKind, String> {
    let b = v.string("\"openai\"")?;
    match b.trim().to_ascii_lowercase().as_str() {
        "local" => Ok(LlmBackendKind::Local),
        "openai" => Ok(LlmBackendKind::OpenAi),
        _ => Err(format!(
            "option {} is {b:?}: use \"local\" (the embedded SmolLM2) or \"openai\" (any \
             OpenAI-compatible server)",
            v.full
        )),
    }
}

/// Config key `base_url` given as an array: the replicas' URLs, at least one.
fn replica_urls(v: &ConfigValue, items: &[Value]) -> Result<Vec<String>, String> {
    let mut urls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(u) if !u.trim().is_empty() => urls.push(u.trim().to_string()),
            _ => {
                return Err(format!(
                    "option {}[{i}] must be a URL string, e.g. \"{}\":[\"http://gpu1:8000/v1\", \
                     \"http://gpu2:8000/v1\"]; got {}",
                    v.full,
                    v.key,
                    type_name(item)
                ))
            }
        }
    }
    if urls.is_empty() {
        return Err(format!(
            "option {} is an empty array: give one URL, or an array of the replicas' URLs",
            v.full
        ));
    }
    Ok(urls)
}

/// The prompt style of the NLI judge (option `nli_prompt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NliPrompt {
    /// yes / no (uqlm's `EntailmentClassifier` binary style): "no" counts as contradiction, so
    /// p_c = 1 − p_e and non-contradiction equals entailment, as in uqlm.
    Binary,
    /// entailment / neutral / contradiction: all three NLI probabilities.
    #[default]
    Ternary,
}

impl NliPrompt {
    pub fn as_str(self) -> &'static str {
        match self {
            NliPrompt::Binary => "binary",
            NliPrompt::Ternary => "ternary",
        }
    }

    pub fn parse(v: &Value) -> Result<NliPrompt, String> {
        match v.as_str().map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            Some("binary") => Ok(NliPrompt::Binary),
            Some("ternary") => Ok(NliPrompt::Ternary),
            _ => Err(format!(
                "option nli_prompt must be \"binary\" (yes/no, as uqlm) or \"ternary\" \
                 (entailment/neutral/contradiction), e.g. \"nli_prompt\":\"ternary\"; got {}",
                match v {
                    Value::String(s) => format!("{s:?}"),
                    other => type_name(other).to_string(),
                }
            )),
        }
    }
}

/// Which LLM each role uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmOptions {
    /// Option `llm`: the LLM of every role not set on its own; `None` = the local model.
    pub default: Option<LlmConfig>,
    /// Options `generation_llm`, `decomposition_llm`, …: the LLMs of the roles set on their own.
    pub roles: BTreeMap<LlmRole, LlmConfig>,
    /// Option `nli_prompt`: the NLI judge's prompt style (`None`: not given, ternary).
    pub nli_prompt: Option<NliPrompt>,
}

impl LlmOptions {
    /// Reads option `key` when it is `llm` or a role's; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        if key == "llm" {
            self.default = Some(parse_llm_config(key, val)?);
        } else if key == "nli_prompt" {
            self.nli_prompt = Some(NliPrompt::parse(val)?);
        } else if let Some(role) = LlmRole::from_option_name(key) {
            self.roles.insert(role, parse_llm_config(key, val)?);
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// The NLI judge (option `nli_llm`) and its prompt style, when the LLM judges NLI pairs.
    /// Never falls back to `llm`: without `nli_llm` the NLI model judges.
    pub fn nli_judge(&self) -> Option<(&LlmConfig, NliPrompt)> {
        self.roles
            .get(&LlmRole::Nli)
            .map(|c| (c, self.nli_prompt.unwrap_or_default()))
    }

    /// `nli_prompt` without `nli_llm` has no effect: refused, so that a typo is not silent.
    pub fn check(&self) -> Result<(), String> {
        if self.nli_prompt.is_some() && !self.roles.contains_key(&LlmRole::Nli) {
            return Err(
                "option nli_prompt is given but nli_llm is not: set \"nli_llm\" to the LLM \
                        that judges NLI pairs, e.g. \"nli_llm\":{\"backend\":\"local\"}, or drop \
                        nli_prompt"
                    .to_string(),
            );
        }
        Ok(())
    }

    /// The LLM config of `role`: its own option, else `llm`, else the default (local model).
    pub fn for_role(&self, role: LlmRole) -> LlmConfig {
        self.roles
            .get(&role)
            .or(self.default.as_ref())
            .cloned()
            .unwrap_or_default()
    }
}
