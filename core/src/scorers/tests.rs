use super::*;

#[test]
fn names_round_trip() {
    for s in ALL {
        assert_eq!(Scorer::parse(s.name()), Ok(*s));
        assert_eq!(s.to_string(), s.name());
    }
    assert_eq!(ALL.len(), 43);
}

#[test]
fn the_ensemble_is_a_unit_scorer_of_its_own_family() {
    let e = Scorer::Ensemble;
    assert_eq!(Scorer::parse("Ensemble"), Ok(e));
    assert_eq!(
        (e.family(), e.consistency()),
        (Family::Ensemble, Consistency::Weighted)
    );
    assert_eq!(Family::Ensemble.as_str(), "ensemble");
    // its needs are its components' (ScoringOptions::computed), none of its own
    assert!(!e.needs_samples() && !e.needs_nli() && !e.needs_embeddings() && !e.needs_llm());
    assert!(!e.is_response_level() && e.granularities() == Granularity::ALL);
    assert_eq!(e.info().options, &["ensemble_weights"]);
}

#[test]
fn aliases_case_and_whitespace() {
    assert_eq!(Scorer::parse("LUQ"), Ok(Scorer::ContrastedEntailment));
    assert_eq!(
        Scorer::parse(" luq_atomic "),
        Ok(Scorer::ContrastedEntailment)
    );
    assert_eq!(
        Scorer::parse("Luq_Pair"),
        Ok(Scorer::MatchedContrastedEntailment)
    );
    assert_eq!(
        Scorer::parse("MATCHED_BERT_SCORE"),
        Ok(Scorer::MatchedBertScore)
    );
}

#[test]
fn unknown_lists_valid_names() {
    let e = Scorer::parse("bertscore").unwrap_err();
    assert!(e.contains("\"bertscore\""), "{e}");
    for s in ALL {
        assert!(e.contains(s.name()), "{e}");
    }
    assert!(e.contains("luq_pair"), "{e}");
    assert!(Scorer::parse("").is_err());
}

#[test]
fn families_and_consistency() {
    use Consistency as C;
    let expect = [
        (
            Scorer::Entailment,
            Family::UnitResponse,
            C::Entailment,
            "p_e",
        ),
        (
            Scorer::Noncontradiction,
            Family::UnitResponse,
            C::Noncontradiction,
            "1-p_c",
        ),
        (
            Scorer::ContrastedEntailment,
            Family::UnitResponse,
            C::ContrastedEntailment,
            "p_e/(p_e+p_c)",
        ),
        (
            Scorer::MatchedEntailment,
            Family::MatchedUnit,
            C::Entailment,
            "p_e",
        ),
        (
            Scorer::MatchedNoncontradiction,
            Family::MatchedUnit,
            C::Noncontradiction,
            "1-p_c",
        ),
        (
            Scorer::MatchedContrastedEntailment,
            Family::MatchedUnit,
            C::ContrastedEntailment,
            "p_e/(p_e+p_c)",
        ),
        (
            Scorer::MatchedCosineSim,
            Family::MatchedUnit,
            C::Cosine,
            "cos_hat",
        ),
        (
            Scorer::MatchedBertScore,
            Family::MatchedUnit,
            C::BertScore,
            "bert_f1",
        ),
    ];
    for (s, f, c, cs) in expect {
        assert_eq!(s.family(), f);
        assert_eq!(s.consistency(), c);
        assert_eq!(c.as_str(), cs);
        assert_eq!(s.needs_nli(), !s.needs_embeddings());
    }
    assert_eq!(Family::UnitResponse.as_str(), "unit_response");
    assert_eq!(Family::MatchedUnit.as_str(), "matched_unit");
    assert_eq!(Family::Verbalized.as_str(), "verbalized");
    let v = Scorer::VerbalizedConfidence;
    assert_eq!(Scorer::parse(" Verbalized_Confidence "), Ok(v));
    assert_eq!(
        (v.family(), v.consistency()),
        (Family::Verbalized, C::Verbalized)
    );
    assert!(!v.needs_nli() && !v.needs_embeddings() && v.needs_llm() && v.needs_prompt());
    assert!(ALL.iter().filter(|s| s.needs_llm()).count() == 7);
    assert_eq!(v.paper_name(Granularity::Claim), "verbalized confidence");
    assert!(Scorer::MatchedCosineSim.needs_embeddings());
    assert!(Scorer::MatchedBertScore.needs_embeddings());
    assert!(Scorer::MatchedEntailment.needs_nli());
}

