//! Grounded scorers (beyond the paper; docs/reference.md, "Grounded checking"). The paper's
//! unit-response scorers (§3.3.1) check a unit s against m sampled answers; the grounded ones
//! check it against the user's *sources* (passages a RAG step retrieved, a knowledge base, the
//! document a summary rests on), at no LLM cost. As SummaC (Laban et al. 2022) does with
//! document chunks, each unit is checked against the sources' sentences most relevant to it,
//! one premise per passage, and the most decisive premise decides:
//!
//! * `grounded_entailment`: c(s) = max_j p_e(P_j, s);
//! * `grounded_noncontradiction`: c(s) = 1 − p_c(P_j*, s) of the decisive premise j* ([`check`]:
//!   the most entailing one when a passage supports s, else the most contradicting one);
//! * `grounded_fallback`: c(s) = max(max_j p_e(P_j, s), the samples' score of s) ([`max_score`]);
//!   with thresholds given, the sources' verdict where they decide ([`Verdict`]) and the
//!   samples' score only where they are silent ([`band_score`]).
//!
//! P_j is passage j's premise for s ([`select_premises`]); with `"join":"sentence"`, each
//! selected sentence alone (SummaC's sentence-level premises).

mod premises;
mod selection;

use super::nli::NliProbs;

pub use premises::{select_premises, Passage, SourcePremise, SplitPassage};
pub use selection::{Join, SourceSelection};

/// The probabilities of a premise that shares no word with its unit: its contradiction counts
/// as neutral (the passage says nothing about what the unit names: a passage on Einstein does
/// not contradict "Zebras gallop across the savanna", whatever the model says), its entailment
/// stays.
pub fn unmatched(p: NliProbs) -> NliProbs {
    NliProbs {
        entailment: p.entailment,
        neutral: p.neutral + p.contradiction,
        contradiction: 0.0,
    }
}

/// What the sources say of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Some premise entails the unit: p_e ≥ the entailment threshold.
    Supported,
    /// Some premise contradicts it: p_c ≥ the contradiction threshold.
    Contradicted,
    /// Neither: the sources do not decide (neutral, or no premise at all).
    Silent,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Contradicted => "contradicted",
            Verdict::Silent => "silent",
        }
    }
}

/// When the sources decide a unit (options `source_entailment_threshold`,
/// `source_contradiction_threshold`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub entailment: f64,
    pub contradiction: f64,
}

/// The verdict's thresholds when none is given (τ_e 0.7, τ_c 0.9): the `verdict` of every
/// grounded scorer's evidence, `grounded_noncontradiction`'s decisive premise, and the band of
/// [`band_score`] when only one of the two options is given.
///
/// Chosen on half of WikiBio dev (the even passages: `uqd bench grounded`, "thresholds chosen
/// on the tune half"), checked on the other half, then on the whole dev file with 95 %
/// intervals over resampled passages (the bench's `cross_validated` line): `grounded_fallback`
/// banded at these thresholds reaches AUROC 0.797 [0.748, 0.841]; thresholds chosen by 5-fold
/// cross-validation over passages ((0.9, 0.9) in every fold) 0.798, paired difference +0.001
/// [−0.001, +0.002]; the threshold-free max(source p_e, samples' score) 0.793, −0.004
/// [−0.010, +0.002] from the band; the samples alone 0.746 (max − samples +0.047 [+0.008,
/// +0.089]). On other data of the same kind (not shared) the band lost its gain (0.758 against
/// the samples' 0.762, where the max form reached 0.768), and on WikiBio dev it saved 5 of 300
/// sample calls. So the band is no longer `grounded_fallback`'s default ([`max_score`] is); it
/// applies only when option `source_entailment_threshold` or `source_contradiction_threshold`
/// is given.
pub const DEFAULT_THRESHOLDS: Thresholds = Thresholds {
    entailment: 0.7,
    contradiction: 0.9,
};

