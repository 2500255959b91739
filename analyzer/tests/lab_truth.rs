//! Scored test of the timer inference against real-stack truth (lab captures: usrsctp between two
//! network namespaces, `*_truth.json`, `*_measured.json`, `*_client.log`). Prints a table
//! (capture, figure, truth, inferred, error) and fails when a figure leaves its tolerance.
//! Runs on `sample-traces/` and, when present, on `../shared/captures/lab`.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use analyzer::report::CaptureReport;
use analyzer::report_infer::DirectionReport;
use serde_json::Value;

type Table = common::ScoreTable;

/// A lab run: prefix path whose `_sender.pcap`, `_receiver.pcap`, `_truth.json` exist.
fn runs(dir: &Path) -> Vec<PathBuf> {
    let mut out = BTreeSet::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(pre) = name.strip_suffix("_truth.json") {
            if capture(&dir.join(pre), "sender").is_some()
                && capture(&dir.join(pre), "receiver").is_some()
            {
                out.insert(dir.join(pre));
            }
        }
    }
    out.into_iter().collect()
}

/// `PREFIX_<side>.pcap` or `.pcapng`.
fn capture(pre: &Path, side: &str) -> Option<PathBuf> {
    ["pcap", "pcapng"]
        .iter()
        .map(|ext| PathBuf::from(format!("{}_{side}.{ext}", pre.display())))
        .find(|p| p.exists())
}

fn json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// The stack's own log (`PREFIX_client.log`, or `.log.gz` in sample-traces).
fn client_log(pre: &Path) -> Option<String> {
    let plain = PathBuf::from(format!("{}_client.log", pre.display()));
    if let Ok(s) = fs::read_to_string(&plain) {
        return Some(s);
    }
    let gz = PathBuf::from(format!("{}_client.log.gz", pre.display()));
    let f = fs::File::open(gz).ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// Per path address: (epoch, rto_ms) changes; and the epochs of T3 expiries (STAT t3_timeouts).
fn stack_rto(log: &str) -> (Vec<(String, f64, f64)>, Vec<f64>) {
    let mut rto = Vec::new();
    let mut t3 = Vec::new();
    let mut last_t3 = 0u64;
    for line in log.lines() {
        let mut it = line.split_whitespace();
        let (Some(ts), Some(kind)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(ts) = ts.parse::<f64>() else { continue };
        let kv = |k: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(k))
                .map(str::to_string)
        };
        match kind {
            "PATH" => {
                if let (Some(a), Some(r)) = (
                    kv("addr="),
                    kv("rto_ms=").and_then(|r| r.parse::<f64>().ok()),
                ) {
                    rto.push((a, ts, r));
                }
            }
            "STAT" => {
                if let Some(n) = kv("t3_timeouts=").and_then(|r| r.parse::<u64>().ok()) {
                    for _ in last_t3..n {
                        t3.push(ts);
                    }
                    last_t3 = n;
                }
            }
            _ => {}
        }
    }
    (rto, t3)
}

fn data_direction<'a>(
    r: &'a CaptureReport,
    sender_addrs: &[String],
) -> Option<(usize, &'a DirectionReport)> {
    for (i, a) in r.associations.iter().enumerate() {
        for d in &a.directions {
            let ep = &a.endpoints[d.sender as usize];
            if ep.addresses.iter().any(|x| sender_addrs.contains(x)) {
                return Some((i, d));
            }
        }
    }
    None
}

