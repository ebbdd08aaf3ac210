//! The units to mark and how a score reads: [`Mark`]s from `units_json` ([`marks`]), the levels
//! and options, the answer cut into pieces at span boundaries ([`pieces`]), and the colour scale
//! ([`colour`]). The renderers (`html`, `text`) read these.

use serde_json::{Map, Value};

use crate::decompose::spans::unit_spans;
use crate::json::type_name;

/// One unit to mark: its text (for the tooltip), scorer and score, and its span in characters
/// of the answer (`None`: not placed in the answer).
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub unit: Option<String>,
    pub scorer: Option<String>,
    /// A confidence in [0, 1]; `None`: not scored.
    pub score: Option<f64>,
    pub span: Option<(usize, usize)>,
}

/// How a score reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Unsupported,
    Doubtful,
    Supported,
    /// No score.
    Unscored,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Unsupported => "unsupported",
            Level::Doubtful => "doubtful",
            Level::Supported => "supported",
            Level::Unscored => "unscored",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Text,
}

/// `uq_highlight`'s options.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Scores below it are doubtful (default: the one default cut,
    /// [`crate::aggregate::DEFAULT_CUT`], where UAD and the sentence filter drop a unit).
    pub doubtful: f64,
    /// Scores below it are unsupported (at most `doubtful`).
    pub unsupported: f64,
    pub format: Format,
    /// HTML: a legend of the levels under the text.
    pub legend: bool,
}

/// A level as an error shows it: at most 3 decimals (the default doubtful, 1/3, as 0.333).
pub(crate) fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Default for Options {
    fn default() -> Self {
        Options {
            doubtful: crate::aggregate::DEFAULT_CUT,
            unsupported: 0.2,
            format: Format::Html,
            legend: false,
        }
    }
}

/// The option keys, for the error that names an unknown one.
pub const OPTION_KEYS: &[&str] = &["doubtful", "unsupported", "format", "legend"];

const OPTIONS_FIX: &str = "e.g. '{\"doubtful\":0.5,\"unsupported\":0.2,\"format\":\"text\"}'";

impl Options {
    /// Parses `options_json` (an object; every key optional).
    pub fn parse(o: &Map<String, Value>) -> Result<Options, String> {
        let mut out = Options::default();
        for (k, v) in o {
            match k.as_str() {
                "doubtful" | "unsupported" => {
                    let x = v
                        .as_f64()
                        .filter(|x| (0.0..=1.0).contains(x))
                        .ok_or_else(|| {
                            format!(
                                "options_json.{k} must be a number from 0 to 1 (scores below it \
                             are {k}), got {v}; {OPTIONS_FIX}"
                            )
                        })?;
                    if k == "doubtful" {
                        out.doubtful = x;
                    } else {
                        out.unsupported = x;
                    }
                }
                "format" => {
                    out.format = match v.as_str() {
                        Some("html") => Format::Html,
                        Some("text") => Format::Text,
                        _ => {
                            return Err(format!(
                                "options_json.format must be \"html\" or \"text\" (markers \
                                 [!…] and [?…] for terminals), got {v}"
                            ))
                        }
                    }
                }
                "legend" => {
                    out.legend = v.as_bool().ok_or_else(|| {
                        format!("options_json.legend must be true or false, got {v}")
                    })?
                }
                _ => {
                    return Err(format!(
                        "options_json has unknown key {k:?}: its keys are {}; {OPTIONS_FIX}",
                        OPTION_KEYS.join(", ")
                    ))
                }
            }
        }
        if out.unsupported > out.doubtful {
            return Err(format!(
                "options_json: unsupported ({}) must be at most doubtful ({}): scores below \
                 unsupported are the lowest level; {OPTIONS_FIX}",
                short(out.unsupported),
                short(out.doubtful)
            ));
        }
        Ok(out)
    }

    pub fn level(&self, score: Option<f64>) -> Level {
        match score {
            None => Level::Unscored,
            Some(s) if s < self.unsupported => Level::Unsupported,
            Some(s) if s < self.doubtful => Level::Doubtful,
            Some(_) => Level::Supported,
        }
    }
}

