//! Grounded scorers (beyond the paper; `uq_core::score::grounded`): each unit against the
//! user's sources (option `sources`) instead of sampled answers. Per unit, the sources'
//! sentences most relevant to it (option `source_premise`; by shared words or the embedding
//! model) make one premise per passage (or, with `"join":"sentence"`, one per sentence); one
//! NLI pair per premise, the most decisive kept.
//! `grounded_fallback` scores every unit with `fallback_scorer` on the samples and keeps the
//! larger of that and the sources' p_e; with a threshold option given (a band), it scores only
//! the units the sources leave open with the samples.

use uq_core::limits::check_text;
use uq_core::protocol::{Evidence, NliProbs};
use uq_core::score::grounded::{
    check, fallback_score, select_premises, unmatched, Checked, Passage, SourcePremise,
    SplitPassage, Thresholds, Verdict,
};
use uq_core::score::premise::{Premise, Rank};
use uq_core::scorers::Scorer;

use super::context::Context;
use super::premise::dot;

/// What the grounded family gives: one score and one evidence per unit for each scorer, and
/// notes on NULL scores.
pub struct Grounded {
    pub values: Vec<Vec<f64>>,
    pub evidence: Vec<Vec<Option<Evidence>>>,
    pub notes: Vec<String>,
}

/// The passages of option `sources`, checked.
fn passages<'a>(cx: &Context<'a>) -> Result<&'a [Passage], String> {
    let sources = cx.opts.grounded.sources.as_ref().ok_or_else(|| {
        "the grounded scorers need option sources (a text or a JSON array of passages)".to_string()
    })?;
    let passages = sources.passages().ok_or_else(|| {
        "option sources names an FTS5 table, which only a SQL call (the extension, on its \
         connection) or a job (on its database) can search: over the socket, pass the passages \
         themselves, e.g. \"sources\":[\"First passage.\"]"
            .to_string()
    })?;
    for (i, p) in passages.iter().enumerate() {
        check_text(&p.text, &format!("sources[{i}]"))?;
    }
    Ok(passages)
}

/// Per unit, its premises: the selected sentences of each passage ([`select_premises`]).
fn unit_premises(
    cx: &Context,
    passages: &[Passage],
    split: &[SplitPassage],
) -> Result<Vec<Vec<SourcePremise>>, String> {
    let premise = cx.opts.grounded.source_premise;
    let embedding = matches!(
        premise.premise,
        Premise::TopK {
            rank: Rank::Embedding,
            ..
        }
    );
    if !embedding {
        return Ok(cx
            .units
            .iter()
            .map(|u| select_premises(u, passages, split, premise, None))
            .collect());
    }
    let sentences: Vec<String> = passages
        .iter()
        .zip(split)
        .flat_map(|(p, s)| s.sentences(&p.text).into_iter().map(str::to_owned))
        .collect();
    let sent_emb = cx.engine.embed(&sentences)?;
    let unit_emb = cx.engine.embed(cx.units)?;
    Ok(cx
        .units
        .iter()
        .zip(&unit_emb)
        .map(|(u, ue)| {
            let mut offset = 0;
            let relevance: Vec<Vec<f64>> = split
                .iter()
                .map(|s| {
                    let r = sent_emb[offset..offset + s.spans.len()]
                        .iter()
                        .map(|e| dot(ue, e))
                        .collect();
                    offset += s.spans.len();
                    r
                })
                .collect();
            select_premises(u, passages, split, premise, Some(&relevance))
        })
        .collect())
}

/// Unit scores of some scorers, in their order: how `grounded_fallback` scores units with the
/// samples (the parent module's dispatch, handed in).
pub type ScoreUnits = fn(&Context, &[Scorer]) -> Result<Vec<(Scorer, Vec<f64>)>, String>;

/// One score and evidence per unit for each of `scorers` (all of family grounded);
/// `grounded_fallback` scores units with `fallback_scorer` through `score_units` (every unit;
/// with a band, the open ones).
pub fn score(
    cx: &Context,
    scorers: &[Scorer],
    score_units: ScoreUnits,
) -> Result<Grounded, String> {
    let passages = passages(cx)?;
    // No passage at all: the grounded scores are NULL (grounded_fallback goes to the samples).
    let no_sources = passages.iter().all(|p| p.text.trim().is_empty());
    let mut notes = Vec::new();
    if no_sources {
        notes.push(no_sources_note(scorers));
    }
    let split: Vec<SplitPassage> = passages.iter().map(|p| SplitPassage::of(&p.text)).collect();
    let premises = unit_premises(cx, passages, &split)?;
    let unit_probs = premise_probs(cx, &premises)?;
    // The verdict's thresholds (given, or the defaults); given, also grounded_fallback's band.
    let band = cx.opts.grounded.band;
    let t = cx.opts.grounded.thresholds();
    let checked: Vec<Checked> = unit_probs.iter().map(|p| check(p, t)).collect();
    let sampled = if scorers.contains(&Scorer::GroundedFallback) {
        fallback(cx, &checked, band.is_some(), score_units, &mut notes)?
    } else {
        vec![None; cx.units.len()]
    };
    let mut values = Vec::with_capacity(scorers.len());
    let mut evidences = Vec::with_capacity(scorers.len());
    for &s in scorers {
        let mut v = Vec::with_capacity(cx.units.len());
        let mut ev = Vec::with_capacity(cx.units.len());
        for (i, c) in checked.iter().enumerate() {
            let (score, by) = unit_score(s, c, no_sources, band, sampled[i]);
            v.push(score);
            ev.push(Some(evidence(
                c,
                &premises[i],
                &unit_probs[i],
                passages,
                by,
            )));
        }
        values.push(v);
        evidences.push(ev);
    }
    Ok(Grounded {
        values,
        evidence: evidences,
        notes,
    })
}

