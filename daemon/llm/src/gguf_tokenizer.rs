//! The local model's tokenizer, rebuilt from the vocabulary embedded in the GGUF file.
//!
//! A GGUF of a GPT-2-style BPE model carries `tokenizer.ggml.tokens` (id → byte-level token),
//! `tokenizer.ggml.merges` ("a b" pairs, by rank), `tokenizer.ggml.token_type` (3 = control) and
//! `tokenizer.ggml.pre` (the pre-tokenizer). For SmolLM2 (`pre = "smollm"`) the Hugging Face
//! tokenizer is: no normalizer; pre-tokenizer `Sequence[Digits(individual), ByteLevel(no prefix
//! space, GPT-2 regex)]`; BPE; ByteLevel decoder — the same split as llama.cpp's `smollm`
//! pre-tokenizer (`\p{N}`, then the GPT-2 regex). No tokenizer.json needs to be fetched.
//!
//! Control tokens (`<|im_start|>`, `<|im_end|>`, ...) are NOT registered as added tokens: the chat
//! template inserts their ids directly, so a user text containing "<|im_end|>" is tokenized as
//! plain text and cannot break out of its turn.

use std::collections::HashMap;

use candle_core::quantized::gguf_file::Value;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::Tokenizer;

/// Tokenizer and special ids of a GGUF model.
pub struct GgufTokenizer {
    tokenizer: Tokenizer,
    control: Vec<bool>,
    im_start: Option<u32>,
    im_end: Option<u32>,
    eos: Option<u32>,
    default_system: Option<String>,
}

fn md<'a>(metadata: &'a HashMap<String, Value>, key: &str) -> Result<&'a Value, String> {
    metadata
        .get(key)
        .ok_or_else(|| format!("the GGUF has no `{key}` metadata (not a BPE chat model?)"))
}

/// The pre-tokenizer of `tokenizer.ggml.pre` (GPT-2-style byte-level BPE models only).
fn pre_tokenizer(metadata: &HashMap<String, Value>) -> Result<PreTokenizerWrapper, String> {
    let model = md(metadata, "tokenizer.ggml.model")?
        .to_string()
        .map_err(|e| e.to_string())?;
    if model != "gpt2" {
        return Err(format!(
            "the GGUF's tokenizer is `{model}`; only GPT-2-style byte-level BPE (`gpt2`, as SmolLM2) is supported"
        ));
    }
    let pre = metadata
        .get("tokenizer.ggml.pre")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_else(|| "default".into());
    let byte_level = ByteLevel::new(false, true, true);
    let pre_tokenizer: PreTokenizerWrapper = match pre.as_str() {
        "smollm" => Sequence::new(vec![Digits::new(true).into(), byte_level.into()]).into(),
        "default" | "gpt2" | "gpt-2" => byte_level.into(),
        other => {
            return Err(format!(
                "the GGUF's pre-tokenizer `{other}` is not supported (supported: smollm, gpt2, default)"
            ))
        }
    };
    Ok(pre_tokenizer)
}

/// The vocabulary of `tokenizer.ggml.tokens` (token → id) and, per id, whether it is a control
/// token (`tokenizer.ggml.token_type`).
fn vocab(metadata: &HashMap<String, Value>) -> Result<(Vocab, Vec<bool>), String> {
    let tokens = md(metadata, "tokenizer.ggml.tokens")?
        .to_vec()
        .map_err(|e| e.to_string())?;
    let mut vocab = Vocab::default();
    let mut control = Vec::with_capacity(tokens.len());
    for (id, t) in tokens.iter().enumerate() {
        let s = t
            .to_string()
            .map_err(|e| format!("token {id} is not a string: {e}"))?;
        vocab.insert(s.clone(), id as u32);
        control.push(false);
    }
    if let Some(types) = metadata
        .get("tokenizer.ggml.token_type")
        .and_then(|v| v.to_vec().ok())
    {
        for (id, t) in types.iter().enumerate().take(control.len()) {
            // llama.cpp token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
            control[id] = matches!(t.to_i32().or_else(|_| t.to_u32().map(|v| v as i32)), Ok(3));
        }
    }
    Ok((vocab, control))
}

/// The BPE merges of `tokenizer.ggml.merges`, by rank.
fn merges(metadata: &HashMap<String, Value>) -> Result<Vec<(String, String)>, String> {
    let merges_v = md(metadata, "tokenizer.ggml.merges")?
        .to_vec()
        .map_err(|e| e.to_string())?;
    let mut merges = Vec::with_capacity(merges_v.len());
    for (i, m) in merges_v.iter().enumerate() {
        let s = m
            .to_string()
            .map_err(|e| format!("merge {i} is not a string: {e}"))?;
        let (a, b) = s
            .split_once(' ')
            .ok_or_else(|| format!("merge {i} `{s}` is not `a b`"))?;
        merges.push((a.to_string(), b.to_string()));
    }
    Ok(merges)
}

