//! Tests of the stream analysis on hand-built chunks (through the real chunk parser): negotiated
//! streams, messages and fragments, retransmissions counted once, PPIDs, SSN gaps, invalid
//! streams and their ERROR, PPID 0 on a registered port, RE-CONFIG, the upper layer.

use super::window::SSN_WINDOW;
use super::*;
use crate::packet::TimeBase;

const TB: TimeBase = TimeBase { first_ns: Some(0) };
/// DATA flags (RFC 9260 3.3.1).
const U: u8 = 0x04;
const B: u8 = 0x02;
const E: u8 = 0x01;
const BE: u8 = B | E;

/// The association's ports: endpoint 0 on 40000, endpoint 1 on `PORT1`.
const PORT0: u16 = 40000;

fn ctx(frame: u64, ms: f64, sender: u8, port1: u16) -> PacketCtx {
    let (a, b) = (("10.0.0.1", PORT0), ("10.0.0.2", port1));
    if sender == 0 {
        PacketCtx::test(frame, ms, a, b)
    } else {
        PacketCtx::test(frame, ms, b, a)
    }
}

/// A test association: feeds chunks through the parser, frame numbers counting up.
struct T {
    st: Streams,
    frame: u64,
    port1: u16,
}

impl T {
    fn new(port1: u16) -> Self {
        T {
            st: Streams::default(),
            frame: 0,
            port1,
        }
    }

    fn feed(&mut self, sender: u8, ctype: u8, flags: u8, value: &[u8]) {
        self.frame += 1;
        let c = ctx(self.frame, self.frame as f64, sender, self.port1);
        let view = ChunkView {
            ctype,
            flags,
            length: (value.len() + 4) as u16,
            value,
            offset: 12,
            truncated: false,
        };
        let chunk = view.parse().expect("test chunk parses");
        self.st.chunk(&c, sender, &view, &chunk);
    }

    fn init(&mut self, sender: u8, os: u16, mis: u16) {
        let mut v = Vec::new();
        v.extend_from_slice(&0x1234u32.to_be_bytes());
        v.extend_from_slice(&65536u32.to_be_bytes());
        v.extend_from_slice(&os.to_be_bytes());
        v.extend_from_slice(&mis.to_be_bytes());
        v.extend_from_slice(&1000u32.to_be_bytes());
        let t = if sender == 0 {
            types::INIT
        } else {
            types::INIT_ACK
        };
        self.feed(sender, t, 0, &v);
    }

    /// DATA: TSN, stream, SSN, PPID, `len` payload bytes.
    #[allow(clippy::too_many_arguments)]
    fn data(&mut self, sender: u8, flags: u8, tsn: u32, sid: u16, ssn: u16, ppid: u32, len: usize) {
        let mut v = Vec::new();
        v.extend_from_slice(&tsn.to_be_bytes());
        v.extend_from_slice(&sid.to_be_bytes());
        v.extend_from_slice(&ssn.to_be_bytes());
        v.extend_from_slice(&ppid.to_be_bytes());
        v.extend(std::iter::repeat_n(0xab, len));
        self.feed(sender, types::DATA, flags, &v);
    }

    /// I-DATA (RFC 8260 2.1): TSN, stream, MID, PPID (B) or FSN.
    fn idata(&mut self, flags: u8, tsn: u32, sid: u16, mid: u32, ppid_fsn: u32) {
        let mut v = Vec::new();
        v.extend_from_slice(&tsn.to_be_bytes());
        v.extend_from_slice(&sid.to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&mid.to_be_bytes());
        v.extend_from_slice(&ppid_fsn.to_be_bytes());
        v.extend_from_slice(&[1; 8]);
        self.feed(0, types::I_DATA, flags, &v);
    }

