//! Every SCTP packet accounted for once, and how each association started and ended, on real
//! captures: the sample traces (always), and the public captures of `../shared` (skipped when
//! absent) whose figures were checked against tshark.

use crate::common;

use std::path::PathBuf;

use analyzer::report::{AssocReport, CaptureReport};

/// `sctp_packets` = packets in associations + unassociated + duplicates.
fn assert_every_packet_once(name: &str, r: &CaptureReport) {
    let in_assocs: u64 = r.associations.iter().map(|a| a.packets).sum();
    assert_eq!(
        r.sctp_packets,
        in_assocs + r.accounting.unassociated.packets + r.accounting.duplicate_frames,
        "{name}: sctp_packets"
    );
}

fn kinds(a: &AssocReport) -> Vec<&str> {
    a.lifecycle.events.iter().map(|e| e.kind.as_str()).collect()
}

fn public(name: &str) -> Option<PathBuf> {
    let p = common::shared_dir()?.join("captures/public").join(name);
    p.exists().then_some(p)
}

#[test]
fn sample_traces_start_with_the_handshake_and_end_with_the_clients_shutdown() {
    let mut seen = 0;
    for entry in std::fs::read_dir(common::samples_dir()).unwrap().flatten() {
        let p = entry.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) || name.starts_with("tcp_") {
            continue;
        }
        let (_, r) = common::analyze(&p);
        assert_every_packet_once(&name, &r);
        let acc = &r.accounting;
        assert_eq!(acc.duplicate_frames, 0, "{name}");
        assert_eq!(acc.unassociated.packets, 0, "{name}");
        // The lab's checksums are computed by usrsctp or the Linux kernel: valid (or unknown
        // when cut), except in the Linux run that left veth's checksum offload on, where every
        // frame carries CRC 0.
        let offload = name.starts_with("lk_crcoffload").then_some(true);
        assert_eq!(acc.checksum_offload, offload, "{name}");
        if name.starts_with("abort_") || name.starts_with("restart_") {
            // Their ends are checked against their truth below.
            seen += 1;
            continue;
        }
        if name.starts_with("zerowin_") || name.starts_with("pmtu_") || name.starts_with("frozen_")
        {
            // The server stopped reading / the wire dropped the large packets / every copy of
            // one message: the client gives up with an ABORT without cause (the stalls of
            // tests/stalls.rs).
            for a in &r.associations {
                let e = &a.lifecycle.end;
                assert_eq!((e.kind.as_str(), e.by), ("abort", Some(0)), "{name}");
                assert!(e.causes.is_empty(), "{name}");
            }
            seen += 1;
            continue;
        }
        for a in &r.associations {
            let l = &a.lifecycle;
            assert!(a.handshake_seen && l.handshake_started, "{name}");
            assert_eq!(
                kinds(a)[..4],
                ["init", "init_ack", "cookie_echo", "cookie_ack"],
                "{name}"
            );
            assert!(!l.filter.is_empty(), "{name}");
            // Runs that lasted to the end close with the client's SHUTDOWN (RFC 9260 9.2).
            assert_eq!(
                (l.end.kind.as_str(), l.end.by),
                ("shutdown", Some(0)),
                "{name}"
            );
            let sd = l.events.iter().find(|e| e.kind == "shutdown").unwrap();
            assert!(sd.delay_ms.is_some_and(|d| d >= 0.0), "{name}");
            assert_eq!(
                acc.association_ends.get("shutdown"),
                Some(&(r.associations.len() as u64))
            );
        }
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} sample traces");
}

/// The end an abort / restart lab run's truth file states (`sample-traces/lifecycle_truth.py`
/// filled its frames in from tshark).
fn truth_end(name: &str) -> serde_json::Value {
    let p = common::samples_dir().join(format!("{name}_truth.json"));
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    t["end"].clone()
}