/// A unit checked against its premises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked {
    /// max_j p_e (0 without premises).
    pub entailment: f64,
    /// 1 − p_c of the decisive premise (supported: the most entailing; else the most
    /// contradicting); 1 without premises.
    pub noncontradiction: f64,
    pub verdict: Verdict,
    /// The premise that decided (or, when silent, the most entailing one); `None` without
    /// premises.
    pub decisive: Option<usize>,
}

fn argmax(v: impl Iterator<Item = f64>) -> Option<(usize, f64)> {
    v.enumerate().fold(None, |best, (i, x)| match best {
        Some((_, b)) if b >= x => best,
        _ => Some((i, x)),
    })
}

/// The grounded scores and verdict of one unit from the NLI probabilities of its premises
/// (premise = passage, hypothesis = unit). A unit some passage entails is supported, whatever
/// another passage says (sources may be about other things: a passage on another person
/// "contradicts" a birthplace it does not state); else one that some passage contradicts is
/// contradicted; else the sources are silent. The decisive premise is the most entailing one
/// when supported or silent, the most contradicting one when contradicted, and
/// non-contradiction is read from it.
pub fn check(probs: &[NliProbs], t: Thresholds) -> Checked {
    let e = argmax(probs.iter().map(|p| p.entailment));
    let c = argmax(probs.iter().map(|p| p.contradiction));
    let (Some((ie, pe)), Some((ic, pc))) = (e, c) else {
        return Checked {
            entailment: 0.0,
            noncontradiction: 1.0,
            verdict: Verdict::Silent,
            decisive: None,
        };
    };
    let (verdict, decisive) = if pe >= t.entailment {
        (Verdict::Supported, ie)
    } else if pc >= t.contradiction {
        (Verdict::Contradicted, ic)
    } else {
        (Verdict::Silent, ie)
    };
    Checked {
        entailment: pe,
        // Supported: read from the supporting premise; else the most contradicting one.
        noncontradiction: 1.0
            - if verdict == Verdict::Supported {
                probs[ie].contradiction
            } else {
                pc
            },
        verdict,
        decisive: Some(decisive),
    }
}

/// `grounded_fallback`'s score of a unit: [`band_score`] at the thresholds `band` when the
/// user gave them (options `source_entailment_threshold`, `source_contradiction_threshold`;
/// `c` checked at the same thresholds), else [`max_score`] (the default).
pub fn fallback_score(c: &Checked, band: Option<Thresholds>, sampled: Option<f64>) -> f64 {
    match band {
        Some(t) => band_score(c, t, sampled),
        None => max_score(c, sampled),
    }
}

/// `grounded_fallback`'s default score of a unit: max(max_j p_e of the sources, the samples'
/// score `sampled`), clamped to [0, 1]; NaN without samples (the samples are scored for every
/// unit, so nothing is saved). The simplest form that holds: on the whole of WikiBio dev
/// (passages resampled, 95 % intervals; `uqd bench grounded`, line `cross_validated`) AUROC
/// 0.793 against the band at [`DEFAULT_THRESHOLDS`]'s 0.797 (difference −0.004 [−0.010,
/// +0.002]: no gain of the band shown) and the samples alone's 0.746 (+0.047 [+0.008,
/// +0.089]); on other data of the same kind (not shared) 0.768, where the band at the tuned
/// thresholds fell to 0.758, below the samples' 0.762. It equals [`band_score`] at thresholds
/// (1, 1) wherever no probability is exactly 1.
pub fn max_score(c: &Checked, sampled: Option<f64>) -> f64 {
    match sampled {
        Some(s) if !s.is_nan() => s.max(c.entailment).clamp(0.0, 1.0),
        _ => f64::NAN,
    }
}

