use super::*;
use crate::aggregate::Aggregation;
use crate::score::black_box::Clustering;
use crate::scorers::Granularity;
use serde_json::json;

#[test]
fn null_and_empty_object_are_defaults() {
    let d = ScoreOptions::default();
    assert_eq!(parse_options(&Value::Null), Ok(d.clone()));
    assert_eq!(parse_options(&json!({})), Ok(d.clone()));
    assert_eq!(d.decompose.granularity, Granularity::Sentence);
    assert_eq!(d.aggregate.aggregation, Aggregation::Mean);
    assert_eq!(
        d.scoring.scorers,
        vec![
            Scorer::Entailment,
            Scorer::Noncontradiction,
            Scorer::ContrastedEntailment
        ]
    );
    assert_eq!(
        (
            d.scoring.num_samples,
            d.decompose.units,
            d.decompose.sample_units
        ),
        (None, None, None)
    );
    // null values keep defaults
    assert_eq!(
        parse_options(&json!({"scorers": null, "units": null})),
        Ok(ScoreOptions::default())
    );
}

#[test]
fn not_an_object() {
    for v in [json!([1]), json!("x"), json!(3), json!(true)] {
        let e = parse_options(&v).unwrap_err();
        assert_eq!(
            e,
            "options_json must be a JSON object, e.g. {\"scorers\":[\"entailment\"]}"
        );
    }
}

