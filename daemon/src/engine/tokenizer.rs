//! A model's tokenizer settings that its loaders share (NLI and embedding).

/// The padding token id of a model: the tokenizer's padding setting, else `pad_token_id` of its
/// config.json, else the `[PAD]` / `<pad>` token, else 0.
pub fn pad_id(tokenizer: &tokenizers::Tokenizer, config: Option<&serde_json::Value>) -> u32 {
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
