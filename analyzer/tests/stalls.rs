//! Stalls (`directions[i].stalls`, `analyzer::stalls`) on real captures: the lab's zero-window
//! run (`sample-traces/zerowin_p10`: the server stops reading 0.3 s after the first message) at
//! both vantages, the Linux kernel's (`lk_zerowin_rcvbuf`: the server, with a 32 KB SO_RCVBUF,
//! stops reading for 2 s; one zero window from its buffer filling to its reading again, no
//! frozen cumulative ack beside it and none of the few-ms closings after), its path MTU black
//! hole (`pmtu_p20`: from 2 s on the wire drops frames above
//! 1000 bytes, every 10th message is 1200 bytes) at the sender (the receiver never sees the
//! dropped packets: it cannot tell them from a loss), its refused message (`frozen_p20`: the wire
//! drops every copy of one 100-byte message, everything else passes) as a `frozen_cum_ack` at
//! the sender (the receiver sees no copy of it: a dead path looks the same from there), and no
//! stall at all on every other sample
//! trace, lab run and public capture (`../shared`, when present), none of which stalls. And what
//! the Linux run shows after its stall: the receiver discarded DATA that reached it, the sender's
//! timer expired and new DATA moved to path 2, a failover read as spurious with the cause
//! `receiver_discard` at both vantages.

use crate::common;

use std::path::PathBuf;

use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;
use analyzer::stalls::StallReport;

fn captures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![common::samples_dir()];
    if let Some(s) = common::shared_dir() {
        for d in ["captures/lab", "captures/lab-linux", "captures/public"] {
            dirs.push(s.join(d));
        }
    }
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().to_string();
                [".pcap", ".pcapng", ".cap", ".gz"]
                    .iter()
                    .any(|x| n.ends_with(x))
                    && !n.ends_with(".log.gz")
                    && !n.contains("_wire")
            })
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

/// The truth file beside a sample run.
fn truth(run: &str) -> serde_json::Value {
    let p = common::samples_dir().join(format!("{run}_truth.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

type Found<'a> = (&'a AssocReport, &'a DirectionReport, &'a StallReport);

/// The one stall of a stall run: of `cause`, on the DATA of the client (port 5002 in both labs).
fn the_one_stall<'a>(name: &str, stalls: &[Found<'a>], cause: &str) -> Found<'a> {
    assert_eq!(stalls.len(), 1, "{name}: {stalls:?}");
    let (a, d, s) = stalls[0];
    assert_eq!(s.cause, cause, "{name}");
    assert_eq!(a.endpoints[usize::from(d.sender)].port, 5002, "{name}");
    stalls[0]
}

#[test]
fn the_stall_runs_stall_and_nothing_else_does() {
    let (mut zero, mut lk_zero, mut pmtu, mut frozen, mut others) = (0, 0, 0, 0, 0);
    for p in captures() {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let opts = analyzer::analyze::Options::default();
        let Ok(c) = analyzer::analyze::analyze_file(&p, &opts, &mut |_| {}) else {
            continue;
        };
        let r = analyzer::report::CaptureReport::from_analysis(&c);
        let stalls: Vec<_> = r
            .associations
            .iter()
            .flat_map(|a| {
                a.directions
                    .iter()
                    .flat_map(move |d| d.stalls.iter().map(move |s| (a, d, s)))
            })
            .collect();
        if name.starts_with("zerowin_p10") {
            zero += 1;
            let (a, d, s) = the_one_stall(&name, &stalls, "zero_window");
            // The client (port 5002 in the lab) sends the DATA; the server stopped reading.
            // Its window closes once the buffer filled, after the 0.3 s of reading; the
            // association ends with the client giving up while still stalled.
            let first_data = d.streams.iter().map(|x| x.first_s).fold(f64::MAX, f64::min);
            assert!(s.t_s > first_data + 0.3, "{name}: {s:?}");
            assert!(s.end_s.is_none() && a.stalled, "{name}: {s:?}");
            assert!(
                s.evidence.contains("below one DATA chunk"),
                "{}",
                s.evidence
            );
            assert!(s
                .filter
                .starts_with(&format!("frame.number >= {}", s.frame)));
        } else if name.starts_with("lk_zerowin_rcvbuf") {
            lk_zero += 1;
            let (a, _, s) = the_one_stall(&name, &stalls, "zero_window");
            let truth = truth("lk_zerowin_rcvbuf");
            let side = if name.contains("_sender") {
                "sender"
            } else {
                "receiver"
            };
            let stop = truth[format!("stop_read_rel_{side}_capture_s")]
                .as_f64()
                .unwrap();
            let resume = truth[format!("resume_read_rel_{side}_capture_s")]
                .as_f64()
                .unwrap();
            // The window closes once the unread buffer filled, while the reader is stopped,
            // and opens within a round trip (20 ms) and a delayed SACK of its reading again.
            assert!(s.t_s > stop && s.t_s < resume, "{name}: {s:?} {stop}");
            let end = s.end_s.expect("the reader resumed");
            assert!(
                end >= resume && end < resume + 0.1,
                "{name}: {s:?} {resume}"
            );
            assert!(!a.stalled, "{name}");
        } else if name.starts_with("pmtu_p20_sender") {
            pmtu += 1;
            let (a, _, s) = the_one_stall(&name, &stalls, "pmtu_black_hole");
            let truth = truth("pmtu_p20");
            let drop_from = truth["fail_rel_sender_capture_s"].as_f64().unwrap();
            // The first resend of the dropped packet comes one RTO (~100-200 ms) after.
            assert!(
                s.t_s > drop_from && s.t_s < drop_from + 1.0,
                "{name}: {s:?} {drop_from}"
            );
            assert!(
                s.evidence.contains("1228-byte DATA packet"),
                "{}",
                s.evidence
            );
            assert!(s.evidence.contains("of up to 128 bytes"), "{}", s.evidence);
            assert!(s.end_s.is_none() && a.stalled, "{name}: {s:?}");
        } else if name.starts_with("frozen_p20_sender") {
            frozen += 1;
            let (a, _, s) = the_one_stall(&name, &stalls, "frozen_cum_ack");
            let truth = truth("frozen_p20");
            let st = &truth["stall"];
            let first_drop = st["first_drop_rel_sender_capture_s"].as_f64().unwrap();
            // The cumulative ack last moved when the TSN before the refused one was
            // acknowledged: a round trip (40 ms) and a delayed SACK (40 ms) after it was sent.
            assert!(
                s.t_s > first_drop - 0.1 && s.t_s < first_drop + 0.1,
                "{name}: {s:?} {first_drop}"
            );
            let tsn = st["eaten_tsn"].as_u64().unwrap();
            let sends = st["drops"].as_u64().unwrap();
            assert!(
                s.evidence.contains(&format!("stood at {} ", tsn - 1))
                    && s.evidence
                        .contains(&format!("TSN {tsn} was sent {sends} times")),
                "{}",
                s.evidence
            );
            // Refused to the end: the client gave up and aborted.
            assert!(s.end_s.is_none() && a.stalled, "{name}: {s:?}");
        } else {
            others += 1;
            assert!(
                stalls.is_empty(),
                "{name}: no stall expected, got {stalls:?}"
            );
            assert!(r.associations.iter().all(|a| !a.stalled), "{name}");
        }
    }
    println!(
        "zero-window captures {zero} + {lk_zero} (Linux), black hole {pmtu}, frozen {frozen}, others {others}"
    );
    assert_eq!(zero, 2, "sender and receiver captures of zerowin_p10");
    assert_eq!(
        lk_zero, 2,
        "sender and receiver captures of lk_zerowin_rcvbuf"
    );
    assert_eq!(pmtu, 1, "the sender capture of pmtu_p20");
    assert_eq!(frozen, 1, "the sender capture of frozen_p20");
    assert!(others > 20, "the other sample traces");
}

