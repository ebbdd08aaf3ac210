//! uq-eval: uqlite's evaluation tools over the daemon's library (`uqd`), apart from the daemon
//! they measure. [`bench`] holds the benchmarks of `uqd bench …` (selfcheck, claims, table,
//! calibration, conformal, coverage, grounded, spans, stress, load, soak, white-box) and the
//! evaluation suite (`bench suite`); [`eval`] is `uqd eval`, the suite's figures on a user's own
//! labelled answers; [`commands`] are the two subcommands' flags and entry functions, which the
//! binary (`daemon/cli`) dispatches to.

pub mod bench;
pub mod commands;
pub mod eval;