/// The note on sources without a passage: which scores are NULL, or that `grounded_fallback`
/// goes to the samples.
fn no_sources_note(scorers: &[Scorer]) -> String {
    let nulled: Vec<&str> = scorers
        .iter()
        .filter(|&&s| s != Scorer::GroundedFallback)
        .map(|s| s.name())
        .collect();
    format!(
        "sources is empty (no passage, or only blank ones), so {}: pass the passages the \
         answer should rest on, or check the retrieval",
        if nulled.is_empty() {
            "grounded_fallback scores every unit from the samples".to_string()
        } else {
            format!(
                "{} {} NULL",
                nulled.join(" and "),
                if nulled.len() == 1 { "is" } else { "are" }
            )
        }
    )
}

/// Per unit, the NLI probabilities of its premises against it (one pair per premise; an
/// unmatched premise cannot contradict).
fn premise_probs(
    cx: &Context,
    premises: &[Vec<SourcePremise>],
) -> Result<Vec<Vec<NliProbs>>, String> {
    let pairs: Vec<(String, String)> = cx
        .units
        .iter()
        .zip(premises)
        .flat_map(|(u, ps)| ps.iter().map(move |p| (p.text.clone(), u.clone())))
        .collect();
    let mut probs = cx.nli()?.probs(&pairs)?.into_iter();
    Ok(premises
        .iter()
        .map(|ps| {
            ps.iter()
                .zip(probs.by_ref())
                .map(|(p, q)| if p.matched { q } else { unmatched(q) })
                .collect()
        })
        .collect())
}

/// Scorer `s`'s score of one unit checked against the sources (`sampled`: its score with the
/// samples, for `grounded_fallback`), and what decided it (`source`, `samples` or `none`).
fn unit_score(
    s: Scorer,
    c: &Checked,
    no_sources: bool,
    band: Option<Thresholds>,
    sampled: Option<f64>,
) -> (f64, &'static str) {
    let silent = c.verdict == Verdict::Silent;
    let by = if silent { "none" } else { "source" };
    match s {
        _ if no_sources && s != Scorer::GroundedFallback => (f64::NAN, by),
        Scorer::GroundedEntailment => (c.entailment, by),
        Scorer::GroundedNoncontradiction => (c.noncontradiction, by),
        _ => {
            let x = fallback_score(c, band, sampled);
            let by = match (band, sampled) {
                _ if x.is_nan() => "none",
                // Band: the sources where they decide, else the samples.
                (Some(_), _) if !silent => "source",
                (Some(_), _) => "samples",
                // max(source p_e, samples): whichever is the larger (the source on a
                // tie; the samples when there is no premise).
                (None, Some(s)) if c.decisive.is_some() && c.entailment >= s => "source",
                (None, _) => "samples",
            };
            (x, by)
        }
    }
}

/// The evidence of one unit's score: its verdict and its decisive premise (`premises`, `probs`:
/// the unit's), if any.
fn evidence(
    c: &Checked,
    premises: &[SourcePremise],
    probs: &[NliProbs],
    passages: &[Passage],
    decided_by: &str,
) -> Evidence {
    let d = c.decisive.map(|j| (&premises[j], probs[j]));
    Evidence {
        decided_by: decided_by.to_string(),
        verdict: c.verdict.as_str().to_string(),
        passage: d.map(|(p, _)| p.passage),
        passage_id: d.and_then(|(p, _)| passages[p.passage].id.clone()),
        start: d.map(|(p, _)| p.start),
        end: d.map(|(p, _)| p.end),
        entailment: d.map(|(_, q)| q.entailment),
        contradiction: d.map(|(_, q)| q.contradiction),
    }
}

/// `fallback_scorer`'s score of the units `grounded_fallback` compares with the samples:
/// every unit, or with a band (`band`) only those the sources leave open (`None` for the
/// others, and for all when no samples are given: a note says so).
fn fallback(
    cx: &Context,
    checked: &[Checked],
    band: bool,
    score_units: ScoreUnits,
    notes: &mut Vec<String>,
) -> Result<Vec<Option<f64>>, String> {
    let open: Vec<usize> = (0..checked.len())
        .filter(|&i| !band || checked[i].verdict == Verdict::Silent)
        .collect();
    let mut out = vec![None; checked.len()];
    if open.is_empty() {
        return Ok(out);
    }
    if cx.samples.is_empty() {
        notes.push(if band {
            format!(
                "grounded_fallback: the sources leave {} of {} units open and no samples were \
                 given, so their scores are NULL; pass samples to fall back on (or use \
                 grounded_entailment)",
                open.len(),
                checked.len()
            )
        } else {
            "grounded_fallback: no samples were given, so its scores are NULL; pass samples (or \
             set source_entailment_threshold / source_contradiction_threshold to let the sources \
             decide alone where they are sure, or use grounded_entailment)"
                .to_string()
        });
        return Ok(out);
    }
    let units: Vec<String> = open.iter().map(|&i| cx.units[i].clone()).collect();
    let fallback = cx.opts.grounded.fallback_scorer;
    let sub = Context {
        units: &units,
        ..*cx
    };
    let scored = score_units(&sub, &[fallback])?;
    if let Some((_, v)) = scored.into_iter().next() {
        for (k, &i) in open.iter().enumerate() {
            out[i] = v.get(k).copied();
        }
    }
    Ok(out)
}
