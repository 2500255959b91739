//! Shared helpers of the integration tests: where the sample traces and ../shared live, and
//! hand-built classic pcap bytes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use analyzer::analyze::{analyze_file, CaptureAnalysis, Options};
use analyzer::report::CaptureReport;

/// `sample-traces/` of this repository.
pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces")
}

/// `../shared/` beside the repository, when present (it is absent on a bare clone).
pub fn shared_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    p.join("captures").is_dir().then_some(p)
}

pub fn analyze(path: &Path) -> (CaptureAnalysis, CaptureReport) {
    let opts = Options::default();
    let c = analyze_file(path, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = CaptureReport::from_analysis(&c);
    (c, r)
}

/// A `sample-traces/` subfolder and its `truth.json`.
pub fn folder_truth(folder: &str) -> (PathBuf, serde_json::Value) {
    let dir = samples_dir().join(folder);
    let bytes = std::fs::read(dir.join("truth.json")).unwrap_or_else(|e| panic!("{folder}: {e}"));
    (dir, serde_json::from_slice(&bytes).unwrap())
}

/// Analyses `path`: the analysis, and its association reports as JSON (to compare a capture
/// with another holding the same association).
pub fn associations(path: &Path) -> (CaptureAnalysis, serde_json::Value) {
    let (c, r) = analyze(path);
    let v = serde_json::to_value(&r.associations).unwrap();
    (c, v)
}

/// `c` has the frames and SCTP frames of its truth row (`"frames"`, `"sctp_frames"`).
pub fn assert_frames(c: &CaptureAnalysis, row: &serde_json::Value, file: &str) {
    assert_eq!(c.packets, row["frames"].as_u64().unwrap(), "{file}: frames");
    let sctp = row["sctp_frames"].as_u64().unwrap();
    assert_eq!(c.sctp_packets, sctp, "{file}: SCTP frames");
}

/// `c` has the frames, SCTP frames and SCTP chunks (over its associations) of its truth row
/// (`"frames"`, `"sctp_frames"`, `"sctp_chunks"`: tshark's counts).
pub fn assert_frames_and_chunks(c: &CaptureAnalysis, row: &serde_json::Value, file: &str) {
    assert_frames(c, row, file);
    let chunks: u64 = c
        .associations
        .iter()
        .flat_map(|a| &a.chunk_counts)
        .map(|x| x.1)
        .sum();
    assert_eq!(
        chunks,
        row["sctp_chunks"].as_u64().unwrap(),
        "{file}: chunks"
    );
}

pub fn tshark() -> Option<&'static str> {
    std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "tshark")
}

/// One figure of a scored test: truth, inferred value, error, within tolerance or not.
pub struct Row {
    pub capture: String,
    pub figure: String,
    pub truth: String,
    pub inferred: String,
    pub error: String,
    pub ok: bool,
}

/// The table a scored test prints (capture, figure, truth, inferred, error).
#[derive(Default)]
pub struct ScoreTable {
    pub rows: Vec<Row>,
}

impl ScoreTable {
    pub fn check(
        &mut self,
        capture: &str,
        figure: &str,
        truth: impl ToString,
        inferred: impl ToString,
        error: impl ToString,
        ok: bool,
    ) {
        self.rows.push(Row {
            capture: capture.to_string(),
            figure: figure.to_string(),
            truth: truth.to_string(),
            inferred: inferred.to_string(),
            error: error.to_string(),
            ok,
        });
    }

    /// Prints the table and returns how many figures left their tolerance.
    pub fn print(&self) -> usize {
        println!(
            "{:<34} {:<46} {:>22} {:>22} {:>10}  ok",
            "capture", "figure", "truth", "inferred", "error"
        );
        for r in &self.rows {
            println!(
                "{:<34} {:<46} {:>22} {:>22} {:>10}  {}",
                r.capture,
                r.figure,
                r.truth,
                r.inferred,
                r.error,
                if r.ok { "ok" } else { "FAIL" }
            );
        }
        let bad = self.rows.iter().filter(|r| !r.ok).count();
        println!(
            "{} of {} figures within tolerance",
            self.rows.len() - bad,
            self.rows.len()
        );
        bad
    }
}

/// Classic pcap file header: little endian, microseconds, snaplen 65535, LINKTYPE_RAW (101).
pub fn raw_pcap_header() -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&0i32.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&65535u32.to_le_bytes());
    v.extend_from_slice(&101u32.to_le_bytes());
    v
}

/// One classic pcap record (microsecond timestamp) appended to `out`.
pub fn push_record(out: &mut Vec<u8>, ts_us: u64, data: &[u8]) {
    out.extend_from_slice(&((ts_us / 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ts_us % 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

// Hand-built SCTP over IPv4 packets (the broken-input tests).

/// IPv4 (RFC 791 3.1), 10.0.0.1 -> 10.0.0.2, protocol 132; `total` None = the real length.
pub fn ipv4(payload: &[u8], total: Option<u16>) -> Vec<u8> {
    let total = total.unwrap_or((20 + payload.len()) as u16);
    let mut v = vec![0x45, 0];
    v.extend_from_slice(&total.to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 0, 64, 132, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    v.extend_from_slice(payload);
    v
}

/// SCTP common header (RFC 9260 3.1) with its CRC32c (6.8), ports 5000 -> 5001.
pub fn sctp(vtag: u32, chunks: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(12 + chunks.len());
    v.extend_from_slice(&5000u16.to_be_bytes());
    v.extend_from_slice(&5001u16.to_be_bytes());
    v.extend_from_slice(&vtag.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(chunks);
    let crc = analyzer::sctp::crc32c::compute(&v);
    v[8..12].copy_from_slice(&crc.to_le_bytes());
    v
}

/// DATA (RFC 9260 3.3.1), B and E set, stream 1, SSN 0, PPID 0, 4 bytes of user data.
pub fn data_chunk(out: &mut Vec<u8>, tsn: u32) {
    out.extend_from_slice(&[0, 0x03, 0, 20]);
    out.extend_from_slice(&tsn.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
}
