//! Model-free n-gram scorers: SelfCheckGPT's unigram variant (Manakul et al. 2023, §5.3).
//!
//! A unigram language model with add-one smoothing is fitted on the original response and its
//! m sampled responses (all lowercased, [`tokenize`]d):
//!
//! p(w) = (count(w) + 1) / (N + V),
//!
//! N = the number of tokens fitted, V = the number of distinct tokens plus one `<unk>` entry
//! (count 0) that every unseen token falls to. A unit's hallucination score is taken over the
//! negative log-probabilities of its tokens t_1..t_n:
//!
//! * `unigram_avg`: x = (1/n) Σ_i −ln p(t_i);
//! * `unigram_max`: x = max_i −ln p(t_i).
//!
//! Higher x is less reliable; the confidence is c = exp(−x) ∈ (0, 1], a monotone decreasing
//! map: the geometric-mean token probability for `unigram_avg`, the lowest token probability for
//! `unigram_max`. A unit with no token has no score (NaN).
//!
//! SelfCheckGPT's released code calls `train(k=0)` (no smoothing); with k = 1 here an unseen
//! token (a claim's word that neither the response nor any sample uses) gets a finite score
//! instead of an infinite one. Its tokens are spaCy's; ours are the rule-based ones of
//! [`tokenize`].

use std::collections::HashMap;

use crate::scorers::Consistency;

/// Which statistic of a unit's token negative log-probabilities is its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnigramStat {
    /// Mean of −ln p over the unit's tokens (SelfCheckGPT's "Avg(−log p)").
    Avg,
    /// Max of −ln p over the unit's tokens (SelfCheckGPT's "Max(−log p)").
    Max,
}

impl UnigramStat {
    /// The statistic of an n-gram scorer's consistency (`unigram_avg`, `unigram_max`); `None`
    /// for any other.
    pub fn of(c: Consistency) -> Option<UnigramStat> {
        match c {
            Consistency::UnigramAvg => Some(UnigramStat::Avg),
            Consistency::UnigramMax => Some(UnigramStat::Max),
            _ => None,
        }
    }
}

pub use crate::words::tokenize;

/// A unigram language model with add-one smoothing (module docs).
#[derive(Debug, Clone, Default)]
pub struct UnigramModel {
    counts: HashMap<String, usize>,
    tokens: usize,
}

