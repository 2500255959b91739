//! Broken inputs give clear errors or warnings naming the offset, never a panic, and keep what
//! was read before the problem; the CLI's exit status says which captures failed.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use analyzer::analyze::{analyze_file, Options};

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sctp-analyzer-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Classic pcap, little endian, microseconds, LINKTYPE_RAW (101).
fn pcap_header() -> Vec<u8> {
    common::raw_pcap_header()
}

fn record(ts_s: u32, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    common::push_record(&mut v, u64::from(ts_s) * 1_000_000, data);
    v
}

/// IPv4 (proto 132) + SCTP common header + the given chunk bytes, with a valid CRC32c.
fn sctp_ip(vtag: u32, chunks: &[u8]) -> Vec<u8> {
    common::ipv4(&common::sctp(vtag, chunks), None)
}

fn data_chunk(tsn: u32) -> Vec<u8> {
    let mut c = Vec::new();
    common::data_chunk(&mut c, tsn);
    c
}

fn analyze(p: &std::path::Path) -> Result<analyzer::analyze::CaptureAnalysis, String> {
    analyze_file(p, &Options::default(), &mut |_| {}).map_err(|e| e.to_string())
}

#[test]
fn empty_file_is_an_error_naming_the_file() {
    let p = tmp("empty.pcap", b"");
    let e = analyze(&p).unwrap_err();
    assert!(
        e.contains("empty.pcap") && e.to_lowercase().contains("empty"),
        "{e}"
    );
}

#[test]
fn bad_magic_names_offset_zero() {
    let p = tmp("magic.pcap", b"GIF89a this is not a capture at all....");
    let e = analyze(&p).unwrap_err();
    assert!(e.contains("magic.pcap") && e.contains("offset 0"), "{e}");
}

#[test]
fn truncated_header_is_an_error() {
    let p = tmp("short.pcap", &pcap_header()[..10]);
    let e = analyze(&p).unwrap_err();
    assert!(e.contains("short.pcap") && e.contains("offset"), "{e}");
}

