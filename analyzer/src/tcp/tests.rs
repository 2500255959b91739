//! Unit tests on hand-built TCP segments: header and options, sequence wrap-around, SACK and
//! D-SACK, retransmission classification, RTO inference, duplicates, port reuse.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr};

use super::dir::{RtxKind, TimerStart};
use super::options::{flags::*, Options, SegmentError, TcpOption, TcpSegment};
use super::{TcpFlow, TcpTracker};
use crate::infer::summary::Vantage;
use crate::net::IpPacket;

const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
const MS: i64 = 1_000_000;

/// Builds a TCP header with `opts` (padded to 4 bytes) and `len` payload bytes.
fn seg(sp: u16, dp: u16, seq: u32, ack: u32, fl: u8, opts: &[u8], len: usize) -> Vec<u8> {
    let mut o = opts.to_vec();
    while !o.len().is_multiple_of(4) {
        o.push(1);
    }
    let mut b = Vec::new();
    b.extend_from_slice(&sp.to_be_bytes());
    b.extend_from_slice(&dp.to_be_bytes());
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&ack.to_be_bytes());
    b.push(((20 + o.len()) / 4) as u8 * 16);
    b.push(fl);
    b.extend_from_slice(&1000u16.to_be_bytes());
    // Checksum: vary with seq/ack/len so that distinct segments differ.
    let osum = o.iter().enumerate().fold(0u32, |a, (i, &x)| {
        a.wrapping_add(u32::from(x) << (i % 4 * 8))
    });
    let ck = (seq ^ ack ^ len as u32 ^ u32::from(fl) ^ osum) as u16;
    b.extend_from_slice(&ck.to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&o);
    b.extend(std::iter::repeat_n(0x55, len));
    b
}

fn ts_opt(tsval: u32, tsecr: u32) -> Vec<u8> {
    let mut v = vec![1, 1, 8, 10];
    v.extend_from_slice(&tsval.to_be_bytes());
    v.extend_from_slice(&tsecr.to_be_bytes());
    v
}

fn sack_opt(blocks: &[(u32, u32)]) -> Vec<u8> {
    let mut v = vec![1, 1, 5, (2 + 8 * blocks.len()) as u8];
    for (l, r) in blocks {
        v.extend_from_slice(&l.to_be_bytes());
        v.extend_from_slice(&r.to_be_bytes());
    }
    v
}

/// A test driver: client A:40000 -> server B:80.
struct T {
    tr: TcpTracker,
    frame: u64,
}

impl T {
    fn new() -> Self {
        T {
            tr: TcpTracker::new(),
            frame: 0,
        }
    }
    fn send(&mut self, t_ms: f64, from_client: bool, bytes: Vec<u8>) {
        self.frame += 1;
        let (src, dst) = if from_client { (A, B) } else { (B, A) };
        let ip = IpPacket {
            src,
            dst,
            proto: 6,
            ttl: 64,
            ip_id: 0,
            payload: Cow::Owned(bytes),
            missing: 0,
            reassembled: false,
        };
        self.tr.segment(self.frame, (t_ms * MS as f64) as i64, &ip);
    }
    /// Client data segment.
    fn c(&mut self, t: f64, seq: u32, ack: u32, len: usize) {
        self.send(t, true, seg(40000, 80, seq, ack, ACK | PSH, &[], len));
    }
    /// Server ACK (optionally with SACK blocks).
    fn s_ack(&mut self, t: f64, seq: u32, ack: u32, blocks: &[(u32, u32)]) {
        let o = if blocks.is_empty() {
            Vec::new()
        } else {
            sack_opt(blocks)
        };
        self.send(t, false, seg(80, 40000, seq, ack, ACK, &o, 0));
    }
    /// SYN / SYN-ACK / ACK at 0, rtt, rtt (client vantage), ISNs `ci`, `si`.
    fn handshake(&mut self, ci: u32, si: u32, rtt: f64) {
        let syn_opts = [2, 4, 5, 180, 4, 2, 3, 3, 7];
        self.send(0.0, true, seg(40000, 80, ci, 0, SYN, &syn_opts, 0));
        self.send(
            rtt,
            false,
            seg(80, 40000, si, ci.wrapping_add(1), SYN | ACK, &syn_opts, 0),
        );
        self.send(
            rtt + 0.05,
            true,
            seg(
                40000,
                80,
                ci.wrapping_add(1),
                si.wrapping_add(1),
                ACK,
                &[],
                0,
            ),
        );
    }
    fn finish(self) -> Vec<TcpFlow> {
        self.tr.finish().flows
    }
}

