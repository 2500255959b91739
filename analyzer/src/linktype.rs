//! Link types (the LINKTYPE_ registry, <https://www.tcpdump.org/linktypes.html>): what the
//! capture reader says a frame is and the link decoder (`net::link`) reads it by. Below both.

/// LINKTYPE_NULL: BSD loopback, 4-byte address family in the capturing host's byte order.
pub const LINKTYPE_NULL: u32 = 0;
/// LINKTYPE_ETHERNET: IEEE 802.3 / Ethernet II.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// DLT_RAW as written by some systems (12 on most, 14 on OpenBSD).
pub const DLT_RAW_12: u32 = 12;
pub const DLT_RAW_14: u32 = 14;
/// LINKTYPE_RAW: raw IPv4 or IPv6, the version nibble decides.
pub const LINKTYPE_RAW: u32 = 101;
/// LINKTYPE_LOOP: OpenBSD loopback, address family in network byte order.
pub const LINKTYPE_LOOP: u32 = 108;
/// LINKTYPE_LINUX_SLL: Linux cooked capture v1 (16-byte header).
pub const LINKTYPE_LINUX_SLL: u32 = 113;
/// LINKTYPE_IPV4 / LINKTYPE_IPV6: raw IP of one version.
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_IPV6: u32 = 229;
/// LINKTYPE_LINUX_SLL2: Linux cooked capture v2 (20-byte header).
pub const LINKTYPE_LINUX_SLL2: u32 = 276;
/// LINKTYPE_ERF: an Endace ERF record the capture reader gives whole because its type (ATM,
/// multi-channel, InfiniBand, provenance metadata...) carries nothing decoded here; the reader
/// tells them once (`capture::erf::Tally`), the decoder takes it for a frame without IP.
pub const LINKTYPE_ERF: u32 = 197;
/// LINKTYPE_NFLOG: Linux netfilter's log (`tcpdump -i nflog:N`, nftables `log group N`).
pub const LINKTYPE_NFLOG: u32 = 239;
/// LINKTYPE_PPP: PPP (RFC 1661), from a BSD ppp interface or a serial line.
pub const LINKTYPE_PPP: u32 = 9;
/// LINKTYPE_PPP_HDLC: PPP in HDLC-like framing (RFC 1662), flags and escapes removed.
pub const LINKTYPE_PPP_HDLC: u32 = 50;
/// LINKTYPE_C_HDLC: Cisco HDLC on a router's serial / POS link: address, control, EtherType.
pub const LINKTYPE_C_HDLC: u32 = 104;