#[test]
fn truncated_record_keeps_what_was_read() {
    let mut f = pcap_header();
    f.extend(record(1, &sctp_ip(7, &data_chunk(100))));
    let mut last = record(2, &sctp_ip(7, &data_chunk(101)));
    last.truncate(last.len() - 10);
    f.extend(last);
    let p = tmp("cut.pcap", &f);
    let c = analyze(&p).unwrap();
    assert_eq!(c.packets, 1);
    assert_eq!(c.associations.len(), 1);
    assert!(
        c.warnings.iter().any(|w| w.contains("offset")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn chunk_length_past_the_packet_end_is_a_warning_and_counted_malformed() {
    let mut bad = data_chunk(100);
    bad[3] = 200; // length 200 in a 20-byte chunk
    let mut f = pcap_header();
    f.extend(record(1, &sctp_ip(7, &bad)));
    let p = tmp("pastend.pcap", &f);
    let c = analyze(&p).unwrap();
    assert_eq!(c.sctp_packets, 1);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("past the packet end") && w.contains("frame 1")),
        "{:?}",
        c.warnings
    );
    // A lone packet with nothing processable belongs to no association (RFC 9260 8.4); its
    // chunk is counted there, under its type (as tshark does) and as malformed.
    assert!(c.associations.is_empty());
    let u = &c.accounting.unassociated;
    assert_eq!((u.packets, u.chunks.malformed), (1, 1));
    assert_eq!(u.chunks.counts, vec![(0, 1)]);
}

#[test]
fn zero_length_chunk_is_a_warning() {
    let mut chunks = data_chunk(100);
    chunks.extend_from_slice(&[3, 0, 0, 0]); // SACK header with length 0
    let mut f = pcap_header();
    f.extend(record(1, &sctp_ip(7, &chunks)));
    let p = tmp("zero.pcap", &f);
    let c = analyze(&p).unwrap();
    assert!(
        c.warnings.iter().any(|w| w.contains("chunk length 0")),
        "{:?}",
        c.warnings
    );
    assert_eq!(
        c.associations[0].chunk_count(0),
        1,
        "the DATA before it is kept"
    );
}

#[test]
fn cli_exit_status_reports_failed_captures_and_keeps_the_others() {
    let mut f = pcap_header();
    f.extend(record(1, &sctp_ip(7, &data_chunk(100))));
    let good = tmp("good.pcap", &f);
    let bad = tmp("bad.pcap", b"nonsense bytes, not a capture");
    let bin = env!("CARGO_BIN_EXE_sctp-analyzer");
    let out = Command::new(bin)
        .args(["analyze", "--format", "json"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let caps = doc["captures"].as_array().unwrap();
    assert_eq!(caps.len(), 2);
    assert_eq!(caps[0]["associations"].as_array().unwrap().len(), 1);
    assert!(caps[1]["error"].as_str().unwrap().contains("offset 0"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.pcap"));

    let ok = Command::new(bin)
        .args(["analyze", "--format", "json"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    let usage = Command::new(bin)
        .args(["analyze", "--format", "nope"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn cli_batch_over_a_directory_in_parallel_equals_sequential() {
    let bin = env!("CARGO_BIN_EXE_sctp-analyzer");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
    let run = |jobs: &str| {
        let out = Command::new(bin)
            .args(["analyze", "--format", "json", "--jobs", jobs])
            .arg(&dir)
            .output()
            .unwrap();
        // The folder holds the broken-input corpus (sample-traces/broken/) too: status 1.
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one, two);
    let doc: serde_json::Value = serde_json::from_slice(&two).unwrap();
    let caps = doc["captures"].as_array().unwrap();
    assert!(caps.len() >= 16 + 20);
    let mut foreign = 0;
    for c in caps {
        let file = c["file"].as_str().unwrap();
        // Only the unreadable files of the broken corpus fail, and the other tools' captures
        // (sample-traces/foreign/, NetMon's named .cap) with the format named; every sample
        // trace is read.
        if file.contains("/foreign/") {
            foreign += 1;
            assert!(
                c["error"]
                    .as_str()
                    .unwrap()
                    .contains(" capture: convert it"),
                "{file}: {}",
                c["error"]
            );
        } else if !file.contains("/broken/") {
            assert!(c["error"].is_null(), "{file}: {}", c["error"]);
        }
    }
    assert_eq!(foreign, 2, "NetMon 1.x and 2.x");
    let failed = caps.iter().filter(|c| !c["error"].is_null()).count();
    assert_eq!(
        failed,
        4 + foreign,
        "empty, bad magic, truncated header, corrupt gzip, and the other tools' captures"
    );
}

#[test]
fn cli_fleet_parquet_is_hive_partitioned_and_scans_back_as_one_table() {
    let bin = env!("CARGO_BIN_EXE_sctp-analyzer");
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
    let out = std::env::temp_dir().join(format!("sctp-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let files = [
        "cut_p20_sack40_sender.pcap",
        "udp_cut_p20_sender.pcap",
        "spur_pmr1_rtomin30_sender.pcap",
    ];
    let st = Command::new(bin)
        .args(["analyze", "--format", "parquet", "--jobs", "2", "--out"])
        .arg(&out)
        .args(files.iter().map(|f| samples.join(f)))
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    for f in files {
        assert!(out
            .join("associations")
            .join(format!("capture={f}"))
            .join("part.parquet")
            .is_file());
    }
    assert!(out.join("summary.json").is_file());
    let df = analyzer::frames::scan_partitioned(&out, "associations").unwrap();
    assert_eq!(df.height(), 3);
    assert!(
        df.get_column_index("capture").is_some(),
        "partition key restored"
    );
    let fo = analyzer::frames::scan_partitioned(&out, "failovers").unwrap();
    assert!(fo.height() >= 3, "{fo}");
    std::fs::remove_dir_all(&out).unwrap();
}
