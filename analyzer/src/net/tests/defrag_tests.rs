//! Fragment reassembly tests (RFC 791 3.2, RFC 8200 4.5, RFC 5722).

use std::borrow::Cow;

use super::{eth, ext, frag6, frame, ipv4, ipv6, payload};
use crate::net::NetDecoder;

const S: i64 = 1_000_000_000;

/// IPv4 fragments of `body` at the given 8-octet boundaries (in bytes), as Ethernet frames.
fn v4_frags(id: u16, body: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(body.len());
    bounds
        .windows(2)
        .map(|w| {
            let more = w[1] < body.len();
            eth(
                0x0800,
                &ipv4(132, id, (more, (w[0] / 8) as u16), &[], &body[w[0]..w[1]]),
            )
        })
        .collect()
}

/// IPv6 fragments of `fragmentable` (RFC 8200 4.5), next header `nh` in the Fragment header.
fn v6_frags(id: u32, nh: u8, fragmentable: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(fragmentable.len());
    bounds
        .windows(2)
        .map(|w| {
            let more = w[1] < fragmentable.len();
            let mut rest = frag6(nh, w[0] as u16, more, id);
            rest.extend_from_slice(&fragmentable[w[0]..w[1]]);
            eth(0x86DD, &ipv6(44, &rest))
        })
        .collect()
}

#[test]
fn ipv4_out_of_order() {
    let body = payload(3000);
    let f = v4_frags(7, &body, &[1480, 2960]);
    let mut d = NetDecoder::new();
    assert!(d.decode(&frame(1, &f[2], 0)).unwrap().is_none());
    assert!(d.decode(&frame(1, &f[0], 1)).unwrap().is_none());
    let p = d.decode(&frame(1, &f[1], 2)).unwrap().unwrap();
    assert_eq!(&p.payload[..], &body[..]);
    assert!(p.reassembled && matches!(p.payload, Cow::Owned(_)));
    assert_eq!((p.proto, p.ttl, p.missing), (132, 64, 0));
    let s = d.stats();
    assert_eq!((s.fragments, s.reassembled, s.ipv4), (3, 1, 3));
    assert_eq!(d.pending_fragments(), 0);
}

#[test]
fn ipv6_out_of_order_with_extension_headers() {
    let body = payload(2000);
    // Fragmentable part: destination options header, then SCTP.
    let mut fragmentable = ext(132, 0);
    fragmentable.extend_from_slice(&body);
    let f = v6_frags(0xABCD, 60, &fragmentable, &[1232]);
    let mut d = NetDecoder::new();
    assert!(d.decode(&frame(1, &f[1], 0)).unwrap().is_none());
    let p = d.decode(&frame(1, &f[0], 1)).unwrap().unwrap();
    assert_eq!((p.proto, p.ttl, p.reassembled), (132, 33, true));
    assert_eq!(&p.payload[..], &body[..]);
    assert_eq!(d.stats().ipv6, 2);
}

#[test]
fn ipv6_overlap_drops_datagram() {
    let body = payload(64);
    let mut d = NetDecoder::new();
    // [0, 16) more, [8, 24) more: overlap; then the rest arrives.
    let mk = |off: usize, len: usize, more: bool| {
        let mut rest = frag6(132, off as u16, more, 1);
        rest.extend_from_slice(&body[off..off + len]);
        eth(0x86DD, &ipv6(44, &rest))
    };
    assert!(d.decode(&frame(1, &mk(0, 16, true), 0)).unwrap().is_none());
    assert!(d.decode(&frame(1, &mk(8, 16, true), 1)).unwrap().is_none());
    assert!(d
        .decode(&frame(1, &mk(16, 48, false), 2))
        .unwrap()
        .is_none());
    let s = d.stats();
    assert_eq!((s.frag_overlaps, s.frag_dropped, s.reassembled), (1, 1, 0));
    // The dropped chain ages out without counting as a timeout.
    assert!(d
        .decode(&frame(1, &eth(0x0806, &[0; 28]), 40 * S))
        .unwrap()
        .is_none());
    assert_eq!(d.pending_fragments(), 0);
    assert_eq!(d.stats().reassembly_timeouts, 0);
}

#[test]
fn ipv4_overlap_keeps_first_data() {
    let first = vec![0xAA; 16];
    let second = vec![0xBB; 16];
    let mut d = NetDecoder::new();
    let f1 = eth(0x0800, &ipv4(132, 9, (true, 0), &[], &first));
    let f2 = eth(0x0800, &ipv4(132, 9, (false, 1), &[], &second)); // [8, 24)
    assert!(d.decode(&frame(1, &f1, 0)).unwrap().is_none());
    let p = d.decode(&frame(1, &f2, 1)).unwrap().unwrap();
    let mut want = vec![0xAA; 16];
    want.extend_from_slice(&[0xBB; 8]);
    assert_eq!(&p.payload[..], &want[..]);
    assert_eq!(d.stats().frag_overlaps, 1);
}

