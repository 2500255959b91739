//! Fuzz target: the streaming capture reader (pcap / pcapng / gzip) over arbitrary bytes.
//! The body (input layout, invariants) is `analyzer::harness::reader`, shared with the regression
//! test that replays past crashes (analyzer/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| analyzer::harness::reader(data));
