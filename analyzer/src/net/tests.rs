//! Tests of link / IP slicing and reassembly on hand-built frames, and on the shared captures.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{IpPacket, NetDecoder, NetError, NetErrorKind};
use crate::capture::{CaptureReader, Frame};

mod defrag_tests;
mod serial_link_tests;
mod tunnel_tests;

pub(super) const A4: [u8; 4] = [10, 0, 0, 1];
pub(super) const B4: [u8; 4] = [10, 0, 0, 2];

pub(super) fn a6() -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0x20;
    a[1] = 0x01;
    a[15] = 1;
    a
}

pub(super) fn b6() -> [u8; 16] {
    let mut a = a6();
    a[15] = 2;
    a
}

/// IPv4 header (+ options) + payload; `frag` = (MF, offset in 8-octet units).
pub(super) fn ipv4(proto: u8, id: u16, frag: (bool, u16), opts: &[u8], payload: &[u8]) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let hlen = 20 + opts.len();
    let total = (hlen + payload.len()) as u16;
    let ff = (u16::from(frag.0) << 13) | frag.1;
    let mut v = vec![0x40 | (hlen / 4) as u8, 0];
    v.extend_from_slice(&total.to_be_bytes());
    v.extend_from_slice(&id.to_be_bytes());
    v.extend_from_slice(&ff.to_be_bytes());
    v.extend_from_slice(&[64, proto, 0, 0]);
    v.extend_from_slice(&A4);
    v.extend_from_slice(&B4);
    v.extend_from_slice(opts);
    v.extend_from_slice(payload);
    v
}

/// IPv6 header + `rest` (extension headers and payload).
pub(super) fn ipv6(nh: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0];
    v.extend_from_slice(&(rest.len() as u16).to_be_bytes());
    v.extend_from_slice(&[nh, 33]);
    v.extend_from_slice(&a6());
    v.extend_from_slice(&b6());
    v.extend_from_slice(rest);
    v
}

/// A generic IPv6 extension header of `units` * 8 + 8 bytes.
pub(super) fn ext(next: u8, units: u8) -> Vec<u8> {
    let mut v = vec![next, units];
    v.resize(8 + 8 * usize::from(units), 1);
    v
}

/// IPv6 Fragment header (RFC 8200 4.5); `offset` in bytes (multiple of 8).
pub(super) fn frag6(next: u8, offset: u16, more: bool, id: u32) -> Vec<u8> {
    let mut v = vec![next, 0];
    v.extend_from_slice(&(offset | u16::from(more)).to_be_bytes());
    v.extend_from_slice(&id.to_be_bytes());
    v
}

pub(super) fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A UDP header (RFC 768) to destination port `dst`, then `body`.
pub(super) fn udp(dst: u16, body: &[u8]) -> Vec<u8> {
    let mut v = vec![0xc0, 0x01];
    v.extend_from_slice(&dst.to_be_bytes());
    v.extend_from_slice(&((8 + body.len()) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(body);
    v
}

pub(super) fn frame(linktype: u32, data: &[u8], ts_ns: i64) -> Frame<'_> {
    Frame {
        number: 1,
        ts_ns,
        linktype,
        data,
        orig_len: data.len() as u32,
        offset: 0,
    }
}

pub(super) fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

pub(super) fn decode_one(linktype: u32, data: &[u8]) -> Result<Option<IpPacket<'_>>, NetError> {
    NetDecoder::new().decode(&frame(linktype, data, 0))
}

pub(super) fn expect_v4_sctp(p: &IpPacket<'_>, body: &[u8]) {
    assert_eq!(p.src, IpAddr::V4(Ipv4Addr::from(A4)));
    assert_eq!(p.dst, IpAddr::V4(Ipv4Addr::from(B4)));
    assert_eq!(p.proto, 132);
    assert_eq!(p.ttl, 64);
    assert_eq!(&p.payload[..], body);
    assert!(matches!(p.payload, Cow::Borrowed(_)));
    assert_eq!(p.missing, 0);
    assert!(!p.reassembled);
}

#[test]
fn ethernet_ipv4_padding_removed() {
    let body = payload(12);
    let mut f = eth(0x0800, &ipv4(132, 1, (false, 0), &[], &body));
    f.extend_from_slice(&[0; 14]); // Ethernet padding to the 60-byte minimum
    let p = decode_one(1, &f).unwrap().unwrap();
    expect_v4_sctp(&p, &body);
}