#[test]
fn lab_abort_and_restart_end_as_their_truth_says() {
    for side in ["sender", "receiver"] {
        let (_, r) = common::analyze(&common::samples_dir().join(format!("abort_p20_{side}.pcap")));
        assert_every_packet_once("abort_p20", &r);
        let t = truth_end("abort_p20");
        assert_eq!(r.associations.len(), 1);
        let a = &r.associations[0];
        let end = &a.lifecycle.end;
        // The client (endpoint 0, the INIT sender) aborted with cause 12 and its reason.
        assert_eq!((end.kind.as_str(), end.by), ("abort", Some(0)), "{side}");
        assert_eq!(
            end.frame,
            t[format!("abort_frame_{side}")].as_u64(),
            "{side}"
        );
        assert_eq!(end.causes.len(), 1);
        assert_eq!(end.causes[0].code, 12);
        assert_eq!(end.causes[0].name, t["cause_name"].as_str().unwrap());
        let reason = t["reason"].as_str().unwrap();
        assert!(
            end.causes[0].detail.as_deref().unwrap().contains(reason),
            "{:?}",
            end.causes
        );
        assert!(a.aborted && a.handshake_seen);
        assert_eq!(r.accounting.abort_causes[0].code, 12);
        if side == "sender" {
            // The server's SACK that crossed the ABORT (frame 160) stays with it.
            let late: Vec<u64> = t["frames_after_abort_sender"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["frame"].as_u64().unwrap())
                .collect();
            let after: Vec<u64> = a
                .lifecycle
                .events
                .iter()
                .filter(|e| e.kind == "after_end")
                .map(|e| e.frame)
                .collect();
            assert_eq!(after, late);
            assert_eq!(a.lifecycle.after_end_packets, late.len() as u64);
        }
    }
    let t = truth_end("restart_short_p20");
    let (_, r) = common::analyze(&common::samples_dir().join("restart_short_p20_sender.pcap"));
    assert_every_packet_once("restart_short_p20", &r);
    assert_eq!(r.associations.len(), 2);
    let (old, new) = (&r.associations[0], &r.associations[1]);
    let at = t["restart_init_frame_sender"].as_u64();
    assert_eq!(
        (
            old.lifecycle.end.kind.as_str(),
            old.lifecycle.end.by,
            old.lifecycle.end.frame
        ),
        ("restarted", Some(0), at)
    );
    assert_eq!(
        kinds(new)[..5],
        ["restart", "init", "init_ack", "cookie_echo", "cookie_ack"]
    );
    let hs = &t["restart_handshake_frames_sender"];
    let frames: Vec<u64> = new.lifecycle.events[1..5].iter().map(|e| e.frame).collect();
    let want: Vec<u64> = ["init", "init_ack", "cookie_echo", "cookie_ack"]
        .iter()
        .map(|k| hs[*k].as_u64().unwrap())
        .collect();
    assert_eq!(frames, want);
    assert_eq!(new.lifecycle.end.kind, "shutdown");
}

#[test]
fn any_device_capture_duplicates_are_not_retransmissions() {
    let Some(p) = public("dreibh__netperfmeter__multi.pcap.gz") else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let (_, r) = common::analyze(&p);
    assert_every_packet_once("multi", &r);
    // tshark: 1295 SCTP frames repeat the previous one with the same timestamp.
    assert_eq!(r.accounting.duplicate_frames, 1295);
    assert_eq!(r.associations.len(), 2);
    for a in &r.associations {
        assert!(a.duplicate_frames > 0);
        for d in &a.directions {
            assert_eq!(d.retransmissions.total, 0, "assoc {}", a.id);
            assert!(d.timeouts.is_empty(), "assoc {}", a.id);
        }
        assert_eq!(a.lifecycle.end.kind, "shutdown");
    }
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("1295 SCTP packets were captured twice")
                && w.contains("packet types of first copy + duplicate: host + host")),
        "{:?}",
        r.warnings
    );
    // TCP (its own duplicate rule) as before this change: 3 connections, no retransmission.
    let dups: Vec<u64> = r.tcp_flows.iter().map(|f| f.duplicate_frames).collect();
    assert_eq!(dups, [1194, 1199, 10]);
    assert!(r
        .tcp_flows
        .iter()
        .flat_map(|f| &f.directions)
        .all(|d| d.retransmissions.total == 0));
}

