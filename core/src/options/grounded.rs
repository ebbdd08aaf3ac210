//! Grounded checking options (beyond the paper; [`crate::score::grounded`]): the sources a unit
//! is checked against (`sources`), how their premises are selected (`source_premise`), when the
//! sources decide a unit (`source_entailment_threshold`, `source_contradiction_threshold`), and
//! the sample scorer `grounded_fallback` falls back to where they are silent (`fallback_scorer`).

use serde_json::Value;

use super::values::{ranged, string_option};
use crate::json::type_name;
use crate::retrieve::FtsSpec;
use crate::score::grounded::{Join, Passage, SourceSelection, Thresholds, DEFAULT_THRESHOLDS};
use crate::score::premise::{Premise, Rank};
use crate::scorers::{Family, Scorer};

/// The default of `source_premise`: the 5 sentences of all the sources most relevant to the
/// unit, by shared words (on half of WikiBio dev, top 5 and top 1 led; top 5 held on the other
/// half: `uqd bench grounded --source-premise top3,top1,top2,top5,whole,top3_embedding`),
/// joined per passage.
pub const DEFAULT_SOURCE_PREMISE: SourceSelection = SourceSelection {
    premise: Premise::TopK {
        k: 5,
        rank: Rank::Lexical,
    },
    join: Join::Passage,
};

const EXAMPLE: &str = r#""sources":["First passage.","Second passage."]"#;

/// Option `sources`.
#[derive(Debug, Clone, PartialEq)]
pub enum Sources {
    /// Given passages: a text, or a JSON array of texts or of `{"id", "text"}` objects.
    Passages(Vec<Passage>),
    /// An FTS5 table of the database the call or job runs on ([`crate::retrieve`]): resolved
    /// into passages by the extension (SQL calls) or by the job before the daemon scores.
    Fts(FtsSpec),
}

impl Sources {
    /// Reads option `sources`.
    pub fn parse(v: &Value) -> Result<Sources, String> {
        match v {
            Value::String(s) => Ok(Sources::Passages(vec![Passage {
                id: None,
                text: s.clone(),
            }])),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| passage(i, item))
                .collect::<Result<Vec<_>, _>>()
                .map(Sources::Passages),
            Value::Object(o) if o.contains_key("fts") => FtsSpec::parse(o).map(Sources::Fts),
            Value::Object(_) => Err(format!(
                "option sources: an object names an FTS5 table to retrieve from, e.g. \
                 \"sources\":{{\"fts\":\"docs\",\"k\":5}}; to pass passages use a text or an \
                 array, e.g. {EXAMPLE}"
            )),
            other => Err(format!(
                "option sources must be a text, a JSON array of passages or {{\"fts\": table}}, \
                 e.g. {EXAMPLE}; got {}",
                type_name(other)
            )),
        }
    }

    /// The passages; `None` for an FTS5 table not yet resolved.
    pub fn passages(&self) -> Option<&[Passage]> {
        match self {
            Sources::Passages(p) => Some(p),
            Sources::Fts(_) => None,
        }
    }
}

/// One element of a `sources` array: a text, or `{"text": …, "id": …}`.
fn passage(i: usize, v: &Value) -> Result<Passage, String> {
    let bad = |what: &str| {
        format!(
            "option sources[{i}] is {what}: each passage must be a text or {{\"id\":\"doc-1\",\"text\":\"…\"}}, e.g. {EXAMPLE}"
        )
    };
    match v {
        Value::String(s) => Ok(Passage {
            id: None,
            text: s.clone(),
        }),
        Value::Object(o) => {
            if let Some(k) = o.keys().find(|k| !["id", "text"].contains(&k.as_str())) {
                return Err(bad(&format!("an object with the unknown key {k:?}")));
            }
            let text = o
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("an object without a text"))?;
            let id = match o.get("id") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(other) => {
                    return Err(bad(&format!("an object whose id is {}", type_name(other))))
                }
            };
            Ok(Passage {
                id,
                text: text.to_string(),
            })
        }
        other => Err(bad(type_name(other))),
    }
}

