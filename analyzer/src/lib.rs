//! SCTP trace analyzer library: reads pcap/pcapng captures in one streaming pass, decodes SCTP
//! (and TCP), reconstructs associations and paths, infers timers, and builds polars DataFrames.
//!
//! Data flows one way: `capture` (frames) -> `net` (IP packets) -> `sctp` (chunks) ->
//! `assoc` (association state) -> `report` (JSON contract) and `frames` (DataFrames).

#[cfg(feature = "mimalloc")]
pub mod alloc;
pub mod analyze;
pub mod assoc;
pub mod capture;
pub mod chunk_rows;
pub mod compare;
pub mod decimal;
mod encrypted;
#[cfg(feature = "frames")]
pub mod frames;
pub mod fxhash;
pub mod harness;
pub mod hol;
pub mod infer;
pub mod inline_fields;
pub mod inputs;
pub mod json_stream;
pub mod json_write;
pub mod lifecycle;
pub mod linktype;
pub mod net;
pub mod ordered;
pub mod packet;
pub mod pass_sink;
pub mod report;
pub mod report_infer;
pub mod sctp;
pub mod serial;
pub mod stack;
mod stage;
pub mod stalls;
pub mod streams;
pub mod study;
pub mod synth;
pub mod tcp;
pub mod text;

/// polars, re-exported so the dashboard links the same build.
#[cfg(feature = "frames")]
pub use polars;
