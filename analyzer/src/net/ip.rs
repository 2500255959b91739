//! IPv4 (RFC 791) and IPv6 (RFC 8200) headers: addresses, payload bounds, extension headers,
//! and fragment detection. The common path borrows everything from the frame.

use std::borrow::Cow;
use std::net::IpAddr;

use etherparse::err::{ipv4, ipv6};
use etherparse::{Ipv4HeaderSlice, Ipv6HeaderSlice};

use super::defrag::{FragIn, FragKey, Reassembled};
use super::error::{NetError, NetErrorKind};
use super::link::L3;
use super::IpPacket;

/// IP protocol numbers (IANA "Assigned Internet Protocol Numbers").
const HOPOPT: u8 = 0;
const IPV6_ROUTE: u8 = 43;
const IPV6_FRAG: u8 = 44;
const AH: u8 = 51;
const IPV6_OPTS: u8 = 60;
const MOBILITY: u8 = 135;
const HIP: u8 = 139;
const SHIM6: u8 = 140;

/// The outcome of parsing an IP header.
#[derive(Debug)]
pub(crate) enum Parsed<'a> {
    Packet(IpPacket<'a>),
    Fragment(FragIn<'a>),
}

/// Parses the IP header at `offset` of `data`.
#[inline]
pub(crate) fn parse(data: &[u8], offset: usize, l3: L3) -> Result<Parsed<'_>, NetError> {
    let s = data.get(offset..).unwrap_or(&[]);
    match l3 {
        L3::Ipv4 => ipv4(s, offset),
        L3::Ipv6 => ipv6(s, offset),
        L3::ByVersion => match s.first().map(|b| b >> 4) {
            Some(4) => ipv4(s, offset),
            Some(6) => ipv6(s, offset),
            Some(v) => Err(NetError::new("raw-ip", offset, NetErrorKind::BadVersion(v))),
            None => Err(NetError::truncated("raw-ip", offset, 1, 0)),
        },
    }
}

/// IPv4 (RFC 791 3.1). `s` starts at the header, `base` is its offset in the frame.
#[inline]
fn ipv4(s: &[u8], base: usize) -> Result<Parsed<'_>, NetError> {
    // The version first, so that a wrong header is not reported as a short one.
    if let Some(v) = s.first().map(|b| b >> 4).filter(|&v| v != 4) {
        return Err(NetError::new("ipv4", base, NetErrorKind::BadVersion(v)));
    }
    let h = Ipv4HeaderSlice::from_slice(s).map_err(|e| match e {
        ipv4::HeaderSliceError::Len(l) if s.len() < 20 => {
            NetError::truncated("ipv4", base, l.required_len, s.len())
        }
        ipv4::HeaderSliceError::Len(l) => NetError::new(
            "ipv4",
            base,
            NetErrorKind::IhlBeyondPacket {
                ihl: s[0] & 0x0F,
                len: l.required_len,
                have: s.len(),
            },
        ),
        ipv4::HeaderSliceError::Content(ipv4::HeaderError::UnexpectedVersion {
            version_number,
        }) => NetError::new("ipv4", base, NetErrorKind::BadVersion(version_number)),
        ipv4::HeaderSliceError::Content(ipv4::HeaderError::HeaderLengthSmallerThanHeader {
            ihl,
        }) => NetError::new("ipv4", base, NetErrorKind::IhlTooSmall(ihl)),
    })?;
    let hlen = h.slice().len();
    let total = usize::from(h.total_len());
    // RFC 791 3.1: Total Length counts header and data. A 0 is seen in captures of TCP
    // segmentation offload (the NIC fills it in later): then the captured bytes are the packet.
    let announced = if total == 0 {
        s.len()
    } else if total < hlen {
        return Err(NetError::new(
            "ipv4",
            base,
            NetErrorKind::TotalLenTooSmall {
                total: h.total_len(),
                header: hlen,
            },
        ));
    } else {
        total
    };
    // Cut to the total length (drops Ethernet padding) and to what was captured.
    let end = announced.min(s.len());
    let payload = &s[hlen..end];
    let missing = announced - end;
    let src = IpAddr::V4(h.source_addr());
    let dst = IpAddr::V4(h.destination_addr());
    let proto = h.protocol().0;
    let ttl = h.ttl();
    // RFC 791 3.2: a fragment has MF set or a non-zero offset (in 8-octet units).
    let frag_offset = u32::from(h.fragments_offset().value()) * 8;
    if h.more_fragments() || frag_offset != 0 {
        return Ok(Parsed::Fragment(FragIn {
            key: FragKey {
                src,
                dst,
                id: u32::from(h.identification()),
                proto,
            },
            offset: frag_offset,
            more: h.more_fragments(),
            data: payload,
            len: (announced - hlen) as u32,
            ttl,
            v6: false,
            payload_offset: base + hlen,
        }));
    }
    let (proto, skip) = skip_ipv4_ah(proto, payload, announced - hlen, base + hlen)?;
    Ok(Parsed::Packet(IpPacket {
        src,
        dst,
        proto,
        ttl,
        ip_id: h.identification(),
        payload: Cow::Borrowed(&payload[skip..]),
        missing,
        reassembled: false,
    }))
}