impl GgufTokenizer {
    /// Reads only the metadata of the GGUF file at `path` and builds its tokenizer.
    pub fn from_gguf_file(path: &std::path::Path) -> Result<Self, String> {
        let mut f = std::io::BufReader::new(
            std::fs::File::open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?,
        );
        // candle's reader panics on some corrupt headers (a `general.alignment` of 0 divides by
        // zero): a panic is a bad file too.
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            candle_core::quantized::gguf_file::Content::read(&mut f)
        }))
        .map_err(|_| format!("{} is not a readable GGUF (corrupt header)", path.display()))?;
        let content =
            read.map_err(|e| format!("{} is not a readable GGUF: {e}", path.display()))?;
        Self::from_metadata(&content.metadata)
    }

    /// Builds the tokenizer from GGUF metadata.
    pub fn from_metadata(metadata: &HashMap<String, Value>) -> Result<Self, String> {
        let pre_tokenizer = pre_tokenizer(metadata)?;
        let (vocab, control) = vocab(metadata)?;
        let merges = merges(metadata)?;
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .map_err(|e| format!("cannot build the BPE model from the GGUF vocabulary: {e}"))?;
        let mut tokenizer = Tokenizer::new(bpe);
        tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
        tokenizer.with_decoder(Some(ByteLevel::default()));

        let id_of = |s: &str| tokenizer.token_to_id(s);
        let eos = metadata
            .get("tokenizer.ggml.eos_token_id")
            .and_then(|v| v.to_u32().ok());
        let default_system = metadata
            .get("tokenizer.chat_template")
            .and_then(|v| v.to_string().ok())
            .and_then(|t| default_system_prompt(t));
        Ok(GgufTokenizer {
            im_start: id_of("<|im_start|>"),
            im_end: id_of("<|im_end|>"),
            eos,
            control,
            default_system,
            tokenizer,
        })
    }

    /// Token ids of plain `text` (no special tokens recognised).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| format!("cannot tokenize: {e}"))
    }

    /// Text of `ids`, control tokens left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String, String> {
        let kept: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&id| !self.is_control(id))
            .collect();
        self.tokenizer
            .decode(&kept, false)
            .map_err(|e| format!("cannot detokenize: {e}"))
    }

    /// Whether `id` is a control token (end of turn, start of turn, end of text...).
    pub fn is_control(&self, id: u32) -> bool {
        self.control.get(id as usize).copied().unwrap_or(false) || Some(id) == self.eos
    }

    pub fn vocab_size(&self) -> usize {
        self.control.len()
    }

    /// ChatML prompt ids: `<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n`.
    /// Without `system`, the GGUF chat template's default system prompt is used (as the template
    /// itself does when the first message is not a system message).
    pub fn chat_prompt(&self, system: Option<&str>, user: &str) -> Result<Vec<u32>, String> {
        let (Some(start), Some(end)) = (self.im_start, self.im_end) else {
            return Err("the GGUF vocabulary has no <|im_start|>/<|im_end|>: it is not a ChatML model; use raw prompts".into());
        };
        let mut ids = Vec::new();
        let system = system
            .map(str::to_string)
            .or_else(|| self.default_system.clone());
        let turn = |role: &str, content: &str, ids: &mut Vec<u32>| -> Result<(), String> {
            ids.push(start);
            ids.extend(self.encode(&format!("{role}\n{content}"))?);
            ids.push(end);
            ids.extend(self.encode("\n")?);
            Ok(())
        };
        if let Some(s) = system {
            turn("system", &s, &mut ids)?;
        }
        turn("user", user, &mut ids)?;
        ids.push(start);
        ids.extend(self.encode("assistant\n")?);
        Ok(ids)
    }
}

/// The default system prompt written into a ChatML template
/// (`...'<|im_start|>system\n' + DEFAULT + '<|im_end|>\n'...` in SmolLM2's).
fn default_system_prompt(template: &str) -> Option<String> {
    let marker = "<|im_start|>system\\n";
    let marker_raw = "<|im_start|>system\n";
    let (start, len) = template
        .find(marker)
        .map(|i| (i, marker.len()))
        .or_else(|| template.find(marker_raw).map(|i| (i, marker_raw.len())))?;
    let rest = &template[start + len..];
    let end = rest.find("<|im_end|>")?;
    let s = &rest[..end];
    (!s.is_empty() && !s.contains(['{', '}', '\'', '+'])).then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_system_from_template() {
        let t = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}";
        assert_eq!(
            default_system_prompt(t).as_deref(),
            Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")
        );
        assert_eq!(
            default_system_prompt("{{'<|im_start|>' + message['role'] + '\\n'}}"),
            None
        );
    }
}
