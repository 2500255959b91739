//! Tunnels a mirrored or carried packet comes in: what follows an IP packet's header when that
//! is itself a packet to analyse (VXLAN, GENEVE, GRE with ERSPAN or bridged Ethernet, IP in IP),
//! so that a capture taken from a traffic mirror (cloud mirroring sessions deliver VXLAN or
//! GENEVE, switches ERSPAN) shows the SCTP associations inside.

use std::net::IpAddr;

use super::link::{ET_IPV4, ET_IPV6, ET_MPLS};
use super::transport;

/// IP protocol numbers (IANA).
const IPPROTO_IPIP: u8 = 4;
const IPPROTO_IPV6: u8 = 41;
const IPPROTO_GRE: u8 = 47;
const IPPROTO_UDP: u8 = 17;

/// UDP destination ports (IANA): VXLAN (RFC 7348 5), VXLAN-GPE, GENEVE (RFC 8926 3.3).
const PORT_VXLAN: u16 = 4789;
const PORT_VXLAN_GPE: u16 = 4790;
const PORT_GENEVE: u16 = 6081;

/// GRE protocol types (EtherTypes) beside IPv4, IPv6 and MPLS unicast (RFC 4023): transparent
/// Ethernet bridging (RFC 1701), ERSPAN type I / II and type III.
const ET_TEB: u16 = 0x6558;
const ET_ERSPAN_2: u16 = 0x88BE;
const ET_ERSPAN_3: u16 = 0x22EB;

/// The kinds of tunnel told apart in the capture's counters (`kind as usize` indexes them, in
/// `Kind::ALL` order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Kind {
    Vxlan = 0,
    Geneve = 1,
    Gre = 2,
    Erspan = 3,
    IpInIp = 4,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Vxlan,
        Kind::Geneve,
        Kind::Gre,
        Kind::Erspan,
        Kind::IpInIp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Vxlan => "VXLAN",
            Kind::Geneve => "GENEVE",
            Kind::Gre => "GRE",
            Kind::Erspan => "ERSPAN",
            Kind::IpInIp => "IP in IP",
        }
    }
}

/// Tunnel sessions told apart per capture (further ones are only counted by kind).
pub const MAX_SESSIONS: usize = 16;

/// One tunnel as the capture shows it: its kind, outer addresses and identifier, and the
/// packets taken out of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Session {
    pub kind: Kind,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// VXLAN / GENEVE VNI, GRE key, ERSPAN session ID (None: the tunnel has none).
    pub id: Option<u32>,
    pub packets: u64,
}

impl Session {
    /// "VXLAN VNI 42 192.0.2.1 -> 192.0.2.2 (257 packets)".
    pub fn describe(&self) -> String {
        let id = match (self.kind, self.id) {
            (Kind::Vxlan | Kind::Geneve, Some(v)) => format!(" VNI {v}"),
            (Kind::Gre, Some(k)) => format!(" key {k}"),
            (Kind::Erspan, Some(s)) => format!(" session {s}"),
            _ => String::new(),
        };
        format!(
            "{}{id} {} -> {} ({} packets)",
            self.kind.name(),
            super::Ip(self.src),
            super::Ip(self.dst),
            self.packets
        )
    }
}

/// What the tunnel carries, from the start of its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    Ethernet,
    Ipv4,
    Ipv6,
    /// An MPLS label stack (RFC 3032) with IP under it.
    Mpls,
}

/// Whether an IP payload of protocol `proto` may be a tunnel (`inner` decides).
#[inline(always)]
pub(crate) fn may_carry(proto: u8) -> bool {
    matches!(
        proto,
        IPPROTO_IPIP | IPPROTO_UDP | IPPROTO_IPV6 | IPPROTO_GRE
    )
}

/// The packet a tunnel carries, as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inner {
    pub(crate) kind: Kind,
    pub(crate) carried: Carried,
    /// Where the carried packet starts in the outer IP payload.
    pub(crate) at: usize,
    /// The tunnel's identifier: VXLAN / GENEVE VNI (RFC 7348 5, RFC 8926 3.4), GRE key (RFC
    /// 2890 2.1), ERSPAN session ID (types II and III); None when it has none.
    pub(crate) id: Option<u32>,
}