    /// ERROR (or ABORT) from `sender` with an Invalid Stream Identifier cause for `sid`.
    fn invalid_cause(&mut self, sender: u8, ctype: u8, sid: u16) {
        let mut v = vec![0, 1, 0, 8];
        v.extend_from_slice(&sid.to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        self.feed(sender, ctype, 0, &v);
    }

    fn reconfig(&mut self, sender: u8, params: &[(u16, Vec<u32>)]) {
        let mut v = Vec::new();
        for (t, body) in params {
            v.extend_from_slice(&t.to_be_bytes());
            v.extend_from_slice(&((4 + 4 * body.len()) as u16).to_be_bytes());
            for x in body {
                v.extend_from_slice(&x.to_be_bytes());
            }
        }
        self.feed(sender, types::RE_CONFIG, 0, &v);
    }

    fn streams(&self, sender: u8) -> Vec<StreamReport> {
        self.st.direction(TB, sender)
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.st.events(TB).iter().map(|e| e.kind).collect()
    }
}

#[test]
fn negotiated_streams_per_endpoint_and_usable_count() {
    let mut t = T::new(5001);
    t.init(0, 10, 65535);
    t.init(1, 5, 2);
    let n = t.st.negotiated();
    assert_eq!((n[0].os, n[0].mis), (Some(10), Some(65535)));
    assert_eq!((n[1].os, n[1].mis), (Some(5), Some(2)));
    // RFC 9260 5.1.1: min(sender's OS, receiver's MIS).
    assert_eq!(n[0].usable_out, Some(2));
    assert_eq!(n[1].usable_out, Some(5));
    // Without the handshake nothing is known.
    let n = Streams::default().negotiated();
    assert_eq!(n[0], NegotiatedReport::default());
}

#[test]
fn messages_fragments_bytes_and_ordered_share() {
    let mut t = T::new(5001);
    // Unfragmented ordered message, then a 3-fragment message, then an unordered one.
    t.data(0, BE, 100, 3, 0, 0, 10);
    t.data(0, B, 101, 3, 1, 0, 100);
    t.data(0, 0, 102, 3, 1, 0, 100);
    t.data(0, E, 103, 3, 1, 0, 50);
    t.data(0, BE | U, 104, 3, 0, 0, 7);
    // Another stream, listed after stream 3 though seen later? No: sorted by id.
    t.data(0, BE, 105, 1, 0, 0, 1);
    let s = t.streams(0);
    assert_eq!(s.iter().map(|x| x.stream).collect::<Vec<_>>(), [1, 3]);
    let x = &s[1];
    assert_eq!(x.messages, 3);
    assert_eq!(x.fragmented, 1);
    assert_eq!(x.bytes, 267);
    assert_eq!(x.data_chunks, 5);
    assert!((x.ordered_share.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!((x.first_s, x.last_s), (0.001, 0.005));
    assert_eq!(x.ssn_gaps, 0);
    assert_eq!((x.hol_blocked_messages, x.hol_delay_ms), (None, None));
    assert!(t.streams(1).is_empty());
}

#[test]
fn a_tsn_counts_once_whatever_the_vantage() {
    let mut t = T::new(5001);
    t.data(0, BE, 10, 0, 0, 0, 10);
    t.data(0, BE, 11, 0, 1, 0, 10);
    // Retransmission of TSN 10 (sender vantage): not counted again.
    t.data(0, BE, 10, 0, 0, 0, 10);
    // Receiver vantage: TSN 13 arrives before the retransmitted 12 (lost before the capture).
    t.data(0, BE, 13, 0, 3, 0, 10);
    t.data(0, BE, 12, 0, 2, 0, 10);
    t.data(0, BE, 12, 0, 2, 0, 10);
    let x = &t.streams(0)[0];
    assert_eq!((x.messages, x.data_chunks, x.bytes), (4, 4, 40));
    // The late SSN 2 filled its hole.
    assert_eq!(x.ssn_gaps, 0);
    // TSN serial arithmetic across the wrap.
    let mut t = T::new(5001);
    t.data(0, BE, u32::MAX, 0, 0, 0, 1);
    t.data(0, BE, 0, 0, 1, 0, 1);
    t.data(0, BE, u32::MAX, 0, 0, 0, 1);
    assert_eq!(t.streams(0)[0].messages, 2);
    // Older than the 1024-TSN window: taken as a retransmission.
    let mut t = T::new(5001);
    t.data(0, BE, 5000, 0, 0, 0, 1);
    t.data(0, BE, 1000, 0, 0, 0, 1);
    assert_eq!(t.streams(0)[0].messages, 1);
}

#[test]
fn ppids_per_stream_with_names_and_idata_ppid_on_b_only() {
    let mut t = T::new(5001);
    t.data(0, BE, 1, 0, 0, 60, 4);
    t.data(0, BE, 2, 0, 1, 46, 4);
    t.data(0, BE, 3, 0, 2, 60, 4);
    let p = &t.streams(0)[0].ppids;
    assert_eq!(
        p.iter()
            .map(|x| (x.ppid, x.name.as_deref(), x.messages))
            .collect::<Vec<_>>(),
        [(60, Some("NGAP"), 2), (46, Some("Diameter"), 1)]
    );
    // I-DATA: the B fragment's PPID; later fragments carry the FSN (1, 2), not a PPID.
    let mut t = T::new(5001);
    t.idata(B, 1, 2, 0, 18);
    t.idata(0, 2, 2, 0, 1);
    t.idata(E, 3, 2, 0, 2);
    t.idata(BE, 4, 2, 1, 18);
    let x = &t.streams(0)[0];
    assert_eq!((x.messages, x.fragmented, x.data_chunks), (2, 1, 4));
    assert_eq!(
        x.ppids
            .iter()
            .map(|p| (p.ppid, p.messages))
            .collect::<Vec<_>>(),
        [(18, 2)]
    );
    // More than four PPIDs on a stream: the rest are counted together.
    let mut t = T::new(5001);
    for k in 0..6u32 {
        t.data(0, BE, k, 0, k as u16, 100 + k, 1);
    }
    let x = &t.streams(0)[0];
    assert_eq!((x.ppids.len(), x.ppid_other_messages), (4, 2));
    assert_eq!(x.ppids[0].name, None);
}

#[test]
fn ssn_gaps_count_numbers_never_seen() {
    let mut t = T::new(5001);
    // SSN 0, 1, 3 (2 skipped), 4, then 10 (5-9 skipped); unordered messages have no SSN.
    for (tsn, ssn) in [(1, 0), (2, 1), (3, 3), (4, 4), (5, 10)] {
        t.data(0, BE, tsn, 0, ssn, 0, 1);
    }
    t.data(0, BE | U, 6, 0, 999, 0, 1);
    assert_eq!(t.streams(0)[0].ssn_gaps, 6);
    // A jump past the 64-number window counts every skipped number.
    t.data(0, BE, 7, 0, 200, 0, 1);
    assert_eq!(t.streams(0)[0].ssn_gaps, 6 + 189);
    // 16-bit SSN wrap: 65535 -> 0 is no gap.
    let mut t = T::new(5001);
    t.data(0, BE, 1, 0, 65534, 0, 1);
    t.data(0, BE, 2, 0, 65535, 0, 1);
    t.data(0, BE, 3, 0, 0, 0, 1);
    assert_eq!(t.streams(0)[0].ssn_gaps, 0);
    // Fragments of one message share the SSN: no gap.
    t.data(0, B, 4, 0, 1, 0, 1);
    t.data(0, E, 5, 0, 1, 0, 1);
    assert_eq!(t.streams(0)[0].ssn_gaps, 0);
}

#[test]
fn data_on_a_stream_not_below_the_peer_mis_is_invalid_and_tied_to_the_error() {
    let mut t = T::new(5001);
    t.init(0, 10, 10);
    t.init(1, 10, 2);
    t.data(0, BE, 1, 1, 0, 0, 4); // frame 3: valid
    t.data(0, BE, 2, 7, 0, 0, 4); // frame 4: invalid (MIS 2)
    t.data(0, BE, 3, 7, 1, 0, 4); // frame 5: same stream, counted in the same event
    t.invalid_cause(1, types::ERROR, 7); // frame 6
    t.invalid_cause(1, types::ERROR, 7); // frame 7: tied already
    assert_eq!(t.kinds(), ["invalid_stream"]);
    let e = &t.st.events(TB)[0];
    assert_eq!((e.frame, e.by), (4, Some(0)));
    assert_eq!(e.filter, "frame.number == 4 && sctp.data_sid == 7");
    assert!(
        e.detail.contains("2 DATA chunks on stream 7"),
        "{}",
        e.detail
    );
    assert!(e.detail.contains("endpoint 1's MIS 2"), "{}", e.detail);
    assert!(e
        .detail
        .contains("ERROR (Invalid Stream Identifier) in frame 6"));
    assert_eq!(e.causes.len(), 1);
    assert_eq!(e.causes[0].code, 1);
    assert_eq!(e.delay_ms, Some(2.0));
    // The sender's own OS bounds it too (the receiver's inbound count is min(OS, MIS)).
    let mut t = T::new(5001);
    t.init(0, 3, 10);
    t.init(1, 10, 20);
    t.data(0, BE, 1, 3, 0, 0, 4);
    assert_eq!(t.kinds(), ["invalid_stream"]);
    assert!(t.st.events(TB)[0].detail.contains("endpoint 0's own OS 3"));
}

#[test]
fn invalid_stream_without_the_handshake_comes_from_the_peer_error() {
    let mut t = T::new(5001);
    t.data(0, BE, 1, 9, 0, 0, 4);
    assert!(t.kinds().is_empty(), "no MIS known: no judgement");
    t.invalid_cause(1, types::ABORT, 9);
    let ev = t.st.events(TB);
    assert_eq!(t.kinds(), ["invalid_stream"]);
    assert_eq!((ev[0].frame, ev[0].by), (2, Some(1)));
    assert_eq!(ev[0].chunks, ["ABORT"]);
    assert!(ev[0].detail.contains("first DATA on stream 9 is frame 1"));
    assert_eq!(ev[0].causes[0].code, 1);
}

#[test]
fn ppid_zero_on_a_port_that_registers_a_ppid() {
    let mut t = T::new(36412);
    t.data(0, BE, 1, 0, 0, 0, 4);
    t.data(0, BE, 2, 0, 1, 0, 4);
    t.data(0, BE, 3, 0, 2, 18, 4);
    t.data(1, BE, 9, 0, 0, 0, 4);
    let ev = t.st.events(TB);
    assert_eq!(t.kinds(), ["ppid_missing", "ppid_missing"]);
    assert!(
        ev[0].detail.contains("2 messages with PPID 0"),
        "{}",
        ev[0].detail
    );
    assert!(ev[0].detail.contains("expected 18"));
    assert_eq!(
        ev[0].filter,
        "frame.number == 1 && sctp.data_payload_proto_id == 0"
    );
    assert_eq!(ev[1].by, Some(1));
    // A port that registers no PPID (SIP), or no well-known port: nothing.
    for port in [5060, 5001] {
        let mut t = T::new(port);
        t.data(0, BE, 1, 0, 0, 0, 4);
        assert!(t.kinds().is_empty());
    }
}

#[test]
fn reconfig_adds_streams_when_performed_and_resets_restart_ssns() {
    let mut t = T::new(5001);
    t.init(0, 2, 2);
    t.init(1, 2, 2);
    // Add 3 outgoing streams (request 50): DATA on stream 3 while it is pending is not invalid.
    t.reconfig(0, &[(17, vec![50, 3 << 16])]);
    t.data(0, BE, 1, 3, 0, 0, 4);
    t.reconfig(1, &[(16, vec![50, 1])]);
    assert_eq!(t.st.negotiated()[0].usable_out, Some(5));
    assert_eq!(t.st.negotiated()[0].added_out, 3);
    t.data(0, BE, 2, 4, 0, 0, 4);
    t.data(0, BE, 3, 5, 0, 0, 4);
    assert_eq!(t.kinds(), ["streams_added", "invalid_stream"]);
    let ev = t.st.events(TB);
    assert!(
        ev[0].detail.contains("\"Success - Performed\" in frame 5"),
        "{}",
        ev[0].detail
    );
    // Denied: nothing added.
    let mut t = T::new(5001);
    t.init(0, 2, 2);
    t.init(1, 2, 2);
    t.reconfig(0, &[(17, vec![7, 1 << 16])]);
    t.reconfig(1, &[(16, vec![7, 2])]);
    assert_eq!(t.st.negotiated()[0].usable_out, Some(2));
    // An outgoing reset: SSNs start again at 0 without a gap; the incoming reset request is
    // answered by the peer's own outgoing reset request (RFC 6525 4.1).
    let mut t = T::new(5001);
    t.data(0, BE, 1, 0, 40, 0, 1);
    t.data(0, BE, 2, 0, 41, 0, 1);
    t.reconfig(0, &[(13, vec![100, 0, 2]), (14, vec![101])]);
    t.reconfig(1, &[(16, vec![100, 1]), (13, vec![200, 101, 9])]);
    t.data(0, BE, 3, 0, 0, 0, 1);
    assert_eq!(t.streams(0)[0].ssn_gaps, 0);
    assert_eq!(t.kinds(), ["stream_reset", "stream_reset", "stream_reset"]);
    let ev = t.st.events(TB);
    assert!(ev[0].detail.contains("all its outgoing streams"));
    assert!(ev[1]
        .detail
        .contains("its own Outgoing SSN Reset Request in frame 4"));
    assert!(ev[2].detail.contains("no answer"));
}

#[test]
fn upper_layer_from_ppids_then_ports() {
    let mut t = T::new(38412);
    t.data(0, BE, 1, 0, 0, 60, 4);
    t.data(1, BE, 1, 0, 0, 60, 4);
    t.data(1, BE, 2, 0, 1, 0, 4);
    let u = t.st.upper_layer([PORT0, 38412]);
    assert_eq!((u.name.as_deref(), u.ppid), (Some("NGAP"), Some(60)));
    assert!(
        u.evidence.starts_with("PPID 60 (NGAP) on 2 of 3 messages"),
        "{}",
        u.evidence
    );
    assert!(u.evidence.contains("port 38412 is NGAP's"));
    // WebRTC's PPIDs make one protocol.
    let mut t = T::new(5000);
    t.data(0, BE, 1, 0, 0, 51, 4);
    t.data(0, BE, 2, 0, 1, 53, 4);
    t.data(0, BE, 3, 0, 2, 53, 4);
    let u = t.st.upper_layer([5000, 5000]);
    assert_eq!((u.name.as_deref(), u.ppid), (Some("WebRTC"), Some(53)));
    // PPID 0 only: the port names it.
    let mut t = T::new(3868);
    t.data(0, BE, 1, 0, 0, 0, 4);
    let u = t.st.upper_layer([PORT0, 3868]);
    assert_eq!((u.name.as_deref(), u.ppid), (Some("Diameter"), None));
    assert!(
        u.evidence
            .starts_with("the one message carries PPID 0 (not specified)"),
        "{}",
        u.evidence
    );
    t.data(0, BE, 2, 0, 1, 0, 4);
    let u = t.st.upper_layer([PORT0, 3868]);
    assert!(
        u.evidence
            .starts_with("all 2 messages carry PPID 0 (not specified)"),
        "{}",
        u.evidence
    );
    // No DATA, a well-known port.
    let u = Streams::default().upper_layer([2905, 2905]);
    assert_eq!(u.name.as_deref(), Some("M3UA"));
    assert!(u.evidence.starts_with("no DATA message captured"));
    // An unregistered PPID, no well-known port.
    let mut t = T::new(12345);
    t.data(0, BE, 1, 0, 0, 1234, 4);
    let u = t.st.upper_layer([12345, 12345]);
    assert_eq!((u.name, u.ppid), (None, Some(1234)));
    assert!(u.evidence.contains("not in the IANA registry"));
    let u = Streams::default().upper_layer([5001, 5002]);
    assert_eq!((u.name, u.ppid), (None, None));
}

#[test]
fn streams_and_events_are_bounded() {
    let mut t = T::new(5001);
    t.init(0, 10, 10);
    t.init(1, 10, 2);
    for k in 0..(MAX_STREAMS as u32 + 100) {
        t.data(0, BE, k, k as u16, 0, 0, 1);
    }
    assert_eq!(t.streams(0).len(), MAX_STREAMS);
    assert_eq!(t.st.untracked_messages(0), 100);
    // One invalid_stream event per stream up to the event bound; the rest counted.
    assert_eq!(t.st.events(TB).len(), MAX_EVENTS);
    assert!(t.st.events_dropped() > 0);
    // Far stream ids use their own page.
    let mut t = T::new(5001);
    t.data(0, BE, 1, 65535, 0, 0, 1);
    t.data(0, BE, 2, 0, 0, 0, 1);
    t.data(0, BE, 3, 65535, 1, 0, 1);
    let s = t.streams(0);
    assert_eq!(
        s.iter().map(|x| (x.stream, x.messages)).collect::<Vec<_>>(),
        [(0, 1), (65535, 2)]
    );
}

/// The SSN window's gap count (with its fast path for the next number) against a plain
/// reference: a number is a gap once it leaves the `SSN_WINDOW`-number window unseen, or is still
/// missing inside it at the end; a late number fills its hole only inside the window.
#[test]
fn ssn_window_gaps_match_a_plain_reference() {
    let mut seed = 0x55_aa_u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    for round in 0..200 {
        let mut t = SsnTrack::default();
        let (first, mut highest) = (1000u32, 1000u32);
        let mut seen = std::collections::BTreeSet::from([first]);
        let mut gone_unseen = 0u64;
        t.add(first, true, 0);
        for _ in 0..(50 + round * 20) {
            let r = next() % 100;
            let n = if r < 80 {
                highest + 1
            } else if r < 90 {
                highest + 2 + next() % (SSN_WINDOW + 100)
            } else {
                highest
                    .saturating_sub(next() % (SSN_WINDOW + 200))
                    .max(first)
            };
            if n > highest {
                // Numbers leaving the window [n - SSN_WINDOW + 1, n].
                let w = SSN_WINDOW - 1;
                for m in highest.saturating_sub(w).max(first)..n.saturating_sub(w).max(first) {
                    gone_unseen += u64::from(!seen.contains(&m));
                }
                highest = n;
                seen.insert(n);
            } else if highest - n < SSN_WINDOW {
                seen.insert(n);
            }
            t.add(n, true, 0);
        }
        let window = highest.saturating_sub(SSN_WINDOW - 1).max(first)..=highest;
        let missing = window.filter(|m| !seen.contains(m)).count() as u64;
        assert_eq!(t.total_gaps(), gone_unseen + missing, "round {round}");
    }
}
