//! The analyzer's integration tests, one module per subject, linked into one test binary:
//! each binary links polars, so one binary instead of twenty saves CI gigabytes of disk and
//! minutes of linking. `cargo test --workspace --test integration lab_truth::` runs one module.
//! (The insta snapshots keep their own binary, `report_snapshots`: their file names carry it.)

mod common;

mod accounting;
mod bounded_state;
mod broken_corpus;
mod broken_inputs;
mod compaction;
mod compressed;
mod erf;
mod foreign_formats;
mod fuzz_regressions;
mod heartbeat_truth;
mod hol_truth;
mod ipsec;
mod lab_linux_truth;
mod lab_truth;
mod mutation;
mod nflog;
mod pcap_variants;
mod pipeline;
mod public_tshark;
mod report_json;
mod rotation;
mod serial_links;
mod stack_id;
mod stalls;
mod streams;
mod study;
mod tcp_lab;
mod time_order;
mod tunnel;
mod whatif;
