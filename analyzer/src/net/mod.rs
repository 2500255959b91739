//! Link, network and transport-layer slicing from a captured frame down to an SCTP or TCP payload.
//!
//! [`NetDecoder::decode`] strips the link header (Ethernet with VLAN tags, Linux SLL / SLL2,
//! BSD null / loop, raw IP), parses IPv4 / IPv6 (options, extension headers), cuts the payload to
//! the IP length and the capture, reassembles fragments, and follows tunnels to the packet they
//! carry (`tunnel`: VXLAN, GENEVE, GRE and ERSPAN, IP in IP, MPLS). Unfragmented packets borrow
//! the frame's bytes: the per-frame path allocates nothing.

use std::borrow::Cow;
use std::net::IpAddr;

use crate::capture::Frame;

mod addr_text;
mod defrag;
mod error;
mod ip;
mod link;
pub use link::{nflog_timestamp, sll_packet_type, sll_packet_type_name, LINKTYPE_NFLOG};
pub mod transport;
pub mod tunnel;

#[cfg(test)]
mod tests;

pub use addr_text::{ip_text, Ip};
pub use error::{NetError, NetErrorKind};

/// An address from its network-order bytes: 4 for IPv4, 16 for IPv6 (as a batch keeps them).
#[inline]
pub fn ip_from_octets(b: &[u8]) -> IpAddr {
    match <[u8; 4]>::try_from(b) {
        Ok(v4) => IpAddr::from(v4),
        Err(_) => {
            let v6: [u8; 16] = b.try_into().expect("an address is 4 or 16 bytes");
            IpAddr::from(v6)
        }
    }
}

/// An IP packet (after fragment reassembly) handed to the transport layer.
#[derive(Debug, Clone)]
pub struct IpPacket<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IP protocol number / IPv6 next header of the transport payload (132 SCTP, 6 TCP, 17 UDP).
    pub proto: u8,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 Identification (RFC 791 3.1, the same in every copy of one datagram); 0 for IPv6,
    /// which has none outside a Fragment header.
    pub ip_id: u16,
    /// The transport payload, cut to what was captured. Owned only when it was reassembled.
    pub payload: Cow<'a, [u8]>,
    /// Bytes of the transport payload that the IP header announced but the capture cut off.
    pub missing: usize,
    /// True when this payload was rebuilt from fragments.
    pub reassembled: bool,
}

/// Counters of what the decoder saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct NetStats {
    /// Frames passed to `decode`.
    pub frames: u64,
    /// IPv4 / IPv6 headers parsed (fragments included).
    pub ipv4: u64,
    pub ipv6: u64,
    /// Frames without IP (ARP, LLDP, 802.3/LLC, netlink, ...).
    pub non_ip: u64,
    /// Packets handed on with `missing > 0` (cut by the snap length).
    pub truncated: u64,
    /// Fragments seen, datagrams reassembled from them.
    pub fragments: u64,
    pub reassembled: u64,
    /// Exact duplicate fragments dropped (e.g. "any" captures seeing a packet twice).
    pub frag_duplicates: u64,
    /// Fragments overlapping earlier ones (IPv6: datagram dropped; IPv4: first data kept).
    pub frag_overlaps: u64,
    /// Fragments discarded: bad length or offset, disagreeing with the datagram length, part
    /// of a dropped IPv6 datagram, or too many pieces.
    pub frag_dropped: u64,
    /// Incomplete datagrams dropped after the reassembly timeout (capture time).
    pub reassembly_timeouts: u64,
    /// Incomplete datagrams evicted because too many were pending.
    pub reassembly_evictions: u64,
    /// Errors per layer.
    pub link_errors: u64,
    pub ipv4_errors: u64,
    pub ipv6_errors: u64,
    /// Frames of a link type the decoder does not know.
    pub unsupported_linktype: u64,
    /// Packets taken out of a tunnel, by `tunnel::Kind` (in `Kind::ALL` order), and those taken
    /// from under an MPLS label stack.
    pub tunnels: [u64; 5],
    pub mpls: u64,
    /// The tunnels themselves (outer addresses and identifier), the first `MAX_SESSIONS`.
    pub sessions: Vec<tunnel::Session>,
}

/// Tunnels inside tunnels followed at most (a mirror of tunnelled traffic is two deep).
const MAX_TUNNEL_DEPTH: u8 = 4;

/// Slices frames down to IP payloads, reassembling fragments.
#[derive(Debug, Default)]
pub struct NetDecoder {
    defrag: defrag::Defrag,
    stats: NetStats,
}