const UNITS_FIX: &str = "pass a JSON array with one object per unit, e.g. \
    '[{\"unit\":\"She was born in 1867.\",\"score\":0.2}]' (the span is found in the response) \
    or '[{\"start\":0,\"end\":12,\"score\":0.2,\"scorer\":\"entailment\"}]' (start and end as \
    uq_unit_scores gives them)";

/// The marks of `units_json`: an array of objects with `score` (a number in [0, 1], or null)
/// and either `start` and `end` (characters of `response`, from 0, `end` exclusive; both null:
/// not placed) or `unit`, whose span is then found by [`unit_spans`] over all the units given.
/// Optional `unit` and `scorer` name it in the tooltip; other keys are ignored (a row of
/// `uq_unit_scores` as a JSON object works).
pub fn marks(response: &str, units: &Value) -> Result<Vec<Mark>, String> {
    let items = units.as_array().ok_or_else(|| {
        format!(
            "units_json must be a JSON array of units, got {}; {UNITS_FIX}",
            type_name(units)
        )
    })?;
    let n_chars = response.chars().count();
    let mut out = Vec::with_capacity(items.len());
    let mut to_place = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let (m, find) = mark(i, item, n_chars)?;
        if find {
            to_place.push(i);
        }
        out.push(m);
    }
    if !to_place.is_empty() {
        place(response, &mut out, &to_place);
    }
    Ok(out)
}

/// Unit `i` of `units_json`, and whether its span is to be found from its text.
fn mark(i: usize, item: &Value, n_chars: usize) -> Result<(Mark, bool), String> {
    let o = item.as_object().ok_or_else(|| {
        format!(
            "units_json[{i}] must be a JSON object, got {}; {UNITS_FIX}",
            type_name(item)
        )
    })?;
    let text = |k: &str| -> Result<Option<String>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(format!(
                "units_json[{i}].{k} must be a text, got {}; {UNITS_FIX}",
                type_name(v)
            )),
        }
    };
    let unit = text("unit")?;
    let scorer = text("scorer")?;
    let score = match o.get("score") {
        None => {
            return Err(format!(
                "units_json[{i}] has no score: give each unit its confidence (score, a number \
                 from 0 to 1, or null when it has none); {UNITS_FIX}"
            ))
        }
        Some(Value::Null) => None,
        Some(v) => match v.as_f64().filter(|x| (0.0..=1.0).contains(x)) {
            Some(x) => Some(x),
            None => {
                return Err(format!(
                    "units_json[{i}].score must be a number from 0 to 1 (a confidence), got \
                     {v}; map other scores into [0, 1] first (e.g. uq_calibrate)"
                ))
            }
        },
    };
    let (span, find) = match (o.get("start"), o.get("end")) {
        (None, None) if unit.is_none() => {
            return Err(format!(
                "units_json[{i}] has neither start and end nor unit: give the span (start, end) \
                 or the unit's text to find it in the response; {UNITS_FIX}"
            ))
        }
        (None, None) => (None, true),
        (Some(Value::Null), Some(Value::Null)) => (None, false),
        (s, e) => (Some(span(i, s, e, n_chars)?), false),
    };
    let m = Mark {
        unit,
        scorer,
        score,
        span,
    };
    Ok((m, find))
}

/// Finds the spans of `marks[k]`, `k` in `which`, from their texts, with the word weights of
/// all the distinct unit texts given (as the stored spans, over the answer's units).
fn place(response: &str, marks: &mut [Mark], which: &[usize]) {
    let mut distinct: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for t in marks.iter().filter_map(|m| m.unit.as_ref()) {
        if !index.contains_key(t) {
            index.insert(t.clone(), distinct.len());
            distinct.push(t.clone());
        }
    }
    let spans = unit_spans(response, &distinct);
    for &k in which {
        let at = marks[k].unit.as_ref().and_then(|t| index.get(t));
        marks[k].span = at.and_then(|&a| spans[a]).map(|s| (s.start, s.end));
    }
}

