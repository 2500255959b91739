//! A capture with thousands of SCTP associations (issue 16 part 1, "Scale"), made with
//! `analyzer::synth` from sample traces: mostly copies of a short association (handshake, one
//! DATA / SACK, SHUTDOWN: the first four, the 7th and 8th and the last three frames of
//! `fmt_sender.pcap`), plus whole copies of the spurious-failover, failover and ABORT samples,
//! one part after the other in time. Every copy is its own association (ports shifted by the copy
//! number, tags changed). Deterministic.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use analyzer::capture::CaptureReader;
use analyzer::synth::Source;

/// Copies of each sample in `many_associations(10_000)`: spurious failovers, failovers, ABORTs;
/// the short association fills the rest.
pub const SPURIOUS_COPIES: usize = 37;
pub const FAILOVER_COPIES: usize = 12;
pub const ABORT_COPIES: usize = 20;

pub fn sample_traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces")
}

/// Records of a classic pcap (any byte order / resolution is not needed: the samples are
/// little-endian microsecond pcaps, synth writes little-endian nanosecond ones): (header, data).
fn records(pcap: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut o = 24;
    while o + 16 <= pcap.len() {
        let cl = u32::from_le_bytes(pcap[o + 8..o + 12].try_into().unwrap()) as usize;
        out.push((&pcap[o..o + 16], &pcap[o + 16..o + 16 + cl]));
        o += 16 + cl;
    }
    out
}

/// The frames `keep` (0-based) of the classic pcap `name` of the sample traces, as a source.
fn source(name: &str, keep: Option<&[usize]>) -> Source {
    let bytes = std::fs::read(sample_traces().join(name)).expect("sample trace");
    let recs = records(&bytes);
    let mut out = bytes[..24].to_vec();
    for (i, (h, d)) in recs.iter().enumerate() {
        if keep.is_none_or(|k| k.contains(&i) || k.contains(&(i + 1000 - recs.len()))) {
            out.extend_from_slice(h);
            out.extend_from_slice(d);
        }
    }
    let reader = CaptureReader::from_read(Box::new(Cursor::new(out))).expect("a pcap");
    Source::load(reader).expect("a source")
}

/// Exactly `n` copies of `src` (synth writes whole copies until the target size is reached).
fn copies(src: &Source, n: usize) -> Vec<u8> {
    let one = src.to_vec(25).len() as u64 - 24;
    src.to_vec(24 + one * (n as u64 - 1) + 1)
}

/// A nanosecond pcap of `total` associations (at least 100).
pub fn many_associations(total: usize) -> Vec<u8> {
    let short = source("fmt_sender.pcap", Some(&[0, 1, 2, 3, 6, 7, 997, 998, 999]));
    let parts = [
        copies(
            &source("spur_pmr1_rtomin30_sender.pcap", None),
            SPURIOUS_COPIES,
        ),
        copies(&source("cut_p20_sack40_sender.pcap", None), FAILOVER_COPIES),
        copies(&source("abort_p20_sender.pcap", None), ABORT_COPIES),
        copies(
            &short,
            total - SPURIOUS_COPIES - FAILOVER_COPIES - ABORT_COPIES,
        ),
    ];
    // One after the other: each part's times start a second after the previous part's end.
    let mut out = parts[0][..24].to_vec();
    let mut offset_ns: i128 = 0;
    for p in &parts {
        let mut last = 0i128;
        let mut first = None;
        for (h, d) in records(p) {
            let s = u32::from_le_bytes(h[0..4].try_into().unwrap()) as i128;
            let ns = u32::from_le_bytes(h[4..8].try_into().unwrap()) as i128;
            let t = s * 1_000_000_000 + ns;
            let first = *first.get_or_insert(t);
            let nt = t - first + offset_ns;
            last = nt;
            out.extend_from_slice(&((nt / 1_000_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&((nt % 1_000_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&h[8..16]);
            out.extend_from_slice(d);
        }
        offset_ns = last + 1_000_000_000;
    }
    out
}
