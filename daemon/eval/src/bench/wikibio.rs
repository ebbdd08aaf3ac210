//! The SelfCheckGPT WikiBio record (shared/data/selfcheck_wikibio_dev*.jsonl) as the benchmarks
//! read it.

use serde::Deserialize;

/// One passage: the response, its samples, its annotated sentences and (in the dev file) the
/// Wikipedia text it is about.
#[derive(Deserialize)]
pub(super) struct WikiBio {
    pub gpt3_text: String,
    pub gpt3_text_samples: Vec<String>,
    pub gpt3_sentences: Vec<String>,
    pub annotation: Vec<String>,
    pub wiki_bio_text: Option<String>,
}