#[test]
fn replay_attack_capture_aborts_failed_handshakes_and_late_packets() {
    let Some(p) = public("Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng")
    else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let (_, r) = common::analyze(&p);
    assert_every_packet_once("replay", &r);
    let acc = &r.accounting;
    assert_eq!(r.sctp_packets, 123);
    let ends: Vec<(&str, u64)> = acc
        .association_ends
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        ends,
        [
            ("abort", 2),
            ("handshake_failed", 5),
            ("open_at_capture_end", 1)
        ]
    );
    assert_eq!(acc.abort_causes.len(), 1);
    assert_eq!(
        (acc.abort_causes[0].code, acc.abort_causes[0].associations),
        (12, 1)
    );
    // Frame 513: the NGAP client (10.0.2.6:53844) aborts with cause 12, User-Initiated Abort.
    let a = r
        .associations
        .iter()
        .find(|a| a.lifecycle.end.causes.iter().any(|c| c.code == 12))
        .unwrap();
    assert_eq!(
        (
            a.lifecycle.end.kind.as_str(),
            a.lifecycle.end.by,
            a.lifecycle.end.frame
        ),
        ("abort", Some(0), Some(513))
    );
    assert_eq!(a.lifecycle.end.causes[0].name, "User-Initiated Abort");
    assert!(a.handshake_seen && a.aborted);
    // INITs to the Diameter port 3868 answered by ABORT: started, never completed.
    let failed: Vec<&AssocReport> = r
        .associations
        .iter()
        .filter(|a| a.lifecycle.end.kind == "handshake_failed")
        .collect();
    assert_eq!(failed.len(), 5);
    for a in failed {
        assert!(!a.handshake_seen && a.lifecycle.handshake_started);
        assert_eq!(kinds(a), ["init", "abort"]);
        assert_eq!(a.lifecycle.end.by, Some(1));
        assert_eq!(a.endpoints[1].port, 3868);
    }
    // The injected ABORTs (T bit) of 10.0.2.5:36725 end it at frame 480; its later SACKs and
    // ABORTs stay with it, as after-end packets or as copies within 1 ms.
    let a = r
        .associations
        .iter()
        .find(|a| a.endpoints[0].port == 36725)
        .unwrap();
    assert_eq!(
        (a.lifecycle.end.kind.as_str(), a.lifecycle.end.frame),
        ("abort", Some(480))
    );
    assert_eq!((a.lifecycle.after_end_packets, a.duplicate_frames), (5, 2));
    assert_eq!(a.chunks.get("ABORT"), Some(&2));
    let after: Vec<u64> = a
        .lifecycle
        .events
        .iter()
        .filter(|e| e.kind == "after_end")
        .map(|e| e.frame)
        .collect();
    assert_eq!(after, [483, 486, 488, 489, 500]);
    // Loopback capture: every bad checksum is 0, the capturing host's offload.
    assert_eq!(acc.checksum_offload, Some(true));
    assert_eq!(acc.checksum_evidence.as_ref().unwrap().zero_share, 1.0);
}

#[test]
fn stray_aborts_and_chunkless_packets_are_unassociated() {
    let Some(p) = public("OISF__suricata-verify__sctp-max-chunks.pcap") else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let (_, r) = common::analyze(&p);
    assert!(r.associations.is_empty());
    let u = &r.accounting.unassociated;
    assert_eq!(u.packets, 1);
    assert_eq!(u.reasons.get("ootb_abort"), Some(&1));
    assert_eq!(u.chunks.get("ABORT"), Some(&16143));
    assert_eq!((u.first_frame, u.last_frame), (Some(1), Some(1)));
    assert_every_packet_once("max-chunks", &r);

    let Some(p) = public("pevma__mrp__sctp.pcap") else {
        return;
    };
    let (_, r) = common::analyze(&p);
    assert_every_packet_once("pevma", &r);
    let u = &r.accounting.unassociated;
    assert_eq!(u.reasons.get("no_chunk"), Some(&u.packets));
    // Fuzzed checksums on both sides: corruption, not offload.
    assert_eq!(r.accounting.checksum_offload, Some(false));
}

#[test]
fn init_retransmissions_show_the_t1_init_backoff() {
    let Some(p) = public("seladb__PcapPlusPlus__ip-frag.pcap") else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let (_, r) = common::analyze(&p);
    let a = &r.associations[0];
    let delays: Vec<i64> = a
        .lifecycle
        .events
        .iter()
        .filter(|e| e.kind == "init_retransmitted")
        .map(|e| e.delay_ms.unwrap().round() as i64)
        .collect();
    // tshark: INIT at +0, +3, +9, +21 s (RFC 9260 5.1: T1-init doubles from RTO.Initial 3 s).
    assert_eq!(delays, [2999, 5999, 11998]);
    assert!(a.handshake_seen);
}

