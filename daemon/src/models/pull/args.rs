//! What `uqd models pull` is asked for: the model's kind and the resolved arguments.

use std::path::PathBuf;

/// What the pulled model is for: which files it needs and which variable takes its directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Nli,
    Embedding,
}

impl Kind {
    pub fn parse(s: &str) -> Result<Kind, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "nli" => Ok(Kind::Nli),
            "embedding" | "embed" => Ok(Kind::Embedding),
            other => Err(format!(
                "--kind {other:?} is not a model kind: use nli (the default) or embedding"
            )),
        }
    }

    pub(super) fn variable(self) -> &'static str {
        match self {
            Kind::Nli => "UQ_NLI_MODEL",
            Kind::Embedding => "UQ_EMBED_MODEL",
        }
    }
}

/// Everything `pull` needs, resolved from flags and the environment by the caller.
#[derive(Clone, Debug)]
pub struct PullArgs {
    pub repo: String,
    pub revision: String,
    pub kind: Kind,
    /// The hub's root URL (`HF_ENDPOINT`).
    pub endpoint: String,
    /// `HF_TOKEN`, when set and not blank.
    pub token: Option<String>,
    /// Where models go: `<models_dir>/<repo>/<revision>`.
    pub models_dir: PathBuf,
    /// The ONNX file to take (e.g. `onnx/model_quantized.onnx`) instead of `model.onnx`, else
    /// `onnx/model.onnx`.
    pub onnx_file: Option<String>,
}
