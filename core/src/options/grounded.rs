//! Grounded checking options (beyond the paper; [`crate::score::grounded`]): the sources a unit
//! is checked against (`sources`), how their premises are selected (`source_premise`), when the
//! sources decide a unit (`source_entailment_threshold`, `source_contradiction_threshold`; given,
//! they also make `grounded_fallback` banded), and the sample scorer `grounded_fallback` compares
//! the units with (`fallback_scorer`).

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
    /// Options `source_entailment_threshold` and `source_contradiction_threshold`: `None` when
    /// neither is given; one given, the other at its [`DEFAULT_THRESHOLDS`] value. Given, they
    /// are the verdict's thresholds and `grounded_fallback`'s band
    /// ([`crate::score::grounded::band_score`]: the sources decide where they are sure, the
    /// samples score only the units they leave open); not given, the verdict uses
    /// [`DEFAULT_THRESHOLDS`] and `grounded_fallback` scores max(source p_e, samples' score)
    /// ([`crate::score::grounded::max_score`]). [`GroundedOptions::thresholds`] reads them.
    pub band: Option<Thresholds>,
    /// Option `fallback_scorer`: the sample scorer of `grounded_fallback` (default
    /// `entailment`).
    pub fallback_scorer: Scorer,
}

impl Default for GroundedOptions {
    fn default() -> Self {
        GroundedOptions {
            sources: None,
            source_premise: DEFAULT_SOURCE_PREMISE,
            band: None,
            fallback_scorer: Scorer::Entailment,
        }
    }
}

impl GroundedOptions {
    /// The verdict's thresholds: those given, else [`DEFAULT_THRESHOLDS`].
    pub fn thresholds(&self) -> Thresholds {
        self.band.unwrap_or(DEFAULT_THRESHOLDS)
    }

    /// Reads option `key` when it is one of these; `Ok(false)` for any other key.
    pub(super) fn set(&mut self, key: &str, val: &Value) -> Result<bool, String> {
        match key {
            "sources" => self.sources = Some(Sources::parse(val)?),
            "source_premise" => self.source_premise = SourceSelection::parse(val)?,
            "source_entailment_threshold" => {
                let x = ranged(key, val, "0.7", |x| (0.0..=1.0).contains(&x), "0..=1")?;
                self.band.get_or_insert(DEFAULT_THRESHOLDS).entailment = x;
            }
            "source_contradiction_threshold" => {
                let x = ranged(key, val, "0.9", |x| (0.0..=1.0).contains(&x), "0..=1")?;
                self.band.get_or_insert(DEFAULT_THRESHOLDS).contradiction = x;
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

    #[test]
    fn the_band_is_set_only_by_a_given_threshold() {
        let parse = |o: serde_json::Value| {
            crate::options::parse_options(&o)
                .map(|o| o.grounded)
                .unwrap()
        };
        let base = json!({"scorers": ["grounded_fallback"], "sources": "x"});
        let with = |k: &str, v: serde_json::Value| {
            let mut o = base.clone();
            o[k] = v;
            parse(o)
        };
        // Neither given (or null): no band, the verdict at the defaults.
        let g = parse(base.clone());
        assert_eq!(g.band, None);
        assert_eq!(g.thresholds(), DEFAULT_THRESHOLDS);
        assert_eq!(with("source_entailment_threshold", json!(null)).band, None);
        // One given: the band, the other at its default.
        let g = with("source_entailment_threshold", json!(0.8));
        let t = Thresholds {
            entailment: 0.8,
            contradiction: 0.9,
        };
        assert_eq!((g.band, g.thresholds()), (Some(t), t));
        let g = with("source_contradiction_threshold", json!(0.95));
        assert_eq!(
            g.band,
            Some(Thresholds {
                entailment: 0.7,
                contradiction: 0.95
            })
        );
        // The defaults given explicitly: still the band.
        let mut o = base.clone();
        o["source_entailment_threshold"] = json!(0.7);
        o["source_contradiction_threshold"] = json!(0.9);
        assert_eq!(parse(o).band, Some(DEFAULT_THRESHOLDS));
        let mut o = base;
        o["source_contradiction_threshold"] = json!(2);
        let e = crate::options::parse_options(&o).unwrap_err();
        assert!(
            e.contains("option source_contradiction_threshold is 2, outside 0..=1"),
            "{e}"
        );
    }
}
