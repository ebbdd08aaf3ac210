//! What every scorer family reads: one request's [`Context`] (a leaf, so that the families
//! need nothing from their parent module), and [`reshape`].

use uq_core::options::ScoreOptions;

use crate::engine::Engine;
use crate::role_llms::LlmService;

/// What every scorer family draws its evidence from: one request's units and samples.
pub struct Context<'a> {
    pub engine: &'a Engine,
    pub llm: &'a LlmService,
    /// The original answer (a node of the graph scorers' graph, the preceding text of unit-QA
    /// questions).
    pub response: &'a str,
    /// The response's units (sentences or claims).
    pub units: &'a [String],
    /// The sampled answers in use.
    pub samples: &'a [String],
    /// Each sample's units: given when a matched-unit scorer is asked for.
    pub sample_units: Option<&'a [Vec<String>]>,
    pub opts: &'a ScoreOptions,
}

impl<'a> Context<'a> {
    /// Where this request's NLI pairs go: the NLI model, or the LLM of option `nli_llm`.
    pub fn nli(&self) -> Result<crate::judge::Nli<'a>, String> {
        crate::judge::Nli::new(self.engine, self.llm, self.opts)
    }
}

/// `flat[i * cols + j]` → `out[i][j]`.
pub(crate) fn reshape<T>(flat: Vec<T>, rows: usize, cols: usize) -> Vec<Vec<T>> {
    let mut it = flat.into_iter();
    (0..rows)
        .map(|_| it.by_ref().take(cols).collect())
        .collect()
}
