//! `uqd bench …`: the benchmarks, each printing one JSON object per line. The subcommands and
//! their dispatch; the flags of each family of benchmarks, and how they become its arguments,
//! are in the modules below.

use std::process::ExitCode;

use clap::Subcommand;

mod factscore;
mod grounded;
mod scoring;
mod setup;
mod stress;
mod suite;
mod throughput;
mod white_box;

pub use factscore::{AnswerFlags, CalibrationFlags, ConformalFlags, CoverageFlags, SpansFlags};
pub use grounded::GroundedFlags;
pub use scoring::{ClaimsFlags, ScoringFlags, SelfcheckFlags};
pub use stress::StressFlags;
pub use suite::SuiteFlags;
pub use throughput::{LoadFlags, LoadWorkerFlags, SoakFlags, TableFlags};
pub use white_box::WhiteBoxFlags;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Load test of a daemon over its socket: N connections in several processes sending a mix
    /// of uq_unit_scores requests (WikiBio passages) for S seconds; throughput, p50/p95/p99
    /// latency, errors, the daemon's peak RSS and open fds. Starts a daemon on --socket (with
    /// this environment) when none answers there, and stops it afterwards.
    Load(LoadFlags),
    /// One worker process of `bench load` (internal).
    #[command(hide = true)]
    LoadWorker(LoadWorkerFlags),
    /// A whole-table job (as uq_score_table runs it) over the SelfCheckGPT WikiBio passages
    /// loaded into a fresh database: rows/s, NLI pairs/s, peak RSS, and the speed-up of a second
    /// job on the warm caches.
    Table(TableFlags),
    /// Sentence-level scorers on SelfCheckGPT WikiBio (shared/data/selfcheck_wikibio_dev.jsonl).
    Selfcheck(SelfcheckFlags),
    /// Claim-level scorers on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// response's claims as units, AUROC/AUC-PR/ECE/Brier against the claim labels, and with
    /// --uad the UAD accuracy per percentile threshold.
    Claims(ClaimsFlags),
    /// Decomposition coverage on FActScore-Bio (shared/data/graph_uq_factscore_*.jsonl): the
    /// share of sentences the decomposition LLM's claims do not entail, and the false labelled
    /// claims that the uncovered sentences bring under scoring.
    Coverage(CoverageFlags),
    /// A long run of mixed work (score, nli, small jobs) from several clients against a child
    /// daemon restarted now and then: prints the daemon's RSS, open fds, cache sizes and errors
    /// over time, and compares the results with a fresh daemon's.
    Soak(SoakFlags),
    /// Calibration and tuned ensembles across models: fitted on the claims of one graph-uq
    /// FActScore file, tested on the other's (both directions): ECE and Brier before and after
    /// calibration per scorer, and the ensemble's AUROC against the best single scorer.
    Calibration(CalibrationFlags),
    /// Conformal factuality (Mohri & Hashimoto 2024) on FActScore-Bio: the claims of a graph-uq
    /// file scored once, then seeded random half/half splits of its answers: the UAD threshold
    /// fitted on one half at alpha 0.05, 0.1, 0.2, 0.3, coverage (share of test answers whose
    /// kept claims are all true) and kept share on the other, beside threshold 1/3 and the
    /// 50th/90th percentile; with --data2 also fitted on one file, tested on the other.
    Conformal(ConformalFlags),
    /// Grounded checking (units against sources, not samples): on SelfCheckGPT WikiBio with
    /// wiki_bio_text as the source, (a) the passage's own text, (b) retrieval from an FTS5
    /// table of all passages in chunks, (c) sample entailment, (d) grounded_fallback; on
    /// grounded_dev.jsonl, (a) per task beside the whole-source uq_nli baseline. AUROC, NonFact
    /// AUC-PR, NLI pairs, tokens, wall time, LLM calls.
    Grounded(GroundedFlags),
    /// Claim spans: the alignment of FActScore-Bio claims to their answer (no model, no LLM)
    /// against hand-marked spans: character F1, overlap, same sentence, share placed.
    Spans(SpansFlags),
    /// The NLI model on a stress suite of labelled (premise, hypothesis) pairs, each judged as
    /// uq_nli judges it: per kind (distractors, paraphrase, swap_negation, …) and overall the
    /// 3-way accuracy, mean p_entailment and p_contradiction, and the share of entailed and of
    /// neutral items read as contradiction (p_contradiction > 0.5).
    Stress(StressFlags),
    /// The evaluation suite: the default scorers over every shared evaluation file (both
    /// WikiBio files, the four graph-uq claim files, grounded_dev's two tasks), each figure with
    /// a 95 % interval over resampled answers: AUROC, AUC-PR, NonFact AUC-PR; ECE and the
    /// conformal threshold fitted on one claim file and tested on the other (both pairs, both
    /// directions); the refit on K labelled answers; NLI pairs, tokens, LLM calls, wall time.
    /// With --compare A.json B.json: two runs' figures, B − A, with paired intervals.
    Suite(SuiteFlags),
    /// The white-box scorers (token log-probabilities) beside the black-box ones on questions
    /// a program grades (sums, products, weekdays, unit conversions, letter counts, the next
    /// month, the larger number), answered by the generation LLM with log-probabilities (e.g.
    /// SmolLM2 behind the llama.cpp server: scripts/bench-white-box.sh): AUROC with 95 %
    /// intervals per scorer, accuracy, seconds per answer.
    WhiteBox(WhiteBoxFlags),
}

pub fn run(which: BenchCommand) -> Result<ExitCode, String> {
    match which {
        BenchCommand::Load(f) => throughput::load(f)?,
        BenchCommand::LoadWorker(f) => throughput::load_worker(f)?,
        BenchCommand::Table(f) => throughput::table(f)?,
        BenchCommand::Selfcheck(f) => scoring::selfcheck(f)?,
        BenchCommand::Claims(f) => scoring::claims(f)?,
        BenchCommand::Coverage(f) => factscore::coverage(f)?,
        BenchCommand::Soak(f) => throughput::soak(f)?,
        BenchCommand::Calibration(f) => factscore::calibration(f)?,
        BenchCommand::Conformal(f) => factscore::conformal(f)?,
        BenchCommand::Spans(f) => factscore::spans(f)?,
        BenchCommand::Stress(f) => stress::run(f)?,
        BenchCommand::Suite(f) => suite::run(f)?,
        BenchCommand::WhiteBox(f) => white_box::run(f)?,
        BenchCommand::Grounded(f) => grounded::run(f)?,
    }
    Ok(ExitCode::SUCCESS)
}
