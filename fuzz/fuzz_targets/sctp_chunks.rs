//! Fuzz target: the SCTP common header and chunk decoder, every typed chunk, CRC32c.
//! The body (input layout, invariants) is `analyzer::harness::sctp_chunks`, shared with the regression
//! test that replays past crashes (analyzer/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| analyzer::harness::sctp_chunks(data));
