//! Streams, PPIDs and upper layer (issue 15 section 1) on real captures: the public captures of
//! `../shared` (skipped when absent) against what tshark says (`-e sctp.data_payload_proto_id
//! -e sctp.data_sid`, run here when installed) and against upper layers checked by hand (tshark's
//! dissectors, tcpdump's for ForCES), and the sample traces (always present).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use analyzer::report::{AssocReport, CaptureReport};

/// What each public capture that carries DATA must give: the upper layers of its associations
/// with DATA, the PPIDs with their registry names, and how many `ppid_missing` events.
/// Upper layers as tshark 4.0 dissects the payload (`frame.protocols`), except where noted.
struct Expect {
    file: &'static str,
    upper: &'static [Option<&'static str>],
    ppids: &'static [(u32, Option<&'static str>)],
    ppid_missing: usize,
}

const PUBLIC: &[Expect] = &[
    Expect {
        file: "Montimage__5Greplay__oai.pcap",
        upper: &[Some("NGAP")],
        ppids: &[(60, Some("NGAP"))],
        ppid_missing: 0,
    },
    Expect {
        // Port 7 (echo), PPID 0: tshark shows "data".
        file: "OISF__suricata-verify__decode-sctp-01-input.pcap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        // NGAP on 38412 with PPID 0 (TS 38.412 registers 60): tshark dissects NGAP by port.
        file: "UmakantKulkarni__temp__sctpnw.pcap",
        upper: &[Some("NGAP")],
        ppids: &[(0, None)],
        ppid_missing: 3,
    },
    Expect {
        file: "arkime__arkime__m3ua_synthetic.pcap",
        upper: &[Some("M2UA"), Some("M3UA")],
        ppids: &[(2, Some("M2UA")), (3, Some("M3UA"))],
        ppid_missing: 0,
    },
    Expect {
        // S1AP on 36412 with PPID 0 (TS 36.412 registers 18).
        file: "lyliuMi__sctp__sctp.pcap",
        upper: &[Some("S1AP")],
        ppids: &[(0, None)],
        ppid_missing: 1,
    },
    Expect {
        // Fuzzed: every DATA belongs to no association (tshark decodes them anyway).
        file: "pevma__mrp__sctp.pcap",
        upper: &[],
        ppids: &[],
        ppid_missing: 0,
    },
    Expect {
        file: "seladb__PcapPlusPlus__ip-frag.pcap",
        upper: &[Some("M3UA")],
        ppids: &[(3, Some("M3UA"))],
        ppid_missing: 0,
    },
    Expect {
        // SIP on 5060 (RFC 4168 registers no PPID).
        file: "sipcapture__heplify__sip_sctp.pcap",
        upper: &[Some("SIP")],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        // ForCES on 6704 / 6706 (RFC 5811: PPIDs 21 / 23) with PPID 0: tshark shows "data",
        // tcpdump "ForCES HP" / "ForCES LP".
        file: "the-tcpdump-group__tcpdump__forces1.pcap",
        upper: &[Some("ForCES")],
        ppids: &[(0, None)],
        ppid_missing: 4,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__forces3.pcap",
        upper: &[Some("ForCES")],
        ppids: &[(0, None)],
        ppid_missing: 4,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__isup.pcap",
        upper: &[Some("M3UA")],
        ppids: &[(3, Some("M3UA"))],
        ppid_missing: 0,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__sctp-asconf-6.pcap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__sctp-asconf.pcap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__sctp-i-data.pcap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "the-tcpdump-group__tcpdump__sctp-re-config.pcap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "Spartan-F117__VAPT_CoreNetwork5G__NAS_UE_Auth_open5gs.pcapng",
        upper: &[Some("NGAP")],
        ppids: &[(60, Some("NGAP"))],
        ppid_missing: 0,
    },
    Expect {
        file: "Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng",
        upper: &[Some("NGAP")],
        ppids: &[(60, Some("NGAP"))],
        ppid_missing: 0,
    },
    Expect {
        // HTTP on port 80 with PPID 0 (tshark: http).
        file: "lemontree55__packetgen__sctp.pcapng",
        upper: &[Some("HTTP")],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "aboutsip__pkts__sctp-addip.cap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "aboutsip__pkts__sctp-test.cap",
        upper: &[None],
        ppids: &[(0, None)],
        ppid_missing: 0,
    },
    Expect {
        // H.248 (Megaco) on 2944 with PPID 7 (tshark: megaco).
        file: "aboutsip__pkts__sctp.cap",
        upper: &[Some("H.248")],
        ppids: &[(7, Some("H.248"))],
        ppid_missing: 0,
    },
    Expect {
        // PPID 1234 is not registered; ports 12345: no upper layer.
        file: "aboutsip__pkts__sctp_init_collision.cap",
        upper: &[None],
        ppids: &[(1234, None)],
        ppid_missing: 0,
    },
    Expect {
        file: "dreibh__netperfmeter__multi.pcap.gz",
        upper: &[Some("NetPerfMeter")],
        ppids: &[
            (36, Some("NetPerfMeter Control")),
            (37, Some("NetPerfMeter Data")),
        ],
        ppid_missing: 0,
    },
];