impl UnigramModel {
    /// Counts the tokens of every text.
    pub fn fit<I, S>(texts: I) -> UnigramModel
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut model = UnigramModel::default();
        for text in texts {
            for t in tokenize(text.as_ref()) {
                *model.counts.entry(t).or_insert(0) += 1;
                model.tokens += 1;
            }
        }
        model
    }

    /// N: tokens fitted.
    pub fn token_count(&self) -> usize {
        self.tokens
    }

    /// V: distinct tokens fitted plus the `<unk>` entry.
    pub fn vocabulary_size(&self) -> usize {
        self.counts.len() + 1
    }

    /// How often the (lowercased) token was seen; 0 for an unseen one.
    pub fn count(&self, token: &str) -> usize {
        self.counts.get(token).copied().unwrap_or(0)
    }

    /// p(w) = (count(w) + 1) / (N + V); an unseen token gets `<unk>`'s 1 / (N + V).
    pub fn probability(&self, token: &str) -> f64 {
        (self.count(token) + 1) as f64 / (self.tokens + self.vocabulary_size()) as f64
    }

    /// The hallucination score x of a unit (module docs); `None` when it has no token.
    pub fn unit_score(&self, unit: &str, stat: UnigramStat) -> Option<f64> {
        self.score_tokens(&tokenize(unit), stat)
    }

    fn score_tokens(&self, tokens: &[String], stat: UnigramStat) -> Option<f64> {
        if tokens.is_empty() {
            return None;
        }
        let nll = tokens.iter().map(|t| -self.probability(t).ln());
        Some(match stat {
            UnigramStat::Avg => nll.sum::<f64>() / tokens.len() as f64,
            UnigramStat::Max => nll.fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// c = exp(−x): the confidence of a hallucination score x ≥ 0 (module docs).
pub fn confidence(x: f64) -> f64 {
    (-x).exp()
}

/// The confidence of each unit for each statistic of `stats` (`out[s][i]`), the model fitted on
/// `response` and `samples`; NaN for a unit with no token.
pub fn unigram_confidences(
    response: &str,
    samples: &[String],
    units: &[String],
    stats: &[UnigramStat],
) -> Vec<Vec<f64>> {
    let model =
        UnigramModel::fit(std::iter::once(response).chain(samples.iter().map(String::as_str)));
    let tokens: Vec<Vec<String>> = units.iter().map(|u| tokenize(u)).collect();
    stats
        .iter()
        .map(|&stat| {
            tokens
                .iter()
                .map(|t| model.score_tokens(t, stat).map_or(f64::NAN, confidence))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::close;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tokenizer_rules() {
        assert_eq!(tokenize("Hello, World!"), ["hello", ",", "world", "!"]);
        assert_eq!(tokenize("Queen's Counsel"), ["queen", "'", "s", "counsel"]);
        assert_eq!(tokenize("(1820–1876)"), ["(", "1820", "–", "1876", ")"]);
        assert_eq!(
            tokenize("well-known 3.5"),
            ["well", "-", "known", "3", ".", "5"]
        );
        assert_eq!(tokenize("  Straße\tÜBER\n"), ["straße", "über"]);
        // A decomposed é (e + U+0301) stays one word; a lone mark is a token of its own.
        assert_eq!(tokenize("Cafe\u{301} x"), ["cafe\u{301}", "x"]);
        assert_eq!(tokenize("\u{301}a"), ["\u{301}", "a"]);
        // Unicode lowercasing: İ → i + U+0307, kept in the word.
        assert_eq!(tokenize("İstanbul"), ["i\u{307}stanbul"]);
        assert!(tokenize(" \n\t ").is_empty());
    }

    /// Response "The cat sat." and samples "The cat ran.", "A dog sat.":
    /// tokens the cat sat . | the cat ran . | a dog sat .  → N = 12;
    /// counts the 2, cat 2, sat 2, . 3, ran 1, a 1, dog 1 → 7 types + <unk>: V = 8, N + V = 20.
    /// p: the, cat, sat 3/20; . 4/20; ran, a, dog 2/20; unseen 1/20.
    fn cat_model() -> (String, Vec<String>) {
        (
            "The cat sat.".to_string(),
            strings(&["The cat ran.", "A dog sat."]),
        )
    }

    #[test]
    fn hand_computed_model() {
        let (r, s) = cat_model();
        let m = UnigramModel::fit(std::iter::once(r.as_str()).chain(s.iter().map(String::as_str)));
        assert_eq!((m.token_count(), m.vocabulary_size()), (12, 8));
        assert_eq!((m.count("."), m.count("the"), m.count("bird")), (3, 2, 0));
        assert!(close(m.probability("the"), 0.15));
        assert!(close(m.probability("."), 0.2));
        assert!(close(m.probability("dog"), 0.1));
        assert!(close(m.probability("bird"), 0.05));
        // "The cat sat.": −ln p = ln(20/3) three times and ln 5:
        // avg = (3 ln(20/3) + ln 5) / 4 = (3 · 1.8971200 + 1.6094379) / 4 = 1.8251995; max = ln(20/3).
        let avg = m
            .unit_score("The cat sat.", UnigramStat::Avg)
            .unwrap_or(f64::NAN);
        assert!((avg - 1.8251995).abs() < 1e-7, "{avg}");
        let max = m
            .unit_score("The cat sat.", UnigramStat::Max)
            .unwrap_or(f64::NAN);
        assert!(close(max, (20.0f64 / 3.0).ln()), "{max}");
        assert_eq!(m.unit_score(" ", UnigramStat::Max), None);
    }

    #[test]
    fn hand_computed_confidences() {
        let (r, s) = cat_model();
        let units = strings(&["The cat sat.", "A bird sat", "?!", "  "]);
        let c = unigram_confidences(&r, &s, &units, &[UnigramStat::Avg, UnigramStat::Max]);
        // Unit 0: avg c = ((3/20)³ · 4/20)^(1/4) = (0.000675)^(1/4) = 0.1611855; max c = 3/20.
        assert!((c[0][0] - 0.1611855).abs() < 1e-7, "{:?}", c[0]);
        assert!(close(c[1][0], 0.15), "{:?}", c[1]);
        // Unit 1 "a bird sat": p = 2/20, 1/20 (bird unseen), 3/20:
        // avg c = (0.1 · 0.05 · 0.15)^(1/3) = 0.00075^(1/3) = 0.0908560; max c = 1/20.
        assert!((c[0][1] - 0.0908560).abs() < 1e-7, "{:?}", c[0]);
        assert!(close(c[1][1], 0.05), "{:?}", c[1]);
        // Unit 2 "?!": both unseen, p = 1/20 each: avg c = max c = 0.05.
        assert!(close(c[0][2], 0.05) && close(c[1][2], 0.05));
        // Unit 3 has no token: NaN for both.
        assert!(c[0][3].is_nan() && c[1][3].is_nan());
        // The lower the confidence, the rarer the unit's words across the answers.
        assert!(c[0][0] > c[0][1] && c[1][0] > c[1][1]);
    }

    #[test]
    fn case_is_ignored_and_confidence_is_exp_minus_x() {
        let a = unigram_confidences(
            "ONE two",
            &strings(&["one TWO"]),
            &strings(&["One"]),
            &[UnigramStat::Max],
        );
        // N = 4, V = 3 (one, two, <unk>): p(one) = 3/7.
        assert!(close(a[0][0], 3.0 / 7.0), "{a:?}");
        assert!(close(confidence(0.0), 1.0) && close(confidence(2f64.ln()), 0.5));
    }

    #[test]
    fn no_units_no_stats() {
        assert_eq!(
            unigram_confidences("a", &[], &[], &[UnigramStat::Avg]),
            vec![Vec::<f64>::new()]
        );
        assert!(unigram_confidences("a", &[], &strings(&["a"]), &[]).is_empty());
    }
}