/// The inner packet of an IP payload of protocol `proto`. None when the payload is no tunnel (or
/// one this does not follow).
pub(crate) fn inner(proto: u8, payload: &[u8]) -> Option<Inner> {
    let plain = |kind, carried| Inner {
        kind,
        carried,
        at: 0,
        id: None,
    };
    match proto {
        // RFC 2003 (IPv4 in IPv4), RFC 2473 / 4213 (IPv6 in IP).
        IPPROTO_IPIP => Some(plain(Kind::IpInIp, Carried::Ipv4)),
        IPPROTO_IPV6 => Some(plain(Kind::IpInIp, Carried::Ipv6)),
        IPPROTO_GRE => gre(payload),
        IPPROTO_UDP => udp(payload),
        _ => None,
    }
}

/// GRE (RFC 2784 2, with RFC 2890's key and sequence number): 4 bytes, then 4 for the checksum
/// when C is set, 4 for the key when K is, 4 for the sequence number when S is. Version 0 only
/// (version 1 is PPTP's, carrying PPP); source routing (RFC 1701's R bit) is not followed.
fn gre(p: &[u8]) -> Option<Inner> {
    let h = p.get(..4)?;
    let (flags, version) = (h[0], h[1] & 0x07);
    if version != 0 || flags & 0x40 != 0 {
        return None;
    }
    let seq = flags & 0x10 != 0;
    let csum = 4 * usize::from(flags & 0x80 != 0);
    let key = (flags & 0x20 != 0)
        .then(|| p.get(4 + csum..8 + csum))
        .flatten()
        .map(|k| u32::from_be_bytes([k[0], k[1], k[2], k[3]]));
    let len = 4 + csum + 4 * usize::from(flags & 0x20 != 0) + 4 * usize::from(seq);
    // An ERSPAN header's session ID: the low 10 bits of its second 16-bit word (types II, III).
    let session = |e: &[u8]| Some(u32::from(u16::from_be_bytes([e[2], e[3]]) & 0x03FF));
    let (kind, carried, at, id) = match u16::from_be_bytes([h[2], h[3]]) {
        ET_IPV4 => (Kind::Gre, Carried::Ipv4, len, key),
        ET_IPV6 => (Kind::Gre, Carried::Ipv6, len, key),
        ET_TEB => (Kind::Gre, Carried::Ethernet, len, key),
        ET_MPLS => (Kind::Gre, Carried::Mpls, len, key),
        // ERSPAN type II: an 8-byte header (version 1) after a GRE header with a sequence
        // number; type I has neither (draft-foschiano-erspan 4.1, 4.2).
        ET_ERSPAN_2 if seq => {
            let e = p.get(len..len + 4)?;
            if e[0] >> 4 != 1 {
                return None;
            }
            (Kind::Erspan, Carried::Ethernet, len + 8, session(e))
        }
        ET_ERSPAN_2 => (Kind::Erspan, Carried::Ethernet, len, None),
        // ERSPAN type III: a 12-byte header (version 2), 8 more when its O bit (the last bit
        // of the header) says a platform-specific subheader follows (draft 4.3).
        ET_ERSPAN_3 => {
            let e = p.get(len..len + 12)?;
            if e[0] >> 4 != 2 {
                return None;
            }
            let sub = if e[11] & 0x01 != 0 { 8 } else { 0 };
            let id = if seq { session(e) } else { None };
            (Kind::Erspan, Carried::Ethernet, len + 12 + sub, id)
        }
        _ => return None,
    };
    (at <= p.len()).then_some(Inner {
        kind,
        carried,
        at,
        id,
    })
}

