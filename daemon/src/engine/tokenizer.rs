//! A model's tokenizer settings that its loaders share (NLI and embedding), and what the
//! tokenizer's pipeline allows (`splits_at_whitespace`, read by the NLI loader and `tokens`).

use tokenizers::{ModelWrapper, NormalizerWrapper, PreTokenizerWrapper, Tokenizer};

/// The padding token id of a model: the tokenizer's padding setting, else `pad_token_id` of its
/// config.json, else the `[PAD]` / `<pad>` token, else 0.
pub fn pad_id(tokenizer: &Tokenizer, config: Option<&serde_json::Value>) -> u32 {
    tokenizer
        .get_padding()
        .map(|p| p.pad_id)
        .or_else(|| {
            config
                .and_then(|c| c.get("pad_token_id"))
                .and_then(|v| v.as_u64())
                .map(|v| v as u32)
        })
        .or_else(|| {
            ["[PAD]", "<pad>"]
                .iter()
                .find_map(|t| tokenizer.token_to_id(t))
        })
        .unwrap_or(0)
}

/// Whether `tok` gives the ids of `A B` (A and B separated by whitespace) as those of `A` then
/// those of `B` (the note of `tokens`, which then tokenises the NLI texts sentence by sentence).
pub fn splits_at_whitespace(tok: &Tokenizer) -> bool {
    let normalizer = matches!(
        tok.get_normalizer(),
        None | Some(NormalizerWrapper::BertNormalizer(_))
    );
    let pre = matches!(
        tok.get_pre_tokenizer(),
        Some(
            PreTokenizerWrapper::BertPreTokenizer(_)
                | PreTokenizerWrapper::Whitespace(_)
                | PreTokenizerWrapper::WhitespaceSplit(_)
        )
    );
    let model = matches!(
        tok.get_model(),
        ModelWrapper::WordPiece(_) | ModelWrapper::WordLevel(_)
    );
    let added = tok
        .get_added_tokens_decoder()
        .values()
        .all(|t| !t.content.is_empty() && !t.content.chars().any(char::is_whitespace));
    normalizer && pre && model && added
}