#[test]
fn header_and_options() {
    let mut o = vec![2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2];
    o.extend(ts_opt(100, 200));
    let b = seg(1234, 80, 7, 9, SYN, &o, 3);
    let s = TcpSegment::new_checked(&b).unwrap();
    assert_eq!(
        (s.src_port(), s.dst_port(), s.seq(), s.ack()),
        (1234, 80, 7, 9)
    );
    assert!(s.has(SYN) && !s.has(ACK));
    assert_eq!(s.payload().len(), 3);
    assert_eq!(s.payload_len(10), 13);
    let p = Options::parse(&s);
    assert_eq!(p.mss, Some(1460));
    assert_eq!(p.wscale, Some(7));
    assert!(p.sack_permitted);
    assert_eq!(p.ts, Some((100, 200)));
    // SACK blocks, and a window shift above 14 is used as 14 (RFC 7323 2.3).
    let mut o2 = sack_opt(&[(10, 20), (30, 40)]);
    o2.extend([3, 3, 20]);
    let b2 = seg(1, 2, 0, 0, ACK, &o2, 0);
    let p2 = Options::parse(&TcpSegment::new_checked(&b2).unwrap());
    assert_eq!(p2.sack_blocks(), &[(10, 20), (30, 40)]);
    assert_eq!(p2.wscale, Some(14));
    // A zero option length stops the walk instead of looping.
    let b3 = seg(1, 2, 0, 0, ACK, &[2, 0, 2, 4, 5, 180], 0);
    assert_eq!(TcpSegment::new_checked(&b3).unwrap().options().count(), 0);
    // Unknown options are kept as such.
    let b4 = seg(1, 2, 0, 0, ACK, &[99, 3, 7], 0);
    let first = TcpSegment::new_checked(&b4).unwrap().options().next();
    assert_eq!(
        first,
        Some(TcpOption::Unknown {
            kind: 99,
            data: &[7]
        })
    );
    // Errors.
    assert_eq!(
        TcpSegment::new_checked(&b[..19]).unwrap_err(),
        SegmentError::Short(19)
    );
    let mut bad = b.clone();
    bad[12] = 4 << 4;
    assert_eq!(
        TcpSegment::new_checked(&bad).unwrap_err(),
        SegmentError::BadOffset(4)
    );
}

#[test]
fn handshake_roles_rtt_and_window_scale() {
    let mut t = T::new();
    t.handshake(1000, 5000, 40.0);
    for i in 0..5u32 {
        let at = 100.0 + 20.0 * i as f64;
        t.c(at, 1001 + 100 * i, 5001, 100);
        t.s_ack(at + 40.0, 5001, 1101 + 100 * i, &[]);
    }
    let f = &t.finish()[0];
    assert_eq!(f.ep[0], (A, 40000));
    assert!(f.handshake_seen());
    assert_eq!(f.handshake_ns(), Some(40 * MS + 50_000));
    assert_eq!(f.opts[0].wscale, Some(7));
    assert_eq!(f.opts[1].mss, Some(1460));
    // RFC 7323 2.2: the server's windows are scaled by its shift 7.
    assert_eq!(f.dirs[0].rwnd_max, 1000 << 7);
    let s = f.summary[0].as_ref().unwrap();
    assert_eq!(s.vantage, Vantage::Sender);
    assert_eq!(s.rtt.unwrap().n, 5);
    assert!((s.rtt.unwrap().median - 40.0).abs() < 1e-6);
    assert_eq!(s.rtx_total, 0);
    assert_eq!(f.dirs[0].new_bytes, 500);
}

