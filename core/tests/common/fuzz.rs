//! The fuzz runner of the property tests (proptest, fixed seed and budget), shared through
//! `#[path]` by `core/src/decompose/sentences/fuzz.rs`, `core/tests/pure/fuzz_options.rs`,
//! `daemon/llm/tests/llm/fuzz_replies.rs`, `daemon/llm/tests/fuzz_gguf.rs` and
//! `tests/tests/e2e/fuzz_protocol.rs`.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

/// Runs `test` on `cases` inputs of `strategy` (times `UQ_FUZZ_SCALE`, default 1) from a fixed
/// seed, prints the count, and panics with the smallest failing input; a panic in `test` is a
/// failing case.
pub fn fuzz<S: Strategy>(
    target: &str,
    cases: u32,
    strategy: S,
    mut test: impl FnMut(S::Value) -> Result<(), String>,
) where
    S::Value: std::fmt::Debug,
{
    let scale: u32 = std::env::var("UQ_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let config = Config {
        cases: cases * scale,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let run = std::cell::Cell::new(0u64);
    let test = std::cell::RefCell::new(&mut test);
    let result = runner.run(&strategy, |v| {
        run.set(run.get() + 1);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (test.borrow_mut())(v)));
        match out {
            Ok(r) => r.map_err(TestCaseError::fail),
            Err(_) => Err(TestCaseError::fail("panicked")),
        }
    });
    println!("fuzz {target}: {} cases run", run.get());
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, input)) => {
            panic!("fuzz {target}: {why}\nminimal input: {input:?}")
        }
        Err(e) => panic!("fuzz {target}: {e}"),
    }
}
