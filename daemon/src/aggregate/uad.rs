//! Uncertainty-aware decoding (paper §3.4; uqlm's `UncertaintyAwareDecoder`): score the claims of a
//! response, keep those whose score is at or above a threshold, and have the reconstruction LLM
//! rewrite the kept claims into a refined response.
//!
//! Choices (docs/reference.md, "Uncertainty-aware decoding (UAD)"):
//! * UAD works on claims. The claims are `options.units` when given, else the decomposition LLM's
//!   (as `score` at claim granularity). An explicit `granularity: "sentence"` is the LLM-free
//!   filter instead (beyond uqlm, which refuses sentence granularity): the sentences (or given
//!   units) are filtered by the same threshold rules and the refined response is the kept ones
//!   as written, in order (`uq_core::aggregate::sentence_filter`), `removed_sentences` the
//!   dropped ones; no reconstruction call, no verification, and nothing kept gives an empty
//!   text. Without options `granularity` and `units`, when the decomposition LLM is the bundled
//!   SmolLM2 (no capable LLM configured), the sentence filter is the default, with a note
//!   ([`UAD_SENTENCE_DEFAULT_NOTE`]).
//! * Option `min_kept`: at least that many units stay, the best scored.
//! * Only the UAD scorer is computed: `uad_scorer`, else the first of `scorers` (uqlm's
//!   `claim_filtering_scorer` default). A `uad_scorer` outside `scorers` is scored all the same
//!   (uqlm would fall back to the first scorer with a warning, which uqlite cannot show).
//! * Threshold: `threshold` (default 1/3, uqlm's), or `threshold_percentile` = that percentile
//!   (numpy's linear method) of this answer's claim scores. Kept ⇔ score ≥ threshold; a NaN score
//!   is never kept (`uq_core::aggregate::uad_retained`, which says why ≥ where uqlm has `>`).
//! * pre_confidence aggregates (`options.aggregation`) every claim's score, post_confidence the
//!   kept claims' scores (NaN skipped, as uqlm's nan-aware aggregation).
//! * Reconstruction: uqlm's prompt (`prompts::response_reconstruction`, kept claims one per line)
//!   at the reconstruction LLM's config `temperature` (default 0); the reply, trimmed of
//!   surrounding whitespace, is the refined response.
//! * No claim kept (or no claim at all): as uqlm, no reconstruction call is made and the refined
//!   response is the original response; post_confidence is null (uqlm's `nanmean` of nothing).
//! * Beyond the paper: the reconstruction is verified against the kept claims ([`super::verify`],
//!   options `verify`, `verify_threshold`), and claims decomposed by the LLM come with the
//!   response's uncovered sentences as extra units (option `coverage`, origin
//!   `uncovered_sentence`), which are filtered like claims.
//! * Beyond the paper: every kept claim must be entailed by the refined response (p_e ≥
//!   `verify_threshold`, [`super::kept`]); one that is not (the reconstruction LLM lost or
//!   changed it) is a warning (`warnings`), and with option `reconstruction_fallback` (default
//!   on) the refined response is the answer's sentences that hold the kept claims instead
//!   (`uq_core::aggregate::sentence_filter::kept_claims_sentences`). Claims written by the
//!   bundled SmolLM2 are a warning too.
//! * Conformal factuality: option `conformal` (a `uq_fit_conformal` model) replaces the
//!   threshold by the model's, with P(all kept claims true) ≥ 1 − α for answers exchangeable with
//!   its calibration answers; the notes say so ([`conformal_notes`]).
//! * Calibration: when `options.calibration` has a model of the UAD scorer, everything above
//!   uses the calibrated scores (probabilities), so `threshold: 0.7` keeps the claims at least
//!   70 % likely to be true (kept ⇔ calibrated ≥ threshold).

