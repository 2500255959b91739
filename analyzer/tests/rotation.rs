//! Rotated captures (issue 18 part 1): a lab capture split into files and read back as one
//! rotation gives the analysis of the unsplit capture; a file missing from the rotation is a
//! capture gap, told, and no failover time is measured across it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use analyzer::analyze::{analyze_file, analyze_files, Options};
use analyzer::report::CaptureReport;
use serde_json::Value;

/// The records of a classic little-endian pcap file: (header, records).
fn records(bytes: &[u8]) -> (&[u8], Vec<&[u8]>) {
    assert_eq!(&bytes[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "a classic pcap");
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push(&bytes[at..at + 16 + caplen]);
        at += 16 + caplen;
    }
    (&bytes[..24], out)
}

/// Splits `src` into files of consecutive records (as `editcap -c` does), each of the ranges
/// given; returns their paths.
fn split(src: &Path, dir: &Path, parts: &[std::ops::Range<usize>]) -> Vec<PathBuf> {
    let bytes = std::fs::read(src).unwrap();
    let (header, recs) = records(&bytes);
    parts
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let p = dir.join(format!("ring_{:05}.pcap", i + 1));
            let mut out = header.to_vec();
            for rec in &recs[r.clone()] {
                out.extend_from_slice(rec);
            }
            std::fs::write(&p, out).unwrap();
            p
        })
        .collect()
}

/// The report as JSON without what names the files.
fn comparable(r: &CaptureReport) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["file", "warnings", "files", "format"] {
        o.remove(k);
    }
    v
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rotation-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lab_capture() -> PathBuf {
    common::samples_dir().join("cut_p20_sack40_sender.pcap")
}

