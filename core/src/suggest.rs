//! "Did you mean …": the known name closest to a misspelt one, by edit distance, for the errors
//! about unknown option keys, job keys and scorer names.

/// The Levenshtein distance between `a` and `b` (insertions, deletions and substitutions of
/// one character each cost 1), over Unicode scalar values.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The candidate closest to `given` (compared in lower case), when it is close enough to be
/// a likely misspelling: at most a third of the longer name's characters differ (at least 1,
/// at most 4), or one is the other with a part added or dropped at either end (`chunk` for
/// `chunk_size`, `source_column` for `sources_column`). Ties go to the candidate listed first.
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let given = given.trim().to_lowercase();
    if given.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(&given, c);
        let longer = given.chars().count().max(c.chars().count());
        let close = d <= (longer / 3).clamp(1, 4);
        let part = given.chars().count() >= 4
            && (c.starts_with(given.as_str()) || c.ends_with(given.as_str()));
        if (close || part) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `did you mean "x"? ` for the closest candidate (see [`closest`]), else an empty string:
/// the text that goes before the list of valid names in an error.
pub fn did_you_mean<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(given, candidates) {
        Some(c) => format!("did you mean {c:?}? "),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("scorer", "scorers"), 1);
        assert_eq!(
            edit_distance("grounded_entailmnt", "grounded_entailment"),
            1
        );
        assert_eq!(edit_distance("café", "cafe"), 1);
        assert_eq!(edit_distance("ab", "ba"), 2);
    }

    #[test]
    fn closest_finds_misspellings_and_truncations_only() {
        let keys = [
            "scorers",
            "sources",
            "sources_column",
            "chunk_size",
            "granularity",
        ];
        assert_eq!(closest("scorer", keys), Some("scorers"));
        assert_eq!(closest("Scorerz", keys), Some("scorers"));
        assert_eq!(closest("source_column", keys), Some("sources_column"));
        assert_eq!(closest("chunk", keys), Some("chunk_size"));
        assert_eq!(closest("granularty", keys), Some("granularity"));
        assert_eq!(closest("column", keys), Some("sources_column"), "a suffix");
        for far in ["temperature", "x", "", "zzz", "abc"] {
            assert_eq!(closest(far, keys), None, "{far}");
        }
    }

    #[test]
    fn did_you_mean_is_empty_without_a_close_name() {
        assert_eq!(
            did_you_mean("scorer", ["scorers"]),
            "did you mean \"scorers\"? "
        );
        assert_eq!(did_you_mean("nothing_like_it", ["scorers"]), "");
    }
}
