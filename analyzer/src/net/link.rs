//! Link layers: finds where the IP header starts in a frame (link types from
//! <https://www.tcpdump.org/linktypes.html>).

use etherparse::{Ethernet2HeaderSlice, SingleVlanHeaderSlice};

use super::error::{NetError, NetErrorKind};

pub use crate::linktype::*;

/// NFLOG TLV types (linux/netfilter/nfnetlink_log.h): the kernel's timestamp of the packet, and
/// the packet from its IP header.
const NFULA_TIMESTAMP: u16 = 3;
const NFULA_PAYLOAD: u16 = 9;

/// EtherTypes (IEEE Registration Authority).
pub(crate) const ET_IPV4: u16 = 0x0800;
pub(crate) const ET_IPV6: u16 = 0x86DD;
/// IEEE 802.1Q customer VLAN tag.
const ET_8021Q: u16 = 0x8100;
/// IEEE 802.1ad service VLAN tag (QinQ outer tag).
const ET_8021AD: u16 = 0x88A8;
/// Pre-standard QinQ outer tags.
const ET_QINQ_OLD: [u16; 2] = [0x9100, 0x9200];
/// Stacked tags beyond this are not followed.
const MAX_VLAN_TAGS: usize = 8;
/// MPLS unicast and multicast (RFC 3032 5).
pub(crate) const ET_MPLS: u16 = 0x8847;
const ET_MPLS_MULTICAST: u16 = 0x8848;
/// Labels beyond this are not followed.
const MAX_MPLS_LABELS: usize = 8;

/// ARPHRD_ types (Linux if_arp.h) whose SLL protocol field is not an EtherType.
const ARPHRD_FRAD: u16 = 770;
const ARPHRD_IEEE80211_RADIOTAP: u16 = 803;
const ARPHRD_NETLINK: u16 = 824;

/// Which IP version follows the link header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum L3 {
    Ipv4,
    Ipv6,
    /// Raw IP: the version nibble decides.
    ByVersion,
}

/// Where the frame's IP header starts, if it carries IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    Ip {
        l3: L3,
        offset: usize,
    },
    /// IP under an MPLS label stack.
    Mpls {
        l3: L3,
        offset: usize,
    },
    NonIp,
}

