//! The NLI model: label order from config.json, pair encoding, premise windows, softmax.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use tokenizers::Tokenizer;
use uq_core::protocol::NliProbs;

use super::batcher::EncodedWindow;
use super::wordpiece::AsciiWordPiece;

/// The label order of the model and where entailment, neutral and contradiction sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// Label names in model order (index = logit index).
    pub names: Vec<String>,
    pub entailment: usize,
    pub neutral: usize,
    pub contradiction: usize,
}

impl Labels {
    /// Reads `id2label` of a Hugging Face `config.json`. Names are matched case-insensitively on
    /// "entail", "neutral" and "contradict".
    pub fn from_config(config: &serde_json::Value, dir: &str) -> Result<Labels, String> {
        let fix = "config.json must have \"id2label\" naming the three labels, e.g. \
                   {\"0\": \"contradiction\", \"1\": \"entailment\", \"2\": \"neutral\"}";
        let map = config
            .get("id2label")
            .and_then(|v| v.as_object())
            .ok_or_else(|| format!("NLI model {dir}: config.json has no id2label object: {fix}"))?;
        let mut pairs: Vec<(usize, String)> = Vec::new();
        for (k, v) in map {
            let id: usize = k.trim().parse().map_err(|_| {
                format!("NLI model {dir}: id2label key {k:?} is not an integer: {fix}")
            })?;
            let name = v
                .as_str()
                .ok_or_else(|| format!("NLI model {dir}: id2label[{k}] is not a string: {fix}"))?;
            pairs.push((id, name.to_string()));
        }
        pairs.sort();
        if pairs.is_empty() || pairs.iter().enumerate().any(|(i, (id, _))| *id != i) {
            return Err(format!(
                "NLI model {dir}: id2label ids must be 0..n-1: {fix}"
            ));
        }
        let names: Vec<String> = pairs.into_iter().map(|(_, n)| n).collect();
        let find = |needle: &str| -> Result<usize, String> {
            let hits: Vec<usize> = names
                .iter()
                .enumerate()
                .filter(|(_, n)| {
                    let l = n.to_lowercase();
                    l.contains(needle) && !l.starts_with("not") && !l.starts_with("non")
                })
                .map(|(i, _)| i)
                .collect();
            match hits.as_slice() {
                [i] => Ok(*i),
                [] => Err(format!(
                    "NLI model {dir}: no label containing {needle:?} in id2label {names:?}: uqd needs a 3-way \
                     (entailment, neutral, contradiction) NLI model; {fix}"
                )),
                _ => Err(format!(
                    "NLI model {dir}: several labels contain {needle:?} in id2label {names:?}: {fix}"
                )),
            }
        };
        let labels = Labels {
            entailment: find("entail")?,
            neutral: find("neutral")?,
            contradiction: find("contradict")?,
            names: names.clone(),
        };
        Ok(labels)
    }

    /// Softmax (in f64) of one logits row, read in label order.
    pub fn probs(&self, logits: &[f32]) -> Result<NliProbs, String> {
        if logits.len() != self.names.len() {
            return Err(format!(
                "NLI model returned {} logits per pair but config.json names {} labels",
                logits.len(),
                self.names.len()
            ));
        }
        let p = softmax(logits);
        Ok(NliProbs {
            entailment: p[self.entailment],
            neutral: p[self.neutral],
            contradiction: p[self.contradiction],
        })
    }
}