#[test]
fn sequence_wrap_around() {
    let mut t = T::new();
    let isn = u32::MAX - 250;
    t.handshake(isn, 7, 10.0);
    let mut seq = isn.wrapping_add(1);
    for i in 0..6 {
        let at = 50.0 + 5.0 * i as f64;
        t.c(at, seq, 8, 100);
        seq = seq.wrapping_add(100);
        t.s_ack(at + 10.0, 8, seq, &[]);
    }
    let f = &t.finish()[0];
    let s = f.summary[0].as_ref().unwrap();
    assert_eq!(s.rtx_total, 0, "crossing 2^32 is not a retransmission");
    assert_eq!(s.rtt.unwrap().n, 6);
    assert_eq!(f.dirs[0].new_bytes, 600);
    assert_eq!(f.dirs[0].snd_una, seq);
}

#[test]
fn fast_retransmit_after_three_dupacks_and_partial_ack() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    for i in 0..6u32 {
        t.c(100.0 + i as f64, 1 + 100 * i, 1, 100);
    }
    // Segment 2 (seq 101) lost: ACK 101, then three duplicates.
    t.s_ack(140.0, 1, 101, &[]);
    for k in 0..3 {
        t.s_ack(141.0 + k as f64, 1, 101, &[]);
    }
    t.c(143.1, 101, 1, 100);
    t.s_ack(183.2, 1, 601, &[]);
    let f = &t.finish()[0];
    let d = &f.dirs[0];
    assert_eq!(d.retransmissions.len(), 1);
    assert_eq!(d.retransmissions[0].kind, RtxKind::Fast);
    assert_eq!(d.retransmissions[0].orig_frame, Some(5));
    assert!(d.timeouts.is_empty());
    assert!(d.outages.is_empty());
}

#[test]
fn sack_marks_loss_and_dsack_marks_spurious() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    for i in 0..4u32 {
        t.c(100.0 + i as f64, 1 + 100 * i, 1, 100);
    }
    t.s_ack(140.0, 1, 101, &[]);
    // One SACK above the hole is enough with SACK (RFC 6675 / RACK).
    t.s_ack(142.0, 1, 101, &[(201, 401)]);
    t.c(142.1, 101, 1, 100);
    // The original had arrived after all: D-SACK below the cumulative ACK (RFC 2883 4).
    t.s_ack(182.2, 1, 401, &[(101, 201)]);
    let f = &t.finish()[0];
    let r = &f.dirs[0].retransmissions[0];
    assert_eq!(r.kind, RtxKind::Fast);
    assert_eq!(r.spurious, Some("D-SACK reported the data as a duplicate"));
    assert_eq!(f.summary[0].as_ref().unwrap().rtx_spurious, 1);
}

#[test]
fn eifel_timestamps_mark_spurious_timeout() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    let data = |tsval: u32| seg(40000, 80, 1, 1, ACK | PSH, &ts_opt(tsval, 9), 100);
    t.send(100.0, true, data(100));
    // RTO fires, then the ACK of the original arrives echoing its timestamp (RFC 3522).
    t.send(1100.0, true, data(1100));
    t.send(
        1100.5,
        false,
        seg(80, 40000, 1, 101, ACK, &ts_opt(10, 100), 0),
    );
    let f = &t.finish()[0];
    let r = &f.dirs[0].retransmissions[0];
    assert_eq!(r.kind, RtxKind::Timeout);
    assert!(r.spurious.unwrap().starts_with("Eifel"));
}