/// Slices the link header of `data` (captured with `linktype`).
#[inline]
pub(crate) fn slice(linktype: u32, data: &[u8]) -> Result<Link, NetError> {
    match linktype {
        LINKTYPE_ETHERNET => {
            let eth = Ethernet2HeaderSlice::from_slice(data)
                .map_err(|_| NetError::truncated("ethernet", 0, 14, data.len()))?;
            let et = eth.ether_type().0;
            // IEEE 802.3 3.2.6: values below 0x0600 are a length (802.3 + LLC), not IP here.
            if et < 0x0600 {
                return Ok(Link::NonIp);
            }
            after_ethertype(et, data, 14)
        }
        LINKTYPE_LINUX_SLL => {
            // packet type(2) ARPHRD(2) addr len(2) addr(8) protocol(2). Own code: etherparse's
            // LinuxSllHeaderSlice rejects ARPHRD types such as loopback (772) or none (0xFFFE)
            // that appear in "any" captures.
            if data.len() < 16 {
                return Err(NetError::truncated("sll", 0, 16, data.len()));
            }
            let hatype = be16(data, 2);
            sll_protocol(hatype, be16(data, 14), data, 16)
        }
        LINKTYPE_LINUX_SLL2 => {
            // protocol(2) reserved(2) ifindex(4) ARPHRD(2) packet type(1) addr len(1) addr(8).
            if data.len() < 20 {
                return Err(NetError::truncated("sll2", 0, 20, data.len()));
            }
            sll_protocol(be16(data, 8), be16(data, 0), data, 20)
        }
        LINKTYPE_NULL | LINKTYPE_LOOP => {
            let layer = if linktype == LINKTYPE_NULL {
                "null"
            } else {
                "loop"
            };
            let Some(b) = data.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
                return Err(NetError::truncated(layer, 0, 4, data.len()));
            };
            let af = if linktype == LINKTYPE_LOOP {
                u32::from_be_bytes(b)
            } else {
                // Host byte order of the capturing machine: address families are small, so a
                // value with upper bits set was written in the other order (as Wireshark does).
                let le = u32::from_le_bytes(b);
                if le & 0xFFFF_0000 != 0 {
                    le.swap_bytes()
                } else {
                    le
                }
            };
            Ok(match af {
                // AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD, OpenBSD, BSD/OS),
                // 28 (FreeBSD, DragonFly) or 30 (Darwin).
                2 => Link::Ip {
                    l3: L3::Ipv4,
                    offset: 4,
                },
                24 | 28 | 30 => Link::Ip {
                    l3: L3::Ipv6,
                    offset: 4,
                },
                _ => Link::NonIp,
            })
        }
        LINKTYPE_NFLOG => nflog(data),
        LINKTYPE_ERF => Ok(Link::NonIp),
        LINKTYPE_C_HDLC => cisco_hdlc(data),
        // LINKTYPE_PPP_HDLC also holds Cisco PPP with HDLC framing (RFC 1547 4.3.1), told by its
        // first byte (<https://www.tcpdump.org/linktypes/LINKTYPE_PPP_HDLC.html>).
        LINKTYPE_PPP_HDLC if matches!(data.first(), Some(0x0F | 0x8F)) => cisco_hdlc(data),
        LINKTYPE_PPP | LINKTYPE_PPP_HDLC => ppp(data),
        DLT_RAW_12 | DLT_RAW_14 | LINKTYPE_RAW => Ok(Link::Ip {
            l3: L3::ByVersion,
            offset: 0,
        }),
        LINKTYPE_IPV4 => Ok(Link::Ip {
            l3: L3::Ipv4,
            offset: 0,
        }),
        LINKTYPE_IPV6 => Ok(Link::Ip {
            l3: L3::Ipv6,
            offset: 0,
        }),
        other => Err(NetError::new(
            "link",
            0,
            NetErrorKind::UnsupportedLinktype(other),
        )),
    }
}

/// NFLOG (<https://www.tcpdump.org/linktypes/LINKTYPE_NFLOG.html>): address family (1 byte),
/// version (1), resource id (2, network order), then TLVs; the packet is the value of the
/// NFULA_PAYLOAD TLV. Other TLVs (hook, interfaces, UID, prefix, timestamp) are skipped.
fn nflog(data: &[u8]) -> Result<Link, NetError> {
    if data.len() < NFLOG_HEADER + 4 {
        return Err(NetError::truncated(
            "nflog",
            0,
            NFLOG_HEADER + 4,
            data.len(),
        ));
    }
    // AF_INET 2, AF_INET6 10 (Linux); another family leaves it to the version nibble.
    let l3 = match data[0] {
        2 => L3::Ipv4,
        10 => L3::Ipv6,
        _ => L3::ByVersion,
    };
    for tlv in NflogTlvs::new(data) {
        let (at, ty) = tlv?;
        if ty == NFULA_PAYLOAD {
            return Ok(Link::Ip { l3, offset: at + 4 });
        }
    }
    Ok(Link::NonIp)
}

/// The kernel's timestamp of an NFLOG frame's packet (the NFULA_TIMESTAMP TLV: seconds and
/// microseconds, 64 bits each in network byte order), in ns since the Unix epoch: Some(None)
/// when the frame has none, None for a frame whose TLVs do not parse.
/// libpcap stamps an NFLOG frame when it reads it, and the kernel hands nflog frames over in
/// batches (when its buffer fills, or at a flush timer of a second by default): the record's time
/// is the batch's, the TLV's the packet's.
pub fn nflog_timestamp(data: &[u8]) -> Option<Option<i64>> {
    if data.len() < NFLOG_HEADER + 4 {
        return None;
    }
    for tlv in NflogTlvs::new(data) {
        let (at, ty) = tlv.ok()?;
        if ty == NFULA_TIMESTAMP {
            let v = data.get(at + 4..at + 20)?;
            let sec = i64::try_from(u64::from_be_bytes(v[..8].try_into().ok()?)).ok()?;
            let usec = i64::try_from(u64::from_be_bytes(v[8..].try_into().ok()?)).ok()?;
            return Some(
                sec.checked_mul(1_000_000_000)?
                    .checked_add(usec.checked_mul(1000)?),
            );
        }
    }
    Some(None)
}