#[test]
fn a_capture_split_in_three_reads_back_as_the_unsplit_one() {
    let src = lab_capture();
    let n = records(&std::fs::read(&src).unwrap()).1.len();
    let dir = tempdir("three");
    let files = split(&src, &dir, &[0..n / 3, n / 3..2 * n / 3, 2 * n / 3..n]);
    let opts = Options::default();
    let whole = CaptureReport::from_analysis(&analyze_file(&src, &opts, &mut |_| {}).unwrap());
    // Given in any order: read in the order of their first packet.
    let mut shuffled = files.clone();
    shuffled.reverse();
    let merged = analyze_files(&shuffled, &opts, &mut |_| {}).unwrap();
    let report = CaptureReport::from_analysis(&merged);
    assert_eq!(comparable(&report), comparable(&whole));
    assert!(!whole.associations.is_empty());
    assert_eq!(report.files.len(), 3);
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(
        report
            .files
            .iter()
            .map(|f| f.path.clone())
            .collect::<Vec<_>>(),
        paths
    );
    // Frame numbers run on: each file's first frame follows the one before.
    assert_eq!(report.files[0].first_frame, 1);
    assert_eq!(report.files[1].first_frame, (n / 3) as u64 + 1);
    assert_eq!(report.files[2].first_frame, (2 * n / 3) as u64 + 1);
    assert_eq!(report.files.iter().map(|f| f.frames).sum::<u64>(), n as u64);
    assert!(report.warnings.iter().all(|w| !w.contains("capture gap")));
    // The pipelined pass (a thread reading ahead) gives the same.
    let piped = Options {
        pipeline: true,
        ..Options::default()
    };
    let merged = analyze_files(&files, &piped, &mut |_| {}).unwrap();
    assert_eq!(
        comparable(&CaptureReport::from_analysis(&merged)),
        comparable(&whole)
    );
    // editcap's own split, when Wireshark's tools are installed (pcapng out).
    if Command::new("editcap").arg("-h").output().is_ok() {
        let ed = tempdir("editcap");
        let status = Command::new("editcap")
            .arg("-c")
            .arg(n.div_ceil(3).to_string())
            .arg(&src)
            .arg(ed.join("cut.pcap"))
            .status()
            .unwrap();
        assert!(status.success());
        let parts = analyzer::inputs::expand(std::slice::from_ref(&ed));
        assert_eq!(parts.len(), 3);
        let r = CaptureReport::from_analysis(&analyze_files(&parts, &opts, &mut |_| {}).unwrap());
        assert_eq!(comparable(&r), comparable(&whole));
        let _ = std::fs::remove_dir_all(&ed);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_file_is_a_gap_no_failover_time_is_measured_across() {
    let src = lab_capture();
    let opts = Options::default();
    let whole = analyze_file(&src, &opts, &mut |_| {}).unwrap();
    let report = CaptureReport::from_analysis(&whole);
    // The failover of the whole capture (path 1 cut, RTO.min 100 ms, PMR 2).
    let fo = &report.associations[0].directions[0].failovers[0];
    assert!(fo.failover_ms.is_some());
    let bytes = std::fs::read(&src).unwrap();
    let recs = records(&bytes).1;
    let ts = |r: &[u8]| {
        let s = u32::from_le_bytes(r[0..4].try_into().unwrap()) as i64;
        let us = u32::from_le_bytes(r[4..8].try_into().unwrap()) as i64;
        s * 1_000_000_000 + us * 1000
    };
    let first = ts(recs[0]);
    let outage = first + (fo.outage_start_s.unwrap() * 1e9) as i64;
    // Files of about 1 s; the one holding the outage's start is lost.
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, r) in recs.iter().enumerate() {
        if ts(r) - ts(recs[start]) >= 1_000_000_000 {
            parts.push(start..i);
            start = i;
        }
    }
    parts.push(start..recs.len());
    let lost = parts
        .iter()
        .position(|p| ts(recs[p.start]) <= outage && outage <= ts(recs[p.end - 1]))
        .unwrap();
    let dir = tempdir("gap");
    let mut files = split(&src, &dir, &parts);
    let gone = files.remove(lost);
    std::fs::remove_file(gone).unwrap();
    let merged = CaptureReport::from_analysis(&analyze_files(&files, &opts, &mut |_| {}).unwrap());
    assert_eq!(merged.files.len(), parts.len() - 1);
    let gap = merged.files[lost].gap_before_s.unwrap();
    assert!(gap > 1.0, "{gap}");
    assert!(
        merged
            .warnings
            .iter()
            .any(|w| w.starts_with("capture gap of") && w.contains("no inference across it")),
        "{:?}",
        merged.warnings
    );
    // Whatever failover is seen after the gap has no time, cause or what-if, and says why.
    let d = &merged.associations[0].directions[0];
    for f in d.failovers.iter().filter(|f| !f.spurious) {
        assert_eq!(f.failover_ms, None);
        assert_eq!(f.recommendation, None);
        assert!(
            f.evidence.iter().any(|e| e.contains("capture gap")),
            "{:?}",
            f.evidence
        );
    }
    // No expiry's RTO is measured from a timer started before the gap.
    let gap_end_s = merged.files[lost].first_epoch_s.unwrap() - merged.start_epoch_s.unwrap();
    for t in &d.timeouts {
        if let (Some(rto), t_s) = (t.observed_rto_ms, t.t_s) {
            assert!(
                t_s - rto / 1e3 >= gap_end_s - 1e-6 || t_s < gap_end_s,
                "{t_s} {rto}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cli_reads_a_folder_of_rotations_one_capture_each() {
    let src = lab_capture();
    let n = records(&std::fs::read(&src).unwrap()).1.len();
    let dir = tempdir("cli");
    let ring = split(&src, &dir, &[0..n / 2, n / 2..n]);
    // The same as `tcpdump -C` names it (x.pcap, x.pcap1) in a subfolder: a rotation too.
    std::fs::create_dir_all(dir.join("c")).unwrap();
    std::fs::copy(&ring[0], dir.join("c/trace.pcap")).unwrap();
    std::fs::copy(&ring[1], dir.join("c/trace.pcap1")).unwrap();
    // A capture of its own beside the rotation.
    std::fs::copy(
        common::samples_dir().join("sparse_sack200_sender.pcap"),
        dir.join("other.pcap"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-analyzer"))
        .args(["analyze", "--format", "json", "--no-progress", "--rotated"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let caps = v["captures"].as_array().unwrap();
    assert_eq!(caps.len(), 3, "{v}");
    let rotations: Vec<&Value> = caps
        .iter()
        .filter(|c| c["files"].as_array().is_some_and(|f| f.len() == 2))
        .collect();
    assert_eq!(rotations.len(), 2);
    for rot in rotations {
        assert_eq!(rot["packets"], n as u64);
    }
    let single = caps.iter().find(|c| c.get("files").is_none()).unwrap();
    assert!(single["file"].as_str().unwrap().ends_with("other.pcap"));
    let _ = std::fs::remove_dir_all(&dir);
}
