//! Aligning an annotator's labelled sentences of one answer to the units uqlite scored in it
//! (`uqd eval --labels`): the two sentence splits often differ.
//!
//! * By text ([`by_text`]): a unit takes the label of the first unused labelled sentence with
//!   the same [`normalise`]d text (whitespace collapsed, trimmed, case-insensitive, trailing
//!   punctuation ignored). Where the splits differ, by containment over the labelled
//!   sentences no unit matched by text, comparing [`words`]: a unit inside one labelled
//!   sentence takes its label ([`Rule::Inside`]); a unit whose words are those of several
//!   consecutive labelled sentences is false if any of them is false, else true
//!   ([`Rule::Spanning`]).
//! * By index ([`by_index`], only where the labels have no text): unit position = the
//!   sentence's index.
//!
//! Units left unmatched are left out by the caller; [`Counts`] says how many of each.

/// How a unit got its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The same normalised text.
    Text,
    /// Inside one labelled sentence.
    Inside,
    /// Spanning several consecutive labelled sentences.
    Spanning,
    /// The same index (labels without text).
    Index,
}

/// One answer aligned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Aligned {
    /// Per unit (in the order given): its label (true = factual) and the rule, `None` when
    /// unmatched.
    pub units: Vec<Option<(bool, Rule)>>,
    /// Labelled sentences no unit matched.
    pub unmatched_sentences: usize,
}

/// The tallies of [`Aligned`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub text: usize,
    pub inside: usize,
    pub spanning: usize,
    pub index: usize,
    pub units_unmatched: usize,
    pub sentences: usize,
    pub sentences_unmatched: usize,
}

impl Counts {
    /// Adds one answer of `sentences` labelled sentences.
    pub fn add(&mut self, a: &Aligned, sentences: usize) {
        for u in &a.units {
            match u {
                Some((_, Rule::Text)) => self.text += 1,
                Some((_, Rule::Inside)) => self.inside += 1,
                Some((_, Rule::Spanning)) => self.spanning += 1,
                Some((_, Rule::Index)) => self.index += 1,
                None => self.units_unmatched += 1,
            }
        }
        self.sentences += sentences;
        self.sentences_unmatched += a.unmatched_sentences;
    }

    pub fn containment(&self) -> usize {
        self.inside + self.spanning
    }

    pub fn matched(&self) -> usize {
        self.text + self.containment() + self.index
    }

    pub fn units(&self) -> usize {
        self.matched() + self.units_unmatched
    }
}

/// Whitespace collapsed, trimmed, lowercased, trailing punctuation (and closing quotes) dropped.
pub fn normalise(s: &str) -> String {
    let mut out = s.split_whitespace().collect::<Vec<_>>().join(" ");
    out = out.to_lowercase();
    while out
        .chars()
        .last()
        .is_some_and(|c| c.is_whitespace() || is_trailing_punct(c))
    {
        out.pop();
    }
    out
}

fn is_trailing_punct(c: char) -> bool {
    c.is_ascii_punctuation() || "…。．！？，；：”’»」』)".contains(c)
}

/// The lowercased runs of letters and digits of `s`: the word tokens of
/// [`crate::words::tokenize`], its punctuation tokens left out.
pub fn words(s: &str) -> Vec<String> {
    crate::words::tokenize(s)
        .into_iter()
        .filter(|t| t.chars().next().is_some_and(char::is_alphanumeric))
        .collect()
}

/// Aligns `units` to the labelled `sentences` (text, label; in the answer's order) by text,
/// then by containment (module doc).
pub fn by_text(units: &[&str], sentences: &[(&str, bool)]) -> Aligned {
    let norm: Vec<String> = sentences.iter().map(|s| normalise(s.0)).collect();
    // per labelled sentence, the rule that took it
    let mut taken: Vec<Option<Rule>> = vec![None; sentences.len()];
    let mut out: Vec<Option<(bool, Rule)>> = vec![None; units.len()];
    for (i, u) in units.iter().enumerate() {
        let u = normalise(u);
        if u.is_empty() {
            continue;
        }
        if let Some(j) = (0..sentences.len()).find(|&j| taken[j].is_none() && norm[j] == u) {
            taken[j] = Some(Rule::Text);
            out[i] = Some((sentences[j].1, Rule::Text));
        }
    }
    // containment: inside a sentence no unit took by text or spans (several units may share
    // one), or spanning sentences nothing took
    let sw: Vec<Vec<String>> = sentences.iter().map(|s| words(s.0)).collect();
    for (i, u) in units.iter().enumerate() {
        let uw = words(u);
        if out[i].is_some() || uw.is_empty() {
            continue;
        }
        let open = |j: usize| matches!(taken[j], None | Some(Rule::Inside));
        if let Some(j) = (0..sentences.len()).find(|&j| open(j) && contains(&sw[j], &uw)) {
            taken[j] = Some(Rule::Inside);
            out[i] = Some((sentences[j].1, Rule::Inside));
        } else if let Some((j, k)) = spanned(&sw, &taken, &uw) {
            taken[j..=k]
                .iter_mut()
                .for_each(|x| *x = Some(Rule::Spanning));
            let label = sentences[j..=k].iter().all(|s| s.1);
            out[i] = Some((label, Rule::Spanning));
        }
    }
    Aligned {
        units: out,
        unmatched_sentences: taken.iter().filter(|x| x.is_none()).count(),
    }
}

/// Whether `needle` is a contiguous run of `hay`.
fn contains(hay: &[String], needle: &[String]) -> bool {
    needle.len() <= hay.len() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The first range j..=k (k > j) of consecutive sentences nothing `taken` whose words, joined,
/// are `unit`.
fn spanned(sw: &[Vec<String>], taken: &[Option<Rule>], unit: &[String]) -> Option<(usize, usize)> {
    for j in 0..sw.len() {
        let mut joined: Vec<&String> = Vec::new();
        for k in j..sw.len() {
            if taken[k].is_some() || sw[k].is_empty() {
                break;
            }
            joined.extend(&sw[k]);
            if joined.len() > unit.len() || !joined.iter().zip(unit).all(|(a, b)| *a == b) {
                break;
            }
            if joined.len() == unit.len() {
                return (k > j).then_some((j, k));
            }
        }
    }
    None
}

/// Aligns units at `positions` to labelled sentences (index, label) by index.
pub fn by_index(positions: &[i64], sentences: &[(i64, bool)]) -> Aligned {
    let mut used = vec![false; sentences.len()];
    let units = positions
        .iter()
        .map(|&p| {
            let j = (0..sentences.len()).find(|&j| !used[j] && sentences[j].0 == p)?;
            used[j] = true;
            Some((sentences[j].1, Rule::Index))
        })
        .collect();
    Aligned {
        units,
        unmatched_sentences: used.iter().filter(|x| !**x).count(),
    }
}

#[cfg(test)]
mod tests;
