//! Tunnelled packets on hand-built frames: VXLAN, GENEVE, GRE / ERSPAN, IP in IP and MPLS
//! decode to the packet inside, reassembled outer datagrams included.

use std::borrow::Cow;

use super::{decode_one, eth, expect_v4_sctp, frame, ipv4, ipv6, payload, udp};
use crate::net::NetDecoder;

fn vxlan(inner_frame: &[u8]) -> Vec<u8> {
    // RFC 7348 5: I flag, VNI 42.
    let mut v = vec![0x08, 0, 0, 0, 0, 0, 42, 0];
    v.extend_from_slice(inner_frame);
    v
}

#[test]
fn vxlan_in_ethernet_decodes_to_the_inner_sctp_packet() {
    let body = payload(40);
    let inner = eth(0x0800, &ipv4(132, 7, (false, 0), &[], &body));
    let outer = eth(
        0x0800,
        &ipv4(17, 1, (false, 0), &[], &udp(4789, &vxlan(&inner))),
    );
    let mut dec = NetDecoder::new();
    let p = dec.decode(&frame(1, &outer, 0)).unwrap().unwrap();
    expect_v4_sctp(&p, &body);
    assert_eq!(dec.stats().tunnels, [1, 0, 0, 0, 0]);
    // Both headers were parsed.
    assert_eq!(dec.stats().ipv4, 2);
    // A VXLAN frame carrying ARP is no IP packet.
    let arp = eth(0x0806, &[0; 28]);
    let outer = eth(
        0x0800,
        &ipv4(17, 2, (false, 0), &[], &udp(4789, &vxlan(&arp))),
    );
    assert!(dec.decode(&frame(1, &outer, 0)).unwrap().is_none());
    assert_eq!(dec.stats().non_ip, 1);
    // Plain UDP to another port stays UDP.
    let outer = eth(0x0800, &ipv4(17, 3, (false, 0), &[], &udp(9899, &body)));
    assert_eq!(dec.decode(&frame(1, &outer, 0)).unwrap().unwrap().proto, 17);
}

#[test]
fn geneve_over_ipv6_carries_ipv4() {
    let body = payload(24);
    // RFC 8926 3.4: one 4-byte word of options, protocol type IPv4.
    let mut g = vec![0x01, 0, 0x08, 0x00, 0, 0, 9, 0, 0x01, 0x02, 0x03, 0x04];
    g.extend_from_slice(&ipv4(132, 7, (false, 0), &[], &body));
    let outer = eth(0x86DD, &ipv6(17, &udp(6081, &g)));
    let mut dec = NetDecoder::new();
    let p = dec.decode(&frame(1, &outer, 0)).unwrap().unwrap();
    expect_v4_sctp(&p, &body);
    assert_eq!(dec.stats().tunnels, [0, 1, 0, 0, 0]);
}

#[test]
fn erspan_and_ip_in_ip_and_mpls() {
    let body = payload(16);
    let inner = eth(0x0800, &ipv4(132, 7, (false, 0), &[], &body));
    // ERSPAN type II: GRE with a sequence number, an 8-byte ERSPAN header (version 1).
    let mut gre = vec![
        0x10, 0, 0x88, 0xBE, 0, 0, 0, 5, 0x10, 0x01, 0, 0, 0, 0, 0, 0,
    ];
    gre.extend_from_slice(&inner);
    let outer = eth(0x0800, &ipv4(47, 1, (false, 0), &[], &gre));
    let mut dec = NetDecoder::new();
    expect_v4_sctp(&dec.decode(&frame(1, &outer, 0)).unwrap().unwrap(), &body);
    // IPv4 in IPv4 (RFC 2003), raw-IP link type.
    let outer = ipv4(4, 2, (false, 0), &[], &ipv4(132, 7, (false, 0), &[], &body));
    expect_v4_sctp(&dec.decode(&frame(101, &outer, 0)).unwrap().unwrap(), &body);
    // Two MPLS labels (the second with S set), then IPv4.
    let mut mpls = vec![0x00, 0x01, 0x40, 0x40, 0x00, 0x02, 0x01, 0x40];
    mpls.extend_from_slice(&ipv4(132, 7, (false, 0), &[], &body));
    expect_v4_sctp(
        &dec.decode(&frame(1, &eth(0x8847, &mpls), 0))
            .unwrap()
            .unwrap(),
        &body,
    );
    assert_eq!(dec.stats().tunnels, [0, 0, 0, 1, 1]);
    assert_eq!(dec.stats().mpls, 1);
    // A label stack cut short is an error that names MPLS.
    let e = decode_one(1, &eth(0x8847, &[0x00, 0x01, 0x40])).unwrap_err();
    assert!(e.to_string().contains("mpls"), "{e}");
}

#[test]
fn a_fragmented_outer_datagram_is_reassembled_before_its_tunnel_is_opened() {
    let body = payload(64);
    let inner = eth(0x0800, &ipv4(132, 7, (false, 0), &[], &body));
    let whole = udp(4789, &vxlan(&inner));
    // The outer UDP datagram in two IPv4 fragments (RFC 791: offsets in 8-byte units).
    let (first, rest) = whole.split_at(48);
    let f1 = eth(0x0800, &ipv4(17, 77, (true, 0), &[], first));
    let f2 = eth(0x0800, &ipv4(17, 77, (false, 6), &[], rest));
    let mut dec = NetDecoder::new();
    assert!(dec.decode(&frame(1, &f1, 0)).unwrap().is_none());
    let p = dec.decode(&frame(1, &f2, 1_000)).unwrap().unwrap();
    assert_eq!(p.proto, 132);
    assert_eq!(&p.payload[..], &body[..]);
    assert!(matches!(p.payload, Cow::Owned(_)));
    assert_eq!(dec.stats().tunnels[0], 1);
}

#[test]
fn tunnels_in_tunnels_stop_at_the_depth_bound() {
    let body = payload(8);
    let mut pkt = ipv4(132, 7, (false, 0), &[], &body);
    for _ in 0..6 {
        pkt = ipv4(4, 1, (false, 0), &[], &pkt);
    }
    let p = decode_one(101, &pkt).unwrap().unwrap();
    // Four levels opened, the fifth IP-in-IP packet handed on as it is.
    assert_eq!(p.proto, 4);
}