use serde_json::Value;
use uq_core::aggregate::sentence_filter::{kept_claims_sentences, kept_text};
use uq_core::aggregate::{aggregate, keep_at_least, uad_kept};
use uq_core::calibrate::FittedOn;
use uq_core::limits::check_inputs;
use uq_core::options::{parse_options, LlmRole, ScoreOptions};
use uq_core::protocol::{origin, UadClaim, UadResult, UAD_SENTENCE_DEFAULT_NOTE};
use uq_core::scorers::Granularity;
use uq_llm::{prompts, ChatRequest};

use super::kept::{
    by_bundled_llm, decomposes_with_bundled_llm, lost_claims, lost_warning, UAD_BUNDLED_LLM_WARNING,
};
use super::verify::verify;
use crate::decompose::{decompose, Decomposed};
use crate::engine::Engine;
use crate::judge;
use crate::role_llms::{LlmService, RoleLlm};
use crate::score::{score_units_with_evidence, Context};

/// The reconstruction request for the kept claims.
pub fn reconstruction_request(llm: &RoleLlm, kept: &[String]) -> ChatRequest {
    ChatRequest::new(prompts::response_reconstruction(kept))
        .with_temperature(llm.role_temperature())
}

/// Answers a `uad` request. What the NLI judge (option `nli_llm`) did while scoring and
/// verifying is a note, as in a `score` reply (the pairs it could not read: never a silent 0).
pub fn uad(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    samples: &[String],
    options: &Value,
) -> Result<UadResult, String> {
    let (opts, sentence_default) = uad_options(llm, options)?;
    let (result, tally) =
        judge::tallied(|| uad_untallied(engine, llm, response, samples, &opts, sentence_default));
    let mut result = result?;
    if let Some((cfg, _)) = opts.llm.nli_judge() {
        let label = llm.role_llm(cfg, LlmRole::Nli)?;
        result.notes.extend(tally.note(label.label()));
    }
    Ok(result)
}

/// The options of a UAD request: its granularity decided, and only the UAD scorer to score;
/// `true` when sentences are the granularity by default (no capable LLM configured).
fn uad_options(llm: &LlmService, options: &Value) -> Result<(ScoreOptions, bool), String> {
    let mut opts = parse_options(options)?;
    // Claims unless "granularity":"sentence" is given (the LLM-free sentence filter); without
    // option granularity or units, sentences when no capable LLM is configured.
    let given = options.get("granularity").is_some_and(|g| !g.is_null());
    let units_given = options.get("units").is_some_and(|u| !u.is_null());
    let sentence_default = !given && !units_given && decomposes_with_bundled_llm(llm, &opts);
    let sentences =
        sentence_default || (given && opts.decompose.granularity == Granularity::Sentence);
    opts.decompose.granularity = if sentences {
        Granularity::Sentence
    } else {
        Granularity::Claim
    };
    let scorer = opts.uad_scorer();
    opts.scoring.scorers = vec![scorer];
    Ok((opts, sentence_default))
}

/// UAD of `response` under `opts` (from [`uad_options`]): its claims decomposed and scored,
/// then [`decide`]d, with the notes.
fn uad_untallied(
    engine: &Engine,
    llm: &LlmService,
    response: &str,
    samples: &[String],
    opts: &ScoreOptions,
    sentence_default: bool,
) -> Result<UadResult, String> {
    let scorer = opts.uad_scorer();
    let samples = check_inputs(response, samples, opts)?;
    let Decomposed {
        units: claims,
        origins,
        sample_units,
        ..
    } = decompose(engine, llm, response, &samples, opts)?;
    let (scores, notes) = if claims.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let cx = Context {
            engine,
            llm,
            response,
            units: &claims,
            samples: &samples,
            sample_units: sample_units.as_deref(),
            opts,
        };
        // The scorer's notes (e.g. grounded_fallback's units left open without samples) go
        // with the result.
        let scored = score_units_with_evidence(&cx, &[scorer])?;
        let values = scored
            .scores
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .unwrap_or_default();
        (values, scored.notes)
    };
    let mut result = decide(engine, llm, opts, response, claims, &origins, scores)?;
    if sentence_default {
        result.notes.push(UAD_SENTENCE_DEFAULT_NOTE.to_string());
    }
    result.notes.extend(notes);
    // Option conformal: the guarantee in force, and a warning when its scores were made
    // otherwise.
    result
        .notes
        .extend(conformal_notes(engine, opts, Some(samples.len())));
    Ok(result)
}