#[test]
fn old_adler32_checksums_are_valid_and_offload_is_told_from_corruption() {
    let Some(p) = public("the-tcpdump-group__tcpdump__isup.pcap") else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let (_, r) = common::analyze(&p);
    // RFC 2960 Adler-32 (checked with zlib.adler32): valid, not bad.
    assert_eq!((r.bad_checksums, r.accounting.adler32_checksums), (0, 6));
    assert_eq!(r.accounting.checksum_offload, None);
    // Open5GS gNB-AMF capture: the AMF host's sent packets all carry 0, the gNB's are valid.
    let Some(p) = public("Montimage__5Greplay__oai.pcap") else {
        return;
    };
    let (_, r) = common::analyze(&p);
    assert_eq!(r.accounting.checksum_offload, Some(true));
    let ev = r.accounting.checksum_evidence.as_ref().unwrap();
    assert_eq!((ev.one_sided_associations, ev.mixed_associations), (1, 0));
    assert_eq!(ev.bad_side, ["192.168.70.132"]);
}

/// IPv4 (RFC 791 3.1) carrying UDP (RFC 768) from `src` to `dst` (address last byte, port).
fn udp_ip(src: (u8, u16), dst: (u8, u16), payload: &[u8]) -> Vec<u8> {
    let udp_len = (8 + payload.len()) as u16;
    let mut v = vec![0x45, 0];
    v.extend_from_slice(&(20 + udp_len).to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, src.0, 10, 0, 0, dst.0]);
    v.extend_from_slice(&src.1.to_be_bytes());
    v.extend_from_slice(&dst.1.to_be_bytes());
    v.extend_from_slice(&udp_len.to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    v
}

/// UDP packets that carry DTLS (WebRTC data channels' SCTP is inside, encrypted, RFC 8261) are
/// counted and named in a warning: the capture cannot show those associations. Other UDP (an
/// RTP packet here) is not, and captures without DTLS carry no such warning.
#[test]
fn dtls_over_udp_is_named_as_what_cannot_be_analysed() {
    // A DTLS 1.2 handshake record (RFC 6347 4.1) with 4 bytes of body, and application data.
    let hello = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0];
    let data = [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 7, 0, 2, 0xAB, 0xCD];
    let rtp = [0x80, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA];
    let frames = [
        udp_ip((1, 50000), (2, 443), &hello),
        udp_ip((2, 443), (1, 50000), &hello),
        udp_ip((3, 6000), (4, 7000), &rtp),
        udp_ip((1, 50000), (2, 443), &data),
        udp_ip((5, 5000), (6, 5001), &data),
    ];
    let mut pcap = common::raw_pcap_header();
    for (i, f) in frames.iter().enumerate() {
        common::push_record(&mut pcap, 1_000 * i as u64, f);
    }
    let dir = std::env::temp_dir().join(format!("sctp-analyzer-dtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dtls.pcap");
    std::fs::write(&path, &pcap).unwrap();
    let (c, _) = common::analyze(&path);
    let w: Vec<&String> = c.warnings.iter().filter(|w| w.contains("DTLS")).collect();
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].starts_with("4 UDP packets in 2 flows carry DTLS records (RFC 6347), the first in frame 1 (10.0.0.1:50000 -> 10.0.0.2:443): WebRTC data channels run their SCTP inside DTLS (RFC 8261), encrypted"),
        "{}",
        w[0]
    );
    assert_eq!((c.sctp_packets, c.associations.len()), (0, 0));
    let _ = std::fs::remove_dir_all(&dir);
    // A capture without DTLS: no such warning.
    let (c, _) = common::analyze(&common::samples_dir().join("cut_p20_sack40_sender.pcap"));
    assert!(
        !c.warnings.iter().any(|w| w.contains("DTLS")),
        "{:?}",
        c.warnings
    );
}

/// A real DTLS 1.2 handshake on loopback (`sample-traces/dtls_loopback`, openssl): every packet
/// tshark decodes as DTLS is counted, in its one flow.
#[test]
fn a_real_dtls_handshake_is_counted_as_tshark_decodes_it() {
    let dir = common::samples_dir();
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dtls_loopback_truth.json")).unwrap(),
    )
    .unwrap();
    let want = truth["dtls_packets_tshark"].as_u64().unwrap();
    let (c, _) = common::analyze(&dir.join("dtls_loopback.pcap"));
    let w: Vec<&String> = c.warnings.iter().filter(|w| w.contains("DTLS")).collect();
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].starts_with(&format!("{want} UDP packets in 1 flow carry DTLS records")),
        "{}",
        w[0]
    );
    assert!(w[0].contains(":4433): WebRTC data channels"), "{}", w[0]);
    assert_eq!((c.sctp_packets, c.associations.len()), (0, 0));
}