/// Where our figures differ from tshark's, and why.
const TSHARK_DIFFERENCES: &[(&str, &str)] = &[
    (
        "pevma__mrp__sctp.pcap",
        "fuzzed: random ports and tags, every DATA belongs to no association here (counted as \
         unassociated), so no stream is reported",
    ),
    (
        "arkime__arkime__m3ua_synthetic.pcap",
        "synthetic: restarts end associations and their later DATA are after-end packets \
         (counted, not analysed): 11 messages here, 15 distinct TSNs with B for tshark",
    ),
];

/// What tshark shows of a capture's DATA: PPIDs, stream ids, and messages (distinct TSNs with
/// the B bit per direction and tag).
#[derive(Default)]
struct Seen {
    ppids: BTreeSet<u32>,
    streams: BTreeSet<u16>,
    messages: usize,
}

fn tshark_seen(path: &Path) -> Seen {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args([
            "-o",
            "sctp.relative_tsns:FALSE",
            "-Y",
            "sctp.data_sid && !icmp && !icmpv6",
            "-T",
            "fields",
            "-e",
            "sctp.data_payload_proto_id",
            "-e",
            "sctp.data_sid",
            "-e",
            "sctp.srcport",
            "-e",
            "sctp.dstport",
            "-e",
            "sctp.verification_tag",
            "-e",
            "sctp.data_tsn_raw",
            "-e",
            "sctp.data_b_bit",
        ])
        .output()
        .expect("tshark runs");
    let mut s = Seen::default();
    let mut msgs = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let list = |i: usize| -> Vec<&str> {
            f.get(i).map_or(Vec::new(), |x| {
                x.split(',').filter(|v| !v.is_empty()).collect()
            })
        };
        // I-DATA fragments after the first carry an FSN, not a PPID: tshark leaves it empty.
        s.ppids
            .extend(list(0).iter().map(|p| p.parse::<u32>().unwrap()));
        for sid in list(1) {
            let sid = sid.trim_start_matches("0x");
            s.streams.insert(u16::from_str_radix(sid, 16).unwrap());
        }
        let key = (list(2).join(""), list(3).join(""), list(4).join(""));
        for (tsn, b) in list(5).into_iter().zip(list(6)) {
            if b == "1" || b == "True" {
                msgs.insert((key.clone(), tsn.to_string()));
            }
        }
    }
    s.messages = msgs.len();
    s
}

/// Our view of the same: PPIDs (with names), streams, messages, upper layers, stream events.
#[derive(Default)]
struct Ours {
    ppids: BTreeMap<u32, Option<String>>,
    streams: BTreeSet<u16>,
    messages: u64,
    upper: BTreeSet<Option<String>>,
    events: BTreeMap<String, usize>,
}

fn ours(r: &CaptureReport) -> Ours {
    let mut o = Ours::default();
    for a in &r.associations {
        let has_data = a.directions.iter().any(|d| !d.streams.is_empty());
        if has_data {
            o.upper.insert(a.stream_summary.upper_layer.name.clone());
        }
        for d in &a.directions {
            for s in &d.streams {
                o.streams.insert(s.stream);
                o.messages += s.messages;
                for p in &s.ppids {
                    o.ppids.insert(p.ppid, p.name.clone());
                }
            }
        }
        for e in &a.lifecycle.events {
            if [
                "invalid_stream",
                "ppid_missing",
                "stream_reset",
                "streams_added",
            ]
            .contains(&e.kind.as_str())
            {
                *o.events.entry(e.kind.clone()).or_insert(0) += 1;
            }
        }
    }
    o
}

fn set<T: std::fmt::Display>(s: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = s.into_iter().map(|x| x.to_string()).collect();
    if v.len() > 6 {
        format!("{} .. {} ({})", v[0], v[v.len() - 1], v.len())
    } else {
        v.join(",")
    }
}