/// `start` and `end` of unit `i`: integers with 0 ≤ start < end ≤ the response's length.
fn span(
    i: usize,
    s: Option<&Value>,
    e: Option<&Value>,
    n: usize,
) -> Result<(usize, usize), String> {
    let int = |k: &str, v: Option<&Value>| -> Result<i64, String> {
        v.and_then(Value::as_i64).ok_or_else(|| {
            format!(
                "units_json[{i}].{k} must be an integer (characters of the response from 0), \
                 got {}; give both start and end, both null for a unit not in the response, or \
                 neither and the unit's text",
                v.map_or("nothing".to_string(), |v| v.to_string())
            )
        })
    };
    let (a, b) = (int("start", s)?, int("end", e)?);
    if a >= b {
        return Err(format!(
            "units_json[{i}]: span {a}..{b} is empty or reversed: end (exclusive) must be \
             greater than start"
        ));
    }
    if a < 0 || b > n as i64 {
        return Err(format!(
            "units_json[{i}]: span {a}..{b} is outside the response ({n} characters): start \
             and end count characters from 0 with start < end ≤ {n}; pass the response the \
             spans were taken from"
        ));
    }
    Ok((a as usize, b as usize))
}

/// The response's characters cut at every span boundary: `(start, end, marks covering it)`,
/// in order, covering the whole response (pieces without a mark have an empty list).
pub fn pieces(n_chars: usize, marks: &[Mark]) -> Vec<(usize, usize, Vec<usize>)> {
    // A sweep over the span boundaries: at each cut, the marks starting there join the active
    // set and those ending there leave it (linear in the marks, not quadratic).
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut cuts = vec![0, n_chars];
    for (k, m) in marks.iter().enumerate() {
        if let Some((a, b)) = m.span {
            let (a, b) = (a.min(n_chars), b.min(n_chars));
            starts.push((a, k));
            ends.push((b, k));
            cuts.extend([a, b]);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    starts.sort_unstable();
    ends.sort_unstable();
    let (mut si, mut ei) = (0, 0);
    let mut active = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(cuts.len());
    for w in cuts.windows(2) {
        while ei < ends.len() && ends[ei].0 <= w[0] {
            active.remove(&ends[ei].1);
            ei += 1;
        }
        while si < starts.len() && starts[si].0 <= w[0] {
            let k = starts[si].1;
            // A mark that already ended (an empty span) does not cover this piece.
            if marks[k].span.is_some_and(|(_, b)| b.min(n_chars) > w[0]) {
                active.insert(k);
            }
            si += 1;
        }
        out.push((w[0], w[1], active.iter().copied().collect()));
    }
    out
}

/// The lowest score among `covering` (unscored marks left out); `None` when none is scored.
pub fn lowest(marks: &[Mark], covering: &[usize]) -> Option<f64> {
    covering
        .iter()
        .filter_map(|&k| marks[k].score)
        .min_by(f64::total_cmp)
}

/// The colour of a score at the default levels ([`colour_at`] with [`Options::default`]).
pub fn colour(score: f64) -> [u8; 3] {
    colour_at(score, &Options::default())
}

/// The colour of a score under options `o`, on PuOr (ColorBrewer's colour-blind-safe
/// orange–purple scale): below `o.doubtful` (unsupported and doubtful) the orange half, #e66101
/// at 0 to #fdb863 just below `doubtful`; at or above it (supported) the purple half only,
/// #b2abd2 at `doubtful` to #d8daeb at 1, linear between (sRGB, rounded). So a supported score
/// never takes the doubtful hue, however close to the threshold. Black text stays readable on
/// all of it (contrast ≥ 6:1).
pub fn colour_at(score: f64, o: &Options) -> [u8; 3] {
    const ORANGE: [[f64; 3]; 2] = [[230.0, 97.0, 1.0], [253.0, 184.0, 99.0]];
    const PURPLE: [[f64; 3]; 2] = [[178.0, 171.0, 210.0], [216.0, 218.0, 235.0]];
    let s = score.clamp(0.0, 1.0);
    let d = o.doubtful.clamp(0.0, 1.0);
    let (ends, t) = if s < d {
        (ORANGE, s / d)
    } else if d < 1.0 {
        (PURPLE, (s - d) / (1.0 - d))
    } else {
        (PURPLE, 1.0)
    };
    let c = |k: usize| (ends[0][k] + t * (ends[1][k] - ends[0][k])).round() as u8;
    [c(0), c(1), c(2)]
}
