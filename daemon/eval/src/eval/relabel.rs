//! The labels of a user's labels table ([`super::labels`]) put on one run's scored units: per
//! answer, its labelled sentences aligned to its units (`uq_core::evaluation::align`), with
//! the tallies that `uqd eval` prints and writes to `uq_eval.notes`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Value};
use uq_core::evaluation::align::{by_index, by_text, Counts};

use super::labels::LabelRows;
use uqd::report::UnitRow;

/// How one run's units were matched to the labels table.
#[derive(Debug, Clone, Default)]
pub struct Matching {
    pub table: String,
    pub key: String,
    pub by_index: bool,
    /// The index column (else row order).
    pub index: Option<String>,
    pub counts: Counts,
    /// Scored answers whose key has no labelled sentence.
    pub answers_without_labels: usize,
    /// Keys of the labels table this run did not score.
    pub keys_not_scored: usize,
    pub skipped: usize,
    /// A labelled key not scored and a scored key without labels, for the error when nothing
    /// matched.
    pub example_keys: (Option<String>, Option<String>),
}

impl Matching {
    /// The note printed and written to `uq_eval.notes`.
    pub fn note(&self) -> String {
        let c = &self.counts;
        let rules = if self.by_index {
            match &self.index {
                Some(i) => {
                    format!("by index: {i} = uq_unit.position, the table has no text column")
                }
                None => "by index: each key's row order = uq_unit.position, the table has no text \
                         or index column"
                    .into(),
            }
        } else {
            format!(
                "{} by text, {} by containment: {} inside one labelled sentence, {} spanning \
                 several",
                c.text,
                c.containment(),
                c.inside,
                c.spanning
            )
        };
        let mut s = format!(
            "labels from table {} by {}: {} of {} units matched ({rules}); left unmatched (left \
             out): {} of {} labelled sentences, {}",
            self.table,
            self.key,
            c.matched(),
            c.units(),
            c.sentences_unmatched,
            c.sentences,
            plural(c.units_unmatched, "unit")
        );
        if self.answers_without_labels > 0 {
            s.push_str(&format!(
                "; {} without labels",
                plural(self.answers_without_labels, "scored answer")
            ));
        }
        if self.keys_not_scored > 0 {
            s.push_str(&format!(
                "; {} not scored in this run",
                plural(self.keys_not_scored, "labelled key")
            ));
        }
        if self.skipped > 0 {
            s.push_str(&format!(
                "; {} with a NULL label skipped",
                plural(self.skipped, "row")
            ));
        }
        s
    }

    pub fn to_json(&self) -> Value {
        let c = &self.counts;
        json!({
            "labels_table": self.table,
            "key": self.key,
            "rule": if self.by_index { "index" } else { "text" },
            "matched": c.matched(),
            "by_text": c.text,
            "by_containment": c.containment(),
            "inside": c.inside,
            "spanning": c.spanning,
            "by_index": c.index,
            "units": c.units(),
            "units_unmatched": c.units_unmatched,
            "sentences": c.sentences,
            "sentences_unmatched": c.sentences_unmatched,
            "answers_without_labels": self.answers_without_labels,
            "keys_not_scored": self.keys_not_scored,
            "null_labels_skipped": self.skipped,
        })
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The label of each (answer id, position) of `units` (one run and granularity, every scorer's
/// rows) that a labelled sentence matched, and how.
pub fn relabel(
    table: &str,
    units: &[&UnitRow],
    rows: &LabelRows,
) -> (HashMap<(i64, i64), bool>, Matching) {
    // each answer's distinct units, by position
    let mut answers: BTreeMap<i64, (&str, BTreeMap<i64, &str>)> = BTreeMap::new();
    for u in units {
        answers
            .entry(u.answer_id)
            .or_insert_with(|| (u.source_key.as_str(), BTreeMap::new()))
            .1
            .entry(u.position)
            .or_insert(u.unit.as_str());
    }
    let mut m = Matching {
        table: table.to_string(),
        key: rows.key.clone(),
        by_index: !rows.has_text,
        index: rows.index.clone(),
        skipped: rows.skipped,
        ..Matching::default()
    };
    let mut labels = HashMap::new();
    let mut scored_keys = BTreeSet::new();
    for (answer_id, (key, positions)) in &answers {
        scored_keys.insert(*key);
        let Some(sentences) = rows.by_key.get(*key) else {
            m.answers_without_labels += 1;
            m.example_keys.1.get_or_insert_with(|| key.to_string());
            continue;
        };
        let pos: Vec<i64> = positions.keys().copied().collect();
        let aligned = if rows.has_text {
            let texts: Vec<&str> = positions.values().copied().collect();
            let s: Vec<(&str, bool)> = sentences
                .iter()
                .map(|s| (s.text.as_deref().unwrap_or(""), s.label))
                .collect();
            by_text(&texts, &s)
        } else {
            let s: Vec<(i64, bool)> = sentences.iter().map(|s| (s.index, s.label)).collect();
            by_index(&pos, &s)
        };
        m.counts.add(&aligned, sentences.len());
        for (p, a) in pos.iter().zip(&aligned.units) {
            if let Some((label, _)) = a {
                labels.insert((*answer_id, *p), *label);
            }
        }
    }
    let not_scored: Vec<&String> = rows
        .by_key
        .keys()
        .filter(|k| !scored_keys.contains(k.as_str()))
        .collect();
    m.keys_not_scored = not_scored.len();
    m.example_keys.0 = not_scored.first().map(|k| k.to_string());
    (labels, m)
}

/// The error when no run's units matched (`head`: what found nothing): the keys that do not
/// meet, or each run's tallies.
pub fn nothing_matched(head: &str, unmatched: &[(i64, String, Matching)]) -> String {
    if let Some(m) = unmatched
        .iter()
        .map(|x| &x.2)
        .find(|m| m.counts.sentences == 0)
    {
        let (labelled, scored) = &m.example_keys;
        let q = |k: &Option<String>| {
            k.as_deref()
                .map(|k| format!(" (e.g. '{k}')"))
                .unwrap_or_default()
        };
        return format!(
            "{head}: none of its {} keys in column {}{} is the key of a scored row{} \
             (uq_answer.source_key: the job's id_column, else rowid): name the column that \
             holds it with --labels-key COL",
            m.keys_not_scored,
            m.key,
            q(labelled),
            q(scored)
        );
    }
    let notes: Vec<String> = unmatched
        .iter()
        .map(|(run, g, m)| format!("run {run}, {g} level: {}", m.note()))
        .collect();
    format!(
        "{head} ({}): check that --labels-text names the column of the sentences' text, and that \
         TABLE was scored at sentence level",
        notes.join("; ")
    )
}