#[test]
fn timeout_chain_backoff_and_rto_floor() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    // Steady RTT 40 ms.
    let mut seq = 1u32;
    for i in 0..30 {
        let at = 100.0 + 20.0 * i as f64;
        t.c(at, seq, 1, 100);
        seq += 100;
        t.s_ack(at + 40.0, 1, seq, &[]);
    }
    // Last ACK at 720 ms; the next segment is never acknowledged: RTO 240, 480, 960.
    t.c(740.0, seq, 1, 100);
    t.c(980.0, seq, 1, 100);
    t.c(1460.0, seq, 1, 100);
    t.c(2420.0, seq, 1, 100);
    t.s_ack(2460.0, 1, seq + 100, &[]);
    let f = &t.finish()[0];
    let d = &f.dirs[0];
    let s = f.summary[0].as_ref().unwrap();
    assert_eq!(d.timeouts.len(), 3);
    let obs: Vec<i64> = d
        .timeouts
        .iter()
        .map(|x| x.observed_rto_ns.unwrap() / MS)
        .collect();
    assert_eq!(obs, vec![240, 480, 960]);
    assert_eq!(d.timeouts[0].timer_start, TimerStart::Send);
    assert_eq!(
        d.timeouts.iter().map(|x| x.backoff).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!((s.rto_first_ms.unwrap() - 240.0).abs() < 1e-6);
    // Linux model: 240 - SRTT 40 = 200.
    assert_eq!(s.rto_model, Some(super::infer::MODEL_LINUX));
    assert!((s.rto_min_ms.unwrap() - 200.0).abs() < 1.0);
    // Outage: data outstanding from 740 ms, first ACK of new data at 2460 ms.
    assert_eq!(d.outages.len(), 1);
    assert_eq!(d.outages[0].start_ns, 740 * MS);
    assert_eq!(d.outages[0].recovered_ns, 2460 * MS);
    assert_eq!(s.rtx_timeout, 3);
}

#[test]
fn tail_loss_probe_restarts_the_timer() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    let mut seq = 1u32;
    for i in 0..20 {
        let at = 100.0 + 20.0 * i as f64;
        t.c(at, seq, 1, 100);
        seq += 100;
        t.s_ack(at + 40.0, 1, seq, &[]);
    }
    // Last ACK at 520; two segments lost, then a probe at 700 (RFC 8985 7.3) and the RTO
    // expiries 248 ms after it, doubling.
    t.c(520.0, seq, 1, 100);
    t.c(540.0, seq + 100, 1, 100);
    t.c(700.0, seq + 200, 1, 100);
    t.c(948.0, seq, 1, 100);
    t.c(1444.0, seq, 1, 100);
    t.s_ack(1484.0, 1, seq + 300, &[]);
    let f = &t.finish()[0];
    let d = &f.dirs[0];
    assert_eq!(d.timeouts[0].timer_start, TimerStart::Probe);
    assert_eq!(d.timeouts[0].observed_rto_ns, Some(248 * MS));
    assert_eq!(d.timeouts[1].observed_rto_ns, Some(496 * MS));
}

#[test]
fn duplicate_frames_are_not_retransmissions() {
    let mut t = T::new();
    t.handshake(0, 0, 40.0);
    let s1 = seg(40000, 80, 1, 1, ACK | PSH, &[], 100);
    t.send(100.0, true, s1.clone());
    t.send(100.0, true, s1.clone());
    t.send(100.3, true, s1.clone());
    let a = seg(80, 40000, 1, 101, ACK, &[], 0);
    t.send(140.0, false, a.clone());
    t.send(140.0, false, a);
    // A stale copy much later: its ACK field is older than one the client already sent.
    t.send(150.0, true, seg(40000, 80, 101, 2, ACK, &[], 0));
    t.send(190.0, true, s1);
    let f = &t.finish()[0];
    assert_eq!(f.duplicates, 4);
    assert!(f.dirs[0].retransmissions.is_empty());
}