#[test]
fn unknown_key() {
    let e = parse_options(&json!({"scorer": ["entailment"]})).unwrap_err();
    assert!(
        e.starts_with("unknown option \"scorer\" in options_json: did you mean \"scorers\"? valid options are granularity,"),
        "{e}"
    );
    for k in OPTION_NAMES {
        assert!(e.contains(k), "{e}");
    }
    let e = parse_options(&json!({"nothing_like_any": 1})).unwrap_err();
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn unknown_scorer_suggests_the_closest_name() {
    let e = parse_options(&json!({"scorers": ["grounded_entailmnt"]})).unwrap_err();
    assert!(
        e.contains("unknown scorer \"grounded_entailmnt\": did you mean \"grounded_entailment\"? valid scorers are"),
        "{e}"
    );
    let e = parse_options(&json!({"scorers": ["bogus"]})).unwrap_err();
    assert!(
        e.contains("unknown scorer \"bogus\": valid scorers are"),
        "{e}"
    );
}

#[test]
fn full_options() {
    let o = parse_options(&json!({
        "granularity": "claim",
        "scorers": ["LUQ_PAIR", "entailment", "matched_contrasted_entailment", "luq"],
        "aggregation": "gmean",
        "num_samples": 3,
        "units": ["a", "b"],
        "sample_units": [["x"], [], ["y", "z"]]
    }))
    .unwrap_or_default();
    assert_eq!(o.decompose.granularity, Granularity::Claim);
    assert_eq!(
        o.scoring.scorers,
        vec![
            Scorer::MatchedContrastedEntailment,
            Scorer::Entailment,
            Scorer::ContrastedEntailment
        ]
    );
    assert_eq!(o.aggregate.aggregation, Aggregation::GeometricMean);
    assert_eq!(o.scoring.num_samples, Some(3));
    assert_eq!(
        o.decompose.units,
        Some(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(o.decompose.sample_units.as_ref().map(Vec::len), Some(3));
    assert!(o.scoring.has_matched_unit());
}

#[test]
fn scorers_string_or_array() {
    let o = parse_options(&json!({"scorers": "matched_bert_score"})).unwrap_or_default();
    assert_eq!(o.scoring.scorers, vec![Scorer::MatchedBertScore]);
    let e = parse_options(&json!({"scorers": []})).unwrap_err();
    assert!(e.contains("scorers") && e.contains("empty"), "{e}");
    let e = parse_options(&json!({"scorers": ["entailment", 3]})).unwrap_err();
    assert!(e.contains("scorers[1]") && e.contains("a number"), "{e}");
    let e = parse_options(&json!({"scorers": {"a": 1}})).unwrap_err();
    assert!(e.contains("scorers") && e.contains("an object"), "{e}");
    let e = parse_options(&json!({"scorers": ["nope"]})).unwrap_err();
    assert!(
        e.contains("scorers") && e.contains("\"nope\"") && e.contains("matched_cosine_sim"),
        "{e}"
    );
}

#[test]
fn wrong_types_name_the_option() {
    let cases = [
        (json!({"granularity": 1}), "granularity"),
        (json!({"granularity": "word"}), "granularity"),
        (json!({"aggregation": ["mean"]}), "aggregation"),
        (json!({"aggregation": "median"}), "aggregation"),
        (json!({"num_samples": 0}), "num_samples"),
        (json!({"num_samples": -2}), "num_samples"),
        (json!({"num_samples": 2.5}), "num_samples"),
        (json!({"num_samples": "5"}), "num_samples"),
        (json!({"units": "one unit"}), "units"),
        (json!({"units": ["ok", null]}), "units[1]"),
        (json!({"sample_units": ["a"]}), "sample_units[0]"),
        (json!({"sample_units": [["a"], [1]]}), "sample_units[1][0]"),
        (json!({"sample_units": "a"}), "sample_units"),
    ];
    for (v, name) in cases {
        let e = parse_options(&v).unwrap_err();
        assert!(e.contains(name), "{v}: {e}");
    }
    let e = parse_options(&json!({"num_samples": 0})).unwrap_err();
    assert!(e.contains("positive integer") && e.contains("got 0"), "{e}");
}

#[test]
fn claim_without_units_is_decomposed_by_the_daemon() {
    let o = parse_options(&json!({"granularity": "claim"})).unwrap_or_default();
    assert_eq!(
        (o.decompose.granularity, o.decompose.units),
        (Granularity::Claim, None)
    );
    let o = parse_options(&json!({"granularity": "claim", "scorers": ["luq_pair"]}))
        .unwrap_or_default();
    assert_eq!(o.decompose.sample_units, None);
    assert!(parse_options(&json!({"granularity": "claim", "units": ["c"]})).is_ok());
}

#[test]
fn llm_options() {
    let o = parse_options(&json!({
        "llm": {"backend": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": null, "temperature": 0.5, "top_p": 0.9, "max_tokens": 64, "seed": 7,
                "n_supported": false, "timeout_ms": 1000, "max_retries": 2, "concurrency": 3,
                "requests_per_minute": 60, "tokens_per_minute": 1000, "logprobs": true},
        "decomposition_llm": {},
        "judge_llm": {"backend": "LOCAL", "model": "/m/x.gguf", "seed": null}
    }))
    .unwrap_or_default();
    let llm = o.llm.default.clone().unwrap_or_default();
    assert_eq!(llm.backend, LlmBackendKind::OpenAi);
    assert_eq!(llm.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(llm.api_key_env, Some(None), "null = no key");
    assert_eq!((llm.temperature, llm.top_p), (Some(0.5), Some(0.9)));
    assert_eq!(
        (llm.max_tokens, llm.seed, llm.n_supported),
        (Some(64), Some(7), Some(false))
    );
    assert_eq!(
        (llm.timeout_ms, llm.max_retries, llm.concurrency),
        (Some(1000), Some(2), Some(3))
    );
    assert_eq!(
        (llm.requests_per_minute, llm.tokens_per_minute, llm.logprobs),
        (Some(60), Some(1000), Some(true))
    );
    // Roles fall back to llm; an empty object is the local default.
    assert_eq!(o.llm.for_role(LlmRole::Generation), llm);
    assert_eq!(o.llm.for_role(LlmRole::Reconstruction), llm);
    assert_eq!(o.llm.for_role(LlmRole::Decomposition), LlmConfig::default());
    let judge = o.llm.for_role(LlmRole::Judge);
    assert_eq!(
        (judge.backend, judge.model.as_deref(), judge.seed),
        (LlmBackendKind::Local, Some("/m/x.gguf"), None)
    );
    assert_eq!(
        ScoreOptions::default().llm.for_role(LlmRole::Judge),
        LlmConfig::default()
    );
    assert_eq!(LlmConfig::default().backend, LlmBackendKind::Local);
    assert_ne!(judge.memo_key(), LlmConfig::default().memo_key());
    let absent = parse_llm_config("llm", &json!({"backend": "openai"})).unwrap_or_default();
    assert_eq!(
        absent.api_key_env, None,
        "absent = the client's default variable"
    );
    for r in LlmRole::ALL {
        assert!(OPTION_NAMES.contains(&r.option_name()));
        assert_eq!(LlmRole::from_option_name(r.option_name()), Some(*r));
    }
}

#[test]
fn llm_by_name_says_register_it() {
    for key in std::iter::once("llm").chain(LlmRole::ALL.iter().map(|r| r.option_name())) {
        let e = parse_options(&json!({ key: "gpt" })).unwrap_err();
        assert!(
            e.contains(key)
                && e.contains("\"gpt\"")
                && e.contains("temp.uq_llms")
                && e.contains("object"),
            "{e}"
        );
    }
    let e = parse_options(&json!({"llm": "o'brien"})).unwrap_err();
    assert!(e.contains("'o''brien'"), "{e}");
}

#[test]
fn llm_config_errors_name_the_key() {
    let cases = [
        (json!({"llm": 3}), "option llm must be an LLM config object"),
        (
            json!({"llm": {"modle": "x"}}),
            "unknown key \"modle\" in option llm",
        ),
        (json!({"llm": {"backend": "vllm"}}), "llm.backend"),
        (json!({"llm": {"backend": 1}}), "llm.backend"),
        (
            json!({"judge_llm": {"temperature": 3}}),
            "judge_llm.temperature",
        ),
        (json!({"llm": {"temperature": "hot"}}), "llm.temperature"),
        (json!({"llm": {"top_p": 0}}), "llm.top_p"),
        (json!({"llm": {"max_tokens": 0}}), "llm.max_tokens"),
        (json!({"llm": {"seed": -1}}), "llm.seed"),
        (json!({"llm": {"n_supported": "yes"}}), "llm.n_supported"),
        (json!({"llm": {"max_retries": 99}}), "llm.max_retries"),
        (json!({"llm": {"concurrency": 0}}), "llm.concurrency"),
        (json!({"llm": {"api_key_env": 5}}), "llm.api_key_env"),
    ];
    for (v, want) in cases {
        let e = parse_options(&v).unwrap_err();
        assert!(e.contains(want), "{v}: {e}");
    }
    let e = parse_options(&json!({"llm": {"modle": "x"}})).unwrap_err();
    for k in LLM_CONFIG_KEYS {
        assert!(e.contains(k), "{e}");
    }
}

#[test]
fn generation_and_uad_options() {
    let d = ScoreOptions::default();
    assert_eq!(
        (d.generation.temperature, d.generation.sampling_temperature),
        (0.0, 1.0)
    );
    assert_eq!(
        (
            d.scoring.prompt.clone(),
            d.uad.threshold,
            d.uad.threshold_percentile,
            d.uad.uad_scorer
        ),
        (None, None, None, None)
    );
    assert_eq!(d.uad_scorer(), Scorer::Entailment);
    assert!((DEFAULT_UAD_THRESHOLD - 1.0 / 3.0).abs() < 1e-15);
    let o = parse_options(&json!({
        "temperature": 0.2, "sampling_temperature": 1.5, "prompt": "Who?",
        "threshold": 0.5, "uad_scorer": "luq", "scorers": ["noncontradiction", "verbalized_confidence"]
    }))
    .unwrap_or_default();
    assert_eq!(
        (o.generation.temperature, o.generation.sampling_temperature),
        (0.2, 1.5)
    );
    assert_eq!(o.scoring.prompt.as_deref(), Some("Who?"));
    assert_eq!(o.uad.threshold, Some(0.5));
    assert_eq!(o.uad.min_kept, 0);
    assert_eq!(
        parse_options(&json!({"min_kept": 2})).map(|o| o.uad.min_kept),
        Ok(2)
    );
    assert_eq!(o.uad_scorer(), Scorer::ContrastedEntailment);
    assert_eq!(
        o.scoring.require_prompt(Scorer::VerbalizedConfidence),
        Ok("Who?")
    );
    let o = parse_options(
        &json!({"scorers": ["matched_cosine_sim", "entailment"], "threshold_percentile": 25}),
    )
    .unwrap_or_default();
    assert_eq!(
        (o.uad.threshold, o.uad.threshold_percentile),
        (None, Some(25.0))
    );
    assert_eq!(o.uad_scorer(), Scorer::MatchedCosineSim);
    let e = o
        .scoring
        .require_prompt(Scorer::VerbalizedConfidence)
        .unwrap_err();
    assert!(
        e.contains("prompt") && e.contains("verbalized_confidence"),
        "{e}"
    );
    let cases = [
        (json!({"temperature": 2.5}), "temperature"),
        (json!({"temperature": "0"}), "temperature"),
        (json!({"sampling_temperature": 0}), "sampling_temperature"),
        (json!({"prompt": 3}), "prompt"),
        (json!({"prompt": "  "}), "prompt"),
        (json!({"threshold": 1.5}), "threshold"),
        (json!({"threshold_percentile": 101}), "threshold_percentile"),
        (json!({"threshold_percentile": -1}), "threshold_percentile"),
        (json!({"uad_scorer": "nope"}), "uad_scorer"),
        (json!({"uad_scorer": ["entailment"]}), "uad_scorer"),
        (
            json!({"threshold": 0.3, "threshold_percentile": 30}),
            "threshold_percentile",
        ),
        (json!({"conformal": 0.5}), "option conformal"),
        (
            json!({"conformal": {"method": "platt", "a": 1, "b": 0}}),
            "option conformal.method",
        ),
        (
            json!({"conformal": CONFORMAL_MODEL(), "threshold": 0.5}),
            "options conformal and threshold",
        ),
        (
            json!({"conformal": CONFORMAL_MODEL(), "threshold_percentile": 50}),
            "options conformal and threshold_percentile",
        ),
        (json!({"min_kept": -1}), "option min_kept"),
        (json!({"min_kept": 1.5}), "option min_kept"),
        (json!({"min_kept": "1"}), "option min_kept"),
        (
            json!({"conformal": CONFORMAL_MODEL(), "min_kept": 1}),
            "options conformal and min_kept",
        ),
    ];
    for (v, name) in cases {
        let e = parse_options(&v).unwrap_err();
        assert!(e.contains(name), "{v}: {e}");
    }
}

#[test]
fn graph_options() {
    let d = ScoreOptions::default();
    assert_eq!(
        (d.scoring.graph_threshold, d.scoring.pagerank_damping),
        (0.5, 0.85)
    );
    assert_eq!(d.scoring.claim_union, None);
    let o = parse_options(&json!({
        "granularity": "claim", "scorers": ["page_rank", "entailment"],
        "claim_union": ["a", "b"], "graph_threshold": 0.7, "pagerank_damping": 0.9
    }))
    .unwrap_or_default();
    assert!(o.scoring.has_graph());
    assert_eq!(
        o.scoring.claim_union,
        Some(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(
        (o.scoring.graph_threshold, o.scoring.pagerank_damping),
        (0.7, 0.9)
    );
    assert_eq!(o.check_graph(), Ok(()));
    let e = parse_options(&json!({"scorers": ["page_rank"], "claim_union": ["a"]})).unwrap_err();
    assert!(
        e.contains("page_rank") && e.contains("granularity") && e.contains("claim"),
        "{e}"
    );
    // Without claim_union the daemon merges claims with the merge LLM.
    let o = parse_options(&json!({"granularity": "claim", "scorers": ["harmonic_centrality"]}))
        .unwrap_or_default();
    assert_eq!(
        (o.scoring.claim_union.clone(), o.check_graph()),
        (None, Ok(()))
    );
    assert!(o.scoring.has_graph());
    // Without graph scorers the options are accepted and unused.
    assert!(parse_options(&json!({"claim_union": ["a"], "graph_threshold": 0.2})).is_ok());
    for (v, name) in [
        (json!({"claim_union": "a"}), "claim_union"),
        (json!({"claim_union": ["a", 1]}), "claim_union[1]"),
        (json!({"claim_union": ["a", " "]}), "claim_union[1]"),
        (json!({"graph_threshold": 1.5}), "graph_threshold"),
        (json!({"pagerank_damping": -0.1}), "pagerank_damping"),
        (json!({"pagerank_damping": "x"}), "pagerank_damping"),
    ] {
        let e = parse_options(&v).unwrap_err();
        assert!(e.contains(name), "{v}: {e}");
    }
}

#[test]
fn unit_qa_and_short_form_options() {
    let d = ScoreOptions::default();
    assert_eq!((d.scoring.num_questions, d.scoring.qa_samples), (1, 5));
    assert_eq!(d.scoring.semantic_clustering, Clustering::Uqlm);
    assert_eq!(d.scoring.response_logprobs, None);
    let o = parse_options(&json!({
        "scorers": ["qa_exact_match", "shortform_cosine_sim", "normalized_probability"],
        "num_questions": 2, "qa_samples": 3, "semantic_clustering": "bidirectional",
        "response_logprobs": [-0.5, 0, -1e-3]
    }))
    .unwrap_or_default();
    assert_eq!((o.scoring.num_questions, o.scoring.qa_samples), (2, 3));
    assert_eq!(o.scoring.semantic_clustering, Clustering::Bidirectional);
    assert_eq!(
        o.scoring
            .response_logprobs
            .as_deref()
            .map(crate::logprobs::values),
        Some(vec![-0.5, 0.0, -1e-3])
    );
    assert!(o.scoring.has_unit_qa() && o.scoring.needs_units());
    let short = parse_options(
        &json!({"scorers": ["shortform_noncontradiction", "normalized_probability"]}),
    )
    .unwrap_or_default();
    assert!(!short.scoring.needs_units() && !short.scoring.has_unit_qa());
    for (v, want) in [
        (
            json!({"num_questions": 0}),
            "num_questions must be an integer in 1..=100",
        ),
        (json!({"num_questions": "2"}), "num_questions"),
        (json!({"qa_samples": 101}), "qa_samples"),
        (json!({"qa_samples": 1.5}), "qa_samples"),
        (
            json!({"semantic_clustering": "kmeans"}),
            "semantic_clustering",
        ),
        (
            json!({"response_logprobs": "x"}),
            "response_logprobs must be an array",
        ),
        (
            json!({"response_logprobs": [-1, 0.5]}),
            "response_logprobs[1]",
        ),
        (json!({"response_logprobs": [null]}), "response_logprobs[0]"),
    ] {
        let e = parse_options(&v).unwrap_err();
        assert!(e.contains(want), "{v}: {e}");
    }
    let e = parse_options(&json!({"semantic_clustering": "kmeans"})).unwrap_err();
    assert!(e.contains("uqlm") && e.contains("bidirectional"), "{e}");
}

#[test]
fn samples() {
    assert_eq!(
        parse_samples(&json!(["a", "b"])),
        Ok(vec!["a".to_string(), "b".to_string()])
    );
    let e = parse_samples(&json!([])).unwrap_err();
    assert!(
        e.contains("samples_json must hold at least one sampled response"),
        "{e}"
    );
    let e = parse_samples(&json!(["a", 2, "c"])).unwrap_err();
    assert!(
        e.contains("samples_json[1]") && e.contains("a number"),
        "{e}"
    );
    let e = parse_samples(&json!({"a": "b"})).unwrap_err();
    assert!(e.contains("samples_json") && e.contains("array"), "{e}");
    assert!(parse_samples(&Value::Null).is_err());
}

#[test]
fn selecting_samples() {
    let s: Vec<String> = ["a", "b", "c"].iter().map(|x| x.to_string()).collect();
    assert_eq!(select_samples(&s, None), Ok(s.clone()));
    assert_eq!(select_samples(&s, Some(2)), Ok(s[..2].to_vec()));
    assert_eq!(select_samples(&s, Some(3)), Ok(s.clone()));
    let e = select_samples(&s, Some(5)).unwrap_err();
    assert!(
        e.contains("num_samples is 5") && e.contains("only 3 samples"),
        "{e}"
    );
    let e = select_samples(&s[..1], Some(2)).unwrap_err();
    assert!(e.contains("only 1 sample:"), "{e}");
}

#[test]
fn sample_units_count() {
    assert!(check_sample_units(&[vec![], vec![]], 2).is_ok());
    let e = check_sample_units(&[vec![]], 2).unwrap_err();
    assert!(
        e.contains("sample_units") && e.contains("1 entries") && e.contains("2 samples"),
        "{e}"
    );
}

#[test]
fn every_option_belongs_to_one_concern() {
    // Any value other than null: a concern that owns the key reads it (and here refuses it).
    let probe = json!({"?": []});
    let owners = |name: &str| {
        [
            DecomposeOptions::default().set(name, &probe),
            ScoringOptions::default().set(name, &probe),
            AggregateOptions::default().set(name, &probe),
            UadOptions::default().set(name, &probe),
            GenerationOptions::default().set(name, &probe),
            LlmOptions::default().set(name, &probe),
            CalibrationOptions::default().set(name, &probe),
            GroundedOptions::default().set(name, &probe),
        ]
        .into_iter()
        .filter(|r| *r != Ok(false))
        .count()
    };
    for name in OPTION_NAMES {
        assert_eq!(owners(name), 1, "{name}");
    }
    for name in ["scorer", "llm_judge", "uad", "backend"] {
        assert_eq!(owners(name), 0, "{name}");
    }
}

#[test]
fn ensemble_weights_name_unit_scorers() {
    let o = parse_options(&json!({
        "scorers": ["ensemble", "entailment"],
        "ensemble_weights": {"luq": 3, "entailment": 1}
    }))
    .unwrap();
    let e = o.scoring.ensemble_weights.clone().unwrap();
    // keys in JSON order (sorted): entailment, luq → contrasted_entailment; weights divided by 4
    assert_eq!(
        e.components,
        vec![Scorer::Entailment, Scorer::ContrastedEntailment]
    );
    assert_eq!(e.weights, vec![0.25, 0.75]);
    // evidence for entailment (listed) and the ensemble's other component
    assert_eq!(
        o.scoring.computed(),
        vec![Scorer::Entailment, Scorer::ContrastedEntailment]
    );
    assert!(o.scoring.needs_samples());
    let s = |c: Scorer| match c {
        Scorer::Entailment => Some(0.2),
        _ => Some(0.6),
    };
    assert!((e.apply(s) - 0.5).abs() < 1e-15);
    assert!(e.apply(|_| None).is_nan());
    let bad = |v: serde_json::Value, want: &str| {
        let err = parse_options(&v).unwrap_err();
        assert!(err.contains(want), "{v}: {err}");
    };
    bad(
        json!({"scorers": ["ensemble"]}),
        "scorer ensemble needs option ensemble_weights",
    );
    bad(
        json!({"ensemble_weights": {"entailment": 1}}),
        "option ensemble_weights is given but scorer ensemble is not used",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"entailmnt": 1}}),
        "option ensemble_weights: unknown scorer \"entailmnt\"",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"ensemble": 1}}),
        "weight unit scorers only",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"shortform_cosine_sim": 1}}),
        "weight unit scorers only",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"luq": 1, "luq_atomic": 1}}),
        "names scorer contrasted_entailment twice",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"entailment": -1}}),
        "option ensemble_weights.entailment is -1: every weight must be a number >= 0",
    );
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": [1]}),
        "option ensemble_weights must be a JSON object",
    );
    // a graph component makes the ensemble claim-only
    bad(
        json!({"scorers": ["ensemble"], "ensemble_weights": {"page_rank": 1, "entailment": 1}}),
        "scorer page_rank (weighted in ensemble_weights) is a graph scorer",
    );
    assert!(parse_options(&json!({
        "scorers": ["ensemble"], "granularity": "claim",
        "ensemble_weights": {"page_rank": 1, "entailment": 1}
    }))
    .is_ok());
    // the ensemble as UAD scorer only
    let o = parse_options(&json!({
        "uad_scorer": "ensemble", "ensemble_weights": {"entailment": 1}
    }))
    .unwrap();
    assert_eq!(o.uad_scorer(), Scorer::Ensemble);
}