/// The common frame, read without the general machinery: Ethernet II (no VLAN tag) carrying an
/// IPv4 header without options (IHL 5) and with a Total Length, not a fragment (RFC 791 3.1: MF
/// clear, offset 0), not an Authentication Header (RFC 4302). Gives what `link::slice` then
/// `parse` give for such a frame, or None for anything else (which then takes that path).
#[inline]
pub(crate) fn ethernet_ipv4_simple(data: &[u8]) -> Option<IpPacket<'_>> {
    // IEEE 802.3: destination(6) source(6) EtherType(2); 0x0800 = IPv4.
    let s = data.get(14..)?;
    if data[12..14] != [0x08, 0x00] || s.len() < 20 || s[0] != 0x45 {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([s[2], s[3]]));
    // Flags and fragment offset (bytes 6-7): only DF (0x4000) may be set.
    let frag = u16::from_be_bytes([s[6], s[7]]) & 0x3FFF;
    let proto = s[9];
    if total < 20 || frag != 0 || proto == AH {
        return None;
    }
    let end = total.min(s.len());
    Some(IpPacket {
        src: IpAddr::from([s[12], s[13], s[14], s[15]]),
        dst: IpAddr::from([s[16], s[17], s[18], s[19]]),
        proto,
        ttl: s[8],
        ip_id: u16::from_be_bytes([s[4], s[5]]),
        payload: Cow::Borrowed(&s[20..end]),
        missing: total - end,
        reassembled: false,
    })
}

/// RFC 4302 2.2: an Authentication Header in IPv4 is skipped to reach the upper layer; its
/// Payload Length is in 32-bit words minus 2. Returns (upper protocol, bytes to skip).
fn skip_ipv4_ah(
    proto: u8,
    payload: &[u8],
    announced: usize,
    base: usize,
) -> Result<(u8, usize), NetError> {
    if proto != AH {
        return Ok((proto, 0));
    }
    let (next, len) = ext_header(payload, 0, AH, announced, base, "ipv4-ah")?;
    Ok((next, len))
}

/// Reads the generic extension header at `pos` (RFC 8200 4: next header, length) and returns
/// (next header, header length). `announced` is where the payload ends per the IP header.
fn ext_header(
    s: &[u8],
    pos: usize,
    nh: u8,
    announced: usize,
    base: usize,
    layer: &'static str,
) -> Result<(u8, usize), NetError> {
    let fixed = if nh == IPV6_FRAG { 8 } else { 2 };
    let have = s.len().saturating_sub(pos);
    if have < fixed {
        return Err(ext_error(
            layer,
            base + pos,
            nh,
            fixed,
            have,
            announced.saturating_sub(pos),
        ));
    }
    let len = match nh {
        // RFC 8200 4.5: the Fragment header has a fixed length of 8 octets.
        IPV6_FRAG => 8,
        // RFC 4302 2.2: AH length in 4-octet units, minus 2.
        AH => (usize::from(s[pos + 1]) + 2) * 4,
        // RFC 8200 4.3/4.4/4.6 (and RFC 6275, 7401, 5533 per RFC 7045): length in 8-octet
        // units, not counting the first 8.
        _ => (usize::from(s[pos + 1]) + 1) * 8,
    };
    if len > have || len > announced.saturating_sub(pos) {
        return Err(ext_error(
            layer,
            base + pos,
            nh,
            len,
            have,
            announced.saturating_sub(pos),
        ));
    }
    Ok((s[pos], len))
}

fn ext_error(
    layer: &'static str,
    at: usize,
    nh: u8,
    need: usize,
    have: usize,
    room: usize,
) -> NetError {
    if need > room {
        NetError::new(
            layer,
            at,
            NetErrorKind::ExtBeyondPayload {
                next_header: nh,
                len: need,
            },
        )
    } else {
        NetError::truncated(layer, at, need, have)
    }
}