#[test]
fn vlan_qinq_tags() {
    let body = payload(30);
    let ip = ipv4(132, 1, (false, 0), &[], &body);
    // 802.1Q: TCI then inner EtherType.
    let mut one = vec![0x00, 0x05, 0x08, 0x00];
    one.extend_from_slice(&ip);
    expect_v4_sctp(&decode_one(1, &eth(0x8100, &one)).unwrap().unwrap(), &body);
    // 802.1ad outer + 802.1Q inner; old 0x9100 outer.
    for outer in [0x88A8u16, 0x9100] {
        let mut two = vec![0x00, 0x07, 0x81, 0x00, 0x00, 0x05, 0x08, 0x00];
        two.extend_from_slice(&ip);
        expect_v4_sctp(&decode_one(1, &eth(outer, &two)).unwrap().unwrap(), &body);
    }
    // A tag cut off.
    let e = decode_one(1, &eth(0x8100, &[0, 5])).unwrap_err();
    assert_eq!((e.layer, e.offset), ("vlan", 14));
}

fn sll(proto: u16, hatype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 4];
    v.extend_from_slice(&hatype.to_be_bytes());
    v.extend_from_slice(&[0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    v.extend_from_slice(&proto.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn sll2(proto: u16, hatype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = proto.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, 0, 0, 3]);
    v.extend_from_slice(&hatype.to_be_bytes());
    v.extend_from_slice(&[4, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    v.extend_from_slice(payload);
    v
}

#[test]
fn linux_cooked_v1_v2() {
    let body = payload(20);
    let ip = ipv4(132, 1, (false, 0), &[], &body);
    for hatype in [1u16, 772, 0xFFFE] {
        expect_v4_sctp(
            &decode_one(113, &sll(0x0800, hatype, &ip)).unwrap().unwrap(),
            &body,
        );
        expect_v4_sctp(
            &decode_one(276, &sll2(0x0800, hatype, &ip))
                .unwrap()
                .unwrap(),
            &body,
        );
    }
    // VLAN tag inside SLL (seen in Linux "any" captures).
    let mut tagged = vec![0x00, 0x05, 0x08, 0x00];
    tagged.extend_from_slice(&ip);
    expect_v4_sctp(
        &decode_one(113, &sll(0x8100, 1, &tagged)).unwrap().unwrap(),
        &body,
    );
    // Netlink, ARP: no IP.
    assert!(decode_one(113, &sll(0x0800, 824, &ip)).unwrap().is_none());
    assert!(decode_one(276, &sll2(0x0806, 1, &[0; 28]))
        .unwrap()
        .is_none());
    let e = decode_one(276, &[0; 19]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sll2 header at frame offset 0: truncated: 20 bytes needed, 19 captured"
    );
}

#[test]
fn raw_ip_linktypes() {
    let body = payload(9);
    let v4 = ipv4(132, 1, (false, 0), &[], &body);
    let v6 = ipv6(132, &body);
    for lt in [12, 14, 101] {
        expect_v4_sctp(&decode_one(lt, &v4).unwrap().unwrap(), &body);
        let p = decode_one(lt, &v6).unwrap().unwrap();
        assert_eq!(p.src, IpAddr::V6(Ipv6Addr::from(a6())));
        assert_eq!(&p.payload[..], &body[..]);
    }
    expect_v4_sctp(&decode_one(228, &v4).unwrap().unwrap(), &body);
    assert_eq!(decode_one(229, &v6).unwrap().unwrap().ttl, 33);
    let e = decode_one(101, &[0x50; 30]).unwrap_err();
    assert_eq!(
        (e.layer, e.kind.clone()),
        ("raw-ip", NetErrorKind::BadVersion(5))
    );
    // LINKTYPE_IPV6 given an IPv4 packet.
    assert_eq!(
        decode_one(229, &v4).unwrap_err().kind,
        NetErrorKind::BadVersion(4)
    );
}

#[test]
fn null_and_loop_both_byte_orders() {
    let body = payload(10);
    let v4 = ipv4(132, 1, (false, 0), &[], &body);
    let v6 = ipv6(132, &body);
    for (af, ip) in [(2u32, &v4), (24, &v6), (28, &v6), (30, &v6)] {
        for bytes in [af.to_le_bytes(), af.to_be_bytes()] {
            let mut f = bytes.to_vec();
            f.extend_from_slice(ip);
            let p = decode_one(0, &f).unwrap().unwrap();
            assert_eq!(&p.payload[..], &body[..]);
        }
        // LINKTYPE_LOOP: network byte order only.
        let mut f = af.to_be_bytes().to_vec();
        f.extend_from_slice(ip);
        assert_eq!(
            &decode_one(108, &f).unwrap().unwrap().payload[..],
            &body[..]
        );
    }
    let mut other = 7u32.to_le_bytes().to_vec();
    other.extend_from_slice(&v4);
    assert!(decode_one(0, &other).unwrap().is_none());
    assert_eq!(decode_one(108, &[0, 0]).unwrap_err().layer, "loop");
}

/// An NFLOG frame: header (family, version, resource id) and TLVs (length, type) in the given
/// byte order, the packet in an NFULA_PAYLOAD TLV after others, each value padded to 4 bytes.
fn nflog(family: u8, big_endian: bool, ip: &[u8]) -> Vec<u8> {
    let mut f = vec![family, 0, 0, 5];
    let tlvs: [(u16, &[u8]); 4] = [
        (1, &[0x08, 0x00, 3, 0]), // NFULA_PACKET_HDR: hw protocol, hook (local out)
        (10, b"x"),               // NFULA_PREFIX: 1 byte, padded
        (0x4000 | 9, ip),         // NFULA_PAYLOAD, with the NLA_F_NET_BYTEORDER flag
        (11, &[0, 0, 0, 0]),      // NFULA_UID after the payload
    ];
    for (ty, v) in tlvs {
        let len = (v.len() + 4) as u16;
        for x in [len, ty] {
            f.extend_from_slice(&if big_endian {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }
        f.extend_from_slice(v);
        f.resize(f.len().next_multiple_of(4), 0);
    }
    f
}

#[test]
fn nflog_payload_in_either_byte_order() {
    let body = payload(10);
    let v4 = ipv4(132, 1, (false, 0), &[], &body);
    let v6 = ipv6(132, &body);
    for (family, ip) in [(2u8, &v4), (10, &v6), (0, &v4)] {
        for big_endian in [false, true] {
            let f = nflog(family, big_endian, ip);
            let p = decode_one(239, &f).unwrap().unwrap();
            // The IP total length ends the packet: the padding and the TLV after it are not in.
            assert_eq!(
                (&p.payload[..], p.proto),
                (&body[..], 132),
                "{family} {big_endian}"
            );
        }
    }
    // No payload TLV: not IP; a TLV shorter than its header: an error naming its offset.
    let mut f = nflog(2, false, &v4);
    f.truncate(4 + 8 + 8);
    assert!(decode_one(239, &f).unwrap().is_none());
    let e = decode_one(239, &[2, 0, 0, 5, 2, 0, 9, 0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "nflog header at frame offset 4: TLV length 2 below its 4-byte header"
    );
    assert_eq!(decode_one(239, &[2, 0, 0]).unwrap_err().layer, "nflog");
}

/// The kernel's timestamp of an NFLOG frame (NFULA_TIMESTAMP: seconds and microseconds, 64 bits
/// each in network order), in either TLV byte order; none without the TLV or for another link.
#[test]
fn nflog_timestamp_tlv() {
    let v4 = ipv4(132, 1, (false, 0), &[], &payload(10));
    let plain = nflog(2, false, &v4);
    assert_eq!(super::nflog_timestamp(&plain), Some(None));
    assert_eq!(super::nflog_timestamp(&plain[..7]), None);
    for big_endian in [false, true] {
        let mut f = vec![2, 0, 0, 5];
        let (len, ty) = (20u16, 3u16);
        for x in [len, ty] {
            f.extend_from_slice(&if big_endian {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }
        f.extend_from_slice(&1_700_000_000u64.to_be_bytes());
        f.extend_from_slice(&123_456u64.to_be_bytes());
        f.extend_from_slice(&nflog(2, big_endian, &v4)[4..]);
        assert_eq!(
            super::nflog_timestamp(&f),
            Some(Some(1_700_000_000_123_456_000)),
            "{big_endian}"
        );
        assert_eq!(
            &decode_one(239, &f).unwrap().unwrap().payload[..],
            &payload(10)[..]
        );
    }
}

#[test]
fn unknown_linktype_and_non_ip() {
    let mut d = NetDecoder::new();
    let e = d.decode(&frame(147, &[0; 40], 0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "link header at frame offset 0: unsupported link type 147"
    );
    assert!(d
        .decode(&frame(1, &eth(0x0806, &[0; 28]), 0))
        .unwrap()
        .is_none());
    assert!(d
        .decode(&frame(1, &eth(0x88CC, &[0; 28]), 0))
        .unwrap()
        .is_none());
    assert!(d
        .decode(&frame(1, &eth(46, &[0; 46]), 0))
        .unwrap()
        .is_none()); // 802.3 length
    let e = d.decode(&frame(1, &[0; 13], 0)).unwrap_err();
    assert_eq!((e.layer, e.offset), ("ethernet", 0));
    let s = d.stats();
    assert_eq!(
        (s.frames, s.unsupported_linktype, s.non_ip, s.link_errors),
        (5, 1, 3, 1)
    );
}

#[test]
fn ipv4_options_and_errors() {
    let body = payload(16);
    // IHL 8: 12 bytes of options (NOP NOP ... EOL).
    let opts = [1u8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
    let f = eth(0x0800, &ipv4(132, 1, (false, 0), &opts, &body));
    expect_v4_sctp(&decode_one(1, &f).unwrap().unwrap(), &body);

    let mut bad = eth(0x0800, &ipv4(132, 1, (false, 0), &[], &body));
    bad[14] = 0x44;
    let mut d = NetDecoder::new();
    let e = d.decode(&frame(1, &bad, 0)).unwrap_err();
    assert_eq!(e.to_string(), "ipv4 header at frame offset 14: IHL 4 < 5");
    assert_eq!(d.stats().ipv4_errors, 1);
    // IHL 15 = 60 bytes, only 36 captured.
    bad[14] = 0x4F;
    let e = decode_one(1, &bad).unwrap_err();
    assert_eq!(
        e.kind,
        NetErrorKind::IhlBeyondPacket {
            ihl: 15,
            len: 60,
            have: 36
        }
    );
    // Total length below the header length.
    bad[14] = 0x45;
    bad[16..18].copy_from_slice(&10u16.to_be_bytes());
    assert!(matches!(
        decode_one(1, &bad).unwrap_err().kind,
        NetErrorKind::TotalLenTooSmall {
            total: 10,
            header: 20
        }
    ));
    // Total length 0 (segmentation offload): the captured bytes count.
    bad[16..18].copy_from_slice(&0u16.to_be_bytes());
    assert_eq!(decode_one(1, &bad).unwrap().unwrap().payload.len(), 16);
    // Truncated header.
    let e = decode_one(1, &bad[..14 + 12]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ipv4 header at frame offset 14: truncated: 20 bytes needed, 12 captured"
    );
}

#[test]
fn snaplen_cut_sets_missing() {
    let body = payload(100);
    let f = eth(0x0800, &ipv4(132, 1, (false, 0), &[], &body));
    let mut d = NetDecoder::new();
    let p = d.decode(&frame(1, &f[..14 + 20 + 30], 0)).unwrap().unwrap();
    assert_eq!((p.payload.len(), p.missing), (30, 70));
    let f6 = eth(0x86DD, &ipv6(132, &body));
    let p = d
        .decode(&frame(1, &f6[..14 + 40 + 12], 0))
        .unwrap()
        .unwrap();
    assert_eq!((p.payload.len(), p.missing), (12, 88));
    assert_eq!(d.stats().truncated, 2);
}

#[test]
fn ipv6_extension_headers() {
    let body = payload(24);
    // Hop-by-hop -> routing -> destination options -> AH -> SCTP.
    let mut rest = ext(43, 0);
    rest.extend(ext(60, 1));
    rest.extend(ext(51, 0));
    // AH (RFC 4302): payload len 4 => (4 + 2) * 4 = 24 bytes.
    let mut ah = vec![132, 4];
    ah.resize(24, 9);
    rest.extend(ah);
    rest.extend_from_slice(&body);
    let f = eth(0x86DD, &ipv6(0, &rest));
    let p = decode_one(1, &f).unwrap().unwrap();
    assert_eq!(p.proto, 132);
    assert_eq!(&p.payload[..], &body[..]);
    assert!(matches!(p.payload, Cow::Borrowed(_)));
    assert_eq!(p.ttl, 33);
    // No Next Header (59) stops the walk.
    let f = eth(0x86DD, &ipv6(59, &[]));
    let p = decode_one(1, &f).unwrap().unwrap();
    assert_eq!((p.proto, p.payload.len()), (59, 0));
    // Extension header longer than the payload length.
    let e = decode_one(1, &eth(0x86DD, &ipv6(60, &[6, 4, 0, 0, 0, 0, 0, 0]))).unwrap_err();
    assert_eq!((e.layer, e.offset), ("ipv6-ext", 54));
    assert!(matches!(
        e.kind,
        NetErrorKind::ExtBeyondPayload {
            next_header: 60,
            len: 40
        }
    ));
    // Atomic fragment (offset 0, M = 0; RFC 6946): a whole packet.
    let mut rest = frag6(132, 0, false, 77);
    rest.extend_from_slice(&body);
    let mut d = NetDecoder::new();
    let f = eth(0x86DD, &ipv6(44, &rest));
    let p = d.decode(&frame(1, &f, 0)).unwrap().unwrap();
    assert_eq!(
        (p.proto, &p.payload[..], p.reassembled),
        (132, &body[..], false)
    );
    assert_eq!(d.stats().fragments, 0);
}

#[test]
fn ipv4_ah_skipped() {
    let body = payload(8);
    let mut ah = vec![132, 4];
    ah.resize(24, 0);
    ah.extend_from_slice(&body);
    let f = eth(0x0800, &ipv4(51, 1, (false, 0), &[], &ah));
    let p = decode_one(1, &f).unwrap().unwrap();
    assert_eq!((p.proto, &p.payload[..]), (132, &body[..]));
}

#[test]
fn fuzzed_frames_never_panic() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let seeds = [
        eth(
            0x0800,
            &ipv4(132, 1, (true, 0), &[1, 1, 1, 0], &payload(40)),
        ),
        eth(
            0x86DD,
            &ipv6(
                0,
                &[&ext(44, 0)[..], &frag6(132, 8, true, 5), &payload(40)].concat(),
            ),
        ),
        sll(0x8100, 1, &[0, 1, 0x86, 0xDD]),
    ];
    let mut d = NetDecoder::new();
    for i in 0..20_000 {
        let mut f = seeds[i % seeds.len()].clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % f.len();
            f[at] = next() as u8;
        }
        f.truncate((next() as usize) % (f.len() + 1));
        let lt = [0u32, 1, 12, 101, 108, 113, 228, 229, 276][i % 9];
        let _ = d.decode(&frame(lt, &f, i as i64 * 1_000_000));
    }
}

/// Decodes a shared capture: (IP packets, SCTP packets, errors, decoder).
fn decode_file(rel: &str) -> Option<(u64, u64, u64, NetDecoder)> {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/captures"
    ))
    .join(rel);
    if !path.exists() {
        eprintln!("skipping: {} not found", path.display());
        return None;
    }
    let mut r = CaptureReader::open(&path).unwrap();
    let mut d = NetDecoder::new();
    let (mut ip, mut sctp, mut errors) = (0, 0, 0);
    while let Some(f) = r.next_frame() {
        match d.decode(&f) {
            Ok(Some(p)) => {
                ip += 1;
                if p.proto == 132 {
                    sctp += 1;
                }
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("{rel} frame {}: {e}", f.number);
                errors += 1;
            }
        }
    }
    Some((ip, sctp, errors, d))
}

#[test]
fn shared_captures_decode() {
    // tshark -Y sctp / -Y "ip||ipv6" counts.
    for rel in [
        "lab/fmt_sender.pcap",
        "lab/fmt_pcapng_sender.pcapng",
        "lab/fmt_nsec_sender.pcap",
        "lab/fmt_sll_sender.pcap",
        "lab/fmt_sll2_sender.pcap",
    ] {
        if let Some((ip, sctp, errors, _)) = decode_file(rel) {
            assert_eq!((ip, sctp, errors), (446, 446, 0), "{rel}");
        }
    }
    if let Some((ip, sctp, errors, d)) = decode_file("public/dreibh__netperfmeter__multi.pcap.gz") {
        assert_eq!((ip, sctp, errors), (16300, 3730, 0));
        assert_eq!(d.stats().fragments, 0);
    }
}

#[test]
fn shared_ip_fragments_reassembled() {
    // tshark -2: 190 datagrams reassembled (all UDP); most fragments appear twice.
    let Some((_, _, errors, d)) = decode_file("public/seladb__PcapPlusPlus__ip-frag.pcap") else {
        return;
    };
    let s = d.stats();
    assert_eq!(errors, 0);
    assert_eq!(s.reassembled, 190, "{s:?}");
    assert_eq!(s.frag_overlaps, 0, "{s:?}");
    // Two datagrams are incomplete at the end of the capture (no last / no first fragment).
    assert_eq!(d.pending_fragments(), 2, "{s:?}");
    assert_eq!(s.reassembly_timeouts, 0);
}

/// Everything a decoded packet carries, for comparing two decodings.
#[allow(clippy::type_complexity)]
fn fields<'a>(p: &'a IpPacket<'_>) -> (IpAddr, IpAddr, u8, u8, &'a [u8], usize, bool) {
    (
        p.src,
        p.dst,
        p.proto,
        p.ttl,
        &p.payload[..],
        p.missing,
        p.reassembled,
    )
}

/// The general path for an Ethernet frame: link slicing, then the IP parser.
fn general(data: &[u8]) -> Option<IpPacket<'_>> {
    match super::link::slice(super::link::LINKTYPE_ETHERNET, data).ok()? {
        super::link::Link::Ip { l3, offset } | super::link::Link::Mpls { l3, offset } => {
            match super::ip::parse(data, offset, l3).ok()? {
                super::ip::Parsed::Packet(p) => Some(p),
                super::ip::Parsed::Fragment(_) => None,
            }
        }
        super::link::Link::NonIp => None,
    }
}

#[test]
fn simple_ethernet_ipv4_path_equals_the_general_one() {
    let body = payload(60);
    let base = eth(0x0800, &ipv4(132, 7, (false, 0), &[], &body));
    let mut cases: Vec<Vec<u8>> = Vec::new();
    // Cut anywhere (short Ethernet, short IP header, payload cut by the snap length).
    for cut in 0..=base.len() {
        cases.push(base[..cut].to_vec());
    }
    // Ethernet padding after the IP packet.
    let mut padded = base.clone();
    padded.extend_from_slice(&[0; 10]);
    cases.push(padded);
    // Total Length 0 (segmentation offload), below the header, shorter and longer than captured.
    for total in [0u16, 19, 20, 21, 50, 80, 200] {
        let mut f = base.clone();
        f[16..18].copy_from_slice(&total.to_be_bytes());
        cases.push(f);
    }
    // Flags: DF alone stays simple; MF or an offset make a fragment.
    for flags in [0x4000u16, 0x2000, 0x0001, 0x6000, 0x8000] {
        let mut f = base.clone();
        f[20..22].copy_from_slice(&flags.to_be_bytes());
        cases.push(f);
    }
    // Options, AH, other protocols, other EtherTypes, VLAN, IPv6, wrong version.
    cases.push(eth(0x0800, &ipv4(132, 7, (false, 0), &[1, 1, 1, 0], &body)));
    cases.push(eth(
        0x0800,
        &ipv4(
            51,
            7,
            (false, 0),
            &[],
            &[
                132, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ),
    ));
    cases.push(eth(0x0800, &ipv4(6, 7, (false, 0), &[], &body)));
    cases.push(eth(0x0806, &body));
    cases.push(eth(
        0x8100,
        &[0, 5, 0x08, 0x00]
            .iter()
            .copied()
            .chain(ipv4(132, 7, (false, 0), &[], &body))
            .collect::<Vec<_>>(),
    ));
    cases.push(eth(0x86DD, &ipv6(132, &body)));
    let mut v6in4 = base.clone();
    v6in4[14] = 0x65;
    cases.push(v6in4);
    let mut simple = 0;
    for (i, c) in cases.iter().enumerate() {
        let Some(fast) = super::ip::ethernet_ipv4_simple(c) else {
            continue;
        };
        simple += 1;
        let g = general(c)
            .unwrap_or_else(|| panic!("case {i}: fast path took a frame the general path rejects"));
        assert_eq!(fields(&fast), fields(&g), "case {i}");
    }
    assert!(simple > 20, "{simple}");
    // And on real frames: every frame of a lab capture.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../sample-traces/cut_p20_sack40_sender.pcap"
    );
    let mut r = crate::capture::CaptureReader::open(path.as_ref()).unwrap();
    let mut n = 0;
    while let Some(f) = r.next_frame() {
        let fast = super::ip::ethernet_ipv4_simple(f.data).expect("a plain Ethernet IPv4 frame");
        assert_eq!(fields(&fast), fields(&general(f.data).unwrap()));
        n += 1;
    }
    assert!(n > 400, "{n}");
}