#[test]
fn calibration_holds_a_model_per_scorer() {
    let o = parse_options(&json!({
        "scorers": ["entailment", "noncontradiction"],
        "calibration": {
            "entailment": {"method": "platt", "a": 2, "b": -1},
            "noncontradiction": {"method": "isotonic", "x": [0.2, 0.8], "y": [0.1, 0.9]}
        }
    }))
    .unwrap();
    let c = &o.calibration;
    assert_eq!(c.models.len(), 2);
    assert_eq!(c.calibrated(Scorer::Entailment, 0.5), Some(0.5));
    assert!((c.calibrated(Scorer::Noncontradiction, 0.5).unwrap() - 0.5).abs() < 1e-15);
    assert_eq!(c.calibrated(Scorer::ContrastedEntailment, 0.5), None);
    let bad = |v: serde_json::Value, want: &str| {
        let err = parse_options(&v).unwrap_err();
        assert!(err.contains(want), "{v}: {err}");
    };
    let platt = json!({"method": "platt", "a": 2, "b": -1});
    bad(
        json!({"calibration": platt}),
        "option calibration maps scorer names to models, but it holds a bare model",
    );
    bad(
        json!({"calibration": 1}),
        "option calibration must be an object",
    );
    bad(
        json!({"calibration": {"entailment": {"method": "platt", "a": 2}}}),
        "option calibration.entailment has no \"b\"",
    );
    bad(
        json!({"calibration": {"page_rank": platt}}),
        "option calibration has a model for page_rank, which is not among scorers",
    );
    bad(
        json!({"scorers": ["shortform_cosine_sim"], "calibration": {"shortform_cosine_sim": platt}}),
        "has no unit scores to calibrate",
    );
    // adapt belongs to jobs; elsewhere the error names the aggregate that adapts
    bad(
        json!({"calibration": {"entailment": platt, "adapt": "job"}}),
        "option calibration.adapt adapts the models to a job's answers",
    );
    // the UAD scorer may be calibrated without being among scorers
    assert!(parse_options(&json!({
        "uad_scorer": "noncontradiction",
        "calibration": {"noncontradiction": platt}
    }))
    .is_ok());
    // the ensemble can be calibrated like any scorer
    assert!(parse_options(&json!({
        "scorers": ["ensemble"],
        "ensemble_weights": {"entailment": 1},
        "calibration": {"ensemble": platt}
    }))
    .is_ok());
}