/// The NFLOG header's length (family, version, resource id).
const NFLOG_HEADER: usize = 4;

/// The TLVs of an NFLOG frame (at least `NFLOG_HEADER + 4` bytes) as (offset, type): a length
/// covering the 4-byte TLV header and a type, both 16 bits in the capturing host's byte order,
/// each value padded to 4 bytes. An error (a length below 4) ends the walk.
struct NflogTlvs<'a> {
    data: &'a [u8],
    at: usize,
    big_endian: bool,
}

impl<'a> NflogTlvs<'a> {
    fn new(data: &'a [u8]) -> Self {
        // Host byte order: the first TLV's length read as little-endian unless only the other
        // order gives a length that fits (a big-endian capturing host).
        let fits = |n: u16| usize::from(n) >= 4 && usize::from(n) <= data.len() - NFLOG_HEADER;
        let le_first = u16::from_le_bytes([data[NFLOG_HEADER], data[NFLOG_HEADER + 1]]);
        NflogTlvs {
            data,
            at: NFLOG_HEADER,
            big_endian: !fits(le_first) && fits(le_first.swap_bytes()),
        }
    }

    fn u16_at(&self, at: usize) -> u16 {
        let v = u16::from_le_bytes([self.data[at], self.data[at + 1]]);
        if self.big_endian {
            v.swap_bytes()
        } else {
            v
        }
    }
}

impl Iterator for NflogTlvs<'_> {
    type Item = Result<(usize, u16), NetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        if at + 4 > self.data.len() {
            return None;
        }
        // The type without the netlink attribute flags (NLA_TYPE_MASK).
        let (len, ty) = (self.u16_at(at), self.u16_at(at + 2) & 0x3FFF);
        if len < 4 {
            self.at = self.data.len();
            return Some(Err(NetError::new(
                "nflog",
                at,
                NetErrorKind::BadTlvLength(len),
            )));
        }
        self.at = at + ((usize::from(len) + 3) & !3);
        Some(Ok((at, ty)))
    }
}

/// The Linux cooked-capture packet type of a frame (packet(7) `sll_pkttype`: 0 to the host,
/// 1 broadcast, 2 multicast, 3 to another host, 4 sent by the host), None for other link types
/// or a frame too short to hold it. It tells the two copies of a forwarded packet in an
/// "any"-device capture apart.
#[inline]
pub fn sll_packet_type(linktype: u32, data: &[u8]) -> Option<u16> {
    match linktype {
        // SLL v1: packet type is the first field (2 bytes); SLL2: one byte at offset 10.
        LINKTYPE_LINUX_SLL => data.get(..2).map(|_| be16(data, 0)),
        LINKTYPE_LINUX_SLL2 => data.get(10).map(|&b| u16::from(b)),
        _ => None,
    }
}

/// The name of a Linux cooked-capture packet type (packet(7)).
pub fn sll_packet_type_name(t: u16) -> &'static str {
    match t {
        0 => "host",
        1 => "broadcast",
        2 => "multicast",
        3 => "otherhost",
        4 => "outgoing",
        _ => "other",
    }
}

fn be16(data: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([data[i], data[i + 1]])
}

/// The SLL / SLL2 protocol field is an EtherType except for a few ARPHRD types (Linux
/// packet(7), libpcap's LINKTYPE_LINUX_SLL description).
fn sll_protocol(hatype: u16, proto: u16, data: &[u8], offset: usize) -> Result<Link, NetError> {
    match hatype {
        ARPHRD_NETLINK | ARPHRD_IEEE80211_RADIOTAP | ARPHRD_FRAD => Ok(Link::NonIp),
        _ => after_ethertype(proto, data, offset),
    }
}

