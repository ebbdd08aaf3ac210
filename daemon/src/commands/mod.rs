//! The daemon's subcommands of `uqd`, one module each with one entry function (`run`, or
//! `status` and `stop`); the binary (`daemon/cli/src/main.rs`) parses the command line and calls
//! them (`bench` and `eval` are the evaluation tools', `uq_eval::commands`).

pub mod control;
pub mod models;
pub mod report;
pub mod score;
pub mod serve;
