//! Uncertainty-aware decoding (UAD, §3.4; docs/reference.md, "Uncertainty-aware decoding"):
//! the daemon's `uad` op, shared by `uad_claims` (the claims and their fate) and `uad_filter`
//! (the refined answer). Every LLM role option may name an LLM registered in `temp.uq_llms`
//! (options.rs).

use uq_core::protocol::UadResult;

use crate::client::{self, Client};
use crate::options::AnswerArgs;

/// The daemon's `uad` op on the answer in `a`; the reply's notes (the NLI judge's, with its
/// unparsed pairs), what verification removed and the retrieval's notes (option `sources`
/// naming an FTS5 table) become the notes of `uq_debug()`.
pub fn uad(client: &Client, func: &str, a: AnswerArgs) -> Result<UadResult, String> {
    let o = a.options;
    let r = client
        .uad(a.response, a.samples, o.map)
        .map_err(|e| o.used.error(func, e))?;
    let notes: Vec<String> = r
        .notes
        .iter()
        .cloned()
        .chain(r.removed_sentences.iter().map(|s| {
            format!("{func}: verification removed {s:?} (not entailed by the kept claims)")
        }))
        .chain(o.notes.iter().cloned())
        .collect();
    client::set_last_notes(&notes);
    Ok(r)
}
