//! Studies (issue 17): every figure of a study table equals the per-capture figures it
//! aggregates. The sample traces are studied by SACK delay and message interval (from their
//! truth files); each row is recomputed here from the captures' JSON reports, independently of
//! `study::samples`, and the CLI's JSON output must equal the library's.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use analyzer::study::{self, StudySpec};
use serde_json::Value;

/// The sample traces' captures (the broken corpus aside).
fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::samples_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| analyzer::inputs::is_capture_name(p))
        .collect();
    v.sort();
    v
}

/// The figure `metric` of every DATA direction of a capture's JSON report, by hand.
fn by_hand(report: &Value, metric: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for c in report["comparison"].as_array().unwrap() {
        let v = match metric {
            "retransmissions" => c["retransmissions"].as_f64(),
            "max_gap_ms" => c["max_gap_ms"].as_f64(),
            "failover_ms" | "sacks_per_data_packet" if c["transport"] == "sctp" => {
                let a = report["associations"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|a| a["id"] == c["id"])
                    .unwrap();
                let d = a["directions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|d| d["sender"] == c["sender"])
                    .unwrap();
                if metric == "failover_ms" {
                    d["failovers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|f| f["spurious"] == false)
                        .and_then(|f| f["failover_ms"].as_f64())
                } else {
                    d["sacks_per_data_packet"].as_f64()
                }
            }
            _ => None,
        };
        out.extend(v);
    }
    out
}

#[test]
fn every_study_figure_equals_the_figures_it_aggregates() {
    let spec = StudySpec {
        by: vec!["sack_delay_ms".into()],
        x: Some("message_interval_ms".into()),
        y: vec![
            "failover_ms".into(),
            "sacks_per_data_packet".into(),
            "retransmissions".into(),
            "max_gap_ms".into(),
        ],
        ..StudySpec::default()
    };
    // Every capture (the CLI check at the end), and those whose truth file gives both
    // parameters (the by-hand check: without them the parameters are inferred per direction).
    let (mut all, mut samples) = (Vec::new(), Vec::new());
    // (group value, x value, metric) -> values by hand.
    let mut want: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for p in captures() {
        let (params, _) = study::params::sidecar(&p).unwrap();
        let (_, r) = common::analyze(&p);
        let s = study::samples(&r, &params);
        all.extend(s.clone());
        if !params.contains_key("sack_delay_ms") || !params.contains_key("message_interval_ms") {
            continue;
        }
        samples.extend(s);
        let report = serde_json::to_value(&r).unwrap();
        for m in &spec.y {
            let key = (
                params["sack_delay_ms"].to_string(),
                params["message_interval_ms"].to_string(),
                m.clone(),
            );
            want.entry(key).or_default().extend(by_hand(&report, m));
        }
    }
    let r = study::aggregate(&spec, &samples);
    let mut checked = 0;
    for ((g, x, m), values) in &want {
        if values.is_empty() {
            continue;
        }
        let (gv, xv): (Value, Value) = (
            serde_json::from_str(g).unwrap(),
            serde_json::from_str(x).unwrap(),
        );
        let rows: Vec<_> = r
            .rows
            .iter()
            .filter(|row| row.group["sack_delay_ms"] == gv && row.x == xv && row.metric == *m)
            .collect();
        let n: u64 = rows.iter().map(|r| r.n).sum();
        assert_eq!(n as usize, values.len(), "{g} {x} {m}");
        let (min, max) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let lo = rows.iter().map(|r| r.min).fold(f64::INFINITY, f64::min);
        let hi = rows.iter().map(|r| r.max).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((lo, hi), (min, max), "{g} {x} {m}");
        let sum: f64 = rows.iter().map(|r| r.mean * r.n as f64).sum();
        let by_hand: f64 = values.iter().sum();
        assert!(
            (sum - by_hand).abs() <= 1e-6 * by_hand.abs().max(1.0),
            "{g} {x} {m}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} groups checked");
    // Failover time per SACK delay: the lab's 200 ms runs fail over later than its 40 ms ones.
    let mean = |sack: i64| {
        let rows: Vec<_> = r
            .rows
            .iter()
            .filter(|row| row.metric == "failover_ms" && row.group["sack_delay_ms"] == sack)
            .collect();
        rows.iter().map(|r| r.mean * r.n as f64).sum::<f64>()
            / rows.iter().map(|r| r.n as f64).sum::<f64>()
    };
    assert!(mean(200) > mean(40), "{} vs {}", mean(200), mean(40));

    // The CLI gives the same rows.
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-analyzer"))
        .args(["study", "--format", "json", "--jobs", "2"])
        .args(["--by", "sack_delay_ms", "--x", "message_interval_ms"])
        .args(["--y", "failover_ms", "--y", "sacks_per_data_packet"])
        .args(["--y", "retransmissions", "--y", "max_gap_ms"])
        .args(captures())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: study::StudyReport = serde_json::from_slice(&out.stdout).unwrap();
    let names = |r: &study::StudyReport| {
        r.rows
            .iter()
            .map(|row| (row.group.clone(), row.x.clone(), row.metric.clone(), row.n))
            .collect::<Vec<_>>()
    };
    let r_all = study::aggregate(&spec, &all);
    assert_eq!(names(&cli), names(&r_all));
    for (a, b) in cli.rows.iter().zip(&r_all.rows) {
        assert!((a.mean - b.mean).abs() <= 1e-9 * b.mean.abs().max(1.0));
        assert_eq!(a.captures.len(), b.captures.len());
    }
}

#[test]
fn study_cli_rejects_unknown_metrics_and_templates() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sctp-analyzer"))
            .arg("study")
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--y", "nope", "x.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown metric \"nope\""));
    let o = run(&["--template", "nope", "x.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("failover-vs-sack-delay"));
    let o = run(&["--list"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("sacks_per_data_packet"));
}