/// Numerically stable softmax in f64. Non-finite logits give a uniform distribution.
pub fn softmax(logits: &[f32]) -> Vec<f64> {
    let m = logits
        .iter()
        .map(|&x| x as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() || logits.iter().any(|x| !x.is_finite()) {
        return vec![1.0 / logits.len().max(1) as f64; logits.len()];
    }
    let e: Vec<f64> = logits.iter().map(|&x| (x as f64 - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|x| x / s).collect()
}

/// The tokenizer's pair template: special tokens before, between and after the two sequences, and
/// the type ids of each part (e.g. BERT: `[CLS] A [SEP] B [SEP]`, types 0…0 1…1).
#[derive(Debug, Clone)]
pub struct PairTemplate {
    prefix: Vec<(u32, u32)>,
    middle: Vec<(u32, u32)>,
    suffix: Vec<(u32, u32)>,
    a_type: u32,
    b_type: u32,
}

impl PairTemplate {
    /// Derived from the tokenizer by encoding a sample pair with special tokens.
    pub fn from_tokenizer(tok: &Tokenizer) -> Result<PairTemplate, String> {
        let enc = tok
            .encode(("hello", "world"), true)
            .map_err(|e| format!("the NLI tokenizer cannot encode a pair: {e}"))?;
        let (ids, types, seq) = (enc.get_ids(), enc.get_type_ids(), enc.get_sequence_ids());
        let mut t = PairTemplate {
            prefix: vec![],
            middle: vec![],
            suffix: vec![],
            a_type: 0,
            b_type: 0,
        };
        let (mut seen_a, mut seen_b) = (false, false);
        for (i, &id) in ids.iter().enumerate() {
            let it = (id, types.get(i).copied().unwrap_or(0));
            match seq.get(i).copied().flatten() {
                Some(0) => {
                    if seen_b {
                        return Err("the NLI tokenizer's pair template is not `A … B`".into());
                    }
                    seen_a = true;
                    t.a_type = it.1;
                }
                Some(_) => {
                    seen_b = true;
                    t.b_type = it.1;
                }
                None => {
                    if seen_b {
                        t.suffix.push(it)
                    } else if seen_a {
                        t.middle.push(it)
                    } else {
                        t.prefix.push(it)
                    }
                }
            }
        }
        if !seen_a || !seen_b {
            return Err(
                "the NLI tokenizer does not encode pairs (no second sequence in its output)".into(),
            );
        }
        Ok(t)
    }

    /// Number of special tokens added to a pair.
    pub fn overhead(&self) -> usize {
        self.prefix.len() + self.middle.len() + self.suffix.len()
    }

    /// `prefix A middle B suffix`.
    pub fn build(&self, a: &[u32], b: &[u32]) -> EncodedWindow {
        let n = self.overhead() + a.len() + b.len();
        let mut ids = Vec::with_capacity(n);
        let mut type_ids = Vec::with_capacity(n);
        let push = |part: &[(u32, u32)], ids: &mut Vec<u32>, types: &mut Vec<u32>| {
            for &(i, t) in part {
                ids.push(i);
                types.push(t);
            }
        };
        push(&self.prefix, &mut ids, &mut type_ids);
        ids.extend_from_slice(a);
        type_ids.extend(std::iter::repeat_n(self.a_type, a.len()));
        push(&self.middle, &mut ids, &mut type_ids);
        ids.extend_from_slice(b);
        type_ids.extend(std::iter::repeat_n(self.b_type, b.len()));
        push(&self.suffix, &mut ids, &mut type_ids);
        EncodedWindow { ids, type_ids }
    }
}

/// How a premise of some length is cut for a hypothesis of some length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowPlan {
    /// Premise tokens per window.
    pub budget: usize,
    pub stride: usize,
    pub count: usize,
    premise_len: usize,
}

impl WindowPlan {
    /// The premise token range of window `k` (the last window ends at the premise's end).
    pub fn range(&self, k: usize) -> std::ops::Range<usize> {
        if self.count <= 1 {
            return 0..self.premise_len.min(self.budget);
        }
        let start = (k * self.stride).min(self.premise_len - self.budget);
        start..start + self.budget
    }
}

/// The NLI model's text side: tokenizer, template, window size and labels.
pub struct NliText {
    pub tokenizer: Tokenizer,
    pub template: PairTemplate,
    /// Window W in tokens (whole pair, special tokens included).
    pub window: usize,
    pub labels: Labels,
    pub pad_id: u32,
    /// Whether a text's ids are its sentences' ids one after the other (`tokens`).
    pub by_sentence: bool,
    /// The tokenizer's fast path for ASCII text when it is BERT's (`wordpiece`).
    fast: Option<AsciiWordPiece>,
}

impl NliText {
    /// Loads tokenizer.json and config.json of `dir`. `max_tokens`: the configured window
    /// (`None`: min(512, max_position_embeddings)).
    pub fn load(dir: &Path, max_tokens: Option<usize>) -> Result<NliText, String> {
        let d = dir.display().to_string();
        let cfg_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| format!("NLI model {d}: cannot read config.json: {e}"))?;
        let cfg: serde_json::Value = serde_json::from_str(&cfg_text)
            .map_err(|e| format!("NLI model {d}: config.json is not valid JSON: {e}"))?;
        let labels = Labels::from_config(&cfg, &d)?;
        let max_pos = cfg
            .get("max_position_embeddings")
            .and_then(|v| v.as_u64())
            .map(|v| v as usize);
        let window = match (max_tokens, max_pos) {
            (Some(w), Some(m)) if w > m => {
                return Err(format!(
                    "NLI window of {w} tokens (UQ_NLI_MAX_TOKENS / --nli-max-tokens) exceeds the model's \
                     max_position_embeddings {m} ({d}/config.json): use at most {m}"
                ))
            }
            (Some(w), _) => w,
            (None, Some(m)) => m.min(512),
            (None, None) => 512,
        };
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| format!("NLI model {d}: cannot load tokenizer.json: {e}"))?;
        let pad_id = super::tokenizer::pad_id(&tokenizer, Some(&cfg));
        tokenizer
            .with_truncation(None)
            .map_err(|e| format!("NLI model {d}: cannot disable truncation: {e}"))?;
        tokenizer.with_padding(None);
        let template =
            PairTemplate::from_tokenizer(&tokenizer).map_err(|e| format!("NLI model {d}: {e}"))?;
        if window < template.overhead() + 2 {
            return Err(format!(
                "NLI window of {window} tokens is too small for this model"
            ));
        }
        let by_sentence = super::tokenizer::splits_at_whitespace(&tokenizer);
        let fast = AsciiWordPiece::of(&tokenizer);
        Ok(NliText {
            by_sentence,
            fast,
            tokenizer,
            template,
            window,
            labels,
            pad_id,
        })
    }

    /// Token ids of `text` without special tokens (its plain ASCII words through the fast path,
    /// when the tokenizer has one).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, String> {
        match &self.fast {
            Some(fast) => fast.ids(text, &|part| self.tokenize_slow(part)),
            None => self.tokenize_slow(text),
        }
    }

    /// Whether the tokenizer has the fast path for ASCII text (`wordpiece`).
    pub fn has_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// Token ids of `text` without special tokens, from the `tokenizers` crate.
    pub fn tokenize_slow(&self, text: &str) -> Result<Vec<u32>, String> {
        match catch_unwind(AssertUnwindSafe(|| self.tokenizer.encode(text, false))) {
            Ok(Ok(enc)) => Ok(enc.get_ids().to_vec()),
            Ok(Err(e)) => Err(format!("cannot tokenize text of {} bytes: {e}", text.len())),
            Err(_) => Err(format!(
                "internal error: the tokenizer panicked on a text of {} bytes",
                text.len()
            )),
        }
    }

    /// Windows for a premise and a hypothesis of these lengths (in tokens). Errors when the
    /// hypothesis alone does not fit the window (it is never truncated).
    pub fn plan(&self, premise_len: usize, hyp_len: usize) -> Result<WindowPlan, String> {
        let oh = self.template.overhead();
        if premise_len + hyp_len + oh <= self.window {
            return Ok(WindowPlan {
                budget: premise_len,
                stride: premise_len.max(1),
                count: 1,
                premise_len,
            });
        }
        if hyp_len + oh >= self.window {
            return Err(format!(
                "a unit of {hyp_len} tokens does not fit the NLI window of {} tokens ({oh} special tokens and at \
                 least one premise token are needed): split it into shorter units, or raise UQ_NLI_MAX_TOKENS \
                 (at most the model's max_position_embeddings)",
                self.window
            ));
        }
        let budget = self.window - oh - hyp_len;
        let stride = (budget / 2).max(1);
        let count = 1 + (premise_len - budget).div_ceil(stride);
        Ok(WindowPlan {
            budget,
            stride,
            count,
            premise_len,
        })
    }

    /// All windows of one pair of token sequences.
    pub fn windows(&self, premise: &[u32], hyp: &[u32]) -> Result<Vec<EncodedWindow>, String> {
        let plan = self.plan(premise.len(), hyp.len())?;
        Ok((0..plan.count)
            .map(|k| self.template.build(&premise[plan.range(k)], hyp))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_in_model_order() {
        let c = serde_json::json!({"id2label": {"0": "contradiction", "1": "entailment", "2": "neutral"}});
        let l = Labels::from_config(&c, "d").unwrap();
        assert_eq!((l.entailment, l.neutral, l.contradiction), (1, 2, 0));
        let c = serde_json::json!({"id2label": {"2": "ENTAILMENT", "0": "CONTRADICTION", "1": "NEUTRAL"}});
        let l = Labels::from_config(&c, "d").unwrap();
        assert_eq!(l.names, vec!["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]);
        assert_eq!((l.entailment, l.neutral, l.contradiction), (2, 1, 0));
        let p = l.probs(&[0.0, 0.0, 10.0]).unwrap();
        assert!(p.entailment > 0.99);
        assert!((p.entailment + p.neutral + p.contradiction - 1.0).abs() < 1e-12);
        let bad = serde_json::json!({"id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}});
        assert!(Labels::from_config(&bad, "d")
            .unwrap_err()
            .contains("entail"));
        let two = serde_json::json!({"id2label": {"0": "entailment", "1": "not_entailment"}});
        assert!(Labels::from_config(&two, "d").is_err());
        assert!(Labels::from_config(&serde_json::json!({}), "d")
            .unwrap_err()
            .contains("id2label"));
        assert!(l.probs(&[1.0, 2.0]).is_err());
    }

    #[test]
    fn softmax_is_stable() {
        let p = softmax(&[1000.0, 0.0, -1000.0]);
        assert!((p[0] - 1.0).abs() < 1e-12 && p[2] >= 0.0);
        let p = softmax(&[f32::NAN, 0.0, 0.0]);
        assert!(p.iter().all(|x| (*x - 1.0 / 3.0).abs() < 1e-12));
    }
}
