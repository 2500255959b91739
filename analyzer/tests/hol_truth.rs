//! Head-of-line blocking (`crate::hol`, issue 15 section 2) against the lab's truth: the runs of
//! `sample-traces` with a `hol` object in their truth (usrsctp on N ordered streams with random
//! loss; `hol_truth.py` computes it from the server's delivery log and the receiver capture's
//! arrivals). Both captures of each run are scored: the receiver's from DATA arrivals, the
//! sender's from SACKs. The table is printed; every figure must be within its tolerance.

use crate::common;

use std::fs;
use std::path::PathBuf;

use analyzer::report_infer::DirectionReport;
use serde_json::Value;

fn runs() -> Vec<(String, PathBuf, Value)> {
    let dir = common::samples_dir();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .expect("sample-traces")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|n| {
            let pre = n.strip_suffix("_truth.json")?;
            let truth: Value = serde_json::from_str(&fs::read_to_string(dir.join(n)).ok()?).ok()?;
            truth["hol"]
                .is_object()
                .then(|| (pre.to_string(), dir.join(pre), truth))
        })
        .collect()
}

/// Within `rel` of the truth or `abs` of it, whichever is larger.
fn close(truth: f64, ours: f64, rel: f64, abs: f64) -> bool {
    (truth - ours).abs() <= (truth.abs() * rel).max(abs)
}

#[test]
fn hol_figures_match_the_lab_truth_at_both_vantages() {
    let runs = runs();
    assert!(
        runs.len() >= 2,
        "the sample traces hold the multistream loss runs"
    );
    let mut t = common::ScoreTable::default();
    for (name, pre, truth) in &runs {
        let h = &truth["hol"];
        for (side, clock) in [("receiver", "arrivals"), ("sender", "sacks")] {
            let path = PathBuf::from(format!("{}_{side}.pcap", pre.display()));
            let (_, r) = common::analyze(&path);
            let cap = format!("{name}_{side}");
            // The DATA direction: the one with the messages.
            let d: &DirectionReport = r
                .associations
                .iter()
                .flat_map(|a| &a.directions)
                .max_by_key(|d| d.data_chunks)
                .expect("a DATA direction");
            let Some(o) = &d.hol else {
                t.check(&cap, "hol", "figures", "null", "-", false);
                continue;
            };
            t.check(&cap, "vantage", side, &o.vantage, "-", o.vantage == side);
            t.check(&cap, "clock", clock, &o.clock, "-", o.clock == clock);
            let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
            let msgs = n(&h["messages"]);
            t.check(
                &cap,
                "messages",
                msgs,
                o.messages,
                o.messages as f64 - msgs,
                o.messages as f64 == msgs,
            );
            let tb = n(&h["blocked_messages"]);
            let ob = o.blocked_messages as f64;
            t.check(
                &cap,
                "blocked_messages",
                tb,
                ob,
                ob - tb,
                close(tb, ob, 0.05, 1.0),
            );
            let dist = o.delay_ms.as_ref();
            for (fig, truth_v, ours, rel, abs) in [
                (
                    "delay max ms",
                    n(&h["delay_ms"]["max"]),
                    dist.map(|d| d.max),
                    0.05,
                    2.0,
                ),
                (
                    "delay p95 ms",
                    n(&h["delay_ms"]["p95"]),
                    dist.map(|d| d.p95),
                    0.10,
                    3.0,
                ),
                (
                    "delay sum ms",
                    n(&h["delay_ms"]["sum"]),
                    Some(o.delay_sum_ms),
                    0.05,
                    5.0,
                ),
            ] {
                let ours = ours.unwrap_or(f64::NAN);
                t.check(
                    &cap,
                    fig,
                    format!("{truth_v:.1}"),
                    format!("{ours:.1}"),
                    format!("{:+.1}", ours - truth_v),
                    close(truth_v, ours, rel, abs),
                );
            }
            for s in h["per_stream"].as_array().into_iter().flatten() {
                let sid = s["stream"].as_u64().unwrap() as u16;
                let want = n(&s["blocked_messages"]);
                let got = d
                    .streams
                    .iter()
                    .find(|r| r.stream == sid)
                    .and_then(|r| r.hol_blocked_messages);
                t.check(
                    &cap,
                    &format!("stream {sid} blocked_messages"),
                    want,
                    format!("{got:?}"),
                    got.map_or(f64::NAN, |g| g as f64 - want),
                    got.is_some_and(|g| close(want, g as f64, 0.0, 1.0)),
                );
            }
            let ts = n(&h["single_stream_blocked_messages"]);
            let os = o.single_stream_blocked_messages as f64;
            t.check(
                &cap,
                "single_stream_blocked_messages",
                ts,
                os,
                os - ts,
                close(ts, os, 0.10, 2.0),
            );
            let tsum = n(&h["single_stream_delay_ms"]["sum"]);
            t.check(
                &cap,
                "single_stream delay sum ms",
                format!("{tsum:.1}"),
                format!("{:.1}", o.single_stream_delay_sum_ms),
                format!("{:+.1}", o.single_stream_delay_sum_ms - tsum),
                close(tsum, o.single_stream_delay_sum_ms, 0.10, 5.0),
            );
            // What multistreaming buys: on N > 1 streams fewer messages wait than on one; on one
            // stream the two figures are the same thing.
            let streams = h["streams"].as_u64().unwrap_or(1);
            let (fig, ok) = if streams > 1 {
                (
                    "blocked < single-stream blocked",
                    o.blocked_messages < o.single_stream_blocked_messages,
                )
            } else {
                (
                    "blocked == single-stream blocked",
                    o.blocked_messages == o.single_stream_blocked_messages,
                )
            };
            t.check(&cap, fig, "true", ok, "-", ok);
        }
    }
    assert_eq!(t.print(), 0, "head-of-line figures outside their tolerance");
}