#[test]
fn paper_names() {
    use Granularity::*;
    assert_eq!(Scorer::ContrastedEntailment.paper_name(Sentence), "LUQ");
    assert_eq!(Scorer::ContrastedEntailment.paper_name(Claim), "LUQ-atomic");
    assert_eq!(Scorer::Entailment.paper_name(Sentence), "extension of LUQ");
    assert_eq!(
        Scorer::Noncontradiction.paper_name(Claim),
        "extension of LUQ-atomic"
    );
    assert_eq!(
        Scorer::MatchedContrastedEntailment.paper_name(Sentence),
        "LUQ-pair"
    );
    assert_eq!(
        Scorer::MatchedContrastedEntailment.paper_name(Claim),
        "extension of LUQ-pair (granularity)"
    );
    assert_eq!(
        Scorer::MatchedBertScore.paper_name(Sentence),
        "extension of LUQ-pair"
    );
    assert_eq!(
        Scorer::MatchedCosineSim.paper_name(Claim),
        "extension of LUQ-pair"
    );
}

#[test]
fn graph_scorers() {
    let graph: Vec<Scorer> = ALL
        .iter()
        .copied()
        .filter(|s| s.family() == Family::Graph)
        .collect();
    assert_eq!(graph.len(), 5);
    for s in &graph {
        let m = s.graph_metric().unwrap_or(GraphMetric::Betweenness);
        assert_eq!(m.name(), s.name(), "scorer and metric share uqlm's name");
        assert_eq!(Scorer::parse(&s.name().to_uppercase()), Ok(*s));
        assert!(s.needs_nli() && !s.needs_embeddings() && !s.needs_llm());
        assert_eq!(s.consistency(), Consistency::Entailment);
    }
    assert_eq!(Family::Graph.as_str(), "graph");
    assert_eq!(Scorer::Entailment.graph_metric(), None);
    use Granularity::Claim;
    assert_eq!(Scorer::PageRank.paper_name(Claim), "Jiang et al. 2024");
    assert_eq!(
        Scorer::BetweennessCentrality.paper_name(Claim),
        "Jiang et al. 2024"
    );
    assert_eq!(
        Scorer::ClosenessCentrality.paper_name(Claim),
        "Jiang et al. 2024"
    );
    assert_eq!(
        Scorer::HarmonicCentrality.paper_name(Claim),
        "new (this work)"
    );
    assert_eq!(
        Scorer::LaplacianCentrality.paper_name(Claim),
        "new (this work)"
    );
}

#[test]
fn unit_qa_and_short_form_scorers() {
    use Consistency as C;
    let qa = [
        (
            Scorer::QaNoncontradiction,
            "qa_noncontradiction",
            C::MeanNoncontradiction,
        ),
        (Scorer::QaCosineSim, "qa_cosine_sim", C::Cosine),
        (Scorer::QaBertScore, "qa_bert_score", C::BertScore),
        (Scorer::QaExactMatch, "qa_exact_match", C::ExactMatch),
        (
            Scorer::QaSemanticNegentropy,
            "qa_semantic_negentropy",
            C::SemanticNegentropy,
        ),
    ];
    for (s, name, c) in qa {
        assert_eq!(Scorer::parse(name), Ok(s));
        assert_eq!((s.family(), s.consistency()), (Family::UnitQa, c));
        assert!(s.needs_llm() && !s.needs_samples() && !s.is_response_level());
        assert_eq!(s.granularities(), Granularity::ALL);
        assert_eq!(s.granularity_names(), vec!["sentence", "claim"]);
    }
    assert_eq!(
        Scorer::QaCosineSim.paper_name(Granularity::Claim),
        "claim-QA (new, this work)"
    );
    assert_eq!(
        Scorer::QaExactMatch.paper_name(Granularity::Sentence),
        "sentence-QA (new, this work)"
    );
    assert!(Scorer::QaNoncontradiction.needs_nli() && !Scorer::QaExactMatch.needs_nli());
    assert!(Scorer::QaBertScore.needs_embeddings());
    let short = [
        (
            Scorer::ShortformSemanticNegentropy,
            "shortform_semantic_negentropy",
            C::SemanticNegentropy,
        ),
        (
            Scorer::ShortformNoncontradiction,
            "shortform_noncontradiction",
            C::MeanNoncontradiction,
        ),
        (
            Scorer::ShortformBertScore,
            "shortform_bert_score",
            C::BertScore,
        ),
        (
            Scorer::ShortformCosineSim,
            "shortform_cosine_sim",
            C::Cosine,
        ),
    ];
    for (s, name, c) in short {
        assert_eq!(Scorer::parse(name), Ok(s));
        assert_eq!((s.family(), s.consistency()), (Family::ShortForm, c));
        assert!(s.is_response_level() && !s.needs_llm());
        assert!(s.granularities().is_empty());
        assert_eq!(s.granularity_names(), vec!["response"]);
        assert!(!s.paper_name_at("response").is_empty());
    }
    assert!(Scorer::ShortformCosineSim.needs_samples());
    assert_eq!(Family::UnitQa.as_str(), "unit_qa");
    assert_eq!(Family::ShortForm.as_str(), "short_form");
    for s in ALL {
        assert!(!s.cost_class().is_empty() && !s.granularity_names().is_empty());
    }
}

