//! A benchmark's requests and flags as scoring options: one request's options, the NLI judge
//! (`--nli-llm`, `--nli-prompt`), the premise settings (`--premise`) and the scorers
//! (`--scorers`).

use serde_json::{json, Value};
use uq_core::options::{parse_llm_config, NliPrompt};
use uq_core::score::grounded::SourceSelection;
use uq_core::score::premise::Premise;
use uq_core::scorers::{Granularity, Scorer};

/// One scoring request of a benchmark: the units are given (no decomposition call).
pub struct Job {
    /// The response under audit (only its size is checked: the units are given).
    pub response: String,
    pub units: Vec<String>,
    /// The sampled responses in use (the first m).
    pub samples: Vec<String>,
    /// One array of units per sample (`options.sample_units`); `None` lets the pipeline
    /// decompose the samples at `granularity`.
    pub sample_units: Option<Vec<Vec<String>>>,
    /// The union of unique claims over the response and its samples (`options.claim_union`,
    /// graph scorers).
    pub claim_union: Option<Vec<String>>,
    pub granularity: Granularity,
}

impl Job {
    pub(super) fn options(
        &self,
        scorers: &[&str],
        premise: Premise,
        judge: Option<&Judge>,
    ) -> Value {
        let mut o = json!({
            "units": self.units,
            "scorers": scorers,
            "num_samples": self.samples.len(),
            "granularity": self.granularity.as_str(),
            "premise": premise.to_json(),
        });
        if let Some(su) = &self.sample_units {
            o["sample_units"] = json!(su);
        }
        if let Some(cu) = &self.claim_union {
            o["claim_union"] = json!(cu);
        }
        if let Some(j) = judge {
            o["nli_llm"] = j.llm.clone();
            o["nli_prompt"] = json!(j.prompt.as_str());
        }
        o
    }
}

/// The NLI judge of a benchmark (`--nli-llm`, `--nli-prompt`): options `nli_llm`, `nli_prompt`.
#[derive(Debug, Clone)]
pub struct Judge {
    /// The LLM config object.
    pub llm: Value,
    pub prompt: NliPrompt,
}

impl Judge {
    /// From the flags: `--nli-llm` an LLM config object (JSON), `--nli-prompt` binary|ternary.
    pub fn from_flags(llm: Option<&str>, prompt: Option<&str>) -> Result<Option<Judge>, String> {
        let Some(text) = llm else {
            return match prompt {
                Some(_) => Err(
                    "--nli-prompt needs --nli-llm, the LLM that judges NLI pairs, \
                                e.g. --nli-llm '{\"backend\":\"local\"}'"
                        .into(),
                ),
                None => Ok(None),
            };
        };
        let llm: Value = serde_json::from_str(text).map_err(|e| {
            format!("--nli-llm must be an LLM config object (JSON), e.g. --nli-llm '{{\"backend\":\"local\"}}': {e}")
        })?;
        parse_llm_config("--nli-llm", &llm)?;
        let prompt = match prompt {
            None => NliPrompt::default(),
            Some(p) => NliPrompt::parse(&json!(p)).map_err(|e| format!("--nli-prompt: {e}"))?,
        };
        Ok(Some(Judge { llm, prompt }))
    }
}

/// Pairs of the raw-model measurement when `--raw-pairs` is not given.
pub const DEFAULT_RAW_PAIRS: usize = 1000;

/// The premise settings of `--premise` (comma-separated labels: whole, top3,
/// top2_embedding, …); `None`: the default at granularity `g`.
pub fn parse_premises(list: Option<&str>, g: Granularity) -> Result<Vec<Premise>, String> {
    let Some(list) = list else {
        return Ok(vec![uq_core::score::premise::default_premise(g)]);
    };
    parse_labels(
        "--premise",
        list,
        Premise::from_label,
        "whole, topK or topK_embedding, e.g. whole,top3",
    )
}

/// The comma-separated settings of `flag`, each read by `parse`; an empty list is an error
/// naming the flag and `valid` (the forms it takes, with an example).
fn parse_labels<T>(
    flag: &str,
    list: &str,
    parse: impl Fn(&str) -> Result<T, String>,
    valid: &str,
) -> Result<Vec<T>, String> {
    let out: Vec<T> = list
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse(p).map_err(|e| format!("{flag}: {e}")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(format!("{flag} is empty: give {valid}"));
    }
    Ok(out)
}

/// The settings of `--source-premise` (comma-separated labels: whole, top5, top5_embedding,
/// top5_sentence, …).
pub fn parse_source_premises(list: &str) -> Result<Vec<SourceSelection>, String> {
    parse_labels(
        "--source-premise",
        list,
        SourceSelection::from_label,
        "whole, topK, topK_embedding or topK_sentence, e.g. top5,top5_sentence",
    )
}

/// The scorers of `names` (comma-separated; `None`: all of `available`), each of which must be
/// one the benchmark runs (`available`).
pub fn select_scorers(available: Vec<Scorer>, names: Option<&str>) -> Result<Vec<Scorer>, String> {
    let Some(names) = names else {
        return Ok(available);
    };
    let listed = || {
        available
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for name in names.split(',').filter(|n| !n.trim().is_empty()) {
        let s = Scorer::parse(name).map_err(|e| format!("--scorers: {e}"))?;
        if !available.contains(&s) {
            return Err(format!(
                "--scorers: this benchmark does not run {}; it runs {}",
                s.name(),
                listed()
            ));
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(format!("--scorers is empty: name some of {}", listed()));
    }
    Ok(out)
}
