//! Serial-line link types on hand-built frames: Cisco HDLC (104) and PPP (9, 50) with and
//! without address / control and protocol field compression, IPv6 and MPLS under them, cut
//! headers and non-IP protocols.

use super::{decode_one, expect_v4_sctp, ipv4, ipv6, payload};

#[test]
fn cisco_hdlc_carries_an_ethertype() {
    let body = payload(20);
    let ip = ipv4(132, 1, (false, 0), &[], &body);
    // Unicast (0x0F) and broadcast (0x8F) address, control 0, EtherType.
    for address in [0x0F, 0x8F] {
        let mut f = vec![address, 0x00, 0x08, 0x00];
        f.extend_from_slice(&ip);
        expect_v4_sctp(&decode_one(104, &f).unwrap().unwrap(), &body);
    }
    let mut v6 = vec![0x0F, 0x00, 0x86, 0xDD];
    v6.extend_from_slice(&ipv6(132, &body));
    assert_eq!(decode_one(104, &v6).unwrap().unwrap().proto, 132);
    // MPLS (one label, bottom of stack) over Cisco HDLC.
    let mut mpls = vec![0x0F, 0x00, 0x88, 0x47, 0x00, 0x01, 0x01, 0x40];
    mpls.extend_from_slice(&ip);
    expect_v4_sctp(&decode_one(104, &mpls).unwrap().unwrap(), &body);
    // SLARP (0x8035, Cisco keepalives) is not IP; a cut header is an error at offset 0.
    assert!(decode_one(104, &[0x8F, 0x00, 0x80, 0x35, 0, 0, 0, 2])
        .unwrap()
        .is_none());
    let e = decode_one(104, &[0x0F, 0x00, 0x08]).unwrap_err();
    assert_eq!((e.layer, e.offset), ("c_hdlc", 0));
    // Cisco PPP with HDLC framing under LINKTYPE_PPP_HDLC (50): told by its address byte.
    let mut cisco_ppp = vec![0x8F, 0x00, 0x08, 0x00];
    cisco_ppp.extend_from_slice(&ip);
    expect_v4_sctp(&decode_one(50, &cisco_ppp).unwrap().unwrap(), &body);
}

#[test]
fn ppp_with_and_without_compressed_fields() {
    let body = payload(20);
    let ip = ipv4(132, 1, (false, 0), &[], &body);
    for linktype in [9, 50] {
        // Address and control, two-byte protocol (RFC 1662 3.1); no address and control (ACFC,
        // RFC 1661 6.6); one-byte protocol (PFC, RFC 1661 6.5); both compressed.
        for head in [
            &[0xFF, 0x03, 0x00, 0x21][..],
            &[0x00, 0x21],
            &[0xFF, 0x03, 0x21],
            &[0x21],
        ] {
            let mut f = head.to_vec();
            f.extend_from_slice(&ip);
            expect_v4_sctp(&decode_one(linktype, &f).unwrap().unwrap(), &body);
        }
        let mut v6 = vec![0xFF, 0x03, 0x00, 0x57];
        v6.extend_from_slice(&ipv6(132, &body));
        assert_eq!(decode_one(linktype, &v6).unwrap().unwrap().proto, 132);
        let mut mpls = vec![0xFF, 0x03, 0x02, 0x81, 0x00, 0x01, 0x01, 0x40];
        mpls.extend_from_slice(&ip);
        expect_v4_sctp(&decode_one(linktype, &mpls).unwrap().unwrap(), &body);
        // LCP (0xC021) is not IP.
        assert!(decode_one(linktype, &[0xFF, 0x03, 0xC0, 0x21, 1, 1, 0, 4])
            .unwrap()
            .is_none());
        // Cut inside the protocol field.
        for cut in [&[0xFF, 0x03][..], &[0xFF, 0x03, 0x00], &[0x00]] {
            let e = decode_one(linktype, cut).unwrap_err();
            assert_eq!((e.layer, e.offset), ("ppp", 0), "{cut:?}");
        }
    }
}