#[test]
fn white_box_scorers() {
    use TokenStat as T;
    let response = [
        ("normalized_probability", None),
        ("min_probability", Some(T::MinProbability)),
        ("sequence_probability", Some(T::SequenceProbability)),
        ("mean_token_negentropy", Some(T::MeanNegentropy)),
        ("min_token_negentropy", Some(T::MinNegentropy)),
        ("probability_margin", Some(T::Margin)),
        ("monte_carlo_probability", Some(T::MonteCarlo)),
        ("consistency_and_confidence", Some(T::CoCoA)),
        ("semantic_negentropy", Some(T::WeightedNegentropy)),
        ("semantic_density", Some(T::SemanticDensity)),
        ("p_true", Some(T::PTrue)),
    ];
    for (name, stat) in response {
        let s = Scorer::parse(name).unwrap();
        assert_eq!(s.family(), Family::WhiteBox, "{name}");
        let c = stat.map_or(
            Consistency::NormalizedProbability,
            Consistency::TokenProbability,
        );
        assert_eq!(s.consistency(), c, "{name}");
        assert!(s.is_response_level(), "{name}");
        assert_eq!(s.needs_llm(), name == "p_true", "{name}");
        assert_eq!(s.granularity_names(), vec!["response"]);
    }
    let unit = [
        (
            "claim_probability",
            "max_claim_probability",
            T::ClaimProbability,
        ),
        (
            "claim_normalized_probability",
            "claim_perplexity",
            T::ClaimNormalizedProbability,
        ),
        (
            "claim_min_token_negentropy",
            "claim_max_token_entropy",
            T::ClaimMinNegentropy,
        ),
    ];
    for (name, alias, stat) in unit {
        let s = Scorer::parse(name).unwrap();
        assert_eq!(Scorer::parse(alias), Ok(s));
        assert_eq!(s.consistency(), Consistency::TokenProbability(stat));
        assert!(!s.is_response_level() && !s.needs_samples() && !s.needs_nli());
        assert_eq!(s.granularities(), Granularity::ALL);
    }
    // What needs the samples, the NLI model or embeddings, as the cost column says.
    let p = |n| Scorer::parse(n).unwrap();
    assert!(!p("normalized_probability").needs_samples());
    assert!(!p("normalized_probability").needs_nli() && !p("min_probability").needs_embeddings());
    assert!(
        p("monte_carlo_probability").needs_samples() && !p("monte_carlo_probability").needs_nli()
    );
    assert!(p("semantic_negentropy").needs_nli() && p("semantic_density").needs_nli());
    assert!(p("cocoa").needs_embeddings() && !p("cocoa").needs_nli());
    assert_eq!(Family::WhiteBox.as_str(), "white_box");
}

#[test]
fn ngram_scorers() {
    use crate::score::ngram::UnigramStat;
    let ngram = [
        (
            Scorer::UnigramAvg,
            "unigram_avg",
            Consistency::UnigramAvg,
            UnigramStat::Avg,
        ),
        (
            Scorer::UnigramMax,
            "unigram_max",
            Consistency::UnigramMax,
            UnigramStat::Max,
        ),
    ];
    for (s, name, c, stat) in ngram {
        assert_eq!(Scorer::parse(&name.to_uppercase()), Ok(s));
        assert_eq!((s.family(), s.consistency()), (Family::Ngram, c));
        assert_eq!(UnigramStat::of(c), Some(stat));
        // Model-free: no NLI, no embeddings, no LLM; the samples are its evidence.
        assert!(!s.needs_nli() && !s.needs_embeddings() && !s.needs_llm() && !s.needs_prompt());
        assert!(s.needs_samples() && !s.is_response_level());
        assert_eq!(s.granularity_names(), vec!["sentence", "claim"]);
        assert!(s
            .paper_name(Granularity::Sentence)
            .contains("SelfCheckGPT unigram"));
        assert!(s.cost_class().starts_with("none"));
    }
    assert_eq!(Family::Ngram.as_str(), "ngram");
    assert_eq!(UnigramStat::of(Consistency::Entailment), None);
    assert_eq!(
        ALL.iter().filter(|s| s.family() == Family::Ngram).count(),
        2
    );
}

#[test]
fn granularity_parse() {
    assert_eq!(Granularity::parse("sentence"), Ok(Granularity::Sentence));
    assert_eq!(Granularity::parse(" SENT "), Ok(Granularity::Sentence));
    assert_eq!(Granularity::parse("Claim"), Ok(Granularity::Claim));
    let e = Granularity::parse("word").unwrap_err();
    assert!(
        e.contains("\"word\"") && e.contains("sentence") && e.contains("claim"),
        "{e}"
    );
    assert_eq!(Granularity::default(), Granularity::Sentence);
    assert_eq!(Granularity::Claim.as_str(), "claim");
    assert_eq!(Granularity::Sentence.to_string(), "sentence");
}

