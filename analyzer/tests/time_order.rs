//! Frames stamped earlier than a frame before them are told in one capture warning, counted as
//! tshark's timestamps count them: a file made of a sample trace's two halves in the wrong order
//! (as `mergecap -a` of files given in the wrong order makes), and the public captures whose
//! "any"-device or multi-interface timestamps step back (checked against tshark when both are
//! present). The capture's duration runs to its latest timestamp, never below zero.

use std::path::Path;

use crate::common;

/// (frames behind the latest timestamp before them, the first (frame, lag ns), the furthest
/// (frame, lag ns), the latest timestamp) of `ts_ns` in file order.
type Behind = (u64, Option<(u64, i64)>, Option<(u64, i64)>, i64);

fn behind(ts_ns: &[i64]) -> Behind {
    let (mut n, mut first, mut most, mut latest) = (0, None, None::<(u64, i64)>, i64::MIN);
    for (i, &t) in ts_ns.iter().enumerate() {
        let frame = i as u64 + 1;
        if t < latest {
            n += 1;
            first.get_or_insert((frame, latest - t));
            if most.is_none_or(|(_, m)| latest - t > m) {
                most = Some((frame, latest - t));
            }
        } else {
            latest = t;
        }
    }
    (n, first, most, latest)
}

/// The warning about frames behind, if the capture has one.
fn warning(path: &Path) -> (Option<String>, f64) {
    let (_, r) = common::analyze(path);
    let w = r.warnings.iter().find(|w| w.contains("stamped earlier"));
    (w.cloned(), r.duration_s)
}

fn check(name: &str, w: Option<String>, (n, first, most, _): Behind) {
    let Some(w) = w else {
        assert_eq!(n, 0, "{name}: no warning for {n} frames behind");
        return;
    };
    let (first, most) = (first.unwrap(), most.unwrap());
    let count = if n == 1 {
        "1 frame is stamped".to_string()
    } else {
        format!("{n} frames are stamped")
    };
    assert!(w.starts_with(&count), "{name}: {w}");
    assert!(w.contains(&format!("frame {}", first.0)), "{name}: {w}");
    assert!(w.contains(&format!("frame {}", most.0)), "{name}: {w}");
    let wording = if most.1 < 1_000_000 {
        "several interfaces"
    } else {
        "reordercap"
    };
    assert!(w.contains(wording), "{name}: {w}");
}

#[test]
fn a_file_of_two_halves_in_the_wrong_order_is_told_and_keeps_its_duration() {
    let bytes = std::fs::read(common::samples_dir().join("cut_p20_sack40_sender.pcap")).unwrap();
    // Classic pcap, little-endian, microseconds: records after the 24-byte file header.
    let (header, mut records, mut at) = (&bytes[..24], Vec::new(), 24);
    while at < bytes.len() {
        let le = |o: usize| u32::from_le_bytes(bytes[at + o..at + o + 4].try_into().unwrap());
        let len = 16 + le(8) as usize;
        let ts = i64::from(le(0)) * 1_000_000_000 + i64::from(le(4)) * 1000;
        records.push((ts, &bytes[at..at + len]));
        at += len;
    }
    let half = records.len() / 2;
    records.rotate_left(half);
    let mut out = header.to_vec();
    for (_, r) in &records {
        out.extend_from_slice(r);
    }
    let path = std::env::temp_dir().join(format!("sctp-halves-{}.pcap", std::process::id()));
    std::fs::write(&path, out).unwrap();
    let (w, duration_s) = warning(&path);
    let _ = std::fs::remove_file(&path);
    let ts: Vec<i64> = records.iter().map(|r| r.0).collect();
    let want = behind(&ts);
    assert_eq!(want.0, (records.len() - half) as u64);
    check("halves", w, want);
    // From the first frame (the second half's first) to the latest timestamp.
    let span = (want.3 - ts[0]) as f64 / 1e9;
    assert!(
        duration_s >= 0.0 && (duration_s - span).abs() < 1e-6,
        "{duration_s} {span}"
    );
}

#[test]
fn sample_traces_in_time_order_have_no_warning() {
    for name in ["cut_p20_sack40_sender.pcap", "hol_s4_loss2_receiver.pcap"] {
        let (w, _) = warning(&common::samples_dir().join(name));
        assert_eq!(w, None, "{name}");
    }
}

/// tshark's frame timestamps, as integer nanoseconds (parsed from its decimal text exactly).
fn tshark_ts(path: &Path) -> Option<Vec<i64>> {
    let out = std::process::Command::new(common::tshark()?)
        .args(["-r"])
        .arg(path)
        .args(["-T", "fields", "-e", "frame.time_epoch"])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines()
        .map(|l| {
            let (s, frac) = l.trim().split_once('.').unwrap_or((l.trim(), ""));
            let frac = format!("{frac:0<9}");
            Some(s.parse::<i64>().ok()? * 1_000_000_000 + frac[..9].parse::<i64>().ok()?)
        })
        .collect()
}

#[test]
fn public_captures_with_frames_behind_are_told_as_tshark_counts_them() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    if common::tshark().is_none() {
        eprintln!("skipped: tshark not found");
        return;
    }
    let mut told = 0;
    for name in [
        "dreibh__netperfmeter__multi.pcap.gz",
        "UmakantKulkarni__temp__sctpnw.pcap",
        "aboutsip__pkts__sctp-addip.cap",
        "the-tcpdump-group__tcpdump__sctp-asconf-6.pcap",
        "Montimage__5Greplay__oai.pcap",
        "Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng",
        "aboutsip__pkts__sctp.cap",
        "the-tcpdump-group__tcpdump__isup.pcap",
    ] {
        let path = shared.join("captures/public").join(name);
        if !path.exists() {
            continue;
        }
        let ts = tshark_ts(&path).unwrap();
        let want = behind(&ts);
        told += u32::from(want.0 > 0);
        check(name, warning(&path).0, want);
    }
    // multi.pcap.gz: 40 frames, the furthest 91 µs behind (tshark).
    assert!(told >= 6, "{told}");
}