/// UAD given the claims and their scores (by `opts.uad_scorer()`): threshold, filtering,
/// reconstruction of the kept claims, its verification and the check that it kept them (with
/// the fallback and the warnings), confidences. `origins` are the claims' origins
/// (`uq_core::protocol::origin`; missing ones read as claims).
pub fn decide(
    engine: &Engine,
    llm: &LlmService,
    opts: &ScoreOptions,
    response: &str,
    claims: Vec<String>,
    origins: &[String],
    scores: Vec<f64>,
) -> Result<UadResult, String> {
    let scorer = opts.uad_scorer();
    let calibrated: Option<Vec<f64>> = opts
        .calibration
        .model(scorer)
        .map(|c| scores.iter().map(|&s| c.apply(s)).collect());
    let filtered = calibrated.as_ref().unwrap_or(&scores);
    let threshold = opts.uad.threshold_for(filtered);
    let kept = keep_at_least(filtered, uad_kept(filtered, threshold), opts.uad.min_kept);
    let kept_claims: Vec<String> = claims
        .iter()
        .zip(&kept)
        .filter(|(_, &k)| k)
        .map(|(c, _)| c.clone())
        .collect();
    let kept_scores: Vec<f64> = filtered
        .iter()
        .zip(&kept)
        .filter(|(_, &k)| k)
        .map(|(&s, _)| s)
        .collect();
    let mut refined = if opts.decompose.granularity == Granularity::Sentence {
        Refined::sentence_filtered(response, &claims, &kept)
    } else if !kept_claims.is_empty() {
        Refined::reconstructed(engine, llm, opts, response, &claims, &kept, &kept_claims)?
    } else {
        Refined::unchanged(response)
    };
    if opts.decompose.granularity == Granularity::Claim && by_bundled_llm(llm, opts, origins) {
        refined.warnings.push(UAD_BUNDLED_LLM_WARNING.to_string());
    }
    let notes = calibrated
        .is_some()
        .then(|| calibrated_cut_note(scorer.name(), threshold))
        .into_iter()
        .collect();
    Ok(UadResult {
        claims: uad_claims(claims, &scores, &kept, calibrated.as_deref(), origins),
        scorer: scorer.name().to_string(),
        calibrated: calibrated.is_some(),
        threshold,
        pre_confidence: aggregate(filtered, opts.aggregate.aggregation),
        post_confidence: aggregate(&kept_scores, opts.aggregate.aggregation),
        refined_response: refined.text,
        verified: refined.verified,
        removed_sentences: refined.removed_sentences,
        warnings: refined.warnings,
        notes,
    })
}

/// The refined response of a UAD, and what its making says.
struct Refined {
    text: String,
    /// Whether the reconstruction was verified against the kept claims (option `verify`).
    verified: bool,
    removed_sentences: Vec<String>,
    warnings: Vec<String>,
}

