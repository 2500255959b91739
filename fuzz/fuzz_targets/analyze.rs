//! Fuzz target: the whole analyzer and its reports on arbitrary bytes as a capture file.
//! The body (input layout, invariants) is `analyzer::harness::analyze`, shared with the regression
//! test that replays past crashes (analyzer/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| analyzer::harness::analyze(data));