fn score_run(t: &mut Table, pre: &Path) {
    let name = pre.file_name().unwrap().to_string_lossy().to_string();
    let Some(truth) = json(&PathBuf::from(format!("{}_truth.json", pre.display()))) else {
        return;
    };
    if truth["mode"].as_str() == Some("tcp") || truth["sender"]["addrs"].as_array().is_none() {
        return;
    }
    let meas =
        json(&PathBuf::from(format!("{}_measured.json", pre.display()))).unwrap_or(Value::Null);
    let sender_addrs: Vec<String> = truth["sender"]["addrs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    let receiver_addrs: Vec<String> = truth["receiver"]["addrs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    let (_, snd) = common::analyze(&capture(pre, "sender").unwrap());
    let (_, rcv) = common::analyze(&capture(pre, "receiver").unwrap());
    let nassoc = truth["nassoc"].as_u64().unwrap_or(1) as usize;
    let restart = truth.get("restart").is_some_and(|v| !v.is_null());

    // Association reconstruction: one association (per configured association), two paths per
    // direction, addresses as configured.
    for (side, r) in [("sender", &snd), ("receiver", &rcv)] {
        if !restart {
            let n = r.associations.len();
            t.check(
                &name,
                &format!("{side} associations"),
                nassoc,
                n,
                "",
                n == nassoc,
            );
        }
        let Some((ai, _)) = data_direction(r, &sender_addrs) else {
            t.check(
                &name,
                &format!("{side} data direction"),
                "present",
                "missing",
                "",
                false,
            );
            continue;
        };
        let a = &r.associations[ai];
        let mut eps: Vec<Vec<String>> = a
            .endpoints
            .iter()
            .map(|e| {
                let mut v = e.addresses.clone();
                v.sort();
                v
            })
            .collect();
        eps.sort();
        let mut want = vec![sender_addrs.clone(), receiver_addrs.clone()];
        for w in &mut want {
            w.sort();
        }
        want.sort();
        t.check(
            &name,
            &format!("{side} addresses"),
            format!("{want:?}"),
            format!("{eps:?}"),
            "",
            eps == want,
        );
        for s in 0..2u8 {
            let dsts: BTreeSet<&str> = a
                .paths
                .iter()
                .filter(|p| p.sender == s)
                .map(|p| p.dst.as_str())
                .collect();
            t.check(
                &name,
                &format!("{side} paths from endpoint {s}"),
                2,
                dsts.len(),
                "",
                dsts.len() == 2,
            );
        }
    }

    let Some((_, d)) = data_direction(&snd, &sender_addrs) else {
        return;
    };
    let interval = truth["message_interval_ms"].as_f64().unwrap_or(0.0);
    let cut = truth["fail_rel_sender_capture_s"].as_f64();
    let fo_truth = meas["sender"]["failover"]["first_new_data_on_alt_s"].as_f64();
    let spurious_expected = truth["spurious_failover_expected"].as_bool();
    t.check(
        &name,
        "sender vantage",
        "sender",
        &d.vantage,
        "",
        d.vantage == "sender",
    );
    if let (Some(cut), Some(fo), false) = (cut, fo_truth, spurious_expected == Some(true)) {
        match d.failovers.iter().find(|f| !f.spurious) {
            None => t.check(&name, "failover", "present", "missing", "", false),
            Some(f) => {
                let want = cut + fo;
                let err = (f.t_s - want) * 1000.0;
                t.check(
                    &name,
                    "failover event t_s",
                    format!("{want:.4}"),
                    format!("{:.4}", f.t_s),
                    format!("{err:+.1} ms"),
                    err.abs() <= 5.0,
                );
                let tol = interval.max(25.0);
                let got = f.failover_ms;
                let e = got.map(|g| g - fo * 1000.0);
                t.check(
                    &name,
                    "failover_ms",
                    format!("{:.0}±{tol:.0}", fo * 1000.0),
                    format!("{got:.1?}"),
                    format!("{e:+.1?}"),
                    e.is_some_and(|e| e.abs() <= tol),
                );
            }
        }
        let spur: Vec<_> = d.failovers.iter().filter(|f| f.spurious).collect();
        t.check(
            &name,
            "no spurious flag on a real cut",
            0,
            spur.len(),
            "",
            spur.is_empty(),
        );
        let want = truth["path_max_retrans"].as_u64().map(|x| x as u32);
        t.check(
            &name,
            "Path.Max.Retrans (null = no claim)",
            format!("{want:?}"),
            format!("{:?}", d.path_max_retrans),
            "",
            d.path_max_retrans.is_none() || d.path_max_retrans == want,
        );
    }
    if let Some(exp) = spurious_expected {
        let spur: Vec<_> = d.failovers.iter().filter(|f| f.spurious).collect();
        if exp {
            let cause = if name.contains("spike") {
                "rtt_spike"
            } else {
                "sack_delay_exceeds_rto"
            };
            t.check(
                &name,
                "spurious failover flagged",
                "yes",
                spur.len(),
                "",
                !spur.is_empty(),
            );
            let got = spur
                .first()
                .and_then(|f| f.cause.clone())
                .unwrap_or_default();
            t.check(&name, "spurious cause", cause, &got, "", got == cause);
        } else if cut.is_none() {
            t.check(
                &name,
                "no spurious failover (control)",
                0,
                spur.len(),
                "",
                spur.is_empty(),
            );
        }
    }
    // SACK delay at the receiver, where the delayed-SACK timer fired at least 3 times and the
    // SACKs were not made immediate by the I-bit (RFC 7053).
    let timer_n = meas["receiver_sack_delay_timer"]["n"].as_u64().unwrap_or(0);
    let ibit = truth["sack_immediately_ibit"].as_bool().unwrap_or(false);
    if timer_n >= 3 && !ibit {
        if let Some((_, dr)) = data_direction(&rcv, &sender_addrs) {
            let want = truth["sack_delay_ms"].as_f64().unwrap_or(f64::NAN);
            let got = dr.sack_delay_ms.map(|x| x.median);
            let e = got.map(|g| g - want);
            t.check(
                &name,
                "receiver SACK delay (median)",
                want,
                format!("{got:.1?}"),
                format!("{e:+.1?}"),
                e.is_some_and(|e| e.abs() <= 10.0),
            );
            // Consistency: the sender-side capture sees the same SACK delay where it has samples.
            if let Some(sd) = d.sack_delay_ms.filter(|x| x.n >= 3) {
                let e = sd.median - want;
                t.check(
                    &name,
                    "sender-side SACK delay (median)",
                    want,
                    format!("{:.1}", sd.median),
                    format!("{e:+.1}"),
                    e.abs() <= 10.0,
                );
            }
        }
    }
    // Observed RTO against the stack's own RTO (client log), where the expired timer's start is
    // visible in the trace (started by a send from idle, or by the previous expiry).
    if let (Some(log), Some(epoch0)) = (client_log(pre), snd.start_epoch_s) {
        let (rto, t3) = stack_rto(&log);
        for to in d
            .timeouts
            .iter()
            .filter(|x| x.timer_start == "send" || x.timer_start == "expiry")
        {
            let Some(obs) = to.observed_rto_ms else {
                continue;
            };
            let epoch = epoch0 + to.t_s;
            let near = t3
                .iter()
                .map(|&x| (x - epoch) * 1000.0)
                .fold(
                    f64::INFINITY,
                    |a: f64, b| if b.abs() < a.abs() { b } else { a },
                );
            // The stack's RTO when the expired timer was started (a running timer keeps its
            // duration when the RTO changes later, e.g. doubled by a heartbeat timeout).
            let started = epoch - obs / 1000.0 + 0.005;
            let stack = rto
                .iter()
                .filter(|(a, ts, _)| *a == to.path && *ts <= started)
                .map(|x| x.2)
                .next_back();
            let Some(stack) = stack.filter(|&r| r > 0.0) else {
                continue;
            };
            // usrsctp quirk 1 (lab README): an expiry that retransmitted nothing restarted the
            // timer unseen; the trace cannot show that start, so the row is shown, not scored.
            let start = started - 0.005;
            if let Some(silent) = t3.iter().find(|&&x| x > start + 0.002 && x < epoch - 0.005) {
                t.check(
                    &name,
                    &format!(
                        "observed RTO at {:.3}s ({}, backoff {})",
                        to.t_s, to.timer_start, to.backoff
                    ),
                    format!(
                        "{stack:.0} (silent T3 {:+.0} ms)",
                        (silent - epoch) * 1000.0
                    ),
                    format!("{obs:.1}"),
                    "n/a",
                    true,
                );
                continue;
            }
            let e = obs - stack;
            if e > 15.0 && near.abs() <= 15.0 {
                // The stack's own log puts the expiry where the trace shows it, later than its RTO:
                // its timer fired late (lab README quirk 2: late under CPU load). The trace's
                // figure is right; the row is shown, not scored.
                t.check(
                    &name,
                    &format!(
                        "observed RTO at {:.3}s ({}, backoff {})",
                        to.t_s, to.timer_start, to.backoff
                    ),
                    format!("{stack:.0} (T3 {near:+.0} ms, fired late)"),
                    format!("{obs:.1}"),
                    format!("{e:+.1} n/a"),
                    true,
                );
                continue;
            }
            t.check(
                &name,
                &format!(
                    "observed RTO at {:.3}s ({}, backoff {})",
                    to.t_s, to.timer_start, to.backoff
                ),
                format!("{stack:.0} (T3 {near:+.0} ms)"),
                format!("{obs:.1}"),
                format!("{e:+.1}"),
                e.abs() <= 15.0,
            );
        }
    }
}

#[test]
fn lab_truth_scored() {
    let mut dirs = vec![common::samples_dir()];
    if let Some(s) = common::shared_dir() {
        dirs.push(s.join("captures/lab"));
    }
    let mut t = Table::default();
    for d in dirs {
        for pre in runs(&d) {
            score_run(&mut t, &pre);
        }
    }
    t.print();
    let failed: Vec<_> = t.rows.iter().filter(|r| !r.ok).collect();
    assert!(
        !t.rows.is_empty(),
        "no lab capture found (sample-traces is part of the repo)"
    );
    assert!(
        failed.is_empty(),
        "{} lab-truth checks out of tolerance",
        failed.len()
    );
}

/// Every association's DATA directions at the receiver vantage report as many failovers and
/// failbacks as at the sender's, on every lab run with both captures (usrsctp and, when present,
/// the Linux kernel's). In an RTT spike a retransmission to the alternate path arrives before its
/// original, delayed on the primary: its first sight is no new DATA moved
/// (`spike_p20_rtomin1000`: one failover and one failback at the receiver, none at the sender,
/// before; `spike_p20_rtomin100`: two and one).
#[test]
fn the_receiver_sees_the_senders_failovers() {
    let mut dirs = vec![common::samples_dir()];
    if let Some(s) = common::shared_dir() {
        dirs.push(s.join("captures/lab"));
        dirs.push(s.join("captures/lab-linux"));
    }
    let counts = |r: &CaptureReport| -> Vec<(usize, usize)> {
        r.associations
            .iter()
            .flat_map(|a| a.directions.iter())
            .filter(|d| d.data_chunks >= 20)
            .map(|d| (d.failovers.len(), d.failbacks.len()))
            .collect()
    };
    let mut n = 0;
    for d in dirs {
        for pre in runs(&d) {
            let (_, snd) = common::analyze(&capture(&pre, "sender").unwrap());
            let (_, rcv) = common::analyze(&capture(&pre, "receiver").unwrap());
            assert_eq!(counts(&snd), counts(&rcv), "{}", pre.display());
            n += 1;
        }
    }
    assert!(n >= 10, "lab runs with both captures: {n}");
}