impl NetDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Slices link + IP. Ok(None) for frames that carry no IP payload (ARP, LLDP, ...) and for
    /// fragments still waiting for the rest. A tunnelled packet is the one inside.
    pub fn decode<'a>(&mut self, frame: &Frame<'a>) -> Result<Option<IpPacket<'a>>, NetError> {
        self.stats.frames += 1;
        self.defrag.expire(frame.ts_ns, &mut self.stats);
        let data: &'a [u8] = frame.data;
        // The common frame (Ethernet, plain IPv4) by the short path, which gives what link
        // slicing and the IP parser below would.
        if frame.linktype == link::LINKTYPE_ETHERNET {
            if let Some(p) = ip::ethernet_ipv4_simple(data) {
                let p = self.counted(p);
                return self.tunnelled(p, frame.ts_ns, 0);
            }
        }
        let link = link::slice(frame.linktype, data);
        self.linked(data, link, frame.ts_ns, 0)
    }

    /// The IP packet after a sliced link header (out of line: `decode`'s common frame stays
    /// short).
    #[inline(never)]
    fn linked<'a>(
        &mut self,
        data: &'a [u8],
        link: Result<link::Link, NetError>,
        ts_ns: i64,
        depth: u8,
    ) -> Result<Option<IpPacket<'a>>, NetError> {
        let (l3, offset) = match link {
            Ok(link::Link::Ip { l3, offset }) => (l3, offset),
            Ok(link::Link::Mpls { l3, offset }) => {
                self.stats.mpls += 1;
                (l3, offset)
            }
            Ok(link::Link::NonIp) => {
                self.stats.non_ip += 1;
                return Ok(None);
            }
            Err(e) => {
                if matches!(e.kind, NetErrorKind::UnsupportedLinktype(_)) {
                    self.stats.unsupported_linktype += 1;
                } else {
                    self.stats.link_errors += 1;
                }
                return Err(e);
            }
        };
        let parsed = ip::parse(data, offset, l3).inspect_err(|e| self.count_error(e))?;
        match parsed {
            ip::Parsed::Packet(p) => {
                let p = self.counted(p);
                self.tunnelled(p, ts_ns, depth)
            }
            ip::Parsed::Fragment(f) => {
                self.count_ip(&f.key.src);
                let Some(r) = self.defrag.push(&f, ts_ns, &mut self.stats) else {
                    return Ok(None);
                };
                let p = ip::reassembled(&f.key, r, f.v6, f.payload_offset)
                    .inspect_err(|e| self.count_error(e))?;
                if p.missing > 0 {
                    self.stats.truncated += 1;
                }
                self.tunnelled(p, ts_ns, depth)
            }
        }
    }

    /// `p`, or the packet its tunnel carries (`tunnel::inner`), decoded in turn.
    #[inline(always)]
    fn tunnelled<'a>(
        &mut self,
        p: IpPacket<'a>,
        ts_ns: i64,
        depth: u8,
    ) -> Result<Option<IpPacket<'a>>, NetError> {
        // The common case at one compare: no tunnel protocol.
        if !tunnel::may_carry(p.proto) || depth >= MAX_TUNNEL_DEPTH {
            return Ok(Some(p));
        }
        self.open_tunnel(p, ts_ns, depth)
    }

    /// `tunnelled` for a packet of a tunnel protocol (out of line: rare, and recursive).
    #[inline(never)]
    fn open_tunnel<'a>(
        &mut self,
        p: IpPacket<'a>,
        ts_ns: i64,
        depth: u8,
    ) -> Result<Option<IpPacket<'a>>, NetError> {
        let Some(tunnel::Inner {
            kind,
            carried,
            at,
            id,
        }) = tunnel::inner(p.proto, &p.payload)
        else {
            return Ok(Some(p));
        };
        self.stats.tunnels[kind as usize] += 1;
        let sessions = &mut self.stats.sessions;
        let same =
            |s: &tunnel::Session| s.kind == kind && s.id == id && s.src == p.src && s.dst == p.dst;
        if let Some(s) = sessions.iter_mut().find(|s| same(s)) {
            s.packets += 1;
        } else if sessions.len() < tunnel::MAX_SESSIONS {
            sessions.push(tunnel::Session {
                kind,
                src: p.src,
                dst: p.dst,
                id,
                packets: 1,
            });
        }
        match p.payload {
            Cow::Borrowed(b) => self.carried(&b[at..], carried, ts_ns, depth + 1),
            Cow::Owned(v) => {
                // Reassembled: what is inside is copied out of the rebuilt datagram.
                let inner = self.carried(&v[at..], carried, ts_ns, depth + 1)?;
                Ok(inner.map(owned))
            }
        }
    }

    /// The packet a tunnel carries, from the start of its payload.
    fn carried<'a>(
        &mut self,
        data: &'a [u8],
        carried: tunnel::Carried,
        ts_ns: i64,
        depth: u8,
    ) -> Result<Option<IpPacket<'a>>, NetError> {
        let ip_at = |l3| Ok(link::Link::Ip { l3, offset: 0 });
        let link = match carried {
            tunnel::Carried::Ethernet => link::slice(link::LINKTYPE_ETHERNET, data),
            tunnel::Carried::Ipv4 => ip_at(link::L3::Ipv4),
            tunnel::Carried::Ipv6 => ip_at(link::L3::Ipv6),
            tunnel::Carried::Mpls => link::mpls(data, 0),
        };
        self.linked(data, link, ts_ns, depth)
    }

    pub fn stats(&self) -> &NetStats {
        &self.stats
    }

    /// Datagrams whose reassembly is in progress.
    pub fn pending_fragments(&self) -> usize {
        self.defrag.pending()
    }

    /// An unfragmented packet, counted.
    #[inline]
    fn counted<'a>(&mut self, p: IpPacket<'a>) -> IpPacket<'a> {
        self.count_ip(&p.src);
        if p.missing > 0 {
            self.stats.truncated += 1;
        }
        p
    }

    fn count_ip(&mut self, src: &IpAddr) {
        match src {
            IpAddr::V4(_) => self.stats.ipv4 += 1,
            IpAddr::V6(_) => self.stats.ipv6 += 1,
        }
    }

    fn count_error(&mut self, e: &NetError) {
        if e.layer.starts_with("ipv4") {
            self.stats.ipv4_errors += 1;
        } else if e.layer.starts_with("ipv6") {
            self.stats.ipv6_errors += 1;
        } else {
            self.stats.link_errors += 1;
        }
    }
}

/// `p` with its payload owned (out of a buffer about to go).
fn owned(p: IpPacket<'_>) -> IpPacket<'static> {
    IpPacket {
        src: p.src,
        dst: p.dst,
        proto: p.proto,
        ttl: p.ttl,
        ip_id: p.ip_id,
        payload: Cow::Owned(p.payload.into_owned()),
        missing: p.missing,
        reassembled: p.reassembled,
    }
}