#[test]
fn catalogue_rows_are_consistent() {
    assert_eq!(CATALOGUE.len(), ALL.len());
    for (i, row) in CATALOGUE.iter().enumerate() {
        assert_eq!(row.scorer as usize, i, "{}", row.name);
        assert_eq!(ALL[i], row.scorer);
        assert!(std::ptr::eq(row.scorer.info(), row));
        // A graph metric exactly for the graph scorers, sharing uqlm's name.
        assert_eq!(
            row.graph_metric.map(|m| m.name()),
            (row.family == Family::Graph).then_some(row.name),
            "{}",
            row.name
        );
        // Response level exactly for the short-form family and the white-box scorers that are
        // not claim_*; only graph scorers are limited to claims (the granularity check's message
        // says so).
        assert_eq!(
            row.granularities.is_empty(),
            row.family == Family::ShortForm
                || (row.family == Family::WhiteBox && !row.name.starts_with("claim_")),
            "{}",
            row.name
        );
        assert_eq!(
            row.granularities == [Granularity::Claim],
            row.family == Family::Graph
        );
        for opt in row.options {
            assert!(
                crate::options::OPTION_NAMES.contains(opt),
                "{}: {opt} is no option",
                row.name
            );
            assert!(!UNIT_SCORER_OPTIONS.contains(opt), "{}: {opt}", row.name);
        }
        assert!(!row.cost.is_empty() && !row.paper_name.claim.is_empty());
        // The scorers that compare samples are those that read num_samples (and
        // grounded_fallback, which compares them with every unit, but is NULL without them
        // rather than an error).
        assert_eq!(
            row.scorer.needs_samples() || row.scorer == Scorer::GroundedFallback,
            row.options.contains(&"num_samples"),
            "{}",
            row.name
        );
        assert_eq!(
            row.scorer.needs_prompt(),
            row.scorer == Scorer::VerbalizedConfidence || row.scorer == Scorer::PTrue
        );
    }
    for opt in UNIT_SCORER_OPTIONS {
        assert!(crate::options::OPTION_NAMES.contains(opt), "{opt}");
    }
    // Names and aliases are unique and lower-case, so parsing is unambiguous.
    let mut names: Vec<&str> = all_names();
    names.extend(aliases().map(|(a, _)| a));
    for n in &names {
        assert_eq!(n.to_ascii_lowercase(), *n);
    }
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "duplicate scorer name or alias");
    assert_eq!(
        aliases().collect::<Vec<_>>(),
        vec![
            ("luq", Scorer::ContrastedEntailment),
            ("luq_atomic", Scorer::ContrastedEntailment),
            ("luq_pair", Scorer::MatchedContrastedEntailment),
            ("cocoa", Scorer::ConsistencyAndConfidence),
            ("max_claim_probability", Scorer::ClaimProbability),
            ("claim_perplexity", Scorer::ClaimNormalizedProbability),
            ("claim_max_token_entropy", Scorer::ClaimMinTokenNegentropy),
        ]
    );
}

fn reference_md() -> std::path::PathBuf {
    crate::generated_docs::reference_md(env!("CARGO_MANIFEST_DIR"))
}

/// docs/reference.md's scorer table is `markdown_table()`; with `UQ_BLESS=1` the test writes
/// it there instead of failing.
#[test]
fn catalogue_table_matches_docs_reference() {
    let path = reference_md();
    let stale = format!(
        "the scorer table in {} is not the catalogue's; run UQ_BLESS=1 cargo test -p uq-core \
         catalogue to regenerate it",
        path.display()
    );
    crate::generated_docs::check_section(&path, DOCS_BEGIN, DOCS_END, &markdown_table(), &stale);
}

/// Every scorer name and alias, and every option name that `options_json`, an LLM config and a
/// job accept, is documented in docs/reference.md (in backticks).
#[test]
fn catalogue_names_and_options_are_documented() {
    let path = reference_md();
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let names = all_names()
        .into_iter()
        .chain(aliases().map(|(a, _)| a))
        .chain(crate::options::OPTION_NAMES.iter().copied())
        .chain(crate::options::LLM_CONFIG_KEYS.iter().copied())
        .chain(crate::jobs::JOB_KEYS.iter().copied());
    let missing: Vec<&str> = names.filter(|n| !doc.contains(&format!("`{n}`"))).collect();
    assert!(
        missing.is_empty(),
        "{} does not name (in backticks): {}",
        path.display(),
        missing.join(", ")
    );
}
