//! Option `source_premise`: which sentences of the sources a unit is checked against and how
//! they make premises ([`SourceSelection`], [`Join`]), read from and written to JSON.

use serde_json::{json, Map, Value};

use crate::score::premise::Premise;

/// How the selected sentences of the sources make premises (key `join` of option
/// `source_premise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// One premise per passage: its selected sentences joined in order.
    Passage,
    /// One premise per selected sentence, alone (as SummaC's sentence-level premises).
    Sentence,
}

impl Join {
    pub fn as_str(self) -> &'static str {
        match self {
            Join::Passage => "passage",
            Join::Sentence => "sentence",
        }
    }
}

/// Option `source_premise`: which sentences of the sources a unit is checked against
/// (`premise`: `"whole"` or `{"top_k": K, "rank": …}`, as option `premise`) and how they make
/// premises (`join`; only with `top_k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceSelection {
    pub premise: Premise,
    pub join: Join,
}

impl From<Premise> for SourceSelection {
    /// `premise` with one premise per passage.
    fn from(premise: Premise) -> Self {
        SourceSelection {
            premise,
            join: Join::Passage,
        }
    }
}

/// The valid forms of option `source_premise`, for its errors.
const SOURCE_PREMISE_EXAMPLE: &str = "\"source_premise\":{\"top_k\":5,\"rank\":\"lexical\",\
                                      \"join\":\"sentence\"} or \"source_premise\":\"whole\"";

impl SourceSelection {
    /// Reads option `source_premise`: `"whole"` or `{"top_k": K, "rank": "lexical" |
    /// "embedding", "join": "passage" | "sentence"}` (`rank` defaults to lexical, `join` to
    /// passage).
    pub fn parse(v: &Value) -> Result<SourceSelection, String> {
        let rename = |e: String| {
            e.replace("option premise", "option source_premise")
                .replace("\"premise\":", "\"source_premise\":")
        };
        let Value::Object(o) = v else {
            return Premise::parse(v).map(Into::into).map_err(rename);
        };
        if let Some(k) = o
            .keys()
            .find(|k| !["top_k", "rank", "join"].contains(&k.as_str()))
        {
            return Err(format!(
                "option source_premise: unknown key {k:?}; valid keys are top_k, rank and join, \
                 e.g. {SOURCE_PREMISE_EXAMPLE}"
            ));
        }
        let join = match o.get("join") {
            None | Some(Value::Null) => Join::Passage,
            Some(Value::String(j)) if j == "passage" => Join::Passage,
            Some(Value::String(j)) if j == "sentence" => Join::Sentence,
            Some(j) => {
                return Err(format!(
                    "option source_premise.join must be \"passage\" (a passage's selected \
                     sentences joined, one premise per passage) or \"sentence\" (each selected \
                     sentence alone, one premise each), e.g. {SOURCE_PREMISE_EXAMPLE}; got {j}"
                ))
            }
        };
        let rest: Map<String, Value> = o
            .iter()
            .filter(|(k, _)| k.as_str() != "join")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let premise = Premise::parse(&Value::Object(rest)).map_err(rename)?;
        Ok(SourceSelection { premise, join })
    }

    /// The option's value as JSON (what `parse` reads back).
    pub fn to_json(self) -> Value {
        match self.premise {
            Premise::Whole => json!("whole"),
            Premise::TopK { .. } => {
                let mut v = self.premise.to_json();
                v["join"] = json!(self.join.as_str());
                v
            }
        }
    }

    /// A short name for bench lines and flags: `whole`, `top5`, `top5_embedding`,
    /// `top5_sentence`, `top5_embedding_sentence`.
    pub fn label(self) -> String {
        match self.join {
            Join::Passage => self.premise.label(),
            Join::Sentence => format!("{}_sentence", self.premise.label()),
        }
    }

    /// Reads a [`label`](SourceSelection::label) back (bench flags).
    pub fn from_label(s: &str) -> Result<SourceSelection, String> {
        let s = s.trim();
        let (rest, join) = match s.strip_suffix("_sentence") {
            Some(r) => (r, Join::Sentence),
            None => (s.strip_suffix("_passage").unwrap_or(s), Join::Passage),
        };
        let premise = Premise::from_label(rest).map_err(|_| {
            format!(
                "source premise {s:?}: use whole, topK, topK_embedding, topK_sentence or \
                 topK_embedding_sentence (K from 1 to {}), e.g. top5_sentence",
                crate::score::premise::MAX_TOP_K
            )
        })?;
        if premise == Premise::Whole && join == Join::Sentence {
            return Err(format!(
                "source premise {s:?}: whole keeps every passage whole, so it has no sentences to \
                 take alone: use whole or topK_sentence, e.g. top5_sentence"
            ));
        }
        Ok(SourceSelection { premise, join })
    }
}
