//! Heartbeat interval (RFC 9260 8.3, `infer::heartbeat`) against the usrsctp lab's truth: every
//! `hb_interval_ms` claimed for a path of the configured sender is within 10% of the
//! `heartbeat_interval_ms` the run was made with, on the sample traces and, when `../shared` is
//! there, on the lab's development set. At least one claim must be made (a test that claims
//! nothing proves nothing). The Linux runs are scored in `lab_linux_truth`.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// (run prefix, truth) of every usrsctp run with a heartbeat interval in its truth.
fn runs() -> Vec<(PathBuf, Value)> {
    let mut dirs = vec![common::samples_dir()];
    if let Some(s) = common::shared_dir() {
        dirs.push(s.join("captures/lab"));
    }
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        for n in names {
            let Some(pre) = n.strip_suffix("_truth.json") else {
                continue;
            };
            let Ok(text) = fs::read_to_string(dir.join(&n)) else {
                continue;
            };
            let Ok(truth) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if truth["heartbeat_interval_ms"].as_f64().is_some() {
                out.push((dir.join(pre), truth));
            }
        }
    }
    out
}

fn capture(pre: &Path, side: &str) -> Option<PathBuf> {
    let p = PathBuf::from(format!("{}_{side}.pcap", pre.display()));
    p.exists().then_some(p)
}

#[test]
fn heartbeat_intervals_claimed_are_the_configured_ones() {
    let runs = runs();
    assert!(!runs.is_empty(), "the sample traces have usrsctp truths");
    let (mut claims, mut wrong) = (0, Vec::new());
    for (pre, truth) in &runs {
        let want = truth["heartbeat_interval_ms"].as_f64().unwrap();
        let sender: Vec<String> = truth["sender"]["addresses"]
            .as_array()
            .or_else(|| truth["sender"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        for side in ["sender", "receiver"] {
            let Some(cap) = capture(pre, side) else {
                continue;
            };
            let (_, report) = common::analyze(&cap);
            for a in &report.associations {
                for p in &a.paths {
                    let Some(got) = p.infer.hb_interval_ms else {
                        continue;
                    };
                    if !sender.is_empty() && !sender.contains(&p.src) {
                        continue;
                    }
                    claims += 1;
                    let line = format!(
                        "{} {side} {} -> {}: {got:.0} ms, configured {want:.0} ({})",
                        pre.display(),
                        p.src,
                        p.dst,
                        p.infer.hb_evidence.as_deref().unwrap_or("")
                    );
                    println!("{line}");
                    if (got - want).abs() > 0.1 * want {
                        wrong.push(line);
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "heartbeat intervals off by more than 10%:\n{}",
        wrong.join("\n")
    );
    assert!(claims > 0, "no heartbeat interval claimed on any lab run");
}
