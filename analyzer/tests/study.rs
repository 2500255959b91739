//! Studies (issue 17): every figure of a study table equals the per-capture figures it
//! aggregates. The sample traces are studied by SACK delay and message interval (from their
//! truth files); each row is recomputed here from the captures' JSON reports, independently of
//! `study::samples`, and the CLI's JSON output must equal the library's.

use crate::common;

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
            "max_transfer_ms" => c["max_transfer_ms"].as_f64(),
            "failover_ms" | "sacks_per_data_packet" | "rto_at_failure_ms"
                if c["transport"] == "sctp" =>
            {
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
                let failover = d["failovers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|f| f["spurious"] == false);
                if metric == "failover_ms" {
                    failover.and_then(|f| f["failover_ms"].as_f64())
                } else if metric == "rto_at_failure_ms" {
                    // The first expiry of the failover's chain (from the outage's start to
                    // the failover), when it is the chain's first (no backoff).
                    failover.and_then(|f| {
                        let (start, end) = (f["outage_start_s"].as_f64()?, f["t_s"].as_f64()?);
                        let t = d["timeouts"].as_array()?.iter().find(|t| {
                            let ts = t["t_s"].as_f64().unwrap();
                            ts >= start && ts <= end
                        })?;
                        if t["backoff"] == 0 {
                            t["observed_rto_ms"].as_f64()
                        } else {
                            None
                        }
                    })
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

/// The `sctp-vs-tcp-loss` template on its sparse campaign (`sample-traces/studies/
/// sctp-vs-tcp-loss-sparse`: SCTP and Linux TCP side by side in each run, random loss 0-10 %,
/// RTO.min 1000 or 200 ms): every row, SCTP and TCP alike, equals the captures' own figures
/// recomputed here from their JSON reports; and the campaign's result (README there) holds.
#[test]
fn loss_study_rows_equal_the_figures_of_both_transports() {
    let dir = common::samples_dir().join("studies/sctp-vs-tcp-loss-sparse");
    if !dir.is_dir() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let spec = study::template("sctp-vs-tcp-loss").unwrap();
    let files = analyzer::inputs::expand(std::slice::from_ref(&dir));
    assert_eq!(files.len(), 20, "the campaign's 20 runs");
    let mut samples = Vec::new();
    // (RTO.min, loss, transport, metric) -> values by hand.
    let mut want: BTreeMap<(String, String, String, String), Vec<f64>> = BTreeMap::new();
    for p in &files {
        let (params, _) = study::params::sidecar(p).unwrap();
        let (_, r) = common::analyze(p);
        samples.extend(study::samples(&r, &params));
        let report = serde_json::to_value(&r).unwrap();
        for c in report["comparison"].as_array().unwrap() {
            let t = c["transport"].as_str().unwrap();
            // Where each transport keeps its per-direction transfer times.
            let list = if t == "sctp" {
                "associations"
            } else {
                "tcp_flows"
            };
            let dir = report[list]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["id"] == c["id"])
                .and_then(|x| {
                    x["directions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|d| d["sender"] == c["sender"])
                })
                .unwrap();
            for m in &spec.y {
                let v = match m.as_str() {
                    "latency_p95_ms" => dir["p95_transfer_ms"].as_f64(),
                    other => c[other].as_f64(),
                };
                let key = (
                    params["rto_min_ms"].to_string(),
                    params["random_loss_pct"].to_string(),
                    t.to_string(),
                    m.clone(),
                );
                want.entry(key).or_default().extend(v);
            }
        }
    }
    let r = study::aggregate(&spec, &samples);
    let mut checked = 0;
    for ((g, x, t, m), values) in &want {
        if values.is_empty() {
            continue;
        }
        let (gv, xv): (Value, Value) = (
            serde_json::from_str(g).unwrap(),
            serde_json::from_str(x).unwrap(),
        );
        let row = r
            .rows
            .iter()
            .find(|row| {
                row.group["rto_min_ms"] == gv
                    && row.x == xv
                    && row.transport == *t
                    && row.metric == *m
            })
            .unwrap_or_else(|| panic!("no row {g} {x} {t} {m}"));
        assert_eq!(row.n as usize, values.len(), "{g} {x} {t} {m}");
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((row.min, row.max), (min, max), "{g} {x} {t} {m}");
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!(
            (row.mean - mean).abs() <= 1e-9 * mean.abs().max(1.0),
            "{g} {x} {t} {m}"
        );
        checked += 1;
    }
    // 2 RTO.min x 5 loss rates x 2 transports x the template's metrics.
    assert!(checked >= 2 * 5 * 2 * 4, "only {checked} rows checked");
    let mean = |rto: i64, loss: f64, t: &str, m: &str| {
        r.rows
            .iter()
            .find(|row| {
                row.group["rto_min_ms"] == rto
                    && row.x.as_f64() == Some(loss)
                    && row.transport == t
                    && row.metric == m
            })
            .map(|row| row.mean)
            .unwrap()
    };
    // The campaign's result: SCTP's latency tail grows with loss faster than TCP's, more so at
    // RTO.min 1 s, and lowering RTO.min to 200 ms shortens it.
    let p95 = |rto, loss, t| mean(rto, loss, t, "latency_p95_ms");
    assert!(p95(1000, 10.0, "sctp") > 2.0 * p95(1000, 10.0, "tcp"));
    assert!(p95(1000, 10.0, "sctp") > p95(200, 10.0, "sctp"));
    assert!(p95(1000, 3.0, "sctp") > p95(200, 3.0, "sctp"));
}

/// The `spurious-timeouts` campaign (`sample-traces/studies/spurious-timeouts`: usrsctp, no
/// path failure, sparse messages, peer SACK delay 40 / 200 ms, RTO.min 30 / 100 / 300 ms, I-bit
/// off / on): per run, the analyzer's T3 expiries equal the stack's own count (`stack_log`),
/// and its spurious failovers the times the stack marked the data's primary destination
/// unreachable; the template's rows show Rüngeler's result (README there).
#[test]
fn spurious_timeouts_campaign_matches_the_stack() {
    let dir = common::samples_dir().join("studies/spurious-timeouts");
    if !dir.is_dir() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let files = analyzer::inputs::expand(std::slice::from_ref(&dir));
    assert_eq!(files.len(), 12, "the campaign's 12 runs");
    let mut samples = Vec::new();
    for p in &files {
        let (params, _) = study::params::sidecar(p).unwrap();
        let (_, r) = common::analyze(p);
        samples.extend(study::samples(&r, &params));
        let truth: Value = {
            let name = p.file_name().unwrap().to_string_lossy();
            let run = name.strip_suffix("_sender.pcap.gz").unwrap();
            let t = std::fs::read_to_string(dir.join(format!("{run}_truth.json"))).unwrap();
            serde_json::from_str(&t).unwrap()
        };
        let stack = &truth["stack_log"]["sctp_client"];
        let primary = truth["primary_path"][1].as_str().unwrap();
        let unreachable = stack["peer_addr_events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["state"] == "ADDR_UNREACHABLE" && e["addr"] == primary)
            .count();
        assert_eq!(r.associations.len(), 1, "{}", p.display());
        let d = r.associations[0]
            .directions
            .iter()
            .find(|d| d.data_chunks > 0)
            .unwrap();
        assert_eq!(
            d.timeouts.len() as u64,
            stack["t3_timeouts"].as_u64().unwrap(),
            "{}: T3 expiries",
            p.display()
        );
        let spurious = d.failovers.iter().filter(|f| f.spurious).count();
        assert_eq!(spurious, unreachable, "{}: spurious failovers", p.display());
        assert!(d.failovers.iter().all(|f| f.spurious), "{}", p.display());
    }
    let r = study::aggregate(&study::template("spurious-timeouts").unwrap(), &samples);
    let spurious = |sack: i64, ibit: bool, rto: i64| {
        r.rows
            .iter()
            .find(|row| {
                row.metric == "spurious_failovers"
                    && row.group["sack_delay_ms"] == sack
                    && row.group["sack_immediately_ibit"] == ibit
                    && row.x == rto
            })
            .map(|row| row.mean)
            .unwrap()
    };
    // Below the peer's 200 ms SACK delay the sender fails over for nothing, the more often the
    // lower its RTO.min; at 300 ms, or with the I-bit, never.
    assert!(spurious(200, false, 30) > spurious(200, false, 100));
    assert!(spurious(200, false, 100) > 0.0);
    assert_eq!(spurious(200, false, 300), 0.0);
    for rto in [30, 100, 300] {
        assert_eq!(spurious(200, true, rto), 0.0);
        assert_eq!(spurious(40, true, rto), 0.0);
    }
}

/// The `failover-vs-sack-delay` template over an Eklund campaign (`sample-traces/studies/
/// FOLDER`: SACK delay 0 / 40 / 200 ms x message interval 10 / 30 / 50 / 90 ms x 3
/// repetitions, the parameters from each run's truth file or the folder's `study.toml`): every
/// row equals the captures' own figures recomputed here from their JSON reports, the CLI gives
/// the same rows, and every cell has its three runs. None when the folder is absent.
fn eklund_campaign(folder: &str) -> Option<study::StudyReport> {
    let dir = common::samples_dir().join("studies").join(folder);
    if !dir.is_dir() {
        eprintln!("skipped: {} not found", dir.display());
        return None;
    }
    let spec = study::template("failover-vs-sack-delay").unwrap();
    let files = analyzer::inputs::expand(std::slice::from_ref(&dir));
    assert_eq!(files.len(), 36, "{folder}: the campaign's 36 runs");
    let mut samples = Vec::new();
    // (SACK delay, interval, metric) -> values by hand.
    let mut want: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for p in &files {
        let (params, _) = study::params::sidecar(p).unwrap();
        for k in ["sack_delay_ms", "message_interval_ms"] {
            assert!(params.contains_key(k), "{}: no {k}", p.display());
        }
        let (_, r) = common::analyze(p);
        samples.extend(study::samples(&r, &params));
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
    want.retain(|_, v| !v.is_empty());
    assert_eq!(r.rows.len(), want.len(), "{folder}: a row per figure");
    for ((g, x, m), values) in &want {
        let (gv, xv): (Value, Value) = (
            serde_json::from_str(g).unwrap(),
            serde_json::from_str(x).unwrap(),
        );
        let row = r
            .rows
            .iter()
            .find(|row| row.group["sack_delay_ms"] == gv && row.x == xv && row.metric == *m)
            .unwrap_or_else(|| panic!("{folder}: no row {g} {x} {m}"));
        assert_eq!(row.transport, "sctp");
        assert_eq!(row.n as usize, values.len(), "{folder} {g} {x} {m}");
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = if sorted.len() % 2 == 1 {
            sorted[sorted.len() / 2]
        } else {
            (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
        };
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert_eq!(
            (row.min, row.max),
            (sorted[0], sorted[sorted.len() - 1]),
            "{folder} {g} {x} {m}"
        );
        for (a, b) in [(row.mean, mean), (row.median, median)] {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{folder} {g} {x} {m}"
            );
        }
        // Every run of the cell fails over and has its SACK ratio.
        if m == "failover_ms" || m == "sacks_per_data_packet" {
            assert_eq!(row.n, 3, "{folder} {g} {x} {m}: three repetitions");
        }
    }
    // 3 SACK delays x 4 intervals x failover, max transfer, SACKs per DATA packet at least.
    assert!(want.len() >= 3 * 4 * 3, "{folder}: {} rows", want.len());

    // The CLI gives the same rows.
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-analyzer"))
        .args(["study", "--format", "json", "--jobs", "2"])
        .args(["--template", "failover-vs-sack-delay"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: study::StudyReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli.rows.len(), r.rows.len(), "{folder}");
    for (a, b) in cli.rows.iter().zip(&r.rows) {
        assert_eq!(
            (&a.group, &a.x, &a.metric, a.n),
            (&b.group, &b.x, &b.metric, b.n)
        );
        assert!((a.mean - b.mean).abs() <= 1e-9 * b.mean.abs().max(1.0));
    }
    Some(r)
}

/// The mean of `metric` over the runs of (SACK delay, message interval).
fn cell(r: &study::StudyReport, metric: &str, sack: i64, interval: i64) -> f64 {
    r.rows
        .iter()
        .find(|row| row.metric == metric && row.group["sack_delay_ms"] == sack && row.x == interval)
        .map(|row| row.mean)
        .unwrap_or_else(|| panic!("no row {metric} {sack} {interval}"))
}

/// The Eklund campaign on both stacks (usrsctp: `studies/eklund`; the Linux kernel's SCTP in
/// User-mode Linux: `studies/eklund-linux`), each row checked against the captures'
/// figures; and the paper's result (Eklund, Brunstrom, Grinnemo), from the traces, on both:
/// sparse traffic fails over later with a 200 ms SACK delay, the gap closes as the traffic
/// gets denser, and SACKs per DATA packet are near 1 at SACK delay 0 (each cell: 3 runs).
#[test]
fn eklund_campaigns_show_the_paper_result_on_both_stacks() {
    for folder in ["eklund", "eklund-linux"] {
        let Some(r) = eklund_campaign(folder) else {
            continue;
        };
        let median = |metric: &str, sack: i64, interval: i64| {
            r.rows
                .iter()
                .find(|row| {
                    row.metric == metric && row.group["sack_delay_ms"] == sack && row.x == interval
                })
                .map(|row| row.median)
                .unwrap()
        };
        let fo = |sack, interval| cell(&r, "failover_ms", sack, interval);
        // Sparse (90 and 50 ms): SACK delay 200 ms fails over later than 0 (usrsctp x1.6 and
        // x1.4, Linux x1.9 and x1.7 on the means).
        assert!(
            fo(200, 90) > 1.3 * fo(0, 90),
            "{folder}: {} {}",
            fo(200, 90),
            fo(0, 90)
        );
        assert!(
            fo(200, 50) > 1.3 * fo(0, 50),
            "{folder}: {} {}",
            fo(200, 50),
            fo(0, 50)
        );
        // Dense (10 and 30 ms): the gap closes. On the medians: one Linux run at 10 ms
        // (sack200_iv10_r1) sent its first new DATA on path 2 only 3.2 s after the cut although
        // the kernel gave up path 1 after 0.87 s (README there), which the mean of 3 keeps.
        let ratio =
            |interval| median("failover_ms", 200, interval) / median("failover_ms", 0, interval);
        for interval in [10, 30] {
            assert!(
                ratio(interval) < 1.1,
                "{folder} {interval}: {}",
                ratio(interval)
            );
        }
        assert!(ratio(90) > 1.2, "{folder}: {}", ratio(90));
        // SACKs per DATA packet: near 1 at SACK delay 0 with dense traffic (below 1 by the DATA
        // lost at the cut), about one per two packets with a delayed SACK.
        let spd = |sack, interval| cell(&r, "sacks_per_data_packet", sack, interval);
        assert!(spd(0, 10) > 0.9, "{folder}: {}", spd(0, 10));
        for interval in [10, 30, 50, 90] {
            assert!(
                spd(0, interval) > spd(200, interval) + 0.2,
                "{folder} {interval}: {} {}",
                spd(0, interval),
                spd(200, interval)
            );
        }
        assert!(spd(200, 10) < 0.55 && spd(40, 10) < 0.55, "{folder}");
    }
}
