//! Uncertainty-aware decoding (UAD, §3.4; docs/reference.md, "Uncertainty-aware decoding"):
//! the daemon's `uad` op, shared by `uad_claims` (the claims and their fate) and `uad_filter`
//! (the refined answer). Every LLM role option may name an LLM registered in `temp.uq_llms`
//! (options.rs). The reply's warnings (kept claims the reconstruction lost, claims by the
//! bundled SmolLM2) go to `uq_debug()` and to `uad_claims`' column `warnings`; `uad_filter`
//! shows the bundled SmolLM2's, and the note that it filtered sentences for want of a capable
//! LLM, on stderr, once per connection ([`show_warnings`]).

use uq_core::protocol::{UadResult, UAD_BUNDLED_LLM_WARNING, UAD_SENTENCE_DEFAULT_NOTE};

use crate::client::{self, Client};
use crate::options::AnswerArgs;

/// The daemon's `uad` op on the answer in `a`; the reply's warnings and notes (the NLI judge's,
/// with its unparsed pairs), what verification removed and the retrieval's notes (option
/// `sources` naming an FTS5 table) become the notes of `uq_debug()`.
pub fn uad(client: &Client, func: &str, a: AnswerArgs) -> Result<UadResult, String> {
    let o = a.options;
    let r = client
        .uad(a.response, a.samples, o.map)
        .map_err(|e| o.used.error(func, e))?;
    let notes: Vec<String> = r
        .warnings
        .iter()
        .map(|w| warning(func, w))
        .chain(r.notes.iter().cloned())
        .chain(r.removed_sentences.iter().filter(|_| r.verified).map(|s| {
            format!("{func}: verification removed {s:?} (not entailed by the kept claims)")
        }))
        .chain(removed_by_filter(func, &r))
        .chain(o.notes.iter().cloned())
        .collect();
    client::set_last_notes(&notes);
    Ok(r)
}

/// The sentence filter's note: which of the answer's sentences it removed (none: no note).
fn removed_by_filter(func: &str, r: &UadResult) -> Option<String> {
    if r.verified || r.removed_sentences.is_empty() {
        return None;
    }
    let listed: Vec<String> = r
        .removed_sentences
        .iter()
        .map(|s| format!("{s:?}"))
        .collect();
    Some(format!(
        "{func}: the sentence filter removed {} of {} sentences (score below the threshold {}): {}",
        r.removed_sentences.len(),
        r.claims.len(),
        r.threshold
            .map_or_else(|| "none".into(), |t| format!("{t:.3}")),
        listed.join(", ")
    ))
}

/// A warning of `func` as `uq_debug()` and stderr show it.
fn warning(func: &str, w: &str) -> String {
    format!("{func}: warning: {w}")
}

/// The warning about claims by the bundled SmolLM2, on stderr (where the `sqlite3` shell, a
/// script and a server's log show it) the first time this connection meets it; the other
/// warnings, one per answer, stay in `uq_debug()` (and `uad_claims`' column `warnings`).
pub fn show_warnings(client: &Client, func: &str, r: &UadResult) {
    for w in &r.warnings {
        if w == UAD_BUNDLED_LLM_WARNING && client.first_time(w) {
            eprintln!("{}", warning(func, w));
        }
    }
    for n in &r.notes {
        if n == UAD_SENTENCE_DEFAULT_NOTE && client.first_time(n) {
            eprintln!("{func}: {n}");
        }
    }
}
