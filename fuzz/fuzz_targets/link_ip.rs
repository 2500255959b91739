//! Fuzz target: link-layer and IP decoding with fragment reassembly, over a sequence of frames.
//! The body (input layout, invariants) is `analyzer::harness::link_ip`, shared with the regression
//! test that replays past crashes (analyzer/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| analyzer::harness::link_ip(data));
