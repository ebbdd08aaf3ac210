//! The subcommands `uqd bench …` and `uqd eval`, one module each with one entry function (`run`);
//! the binary (`daemon/cli/src/main.rs`) parses the command line and calls them.

pub mod bench;
pub mod eval;