impl Refined {
    /// No claim kept (or none at all): the original response, no call made.
    fn unchanged(response: &str) -> Refined {
        Refined {
            text: response.to_string(),
            verified: false,
            removed_sentences: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The LLM-free filter: the kept sentences as written, in order; none kept: empty.
    fn sentence_filtered(response: &str, claims: &[String], kept: &[bool]) -> Refined {
        Refined {
            text: kept_text(response, claims, kept),
            removed_sentences: claims
                .iter()
                .zip(kept)
                .filter(|(_, &k)| !k)
                .map(|(c, _)| c.clone())
                .collect(),
            ..Refined::unchanged(response)
        }
    }

    /// The kept claims rewritten by the reconstruction LLM, verified (option `verify`) and
    /// checked to keep every claim (else a warning and, with option `reconstruction_fallback`,
    /// the answer's sentences that hold the kept claims).
    fn reconstructed(
        engine: &Engine,
        llm: &LlmService,
        opts: &ScoreOptions,
        response: &str,
        claims: &[String],
        kept: &[bool],
        kept_claims: &[String],
    ) -> Result<Refined, String> {
        let mut r = Refined::unchanged(response);
        let rebuilder = llm.for_role(opts, LlmRole::Reconstruction)?;
        let req = reconstruction_request(&rebuilder, kept_claims);
        r.text = llm.block_on(rebuilder.text(&req))?.trim().to_string();
        let nli = judge::Nli::new(engine, llm, opts)?;
        if opts.uad.verify {
            let v = verify(&nli, kept_claims, &r.text, opts.uad.verify_threshold)?;
            (r.text, r.verified, r.removed_sentences) = (v.text, true, v.removed);
        }
        // The other way round: every kept claim must survive the rewrite.
        let at = opts.uad.verify_threshold;
        let lost = lost_claims(&nli, kept_claims, &r.text, at)?;
        if !lost.is_empty() {
            let fall_back = opts.uad.reconstruction_fallback;
            r.warnings
                .push(lost_warning(&lost, kept_claims.len(), at, fall_back));
            if fall_back {
                r.text = kept_claims_sentences(response, claims, kept);
            }
        }
        Ok(r)
    }
}

/// The claims of a UAD result: each with its score (and calibrated one), whether it was kept
/// and its origin.
fn uad_claims(
    claims: Vec<String>,
    scores: &[f64],
    kept: &[bool],
    calibrated: Option<&[f64]>,
    origins: &[String],
) -> Vec<UadClaim> {
    claims
        .into_iter()
        .zip(scores.iter().zip(kept))
        .enumerate()
        .map(|(idx, (claim, (&score, &kept)))| UadClaim {
            idx,
            claim,
            score,
            calibrated: calibrated.map(|c| c[idx]).filter(|c| !c.is_nan()),
            kept,
            origin: origins
                .get(idx)
                .cloned()
                .unwrap_or_else(|| origin::CLAIM.to_string()),
        })
        .collect()
}

/// The note of a UAD whose scorer has a calibration: the cut is on calibrated probabilities.
fn calibrated_cut_note(scorer: &str, threshold: Option<f64>) -> String {
    let cut = threshold.map_or_else(|| "none".to_string(), |t| format!("{t:.3}"));
    format!(
        "uad: the cut ({cut}) is on {scorer}'s calibrated probability (option calibration): a \
         unit is kept when P(true) ≥ {cut}"
    )
}

/// Option `conformal` (a conformal factuality model, `uq_core::calibrate::conformal`): a note
/// saying which guarantee the UAD threshold carries, and one naming each difference between
/// the setting its scores were fitted on and this one (scorer = the UAD scorer, NLI model,
/// precision, premise, samples): the guarantee holds only for scores made as on the
/// calibration answers.
pub fn conformal_notes(
    engine: &Engine,
    opts: &ScoreOptions,
    num_samples: Option<usize>,
) -> Vec<String> {
    let Some(c) = &opts.uad.conformal else {
        return Vec::new();
    };
    let mut notes = vec![c.guarantee()];
    if let Some(then) = &c.fitted_on {
        let info = engine.info();
        let now = FittedOn::of_request(
            opts.uad_scorer().name(),
            &info.nli_model,
            &info.precision,
            opts.premise(),
            num_samples,
        );
        let diffs = then.differences(&now);
        if !diffs.is_empty() {
            notes.push(format!(
                "conformal: the model was fitted on scores made with another setting ({}), so \
                 its guarantee does not hold here; refit it with uq_fit_conformal on scores \
                 made with this setting",
                diffs.join("; ")
            ));
        }
    }
    notes
}