#[test]
fn duplicates_are_dropped() {
    // Each fragment twice (a Linux "any" capture sees forwarded packets twice).
    let body = payload(2000);
    let f = v4_frags(3, &body, &[1000]);
    let mut d = NetDecoder::new();
    let mut out = Vec::new();
    for (i, fr) in [&f[0], &f[0], &f[1], &f[1]].into_iter().enumerate() {
        if let Some(p) = d.decode(&frame(1, fr, i as i64)).unwrap() {
            out.push(p.payload.into_owned());
        }
    }
    assert_eq!(out, vec![body]);
    let s = d.stats();
    assert_eq!(
        (s.frag_duplicates, s.frag_overlaps, s.reassembled),
        (2, 0, 1)
    );
    assert_eq!(d.pending_fragments(), 0);
}

#[test]
fn timeout_evicts_by_capture_time() {
    let body = payload(100);
    let f = v4_frags(4, &body, &[48]);
    let mut d = NetDecoder::new();
    assert!(d.decode(&frame(1, &f[0], 0)).unwrap().is_none());
    assert_eq!(d.pending_fragments(), 1);
    // Any frame 31 s later expires the chain.
    let arp = eth(0x0806, &[0; 28]);
    assert!(d.decode(&frame(1, &arp, 29 * S)).unwrap().is_none());
    assert_eq!(d.pending_fragments(), 1);
    assert!(d.decode(&frame(1, &arp, 31 * S)).unwrap().is_none());
    assert_eq!(d.pending_fragments(), 0);
    assert_eq!(d.stats().reassembly_timeouts, 1);
    // The rest alone does not complete anything.
    assert!(d.decode(&frame(1, &f[1], 32 * S)).unwrap().is_none());
    assert_eq!(d.stats().reassembled, 0);
}

#[test]
fn chains_are_bounded() {
    let body = payload(16);
    let mut d = NetDecoder::new();
    for id in 0..1025u16 {
        let f = eth(0x0800, &ipv4(132, id, (true, 0), &[], &body[..8]));
        assert!(d.decode(&frame(1, &f, i64::from(id))).unwrap().is_none());
    }
    assert_eq!(d.pending_fragments(), 1024);
    assert_eq!(d.stats().reassembly_evictions, 1);
    // id 1 is still there; the oldest (id 0) was evicted: its last fragment cannot complete it.
    let last1 = eth(0x0800, &ipv4(132, 1, (false, 1), &[], &body[8..]));
    assert_eq!(
        &d.decode(&frame(1, &last1, 2000)).unwrap().unwrap().payload[..],
        &body[..]
    );
    let last0 = eth(0x0800, &ipv4(132, 0, (false, 1), &[], &body[8..]));
    assert!(d.decode(&frame(1, &last0, 2001)).unwrap().is_none());
    assert_eq!(d.pending_fragments(), 1024);
}

#[test]
fn invalid_fragments_dropped() {
    let mut d = NetDecoder::new();
    // MF set but 12 bytes: not a multiple of 8.
    let f = eth(0x0800, &ipv4(132, 5, (true, 0), &[], &payload(12)));
    assert!(d.decode(&frame(1, &f, 0)).unwrap().is_none());
    // Offset 8184 * 8 + 100 bytes > 65535.
    let f = eth(0x0800, &ipv4(132, 6, (false, 8184), &[], &payload(100)));
    assert!(d.decode(&frame(1, &f, 0)).unwrap().is_none());
    assert_eq!(d.stats().frag_dropped, 2);
    assert_eq!(d.pending_fragments(), 0);
}

#[test]
fn snaplen_cut_fragment_gives_captured_prefix() {
    let body = payload(400);
    let f = v4_frags(8, &body, &[200]);
    let mut d = NetDecoder::new();
    // The first fragment is cut to 100 of its 200 data bytes.
    assert!(d
        .decode(&frame(1, &f[0][..14 + 20 + 100], 0))
        .unwrap()
        .is_none());
    let p = d.decode(&frame(1, &f[1], 1)).unwrap().unwrap();
    assert_eq!(&p.payload[..], &body[..100]);
    assert_eq!(p.missing, 300);
    assert_eq!(d.stats().truncated, 1);
}