/// UDP tunnels, by destination port: VXLAN (RFC 7348 5: 8 bytes, the I flag set, then an
/// Ethernet frame), VXLAN-GPE (its next-protocol byte: 1 IPv4, 2 IPv6, 3 Ethernet, 5 MPLS),
/// GENEVE (RFC 8926 3.4: version 0, 8 bytes + options of 4-byte words, then the protocol type).
fn udp(p: &[u8]) -> Option<Inner> {
    let (_, dst, payload) = transport::udp(p)?;
    // Where the UDP payload starts in `p` (the UDP header is 8 bytes).
    let base = 8;
    let h = payload.get(..8)?;
    let (kind, carried, len) = match dst {
        PORT_VXLAN => {
            if h[0] & 0x08 == 0 {
                return None;
            }
            (Kind::Vxlan, Carried::Ethernet, 8)
        }
        PORT_VXLAN_GPE => {
            let carried = match h[3] {
                1 => Carried::Ipv4,
                2 => Carried::Ipv6,
                3 => Carried::Ethernet,
                5 => Carried::Mpls,
                _ => return None,
            };
            (Kind::Vxlan, carried, 8)
        }
        PORT_GENEVE => {
            if h[0] >> 6 != 0 {
                return None;
            }
            let len = 8 + 4 * usize::from(h[0] & 0x3F);
            let carried = match u16::from_be_bytes([h[2], h[3]]) {
                ET_TEB => Carried::Ethernet,
                ET_IPV4 => Carried::Ipv4,
                ET_IPV6 => Carried::Ipv6,
                ET_MPLS => Carried::Mpls,
                _ => return None,
            };
            (Kind::Geneve, carried, len)
        }
        _ => return None,
    };
    // VXLAN, VXLAN-GPE and GENEVE alike: a 24-bit VNI after 4 header bytes.
    let vni = u32::from_be_bytes([0, h[4], h[5], h[6]]);
    (len <= payload.len()).then_some(Inner {
        kind,
        carried,
        at: base + len,
        id: Some(vni),
    })
}

#[cfg(test)]
mod tests {
    use super::{Carried, Kind};

    fn udp_packet(dst: u16, header: &[u8], inner: &[u8]) -> Vec<u8> {
        crate::net::tests::udp(dst, &[header, inner].concat())
    }

    /// What the tunnel carries and where, from `super::inner`.
    fn inner(proto: u8, p: &[u8]) -> Option<(Kind, Carried, usize)> {
        super::inner(proto, p).map(|i| (i.kind, i.carried, i.at))
    }

    /// The tunnel's identifier, from `super::inner`.
    fn id(proto: u8, p: &[u8]) -> Option<u32> {
        super::inner(proto, p)?.id
    }

    #[test]
    fn vxlan_and_geneve_carry_ethernet_after_their_headers() {
        // RFC 7348 5: flags 0x08 (I), VNI 100.
        let p = udp_packet(4789, &[0x08, 0, 0, 0, 0, 0, 100, 0], &[0xAA; 14]);
        assert_eq!(inner(17, &p), Some((Kind::Vxlan, Carried::Ethernet, 16)));
        // The I flag clear: no VXLAN.
        let p = udp_packet(4789, &[0, 0, 0, 0, 0, 0, 100, 0], &[0xAA; 14]);
        assert_eq!(inner(17, &p), None);
        // GENEVE with 2 words of options, bridged Ethernet.
        let p = udp_packet(6081, &[0x02, 0, 0x65, 0x58, 0, 0, 1, 0], &[0xBB; 22]);
        assert_eq!(inner(17, &p), Some((Kind::Geneve, Carried::Ethernet, 24)));
        // GENEVE with IPv4 right after.
        let p = udp_packet(6081, &[0, 0, 0x08, 0x00, 0, 0, 1, 0], &[0x45; 20]);
        assert_eq!(inner(17, &p), Some((Kind::Geneve, Carried::Ipv4, 16)));
        // Options longer than the packet.
        let p = udp_packet(6081, &[0x3F, 0, 0x65, 0x58, 0, 0, 1, 0], &[0xBB; 22]);
        assert_eq!(inner(17, &p), None);
        // VXLAN-GPE with IPv6.
        let p = udp_packet(4790, &[0x0C, 0, 0, 2, 0, 0, 1, 0], &[0x60; 40]);
        assert_eq!(inner(17, &p), Some((Kind::Vxlan, Carried::Ipv6, 16)));
        // Another port: no tunnel.
        let p = udp_packet(9899, &[0x08, 0, 0, 0, 0, 0, 100, 0], &[0xAA; 14]);
        assert_eq!(inner(17, &p), None);
    }

