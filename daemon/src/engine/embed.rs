//! Sentence and token embeddings (all-MiniLM-L6-v2 or any BERT-like encoder exported to ONNX).
//!
//! Sentence embedding = mean of `last_hidden_state` over the attention mask, L2-normalised
//! (sentence-transformers' pipeline). Token embeddings = `last_hidden_state` rows of the
//! non-special tokens, not normalised.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::config::Config;

use super::onnx::{OnnxModel, SeqRef};

pub struct EmbedModel {
    pub(crate) tokenizer: Tokenizer,
    model: Mutex<OnnxModel>,
    max_batch: usize,
    pub path: String,
    pub max_tokens: usize,
}

impl EmbedModel {
    pub fn load(
        env: &ort::environment::Environment,
        dir: &Path,
        cfg: &Config,
    ) -> Result<EmbedModel, String> {
        let d = dir.display().to_string();
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| format!("embedding model {d}: cannot load tokenizer.json: {e}"))?;
        let model_cfg: Option<serde_json::Value> = std::fs::read_to_string(dir.join("config.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let max_pos = model_cfg
            .as_ref()
            .and_then(|c| c.get("max_position_embeddings"))
            .and_then(|v| v.as_u64())
            .map(|v| v as usize)
            .unwrap_or(512);
        let pad_id = super::tokenizer::pad_id(&tokenizer, model_cfg.as_ref());
        let max_tokens = cfg.embed_max_tokens.min(max_pos);
        // The file may bake in truncation/padding (128, Fixed 128): override both.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| {
                format!("embedding model {d}: cannot set truncation to {max_tokens} tokens: {e}")
            })?;
        let env_model = OnnxModel::load(
            env,
            &dir.join("model.onnx"),
            cfg.threads,
            cfg.device,
            "last_hidden_state",
            pad_id,
        )?;
        Ok(EmbedModel {
            tokenizer,
            model: Mutex::new(env_model),
            max_batch: cfg
                .max_batch
                .unwrap_or(super::defaults::CPU.max_batch)
                .max(1),
            path: d,
            max_tokens,
        })
    }

    pub fn device(&self) -> crate::config::Device {
        self.model.lock().unwrap_or_else(|e| e.into_inner()).device
    }

    fn encode(&self, text: &str) -> Result<Encoding, String> {
        match catch_unwind(AssertUnwindSafe(|| self.tokenizer.encode(text, true))) {
            Ok(Ok(enc)) => Ok(enc),
            Ok(Err(e)) => Err(format!("cannot tokenize text of {} bytes: {e}", text.len())),
            Err(_) => Err(format!(
                "internal error: the tokenizer panicked on a text of {} bytes",
                text.len()
            )),
        }
    }

    /// Runs the model over `texts` (sorted by length, batches of `max_batch`) and calls `f(i,
    /// encoding, hidden)` for each text, `hidden` being its `len × H` rows.
    fn forward_each<T>(
        &self,
        texts: &[&str],
        mut f: impl FnMut(&Encoding, &[f32], usize) -> T,
    ) -> Result<Vec<T>, String> {
        let encs: Vec<Encoding> = texts
            .iter()
            .map(|t| self.encode(t))
            .collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..encs.len()).collect();
        order.sort_by_key(|&i| encs[i].len());
        let mut out: Vec<Option<T>> = (0..encs.len()).map(|_| None).collect();
        for chunk in order.chunks(self.max_batch) {
            let seqs: Vec<SeqRef<'_>> = chunk
                .iter()
                .map(|&i| SeqRef {
                    ids: encs[i].get_ids(),
                    type_ids: encs[i].get_type_ids(),
                })
                .collect();
            let res = {
                let m = self.model.lock().unwrap_or_else(|e| e.into_inner());
                catch_unwind(AssertUnwindSafe(|| m.run(&seqs))).map_err(|_| {
                    "internal error: the embedding forward pass panicked".to_string()
                })??
            };
            if res.shape.len() != 3 || res.shape[0] != chunk.len() || res.shape[2] == 0 {
                return Err(format!(
                    "embedding model {} output has shape {:?}; expected [batch, tokens, hidden]",
                    self.path, res.shape
                ));
            }
            let (l, h) = (res.shape[1], res.shape[2]);
            for (row, &i) in chunk.iter().enumerate() {
                let n = encs[i].len().min(l);
                let hidden = &res.data[row * l * h..row * l * h + n * h];
                out[i] = Some(f(&encs[i], hidden, h));
            }
        }
        out.into_iter()
            .map(|o| o.ok_or_else(|| "internal error: missing embedding".to_string()))
            .collect()
    }

    /// Mean-pooled, L2-normalised sentence embeddings.
    pub fn sentence(&self, texts: &[&str]) -> Result<Vec<Arc<Vec<f32>>>, String> {
        self.forward_each(texts, |enc, hidden, h| {
            let mask = enc.get_attention_mask();
            let mut v = vec![0f64; h];
            let mut n = 0f64;
            for (t, row) in hidden.chunks(h).enumerate() {
                if mask.get(t).copied().unwrap_or(1) == 0 {
                    continue;
                }
                n += 1.0;
                for (a, &x) in v.iter_mut().zip(row) {
                    *a += x as f64;
                }
            }
            let n = n.max(1e-9);
            v.iter_mut().for_each(|a| *a /= n);
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
            Arc::new(v.into_iter().map(|x| (x / norm) as f32).collect())
        })
    }

    /// Final-layer token embeddings of the non-special tokens (not normalised).
    pub fn tokens(&self, texts: &[&str]) -> Result<Vec<Arc<Vec<Vec<f32>>>>, String> {
        self.forward_each(texts, |enc, hidden, h| {
            let special = enc.get_special_tokens_mask();
            let rows: Vec<Vec<f32>> = hidden
                .chunks(h)
                .enumerate()
                .filter(|(t, _)| special.get(*t).copied().unwrap_or(0) == 0)
                .map(|(_, r)| r.to_vec())
                .collect();
            Arc::new(rows)
        })
    }

    /// Number of tokens (special ones excluded) the model sees for `text` (after truncation).
    pub fn count_tokens(&self, text: &str) -> Result<usize, String> {
        let enc = self.encode(text)?;
        Ok(enc
            .get_special_tokens_mask()
            .iter()
            .filter(|&&s| s == 0)
            .count())
    }
}
