//! The subcommands of `uqd`, one module each with one entry function (`run`, or `status` and
//! `stop`); `main.rs` parses the command line and calls them.

pub mod bench;
pub mod control;
pub mod eval;
pub mod models;
pub mod report;
pub mod score;
pub mod serve;