/// IPv6 (RFC 8200 3). `s` starts at the header, `base` is its offset in the frame.
fn ipv6(s: &[u8], base: usize) -> Result<Parsed<'_>, NetError> {
    if let Some(v) = s.first().map(|b| b >> 4).filter(|&v| v != 6) {
        return Err(NetError::new("ipv6", base, NetErrorKind::BadVersion(v)));
    }
    let h = Ipv6HeaderSlice::from_slice(s).map_err(|e| match e {
        ipv6::HeaderSliceError::Len(l) => {
            NetError::truncated("ipv6", base, l.required_len, s.len())
        }
        ipv6::HeaderSliceError::Content(ipv6::HeaderError::UnexpectedVersion {
            version_number,
        }) => NetError::new("ipv6", base, NetErrorKind::BadVersion(version_number)),
    })?;
    let plen = usize::from(h.payload_length());
    // RFC 8200 3: Payload Length excludes the 40-byte header. 0 means a jumbogram (RFC 2675)
    // or a capture of segmentation offload: the captured bytes are the packet.
    let announced = if plen == 0 { s.len() } else { 40 + plen };
    let end = announced.min(s.len());
    let s_cut = &s[..end];
    let missing = announced - end;
    let src = IpAddr::V6(h.source_addr());
    let dst = IpAddr::V6(h.destination_addr());
    let ttl = h.hop_limit();
    let mut nh = h.next_header().0;
    let mut pos = 40;
    loop {
        match walk(s_cut, nh, pos, announced, base, false)? {
            Walk::Upper { nh, pos } => {
                return Ok(Parsed::Packet(IpPacket {
                    src,
                    dst,
                    proto: nh,
                    ttl,
                    ip_id: 0,
                    payload: Cow::Borrowed(&s_cut[pos..]),
                    missing,
                    reassembled: false,
                }))
            }
            Walk::Fragment {
                next,
                offset,
                more,
                id,
                start,
            } => {
                if offset == 0 && !more {
                    // RFC 6946 / RFC 8200 4.5: an "atomic fragment" is processed as a whole
                    // packet; go on with the header after the Fragment header.
                    nh = next;
                    pos = start;
                    continue;
                }
                return Ok(Parsed::Fragment(FragIn {
                    key: FragKey {
                        src,
                        dst,
                        id,
                        proto: next,
                    },
                    offset,
                    more,
                    data: &s_cut[start..],
                    len: (announced - start) as u32,
                    ttl,
                    v6: true,
                    payload_offset: base + start,
                }));
            }
        }
    }
}

/// Where a walk over IPv6 extension headers stopped.
enum Walk {
    /// At the first upper-layer header (RFC 8200 4: also No Next Header 59 and ESP 50).
    Upper { nh: u8, pos: usize },
    /// At a Fragment header (RFC 8200 4.5); `start` = first byte after it.
    Fragment {
        next: u8,
        offset: u32,
        more: bool,
        id: u32,
        start: usize,
    },
}

/// Skips extension headers from `pos`, where the header type is `nh`. In a reassembled
/// payload a Fragment header is not expected (RFC 8200 4.1: at most once) and stops the walk.
fn walk(
    s: &[u8],
    mut nh: u8,
    mut pos: usize,
    announced: usize,
    base: usize,
    reassembled: bool,
) -> Result<Walk, NetError> {
    loop {
        match nh {
            HOPOPT | IPV6_ROUTE | IPV6_OPTS | MOBILITY | HIP | SHIM6 | AH => {
                let (next, len) = ext_header(s, pos, nh, announced, base, "ipv6-ext")?;
                nh = next;
                pos += len;
            }
            IPV6_FRAG if !reassembled => {
                ext_header(s, pos, nh, announced, base, "ipv6-ext")?;
                // RFC 8200 4.5: next header(1) reserved(1) offset(13 bits) res(2) M(1) id(4).
                let fo = u16::from_be_bytes([s[pos + 2], s[pos + 3]]);
                return Ok(Walk::Fragment {
                    next: s[pos],
                    offset: u32::from(fo & 0xFFF8),
                    more: fo & 1 != 0,
                    id: u32::from_be_bytes([s[pos + 4], s[pos + 5], s[pos + 6], s[pos + 7]]),
                    start: pos + 8,
                });
            }
            _ => return Ok(Walk::Upper { nh, pos }),
        }
    }
}

/// Builds the packet of a reassembled datagram: IPv6 extension headers of the fragmentable
/// part (RFC 8200 4.5) or an IPv4 AH are skipped to reach the upper layer.
pub(crate) fn reassembled(
    key: &FragKey,
    r: Reassembled,
    v6: bool,
    base: usize,
) -> Result<IpPacket<'static>, NetError> {
    let mut buf = r.payload;
    let announced = buf.len() + r.missing;
    let (proto, skip) = if v6 {
        match walk(&buf, key.proto, 0, announced, base, true)? {
            Walk::Upper { nh, pos } => (nh, pos),
            Walk::Fragment { .. } => (IPV6_FRAG, 0),
        }
    } else {
        skip_ipv4_ah(key.proto, &buf, announced, base)?
    };
    buf.drain(..skip);
    Ok(IpPacket {
        src: key.src,
        dst: key.dst,
        proto,
        ttl: r.ttl,
        // RFC 791 3.2: an IPv4 datagram's fragments share its Identification.
        ip_id: if v6 { 0 } else { key.id as u16 },
        payload: Cow::Owned(buf),
        missing: r.missing,
        reassembled: true,
    })
}