/// Every stream event of the association comes with a frame, a filter and words.
fn check_events(a: &AssocReport) {
    for e in &a.lifecycle.events {
        if [
            "invalid_stream",
            "ppid_missing",
            "stream_reset",
            "streams_added",
        ]
        .contains(&e.kind.as_str())
        {
            assert!(e.filter.contains(&format!("frame.number == {}", e.frame)));
            assert!(!e.detail.is_empty());
        }
    }
    let frames: Vec<u64> = a.lifecycle.events.iter().map(|e| e.frame).collect();
    let mut sorted = frames.clone();
    sorted.sort();
    assert_eq!(
        frames, sorted,
        "association {}: events in capture order",
        a.id
    );
}

#[test]
fn public_captures_upper_layer_ppids_and_streams() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let dir = shared.join("captures/public");
    let tshark = common::tshark().is_some();
    println!(
        "{:<58} {:<22} {:<30} {:<12} {:<14} {:<14} {:>11}",
        "capture",
        "upper layer (ours)",
        "PPIDs ours",
        "PPIDs tshark",
        "streams ours",
        "streams tshark",
        "msgs o/t"
    );
    let mut checked = 0;
    for x in PUBLIC {
        let path = dir.join(x.file);
        if !path.exists() {
            continue;
        }
        checked += 1;
        let (_, r) = common::analyze(&path);
        let o = ours(&r);
        for a in &r.associations {
            check_events(a);
        }
        let want_upper: BTreeSet<Option<String>> =
            x.upper.iter().map(|u| u.map(str::to_string)).collect();
        assert_eq!(o.upper, want_upper, "{}: upper layers", x.file);
        let want_ppids: BTreeMap<u32, Option<String>> = x
            .ppids
            .iter()
            .map(|&(p, n)| (p, n.map(str::to_string)))
            .collect();
        assert_eq!(o.ppids, want_ppids, "{}: PPIDs and names", x.file);
        assert_eq!(
            o.events.get("ppid_missing").copied().unwrap_or(0),
            x.ppid_missing,
            "{}: ppid_missing events",
            x.file
        );
        assert_eq!(o.events.get("invalid_stream"), None, "{}", x.file);
        let t = tshark.then(|| tshark_seen(&path));
        let upper = set(o.upper.iter().map(|u| u.as_deref().unwrap_or("-")));
        let ppids = set(o.ppids.iter().map(|(p, n)| match n {
            Some(n) => format!("{p} {n}"),
            None => p.to_string(),
        }));
        println!(
            "{:<58} {:<22} {:<30} {:<12} {:<14} {:<14} {:>11}",
            x.file,
            upper,
            ppids,
            t.as_ref().map_or("-".into(), |t| set(&t.ppids)),
            set(&o.streams),
            t.as_ref().map_or("-".into(), |t| set(&t.streams)),
            format!(
                "{}/{}",
                o.messages,
                t.as_ref().map_or("-".into(), |t| t.messages.to_string())
            )
        );
        let Some(t) = t else { continue };
        if let Some((_, why)) = TSHARK_DIFFERENCES.iter().find(|d| d.0 == x.file) {
            println!("    differs from tshark: {why}");
            continue;
        }
        let ours_ppids: BTreeSet<u32> = o.ppids.keys().copied().collect();
        assert_eq!(ours_ppids, t.ppids, "{}: PPIDs vs tshark", x.file);
        assert_eq!(o.streams, t.streams, "{}: streams vs tshark", x.file);
        assert_eq!(
            o.messages, t.messages as u64,
            "{}: messages vs tshark",
            x.file
        );
    }
    // Every public capture with DATA is in the table above.
    if tshark {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let is_capture = [".pcap", ".pcapng", ".cap", ".gz"]
                .iter()
                .any(|e| name.ends_with(e));
            if is_capture && !PUBLIC.iter().any(|x| x.file == name) {
                assert!(
                    tshark_seen(&p).ppids.is_empty(),
                    "{name} carries DATA: add it to PUBLIC"
                );
            }
        }
    }
    println!("{checked} public captures checked");
}

/// The re-config capture: both endpoints' OS / MIS from INIT / INIT-ACK (tshark: INIT OS 10 MIS
/// 65535, INIT-ACK OS 5 MIS 5) and its three stream resets, each answered.
#[test]
fn public_reconfig_capture_streams_and_resets() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let path = shared.join("captures/public/the-tcpdump-group__tcpdump__sctp-re-config.pcap");
    if !path.exists() {
        return;
    }
    let (_, r) = common::analyze(&path);
    let a = &r.associations[0];
    let n = &a.stream_summary.streams_negotiated;
    assert_eq!(
        (n[0].os, n[0].mis, n[0].usable_out),
        (Some(10), Some(65535), Some(5))
    );
    assert_eq!(
        (n[1].os, n[1].mis, n[1].usable_out),
        (Some(5), Some(5), Some(5))
    );
    let resets: Vec<_> = a
        .lifecycle
        .events
        .iter()
        .filter(|e| e.kind == "stream_reset")
        .collect();
    assert_eq!(
        resets.iter().map(|e| (e.frame, e.by)).collect::<Vec<_>>(),
        [(5, Some(0)), (5, Some(0)), (6, Some(1))]
    );
    assert!(resets[0].detail.contains("4 of its outgoing streams"));
    assert!(resets.iter().all(|e| e.detail.contains("answered")));
    // Events stay in capture order, the resets after the handshake.
    check_events(a);
}

