//! uq-core's integration tests, one binary: property tests of the JSON users hand in
//! (`fuzz_options`) and the protocol's golden examples (`protocol_golden`). Run one with
//! `cargo test -p uq-core --test pure protocol_golden::`.

mod fuzz_options;
mod protocol_golden;
mod white_box_parity;
