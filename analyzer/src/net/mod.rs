//! Link, network and transport-layer slicing from a captured frame down to an SCTP or TCP payload.
//!
//! [`NetDecoder::decode`] strips the link header (Ethernet with VLAN tags, Linux SLL / SLL2,
//! BSD null / loop, raw IP), parses IPv4 / IPv6 (options, extension headers), cuts the payload to
//! the IP length and the capture, and reassembles fragments. Unfragmented packets borrow the
//! frame's bytes: the per-frame path allocates nothing.

use std::borrow::Cow;
use std::net::IpAddr;

use crate::capture::Frame;

mod addr_text;
mod defrag;
mod error;
mod ip;
mod link;
pub use link::{sll_packet_type, sll_packet_type_name};
pub mod transport;

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
}

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
    /// fragments still waiting for the rest.
    pub fn decode<'a>(&mut self, frame: &Frame<'a>) -> Result<Option<IpPacket<'a>>, NetError> {
        self.stats.frames += 1;
        self.defrag.expire(frame.ts_ns, &mut self.stats);
        let data: &'a [u8] = frame.data;
        // The common frame (Ethernet, plain IPv4) by the short path, which gives what link
        // slicing and the IP parser below would.
        if frame.linktype == link::LINKTYPE_ETHERNET {
            if let Some(p) = ip::ethernet_ipv4_simple(data) {
                return Ok(Some(self.counted(p)));
            }
        }
        let (l3, offset) = match link::slice(frame.linktype, data) {
            Ok(link::Link::Ip { l3, offset }) => (l3, offset),
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
            ip::Parsed::Packet(p) => Ok(Some(self.counted(p))),
            ip::Parsed::Fragment(f) => {
                self.count_ip(&f.key.src);
                let Some(r) = self.defrag.push(&f, frame.ts_ns, &mut self.stats) else {
                    return Ok(None);
                };
                let p = ip::reassembled(&f.key, r, f.v6, f.payload_offset)
                    .inspect_err(|e| self.count_error(e))?;
                if p.missing > 0 {
                    self.stats.truncated += 1;
                }
                Ok(Some(p))
            }
        }
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