/// The grounded checking options.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundedOptions {
    /// Option `sources`.
    pub sources: Option<Sources>,
    /// Option `source_premise`: `"whole"` (every passage whole, as one premise each) or
    /// `{"top_k": K, "rank": …, "join": …}` (default [`DEFAULT_SOURCE_PREMISE`]).
    pub source_premise: SourceSelection,
    /// Options `source_entailment_threshold` and `source_contradiction_threshold`.
    pub thresholds: Thresholds,
    /// Option `fallback_scorer`: the sample scorer of `grounded_fallback` (default
    /// `entailment`).
    pub fallback_scorer: Scorer,
}

impl Default for GroundedOptions {
    fn default() -> Self {
        GroundedOptions {
            sources: None,
            source_premise: DEFAULT_SOURCE_PREMISE,
            thresholds: DEFAULT_THRESHOLDS,
            fallback_scorer: Scorer::Entailment,
        }
    }
}

impl GroundedOptions {
    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "sources" => self.sources = Some(Sources::parse(val)?),
            "source_premise" => self.source_premise = SourceSelection::parse(val)?,
            "source_entailment_threshold" => {
                self.thresholds.entailment =
                    ranged(key, val, "0.7", |x| (0.0..=1.0).contains(&x), "0..=1")?
            }
            "source_contradiction_threshold" => {
                self.thresholds.contradiction =
                    ranged(key, val, "0.9", |x| (0.0..=1.0).contains(&x), "0..=1")?
            }
            "fallback_scorer" => {
                let name = string_option(key, val, "\"entailment\"")?;
                let s = Scorer::parse(name).map_err(|e| format!("option fallback_scorer: {e}"))?;
                if !matches!(
                    s.family(),
                    Family::UnitResponse | Family::MatchedUnit | Family::Ngram
                ) {
                    return Err(format!(
                        "option fallback_scorer is {}, which does not compare the unit with \
                         sampled answers: name a sample scorer, e.g. \"fallback_scorer\":\"entailment\" \
                         (unit-response, matched-unit or n-gram)",
                        s.name()
                    ));
                }
                self.fallback_scorer = s;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A grounded scorer needs `sources`, and `sources` needs a grounded scorer.
    pub(super) fn check(&self, computed: &[Scorer]) -> Result<(), String> {
        let grounded = computed.iter().find(|s| s.family() == Family::Grounded);
        match (grounded, &self.sources) {
            (Some(s), None) => Err(format!(
                "scorer {} checks units against sources: pass them as option sources (a text, a \
                 JSON array of passages, or an FTS5 table), e.g. {EXAMPLE} or \
                 \"sources\":{{\"fts\":\"docs\",\"k\":5}} (in a job, a column of them: \
                 \"sources_column\":\"context\")",
                s.name()
            )),
            (None, Some(_)) => Err(
                "option sources is given but no grounded scorer is used: add one to scorers, \
                 e.g. \"scorers\":[\"grounded_entailment\"], or drop sources"
                    .to_string(),
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_parse_as_text_array_objects_or_fts() {
        let p = Sources::parse(&json!("One. Two.")).unwrap();
        assert_eq!(p.passages().unwrap().len(), 1);
        let p = Sources::parse(&json!(["a", {"id": 7, "text": "b"}, {"text": "c"}])).unwrap();
        let ps = p.passages().unwrap();
        assert_eq!(ps[1].id.as_deref(), Some("7"));
        assert_eq!(ps[2].id, None);
        assert!(matches!(
            Sources::parse(&json!({"fts": "docs"})).unwrap(),
            Sources::Fts(_)
        ));
        for (bad, needle) in [
            (json!(3), "option sources must be a text"),
            (json!(["a", 2]), "option sources[1] is a number"),
            (
                json!([{"txt": "a"}]),
                "sources[0] is an object with the unknown key \"txt\"",
            ),
            (
                json!([{"id": "x"}]),
                "sources[0] is an object without a text",
            ),
            (json!({"table": "docs"}), "an object names an FTS5 table"),
        ] {
            let e = Sources::parse(&bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }
}