/// `grounded_fallback`'s score of a unit with a band (thresholds `t` given by the user; `c`
/// checked at `t`): where the sources decide, their entailment (≥ the entailment threshold
/// when they support it; when they contradict it, at most 1 − the contradiction threshold);
/// where they are silent, the larger of the samples' score `sampled` and the sources' own p_e,
/// mapped into the band between, [1 − τ_c, τ_e], so that a unit the sources support always
/// ranks above one they leave open, and that one above a unit they contradict. NaN when silent
/// without samples. Only the silent units need samples: what job option `sample_when_open`
/// saves. (The band was chosen on half of WikiBio dev over the samples' score alone; on the
/// whole file it is no better than [`max_score`]: see [`DEFAULT_THRESHOLDS`].)
pub fn band_score(c: &Checked, t: Thresholds, sampled: Option<f64>) -> f64 {
    let low = 1.0 - t.contradiction;
    match c.verdict {
        Verdict::Supported => c.entailment,
        Verdict::Contradicted => c.entailment.min(c.noncontradiction).min(low),
        Verdict::Silent => match sampled {
            Some(s) if !s.is_nan() => {
                low + (t.entailment - low).max(0.0) * s.max(c.entailment).clamp(0.0, 1.0)
            }
            _ => f64::NAN,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::premise::{Premise, Rank};
    use serde_json::{json, Value};

    fn p(e: f64, c: f64) -> NliProbs {
        NliProbs {
            entailment: e,
            neutral: 1.0 - e - c,
            contradiction: c,
        }
    }

    fn passages(texts: &[&str]) -> (Vec<Passage>, Vec<SplitPassage>) {
        let p: Vec<Passage> = texts
            .iter()
            .map(|t| Passage {
                id: None,
                text: t.to_string(),
            })
            .collect();
        let s = p.iter().map(|p| SplitPassage::of(&p.text)).collect();
        (p, s)
    }

    #[test]
    fn premises_are_the_most_relevant_sentences_grouped_by_passage() {
        let (ps, sp) = passages(&[
            "Marie Curie was a physicist. She won two Nobel Prizes. Curie was born in Warsaw.",
            "Paris is the capital of France. Curie died near Passy in 1934.",
            "Nothing here.",
        ]);
        let top2 = Premise::TopK {
            k: 2,
            rank: Rank::Lexical,
        };
        let got = select_premises("Curie was born in Warsaw.", &ps, &sp, top2.into(), None);
        // curie+born+warsaw (p0 s2: 3 words), then curie in p0 s0 and p1 s1 (1 word): the
        // earlier wins the tie.
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].passage, 0);
        assert_eq!(
            got[0].text,
            "Marie Curie was a physicist. Curie was born in Warsaw."
        );
        assert_eq!((got[0].start, got[0].end), (0, ps[0].text.chars().count()));
        // A passage of at most K sentences is its own premise, whole.
        let got = select_premises("Curie died in 1934.", &ps, &sp, top2.into(), None);
        assert_eq!(
            got.iter().map(|p| p.passage).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(got[1].text, ps[1].text);
        // Top 1 in a 3-sentence passage: the span of that one sentence, in characters.
        let top1 = Premise::TopK {
            k: 1,
            rank: Rank::Lexical,
        };
        let got = select_premises("She won Nobel Prizes.", &ps, &sp, top1.into(), None);
        assert_eq!(got[0].text, "She won two Nobel Prizes.");
        let (s, e) = (got[0].start, got[0].end);
        let chars: String = ps[0].text.chars().skip(s).take(e - s).collect();
        assert_eq!(chars, "She won two Nobel Prizes.");
        // No shared word: the first passage's first K sentences.
        let got = select_premises("Tokyo is large.", &ps, &sp, top2.into(), None);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].text,
            "Marie Curie was a physicist. She won two Nobel Prizes."
        );
        assert!(!got[0].matched);
        let u = unmatched(p(0.1, 0.8));
        assert!((u.entailment - 0.1).abs() < 1e-12 && (u.neutral - 0.9).abs() < 1e-12);
        assert_eq!(u.contradiction, 0.0);
        // Whole: every non-blank passage.
        assert_eq!(
            select_premises("x", &ps, &sp, Premise::Whole.into(), None).len(),
            3
        );
    }

    /// The text of characters `start..end` of `text`.
    fn span(text: &str, start: usize, end: usize) -> String {
        text.chars().skip(start).take(end - start).collect()
    }

    #[test]
    fn sentence_join_gives_each_chosen_sentence_alone() {
        let (ps, sp) = passages(&[
            "Marie Curie was a physicist. She won two Nobel Prizes. Curie was born in Warsaw.",
            "Zoë lived in Köln. Curie died near Passy in 1934.",
            "Nothing here.",
        ]);
        let top3 = SourceSelection {
            premise: Premise::TopK {
                k: 3,
                rank: Rank::Lexical,
            },
            join: Join::Sentence,
        };
        // curie+born (p0 s2), then curie alone in p0 s0 and p1 s1: three premises, in passage
        // and sentence order, each one sentence with its own span (even in the two-sentence
        // passage, which `passage` would give whole).
        let got = select_premises("Curie was born in Warsaw.", &ps, &sp, top3, None);
        let texts: Vec<&str> = got.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "Marie Curie was a physicist.",
                "Curie was born in Warsaw.",
                "Curie died near Passy in 1934."
            ]
        );
        assert_eq!(
            got.iter().map(|p| p.passage).collect::<Vec<_>>(),
            vec![0, 0, 1]
        );
        for p in &got {
            assert!(p.matched);
            assert_eq!(span(&ps[p.passage].text, p.start, p.end), p.text);
        }
        // Character offsets, not bytes, after "Zoë" and "Köln".
        assert_eq!((got[2].start, got[2].end), (19, 49));
        // The same sentences joined per passage: two premises.
        let joined = SourceSelection {
            join: Join::Passage,
            ..top3
        };
        let got = select_premises("Curie was born in Warsaw.", &ps, &sp, joined, None);
        // (Passages of at most K sentences are given whole.)
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].text.as_str(), got[1].text.as_str()),
            (ps[0].text.as_str(), ps[1].text.as_str())
        );
        // Lexical: sentences sharing no word are dropped, even under K.
        let got = select_premises("Passy is in Paris.", &ps, &sp, top3, None);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].text, "Curie died near Passy in 1934.");
        // No shared word: the first passage's first K sentences, each alone, unmatched.
        let got = select_premises("Tokyo is large.", &ps, &sp, top3, None);
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|p| !p.matched && p.passage == 0));
        assert_eq!(got[1].text, "She won two Nobel Prizes.");
        assert_eq!(span(&ps[0].text, got[1].start, got[1].end), got[1].text);
        // Embedding relevance: the K best, kept whatever their score.
        let rel = vec![vec![0.1, 0.9, 0.2], vec![0.8, 0.0], vec![0.3]];
        let emb = SourceSelection {
            premise: Premise::TopK {
                k: 2,
                rank: Rank::Embedding,
            },
            join: Join::Sentence,
        };
        let got = select_premises("x", &ps, &sp, emb, Some(&rel));
        let texts: Vec<&str> = got.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            vec!["She won two Nobel Prizes.", "Zoë lived in Köln."]
        );
        assert_eq!((got[1].start, got[1].end), (0, 18));
    }

    #[test]
    fn source_premise_parses_join_and_labels() {
        let top5 = Premise::TopK {
            k: 5,
            rank: Rank::Lexical,
        };
        let parse = |v: Value| SourceSelection::parse(&v);
        assert_eq!(parse(json!({"top_k": 5})).unwrap(), top5.into());
        assert_eq!(
            parse(json!({"top_k": 5, "rank": "lexical", "join": "passage"})).unwrap(),
            top5.into()
        );
        let s = parse(json!({"top_k": 5, "rank": "lexical", "join": "sentence"})).unwrap();
        assert_eq!(
            s,
            SourceSelection {
                premise: top5,
                join: Join::Sentence
            }
        );
        assert_eq!(s.label(), "top5_sentence");
        assert_eq!(SourceSelection::from_label("top5_sentence").unwrap(), s);
        assert_eq!(parse(s.to_json()).unwrap(), s);
        assert_eq!(
            s.to_json(),
            json!({"top_k": 5, "rank": "lexical", "join": "sentence"})
        );
        let e = parse(json!({"top_k": 3, "rank": "embedding", "join": "sentence"})).unwrap();
        assert_eq!(e.label(), "top3_embedding_sentence");
        assert_eq!(SourceSelection::from_label(&e.label()).unwrap(), e);
        assert_eq!(parse(json!("whole")).unwrap(), Premise::Whole.into());
        assert_eq!(SourceSelection::from_label("top5").unwrap(), top5.into());
        assert_eq!(
            SourceSelection::from_label("whole").unwrap().to_json(),
            json!("whole")
        );
        for (bad, needle) in [
            (
                json!({"top_k": 5, "join": "chunk"}),
                "option source_premise.join must be \"passage\"",
            ),
            (json!({"top_k": 5, "join": 1}), "source_premise.join"),
            (
                json!({"top_k": 5, "joint": "sentence"}),
                "option source_premise: unknown key \"joint\"; valid keys are top_k, rank and join",
            ),
            (
                json!({"join": "sentence"}),
                "option source_premise needs top_k",
            ),
            (
                json!({"top_k": 0, "join": "sentence"}),
                "option source_premise.top_k must be an integer from 1",
            ),
            (json!("all"), "option source_premise: unknown value \"all\""),
        ] {
            let err = parse(bad.clone()).unwrap_err();
            assert!(err.contains(needle), "{bad}: {err}");
            assert!(err.contains("\"source_premise\":"), "{bad}: {err}");
        }
        for bad in ["whole_sentence", "top0_sentence", "sentence", "top5_chunk"] {
            let err = SourceSelection::from_label(bad).unwrap_err();
            assert!(err.contains("top5_sentence"), "{bad}: {err}");
        }
    }

    #[test]
    fn spans_count_characters_not_bytes() {
        let (ps, sp) =
            passages(&["Zoë Ångström lebte in Köln. 東京は大きい。 Zoë was born in Malmö."]);
        let top1 = Premise::TopK {
            k: 1,
            rank: Rank::Lexical,
        };
        let got = select_premises("Zoë was born in Malmö.", &ps, &sp, top1.into(), None);
        let chars: String = ps[0]
            .text
            .chars()
            .skip(got[0].start)
            .take(got[0].end - got[0].start)
            .collect();
        assert_eq!(chars, "Zoë was born in Malmö.");
    }

    #[test]
    fn the_most_decisive_premise_decides() {
        let t = DEFAULT_THRESHOLDS;
        let c = check(&[p(0.2, 0.1), p(0.8, 0.05)], t);
        assert_eq!((c.verdict, c.decisive), (Verdict::Supported, Some(1)));
        assert_eq!(c.entailment, 0.8);
        assert!((c.noncontradiction - 0.95).abs() < 1e-12);
        let c = check(&[p(0.1, 0.95), p(0.5, 0.0)], t);
        assert_eq!((c.verdict, c.decisive), (Verdict::Contradicted, Some(0)));
        // One passage supports, another contradicts: supported, read from the supporting one.
        let c = check(&[p(0.75, 0.0), p(0.0, 0.97)], t);
        assert_eq!(
            (c.verdict, c.decisive, c.noncontradiction),
            (Verdict::Supported, Some(0), 1.0)
        );
        let c = check(&[p(0.5, 0.3)], t);
        assert_eq!((c.verdict, c.decisive), (Verdict::Silent, Some(0)));
        // Silent: non-contradiction from the most contradicting premise, evidence the most
        // entailing one.
        let c = check(&[p(0.5, 0.1), p(0.1, 0.6)], t);
        assert_eq!((c.verdict, c.decisive), (Verdict::Silent, Some(0)));
        assert!((c.noncontradiction - 0.4).abs() < 1e-12);
        let c = check(&[], t);
        assert_eq!(
            (c.verdict, c.decisive, c.entailment, c.noncontradiction),
            (Verdict::Silent, None, 0.0, 1.0)
        );
    }

    #[test]
    fn the_band_ranks_supported_over_silent_over_contradicted() {
        let t = DEFAULT_THRESHOLDS;
        let sup = check(&[p(0.71, 0.0)], t);
        let sil = check(&[p(0.3, 0.2)], t);
        let con = check(&[p(0.02, 0.95)], t);
        assert_eq!(fallback_score(&sup, Some(t), Some(0.0)), 0.71);
        let hi = fallback_score(&sil, Some(t), Some(1.0));
        // Samples at 0: the source's own p_e (0.3) places it: 0.1 + 0.6 × 0.3.
        let lo = fallback_score(&sil, Some(t), Some(0.0));
        assert!(
            (hi - 0.7).abs() < 1e-12 && (lo - 0.28).abs() < 1e-12,
            "{hi} {lo}"
        );
        assert!((fallback_score(&sil, Some(t), Some(0.5)) - 0.4).abs() < 1e-12);
        assert!(fallback_score(&con, Some(t), Some(1.0)) <= 0.1 + 1e-12);
        assert!(fallback_score(&sil, Some(t), None).is_nan());
        assert!(fallback_score(&sil, Some(t), Some(f64::NAN)).is_nan());
        // The sources decide without samples.
        assert_eq!(fallback_score(&sup, Some(t), None), 0.71);
        assert!(fallback_score(&con, Some(t), None) <= 0.1 + 1e-12);
    }

    #[test]
    fn the_default_is_the_larger_of_source_and_samples() {
        let t = DEFAULT_THRESHOLDS;
        let sup = check(&[p(0.71, 0.0)], t);
        let sil = check(&[p(0.3, 0.2)], t);
        let con = check(&[p(0.02, 0.95)], t);
        // Every unit, whatever its verdict: max(p_e, samples); the band would keep each in
        // its place (supported 0.71, contradicted ≤ 0.1).
        assert_eq!(fallback_score(&sup, None, Some(0.9)), 0.9);
        assert_eq!(fallback_score(&sup, None, Some(0.2)), 0.71);
        assert_eq!(fallback_score(&sil, None, Some(0.1)), 0.3);
        assert_eq!(fallback_score(&sil, None, Some(0.6)), 0.6);
        assert_eq!(fallback_score(&con, None, Some(0.8)), 0.8);
        assert_eq!(fallback_score(&con, None, Some(0.0)), 0.02);
        // Without samples every unit is NULL, even the ones the sources decide.
        for c in [&sup, &sil, &con] {
            assert!(fallback_score(c, None, None).is_nan());
            assert!(fallback_score(c, None, Some(f64::NAN)).is_nan());
        }
        // Out-of-range sample scores (e.g. a cosine fallback) are clamped as in the band.
        assert_eq!(max_score(&sil, Some(-0.5)), 0.3);
        assert_eq!(max_score(&sil, Some(1.5)), 1.0);
        let none = check(&[], t);
        assert_eq!(max_score(&none, Some(0.4)), 0.4);
    }

    #[test]
    fn the_band_at_one_one_is_the_max_form() {
        // No verdict at (1, 1) (no probability reaches 1): band [0, 1], so the silent unit's
        // score is max(p_e, samples) itself.
        let one = Thresholds {
            entailment: 1.0,
            contradiction: 1.0,
        };
        for e in [0.0, 0.02, 0.3, 0.71, 0.99] {
            for c in [0.0, 0.2, 0.5, 0.95].into_iter().filter(|c| e + c <= 1.0) {
                let probs = [p(e, c), p(e / 2.0, c / 3.0)];
                for s in [0.0, 0.1, 0.5, 0.8, 1.0, -0.2, 1.3] {
                    let band = band_score(&check(&probs, one), one, Some(s));
                    let max = max_score(&check(&probs, DEFAULT_THRESHOLDS), Some(s));
                    assert!(
                        (band - max).abs() < 1e-12,
                        "p_e {e} p_c {c} s {s}: {band} {max}"
                    );
                }
            }
        }
    }
}