/// Follows VLAN tags (IEEE 802.1Q / 802.1ad, 4 bytes each: TCI then the inner EtherType) to
/// IPv4 or IPv6.
fn after_ethertype(mut et: u16, data: &[u8], mut offset: usize) -> Result<Link, NetError> {
    for _ in 0..=MAX_VLAN_TAGS {
        match et {
            ET_IPV4 => {
                return Ok(Link::Ip {
                    l3: L3::Ipv4,
                    offset,
                })
            }
            ET_IPV6 => {
                return Ok(Link::Ip {
                    l3: L3::Ipv6,
                    offset,
                })
            }
            ET_8021Q | ET_8021AD => {}
            t if ET_QINQ_OLD.contains(&t) => {}
            ET_MPLS | ET_MPLS_MULTICAST => return mpls(data, offset),
            _ => return Ok(Link::NonIp),
        }
        let rest = data.get(offset..).unwrap_or(&[]);
        let tag = SingleVlanHeaderSlice::from_slice(rest)
            .map_err(|_| NetError::truncated("vlan", offset, 4, rest.len()))?;
        et = tag.ether_type().0;
        offset += 4;
    }
    Ok(Link::NonIp)
}

/// Cisco HDLC: address (0x0F unicast, 0x8F broadcast), control (0), protocol: an EtherType
/// (<https://www.tcpdump.org/linktypes/LINKTYPE_C_HDLC.html>).
fn cisco_hdlc(data: &[u8]) -> Result<Link, NetError> {
    if data.len() < 4 {
        return Err(NetError::truncated("c_hdlc", 0, 4, data.len()));
    }
    after_ethertype(be16(data, 2), data, 4)
}

/// PPP protocol numbers (IANA PPP DLL Protocol Numbers): IPv4 (RFC 1332), IPv6 (RFC 5072),
/// MPLS unicast and multicast (RFC 3032 4.3).
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPP_MPLS: [u16; 2] = [0x0281, 0x0283];

/// A PPP frame: the HDLC address and control bytes 0xFF 0x03 when present (RFC 1662 3.1; absent
/// when Address-and-Control-Field-Compression was negotiated, RFC 1661 6.6), then the protocol
/// field, one byte when Protocol-Field-Compression made it so (RFC 1661 6.5: the low bit of a
/// protocol's last byte is 1, of its first byte 0, so an odd first byte is the whole field).
fn ppp(data: &[u8]) -> Result<Link, NetError> {
    let start = if data.starts_with(&[0xFF, 0x03]) {
        2
    } else {
        0
    };
    let Some(&first) = data.get(start) else {
        return Err(NetError::truncated("ppp", 0, start + 1, data.len()));
    };
    let (protocol, offset) = if first & 1 == 1 {
        (u16::from(first), start + 1)
    } else {
        let Some(&second) = data.get(start + 1) else {
            return Err(NetError::truncated("ppp", 0, start + 2, data.len()));
        };
        (u16::from_be_bytes([first, second]), start + 2)
    };
    Ok(match protocol {
        PPP_IPV4 => Link::Ip {
            l3: L3::Ipv4,
            offset,
        },
        PPP_IPV6 => Link::Ip {
            l3: L3::Ipv6,
            offset,
        },
        p if PPP_MPLS.contains(&p) => return mpls(data, offset),
        _ => Link::NonIp,
    })
}

/// An MPLS label stack at `offset` (RFC 3032 2.1: 4 bytes a label, the bottom one with S set)
/// and the IP packet under it, told by its version nibble (RFC 4385 3: a pseudowire's control
/// word starts with 0, an Ethernet pseudowire with a MAC address: not followed).
pub(crate) fn mpls(data: &[u8], mut offset: usize) -> Result<Link, NetError> {
    for _ in 0..MAX_MPLS_LABELS {
        let Some(label) = data.get(offset..offset + 4) else {
            let have = data.len().saturating_sub(offset);
            return Err(NetError::truncated("mpls", offset, 4, have));
        };
        offset += 4;
        if label[2] & 0x01 != 0 {
            let l3 = match data.get(offset).map(|b| b >> 4) {
                Some(4) => L3::Ipv4,
                Some(6) => L3::Ipv6,
                _ => return Ok(Link::NonIp),
            };
            return Ok(Link::Mpls { l3, offset });
        }
    }
    Ok(Link::NonIp)
}
