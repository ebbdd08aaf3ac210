//! Benchmarks of `uqd bench`, each printing one JSON object per line: `selfcheck` (sentence
//! level, SelfCheckGPT WikiBio), `claims` (claim level, FActScore-Bio from the graph-uq data),
//! `coverage` (what the decomposition LLM loses), `table` (a whole-table job), `soak` (a long mixed run against a restarted daemon), `calibration`
//! (calibrations and ensembles fitted on one graph-uq file, tested on the other),
//! `conformal` (the conformal factuality threshold's coverage over random splits and across
//! files), `spans` (the claim alignment against hand-marked spans) and `stress` (the NLI model
//! on a labelled stress suite of pairs, judged as `uq_nli` judges them), `white_box` (the
//! white-box scorers beside the black-box ones on answers a program grades); `suite` runs the
//! default scorers over every shared evaluation file with intervals (and compares two runs).
//! What they share: `run` (the measured scoring runs, the cached rerun, the summary line),
//! `options` (flags as scoring options), `raw` (the raw model's ceiling), `host` (the NLI path's
//! stages per pair), `procfs` (process figures from /proc), `lines` (JSON lines in and out) and
//! `wikibio` (the SelfCheckGPT WikiBio record).

mod calibration;
mod claims;
mod conformal;
mod coverage;
mod grounded;
mod host;
mod lines;
mod load;
mod options;
mod procfs;
mod raw;
mod refit;
mod run;
mod selfcheck;
mod soak;
mod spans;
mod stress;
mod suite;
mod table;
mod white_box;
mod wikibio;

pub use calibration::{calibration, CalibrationArgs};
pub use claims::{claims, ClaimsArgs, SampleUnits};
pub use conformal::{conformal, ConformalArgs};
pub use coverage::coverage_bench;
pub use grounded::{grounded, GroundedArgs};
pub use load::{load, worker as load_worker, LoadArgs};
pub use options::{parse_premises, parse_source_premises, Judge, DEFAULT_RAW_PAIRS};
pub use procfs::peak_rss_mb;
pub use run::ScoringArgs;
pub use selfcheck::{compare_precisions, selfcheck};
pub use soak::{soak, SoakArgs};
pub use spans::{spans, SpansArgs};
pub use stress::{stress, StressSuite};
pub use suite::{compare as compare_suites, grid, suite, SuiteArgs, QUICK_ANSWERS};
pub use table::{table, TableArgs};
pub use white_box::{white_box, WhiteBoxArgs};
