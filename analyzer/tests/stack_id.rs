//! Endpoint stack identification (`endpoints[i].stack`) against what is known of each capture:
//! usrsctp on every usrsctp lab run and sample trace, linux on every lab-linux run (the truth
//! file of each run names the stack), and on public captures the stack their source states, or
//! no claim where the capture is synthetic, fuzzed or of an unknown stack.
//!
//! Sample traces are always there; `../shared` captures are checked when present.

use crate::common;

use std::path::{Path, PathBuf};

use analyzer::report::CaptureReport;

/// The stack a lab run's truth file names: `stack` "Linux kernel SCTP ..." (lab-linux) or
/// `generator` "usrsctp ..." (lab); None for TCP-only runs or no truth.
fn truth_stack(capture: &Path) -> Option<&'static str> {
    let name = capture.file_name()?.to_str()?;
    let stem = name.split('.').next()?;
    let run = ["_sender", "_receiver", "_wire"]
        .iter()
        .find_map(|s| stem.strip_suffix(s))?;
    let text = std::fs::read_to_string(capture.with_file_name(format!("{run}_truth.json"))).ok()?;
    let t: serde_json::Value = serde_json::from_str(&text).ok()?;
    let field = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or("");
    if field("stack").starts_with("Linux kernel SCTP") {
        Some("linux")
    } else if field("generator").starts_with("usrsctp") {
        Some("usrsctp")
    } else {
        None
    }
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        n.ends_with(".pcap") || n.ends_with(".pcapng") || n.ends_with(".pcap.gz")
    });
    v.sort();
    v
}

/// Every endpoint whose INIT or INIT-ACK was captured: (association, endpoint, name,
/// confidence).
fn guesses(r: &CaptureReport) -> Vec<(usize, usize, Option<String>, String)> {
    let mut out = Vec::new();
    for a in &r.associations {
        for (i, e) in a.endpoints.iter().enumerate() {
            if e.stack.evidence.starts_with("no INIT or INIT-ACK") {
                assert_eq!(e.stack.name, None, "a name without an INIT / INIT-ACK");
                continue;
            }
            out.push((a.id, i, e.stack.name.clone(), e.stack.confidence.clone()));
        }
    }
    out
}

/// Every lab run of `dir` with a stack in its truth: each endpoint whose handshake chunk was
/// captured is named that stack. Returns the endpoints checked.
fn check_lab_dir(dir: &Path) -> usize {
    let mut checked = 0;
    for p in captures(dir) {
        let Some(truth) = truth_stack(&p) else {
            continue;
        };
        let (_, r) = common::analyze(&p);
        let g = guesses(&r);
        assert!(!g.is_empty(), "{}: no INIT / INIT-ACK found", p.display());
        for (a, e, name, conf) in g {
            assert_eq!(
                name.as_deref(),
                Some(truth),
                "{} association {a} endpoint {e} ({conf})",
                p.display()
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn sample_traces_are_usrsctp() {
    let n = check_lab_dir(&common::samples_dir());
    eprintln!("sample-traces: {n} endpoints checked");
    assert!(n >= 40, "only {n} endpoints checked in sample-traces");
}

#[test]
fn shared_usrsctp_lab_runs_are_usrsctp() {
    let Some(s) = common::shared_dir() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let dir = s.join("captures/lab");
    if dir.is_dir() {
        let n = check_lab_dir(&dir);
        eprintln!("{}: {n} endpoints checked", dir.display());
        assert!(n > 0);
    }
}

#[test]
fn shared_lab_linux_runs_are_linux() {
    let Some(s) = common::shared_dir() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let dir = s.join("captures/lab-linux");
    if dir.is_dir() {
        let n = check_lab_dir(&dir);
        eprintln!("{}: {n} endpoints checked", dir.display());
        assert!(n > 0);
    }
}

/// Public captures: the stack their source states (Open5GS and OAI 5G cores run Linux kernel
/// SCTP; a Kubernetes pod network is Linux), and no claim on synthetic, fuzzed, crafted or
/// unknown-stack captures.
#[test]
fn public_captures() {
    let Some(s) = common::shared_dir() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let dir = s.join("captures/public");
    let linux = [
        "Spartan-F117__VAPT_CoreNetwork5G__NAS_UE_Auth_open5gs.pcapng",
        "Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng",
        "Montimage__5Greplay__oai.pcap",
        "UmakantKulkarni__temp__sctpnw.pcap",
    ];
    // Synthetic (no parameters at all), fuzzed, and two unknown stacks whose INIT / INIT-ACK
    // match no known signature (Wireshark's old sctp-test.cap; an M3UA product in ip-frag).
    let none = [
        "arkime__arkime__m3ua_synthetic.pcap",
        "pevma__mrp__sctp.pcap",
        "aboutsip__pkts__sctp-test.cap",
        "seladb__PcapPlusPlus__ip-frag.pcap",
    ];
    for f in linux {
        let p = dir.join(f);
        if !p.exists() {
            continue;
        }
        let (_, r) = common::analyze(&p);
        let g = guesses(&r);
        assert!(!g.is_empty(), "{f}: no INIT / INIT-ACK");
        for (a, e, name, conf) in g {
            assert_eq!(
                name.as_deref(),
                Some("linux"),
                "{f} association {a} endpoint {e} ({conf})"
            );
        }
    }
    for f in none {
        let p = dir.join(f);
        if !p.exists() {
            continue;
        }
        let (_, r) = common::analyze(&p);
        for (a, e, name, _) in guesses(&r) {
            assert_eq!(name, None, "{f} association {a} endpoint {e}");
        }
    }
}