#[test]
fn port_reuse_and_syn_retransmission() {
    let mut t = T::new();
    t.send(0.0, true, seg(40000, 80, 100, 0, SYN, &[], 0));
    // SYN retransmission (same ISN): same connection, a timeout.
    t.send(1000.0, true, seg(40000, 80, 100, 0, SYN, &[], 0));
    t.send(1040.0, false, seg(80, 40000, 900, 101, SYN | ACK, &[], 0));
    t.send(1040.1, true, seg(40000, 80, 101, 901, ACK, &[], 0));
    t.send(1100.0, true, seg(40000, 80, 101, 901, ACK | FIN, &[], 0));
    t.send(1140.0, false, seg(80, 40000, 901, 102, ACK | FIN, &[], 0));
    t.send(1140.1, true, seg(40000, 80, 102, 902, ACK, &[], 0));
    // The same 4-tuple again after the close: a new connection.
    t.send(5000.0, true, seg(40000, 80, 77777, 0, SYN, &[], 0));
    // And a SYN with yet another ISN while open: new again (RFC 9293 3.4.1).
    t.send(6000.0, true, seg(40000, 80, 99999, 0, SYN, &[], 0));
    let flows = t.finish();
    assert_eq!(flows.len(), 3);
    let f = &flows[0];
    assert!(f.closed());
    assert_eq!(f.dirs[0].retransmissions.len(), 1);
    // RFC 6298 5.1: the SYN started the timer; the initial RTO of 1 s (2.1) is observed.
    assert_eq!(f.dirs[0].timeouts[0].observed_rto_ns, Some(1000 * MS));
    assert!(f.dirs[0].timeouts[0].handshake);
    assert_eq!(f.dirs[0].timeouts[0].start_ns, Some(0));
    assert_eq!(flows[1].dirs[0].isn, Some(77777));
}

#[test]
fn mid_connection_start_client_by_port_and_keepalive() {
    let mut t = T::new();
    // No handshake: the first segment comes from the server (port 80).
    t.send(0.0, false, seg(80, 40000, 5000, 300, ACK | PSH, &[], 10));
    t.c(1.0, 300, 5010, 0);
    // RFC 9293 3.8.4 keep-alive from the client: SND.NXT - 1, one byte.
    t.c(7000.0, 299, 5010, 1);
    t.s_ack(7001.0, 5010, 300, &[]);
    let f = &t.finish()[0];
    assert_eq!(f.ep[0], (A, 40000), "the higher port is the client");
    assert!(!f.handshake_seen());
    assert_eq!(f.dirs[0].keepalives, 1);
    assert!(f.dirs[0].retransmissions.is_empty());
}

#[test]
fn delayed_ack_at_the_receiver() {
    let mut t = T::new();
    // Receiver vantage: the SYN is answered at once, the SYN-ACK after a full RTT.
    t.send(0.0, true, seg(40000, 80, 0, 0, SYN, &[], 0));
    t.send(0.05, false, seg(80, 40000, 0, 1, SYN | ACK, &[], 0));
    t.send(40.1, true, seg(40000, 80, 1, 1, ACK, &[], 0));
    for i in 0..10u32 {
        let at = 100.0 + 250.0 * i as f64;
        t.c(at, 1 + 100 * i, 1, 100);
        t.s_ack(at + 42.0, 1, 101 + 100 * i, &[]);
    }
    let f = &t.finish()[0];
    let s = f.summary[0].as_ref().unwrap();
    assert_eq!(s.vantage, Vantage::Receiver);
    let d = s.delayed_ack.unwrap();
    assert_eq!(d.n, 10);
    assert!((d.median - 42.0).abs() < 1e-6);
    // RTT figures are not reported at the receiver.
    assert!(s.rtt.is_none());
}