#[test]
fn sample_traces_one_stream_ppid_0_no_upper_layer() {
    let dir = common::samples_dir();
    let tshark = common::tshark().is_some();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        // The TCP and DTLS samples hold no SCTP association.
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng"))
            || name.starts_with("tcp_")
            || name.starts_with("dtls_")
        {
            continue;
        }
        n += 1;
        let (_, r) = common::analyze(&p);
        let o = ours(&r);
        // The lab (sctpgen / lkgen) sends on stream 0 with PPID 0, ports 5001 / 5002; runs made
        // with STREAMS=N (lab-streams.patch, truth `streams`) on streams 0..N, N negotiated
        // both ways.
        let run = name
            .trim_end_matches(".pcapng")
            .trim_end_matches(".pcap")
            .trim_end_matches("_sender")
            .trim_end_matches("_receiver");
        let truth: Option<serde_json::Value> =
            std::fs::read_to_string(dir.join(format!("{run}_truth.json")))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let lab_streams = truth
            .as_ref()
            .and_then(|t| t["streams"].as_u64())
            .map(|n| n as u16);
        let used: BTreeSet<u16> = (0..lab_streams.unwrap_or(1)).collect();
        assert_eq!(o.streams, used, "{name}");
        assert_eq!(o.ppids.keys().copied().collect::<Vec<_>>(), [0], "{name}");
        assert_eq!(o.upper, BTreeSet::from([None]), "{name}");
        assert!(o.events.is_empty(), "{name}: {:?}", o.events);
        for a in &r.associations {
            check_events(a);
            assert!(
                a.stream_summary.upper_layer.evidence.contains("PPID 0"),
                "{name}"
            );
            for d in &a.directions {
                for s in &d.streams {
                    assert_eq!(s.ordered_share, Some(1.0), "{name}");
                    assert_eq!(s.fragmented, 0, "{name}");
                    assert!(s.messages > 0 && s.bytes > 0 && s.first_s <= s.last_s);
                }
            }
            // Both INIT and INIT-ACK were captured: the usrsctp lab's OS 10 / MIS 2048 on both
            // sides; the Linux lab's client offers OS 10 and the kernel's default MIS 65535, its
            // server answers 10 / 10 (lkgen's SCTP_INITMSG).
            if a.lifecycle.handshake_started && a.stream_summary.streams_negotiated[1].os.is_some()
            {
                let want: [(Option<u16>, Option<u16>, Option<u32>); 2] = if name.starts_with("lk_")
                {
                    [
                        (Some(10), Some(65535), Some(10)),
                        (Some(10), Some(10), Some(10)),
                    ]
                } else if let Some(n) = lab_streams {
                    [(Some(n), Some(n), Some(u32::from(n))); 2]
                } else {
                    [(Some(10), Some(2048), Some(10)); 2]
                };
                for (e, w) in a.stream_summary.streams_negotiated.iter().zip(want) {
                    assert_eq!((e.os, e.mis, e.usable_out), w, "{name}");
                }
            }
        }
        if tshark && !name.contains("snap96") {
            // tshark does not dissect DATA cut by the 96-byte snap length.
            let t = tshark_seen(&p);
            assert_eq!(o.messages, t.messages as u64, "{name}: messages vs tshark");
        }
        let gaps: u64 = r
            .associations
            .iter()
            .flat_map(|a| &a.directions)
            .flat_map(|d| &d.streams)
            .map(|s| s.ssn_gaps)
            .sum();
        // Only the receiver capture cut at 96 bytes misses whole messages (13 of 61), and the
        // black hole run's receiver the large messages the wire dropped (all that its sender
        // sent and it never saw: every message is one chunk), the refused-message run's
        // receiver the one message of which the wire dropped every copy.
        let want = if name == "fmt_snap96_receiver.pcap" {
            13
        } else if name == "pmtu_p20_receiver.pcap" || name == "frozen_p20_receiver.pcap" {
            let sender = name.replace("_receiver", "_sender");
            let (_, snd) = common::analyze(&dir.join(sender));
            ours(&snd).messages - o.messages
        } else {
            0
        };
        assert_eq!(gaps, want, "{name}: SSN gaps");
    }
    assert!(n >= 20, "sample traces found: {n}");
}