    #[test]
    fn gre_headers_by_their_flags_and_protocol_type() {
        // Plain GRE with IPv4.
        let mut p = vec![0, 0, 0x08, 0x00];
        p.extend_from_slice(&[0x45; 20]);
        assert_eq!(inner(47, &p), Some((Kind::Gre, Carried::Ipv4, 4)));
        // Checksum and key present (RFC 2890): 12 bytes, bridged Ethernet.
        let mut p = vec![0xA0, 0, 0x65, 0x58, 0, 0, 0, 0, 0, 0, 0, 7];
        p.extend_from_slice(&[0xAA; 14]);
        assert_eq!(inner(47, &p), Some((Kind::Gre, Carried::Ethernet, 12)));
        // ERSPAN type II: sequence number, then the 8-byte ERSPAN header (version 1).
        let mut p = vec![
            0x10, 0, 0x88, 0xBE, 0, 0, 0, 1, 0x10, 0x01, 0, 0, 0, 0, 0, 0,
        ];
        p.extend_from_slice(&[0xAA; 14]);
        assert_eq!(inner(47, &p), Some((Kind::Erspan, Carried::Ethernet, 16)));
        // ERSPAN type I: no sequence number, no ERSPAN header.
        let mut p = vec![0, 0, 0x88, 0xBE];
        p.extend_from_slice(&[0xAA; 14]);
        assert_eq!(inner(47, &p), Some((Kind::Erspan, Carried::Ethernet, 4)));
        // ERSPAN type III with the platform subheader (O bit).
        let mut p = vec![0x10, 0, 0x22, 0xEB, 0, 0, 0, 1];
        let mut e3 = [0u8; 12];
        e3[0] = 0x20;
        e3[11] = 0x01;
        p.extend_from_slice(&e3);
        p.extend_from_slice(&[0; 8]);
        p.extend_from_slice(&[0xAA; 14]);
        assert_eq!(inner(47, &p), Some((Kind::Erspan, Carried::Ethernet, 28)));
        // Version 1 (PPTP) and source routing are not followed.
        assert_eq!(inner(47, &[0x30, 0x81, 0x88, 0x0B, 0, 0, 0, 0]), None);
        assert_eq!(inner(47, &[0x40, 0, 0x08, 0x00, 0, 0, 0, 0]), None);
        // Cut before its header ends.
        assert_eq!(inner(47, &[0xB0, 0, 0x08, 0x00, 0, 0]), None);
    }

    #[test]
    fn session_identifiers() {
        let p = udp_packet(4789, &[0x08, 0, 0, 0, 0, 0, 42, 0], &[0xAA; 14]);
        assert_eq!(id(17, &p), Some(42));
        let p = udp_packet(6081, &[0, 0, 0x65, 0x58, 0x01, 0x02, 0x03, 0], &[0xBB; 14]);
        assert_eq!(id(17, &p), Some(0x010203));
        // GRE with checksum and key 7.
        let p = [0xA0, 0, 0x65, 0x58, 0, 0, 0, 0, 0, 0, 0, 7];
        assert_eq!(id(47, &p), Some(7));
        // GRE without a key: none.
        assert_eq!(id(47, &[0, 0, 0x08, 0x00]), None);
        // ERSPAN type II, session 0x155 (the low 10 bits after VLAN and COS / En / T).
        let p = [
            0x10, 0, 0x88, 0xBE, 0, 0, 0, 1, 0x10, 0x01, 0xFD, 0x55, 0, 0, 0, 0,
        ];
        assert_eq!(id(47, &p), Some(0x155));
        assert_eq!(id(4, &[0x45]), None);
    }

    #[test]
    fn ip_in_ip_starts_at_once() {
        assert_eq!(inner(4, &[0x45]), Some((Kind::IpInIp, Carried::Ipv4, 0)));
        assert_eq!(inner(41, &[0x60]), Some((Kind::IpInIp, Carried::Ipv6, 0)));
        assert_eq!(inner(132, &[0; 12]), None);
        assert_eq!(inner(6, &[0; 20]), None);
    }
}