#[test]
fn hole_fill_at_the_receiver_and_reordering() {
    let mut t = T::new();
    t.send(0.0, true, seg(40000, 80, 0, 0, SYN, &[], 0));
    t.send(0.05, false, seg(80, 40000, 0, 1, SYN | ACK, &[], 0));
    t.send(40.1, true, seg(40000, 80, 1, 1, ACK, &[], 0));
    t.c(100.0, 1, 1, 100);
    // 101..201 lost upstream: 201 arrives, then a reordered 301 right after 401...
    t.c(101.0, 201, 1, 100);
    t.c(102.0, 401, 1, 100);
    t.c(102.5, 301, 1, 100);
    // ...and the retransmission of 101 comes one RTT after the duplicate ACKs.
    t.s_ack(101.1, 1, 101, &[(201, 301)]);
    t.s_ack(102.1, 1, 101, &[(201, 301), (401, 501)]);
    t.s_ack(102.6, 1, 101, &[(201, 501)]);
    t.c(141.0, 101, 1, 100);
    t.s_ack(141.1, 1, 501, &[]);
    let f = &t.finish()[0];
    let d = &f.dirs[0];
    assert_eq!(d.reordered, 1);
    assert_eq!(d.retransmissions.len(), 1);
    assert_eq!(d.retransmissions[0].kind, RtxKind::Fast);
    assert!(d.retransmissions[0].spurious.is_none());
    assert_eq!(d.new_bytes, 500);
}

#[test]
fn flow_cap_warns() {
    let mut tr = TcpTracker::with_limit(2);
    for p in 0..4u16 {
        let ip = IpPacket {
            src: A,
            dst: B,
            proto: 6,
            ttl: 64,
            ip_id: 0,
            payload: Cow::Owned(seg(1000 + p, 80, 0, 0, SYN, &[], 0)),
            missing: 0,
            reassembled: false,
        };
        tr.segment(u64::from(p), 0, &ip);
    }
    let r = tr.finish();
    assert_eq!(r.flows.len(), 2);
    assert!(r.warnings[0].contains("more than 2 connections"));
}

#[test]
fn random_segments_do_not_panic() {
    // Robustness: arbitrary headers, flags, options and sequence numbers on a few 4-tuples.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = T::new();
    let mut seq = [1000u32, 5000u32];
    for i in 0..20_000 {
        let r = next();
        let client = r & 1 == 0;
        let side = usize::from(!client);
        // Mostly plausible sequence numbers, sometimes wild ones.
        let s = if r & 0x70 == 0 {
            (r >> 32) as u32
        } else {
            seq[side] = seq[side].wrapping_add(((r >> 8) & 0x3ff) as u32);
            seq[side].wrapping_sub(((r >> 20) & 0x7ff) as u32)
        };
        let ack = seq[1 - side].wrapping_sub(((r >> 40) & 0xff) as u32);
        let fl = (r >> 48) as u8;
        let nopt = (r >> 56) as usize % 12;
        let opts: Vec<u8> = (0..nopt).map(|_| next() as u8 % 9).collect();
        let len = ((r >> 24) & 0x7ff) as usize % 1500;
        let (sp, dp) = if client { (40000, 80) } else { (80, 40000) };
        let mut b = seg(sp, dp, s, ack, fl, &opts, len);
        if i % 97 == 0 {
            b.truncate((r % 40) as usize);
        }
        t.send(i as f64 * 0.37, client, b);
    }
    let flows = t.finish();
    assert!(!flows.is_empty());
}

/// A connection on `sp` -> 80: handshake, 100 bytes each way, FIN both ways, all acknowledged,
/// starting at `t0_ms` (each segment 10 ms after the previous one).
fn closed_connection(tr: &mut TcpTracker, frame: &mut u64, sp: u16, t0_ms: i64) {
    let c = [
        (true, 100, 0, SYN, 0),
        (false, 500, 101, SYN | ACK, 0),
        (true, 101, 501, ACK, 100),
        (false, 501, 201, ACK, 100),
        (true, 201, 601, ACK | FIN, 0),
        (false, 601, 202, ACK | FIN, 0),
        (true, 202, 602, ACK, 0),
    ];
    for (i, (from_client, seq, ack, fl, len)) in c.into_iter().enumerate() {
        *frame += 1;
        let (src, dst, s, d) = if from_client {
            (A, B, sp, 80)
        } else {
            (B, A, 80, sp)
        };
        let ip = IpPacket {
            src,
            dst,
            proto: 6,
            ttl: 64,
            ip_id: 0,
            payload: Cow::Owned(seg(s, d, seq, ack, fl, &[], len)),
            missing: 0,
            reassembled: false,
        };
        tr.segment(*frame, (t0_ms + 10 * i as i64) * MS, &ip);
    }
}