#[test]
fn the_linux_receivers_discards_read_as_a_spurious_failover_at_both_vantages() {
    let truth = truth("lk_zerowin_rcvbuf");
    for side in ["sender", "receiver"] {
        let p = common::samples_dir().join(format!("lk_zerowin_rcvbuf_{side}.pcap"));
        let (c, r) = common::analyze(&p);
        let failovers: Vec<_> = r
            .associations
            .iter()
            .flat_map(|a| a.directions.iter().flat_map(|d| d.failovers.iter()))
            .collect();
        // The resent chunks whose packet-mates were acknowledged are counted apart, and at the
        // receiver they are not spurious (their originals arrived, and were dropped).
        let discarded: u64 = r
            .associations
            .iter()
            .flat_map(|a| a.directions.iter())
            .filter_map(|d| d.retransmissions.peer_discarded)
            .sum();
        assert!(discarded >= 6, "{side}: {discarded}");
        if side == "receiver" {
            // The receiver handles its arrivals in order: a copy it left unacknowledged while
            // taking later arrivals was dropped. At least the kernel's own count of discarded
            // DATA chunks (it also drops some after counting them accepted), at most the resent
            // chunks whose first copy was not taken (a duplicate its SACKs reported was).
            let kernel = truth["stack_log"]["server"]["snmp_final"]["SctpInDataChunkDiscards"]
                .as_u64()
                .unwrap();
            let rows: Vec<_> = c
                .associations
                .iter()
                .flat_map(|a| a.infer.dirs.iter())
                .flat_map(|d| d.retransmissions.iter())
                .collect();
            let dups = rows
                .iter()
                .filter(|r| r.spurious == Some(analyzer::infer::events::DUPLICATE_REPORTED))
                .count() as u64;
            assert!(dups >= 1, "{side}: the receiver reported duplicates");
            assert!(
                discarded >= kernel && discarded <= rows.len() as u64 - dups,
                "{side}: discarded {discarded}, kernel {kernel}, duplicates {dups}, resent {}",
                rows.len()
            );
        }
        // The path never failed (no cut in this run): the one failover followed the receiver's
        // drops once its reader resumed (chunks of partly acknowledged packets resent).
        assert_eq!(failovers.len(), 1, "{side}: {failovers:?}");
        let f = failovers[0];
        assert!(f.spurious, "{side}: {f:?}");
        assert_eq!(
            f.cause.as_deref(),
            Some("receiver_discard"),
            "{side}: {f:?}"
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("which discarded them") && e.contains("frame")),
            "{side}: {:?}",
            f.evidence
        );
        let resume = truth[format!("resume_read_rel_{side}_capture_s")]
            .as_f64()
            .unwrap();
        assert!(
            f.t_s > resume && f.t_s < resume + 0.5,
            "{side}: {} {resume}",
            f.t_s
        );
    }
}