#[test]
fn base_url_lists_replicas() {
    let c = parse_llm_config(
        "llm",
        &json!({"backend": "openai", "base_url": ["http://a:8000/v1", " http://b:8000/v1 "], "replica_retry_ms": 500}),
    )
    .unwrap();
    assert_eq!(c.base_url.as_deref(), Some("http://a:8000/v1"));
    assert_eq!(c.replicas, vec!["http://b:8000/v1".to_string()]);
    assert_eq!(c.replica_retry_ms, Some(500));
    let one = parse_llm_config("llm", &json!({"base_url": "http://a:8000/v1"})).unwrap();
    assert!(one.replicas.is_empty());
    let e = parse_llm_config("llm", &json!({"base_url": []})).unwrap_err();
    assert!(
        e.contains("llm.base_url") && e.contains("empty array"),
        "{e}"
    );
    let e = parse_llm_config("judge_llm", &json!({"base_url": ["http://a/v1", 3]})).unwrap_err();
    assert!(
        e.contains("judge_llm.base_url[1]") && e.contains("URL string"),
        "{e}"
    );
    let e = parse_llm_config("llm", &json!({"replica_retry_ms": 0})).unwrap_err();
    assert!(e.contains("replica_retry_ms"), "{e}");
}

#[allow(non_snake_case)]
fn CONFORMAL_MODEL() -> serde_json::Value {
    json!({"method": "conformal", "threshold": 0.75, "alpha": 0.1, "answers": 30, "claims": 90,
           "null_labels": 0})
}

#[test]
fn conformal_model_sets_the_uad_threshold() {
    let o = parse_options(&json!({"conformal": CONFORMAL_MODEL()})).unwrap();
    let c = o.uad.conformal.clone().unwrap();
    assert_eq!((c.threshold, c.alpha, c.answers), (0.75, 0.1, 30));
    // The model's threshold, whatever the answer's scores.
    assert_eq!(o.uad.threshold_for(&[0.1, 0.9]), Some(0.75));
    assert_eq!(o.uad.threshold_for(&[]), Some(0.75));
}

#[test]
fn reconstruction_fallback_is_on_unless_turned_off() {
    assert!(ScoreOptions::default().uad.reconstruction_fallback);
    let o = parse_options(&json!({"reconstruction_fallback": false})).unwrap_or_default();
    assert!(!o.uad.reconstruction_fallback);
    let e = parse_options(&json!({"reconstruction_fallback": "no"})).unwrap_err();
    assert_eq!(
        e,
        "option reconstruction_fallback must be true or false, e.g. \"reconstruction_fallback\":false; got a string"
    );
}