#[test]
fn connections_over_and_silent_past_time_wait_are_retired() {
    // RFC 9293 3.6.1: 2 x MSL after it is over, a connection is retired (no rows kept).
    let mut tr = TcpTracker::with_limit(2);
    tr.keep_rows = false;
    let mut frame = 0;
    closed_connection(&mut tr, &mut frame, 1000, 0);
    closed_connection(&mut tr, &mut frame, 1001, 1_000);
    // 239 s after the first closed: nothing retired yet.
    closed_connection(&mut tr, &mut frame, 1003, 239_000);
    assert!(!tr.has_retired());
    // The bound of 2 open connections held the third: it was only counted.
    assert_eq!(tr.over_limit, 7);
    // 241 s after the second one: both retired, in that order, summarised and whole.
    closed_connection(&mut tr, &mut frame, 1002, 242_000);
    let retired: Vec<_> = tr.take_retired().collect();
    assert_eq!(retired.iter().map(|f| f.id).collect::<Vec<_>>(), [0, 1]);
    for f in &retired {
        assert!(f.summarised && f.closed());
        assert_eq!(f.packets, 7);
        assert_eq!(f.dirs[0].new_bytes, 100);
        assert!(f.summary[0].is_some());
    }
    // The retired connections freed their places: the new one is tracked.
    assert_eq!(tr.live(), 1);
    let r = tr.finish();
    assert_eq!(r.flows.iter().map(|f| f.id).collect::<Vec<_>>(), [2]);
    assert_eq!(r.flows[0].ep[0].1, 1002);
}

#[test]
fn a_late_segment_keeps_a_connection_and_a_reused_port_gets_its_own() {
    let mut tr = TcpTracker::new();
    tr.keep_rows = false;
    let mut frame = 0;
    closed_connection(&mut tr, &mut frame, 1000, 0);
    // A retransmitted FIN-ACK 100 s later (in TIME-WAIT) belongs to the old connection and
    // restarts its silence.
    frame += 1;
    let late = IpPacket {
        src: B,
        dst: A,
        proto: 6,
        ttl: 64,
        ip_id: 0,
        payload: Cow::Owned(seg(80, 1000, 601, 202, ACK | FIN, &[], 0)),
        missing: 0,
        reassembled: false,
    };
    tr.segment(frame, 100_000 * MS, &late);
    // The port is reused at 200 s (RFC 9293 3.4.1: a new SYN after the close).
    closed_connection(&mut tr, &mut frame, 1000, 200_000);
    // At 300 s neither is retired: the first was heard from at 100 s, the second closed at 200 s.
    closed_connection(&mut tr, &mut frame, 2000, 300_000);
    assert!(!tr.has_retired());
    // At 341 s the first goes, at 441 s the second; the 4-tuple's entry follows the newest.
    let retired = |tr: &mut TcpTracker| {
        tr.take_retired()
            .map(|f| (f.id, f.packets))
            .collect::<Vec<_>>()
    };
    closed_connection(&mut tr, &mut frame, 2001, 341_000);
    assert_eq!(retired(&mut tr), [(0, 8)]);
    closed_connection(&mut tr, &mut frame, 2002, 441_000);
    assert_eq!(retired(&mut tr), [(1, 7)]);
    // After retirement a stray segment of the old 4-tuple starts a new connection.
    frame += 1;
    tr.segment(frame, 700_000 * MS, &late);
    let r = tr.finish();
    let last = r.flows.last().unwrap();
    assert_eq!((last.ep[1].1, last.packets), (80, 1));
    assert!(!last.handshake_seen());
}
