//! Types shared by the association tracker and the analyses it feeds (packet context, time
//! base), so that neither imports the other.

use std::net::IpAddr;

/// What the packet loop knows about one SCTP packet before its chunks are walked.
#[derive(Debug, Clone, Copy)]
pub struct PacketCtx {
    pub frame: u64,
    pub ts_ns: i64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub vtag: u32,
    /// CRC32c verdict; None when the packet was cut by the snap length and cannot be checked.
    pub checksum_ok: Option<bool>,
    /// Carried over UDP (RFC 6951).
    pub udp_encap: bool,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
    /// SCTP packet length (common header and chunks) as sent: the captured bytes and any the
    /// snap length cut off.
    pub len: u32,
    /// End of the latest capture gap before this packet (a rotated capture's missing file;
    /// `i64::MIN`: none): nothing is measured from before it to this packet.
    pub gap_end_ns: i64,
}

#[cfg(test)]
impl PacketCtx {
    /// A packet for unit tests: `frame` at `ms`, from `src` (address, port) to `dst`, with a
    /// valid checksum, tag 7, TTL 64 and 100 bytes (struct update syntax changes the rest).
    pub(crate) fn test(frame: u64, ms: f64, src: (&str, u16), dst: (&str, u16)) -> Self {
        PacketCtx {
            frame,
            ts_ns: (ms * 1e6).round() as i64,
            src: src.0.parse().expect("an IP address"),
            dst: dst.0.parse().expect("an IP address"),
            src_port: src.1,
            dst_port: dst.1,
            vtag: 7,
            checksum_ok: Some(true),
            udp_encap: false,
            ttl: 64,
            len: 100,
            gap_end_ns: i64::MIN,
        }
    }
}

/// The capture's time origin: every `*_s` figure is relative to its first frame.
#[derive(Debug, Clone, Copy)]
pub struct TimeBase {
    pub first_ns: Option<i64>,
}

impl TimeBase {
    /// Seconds since the capture's first frame.
    pub fn rel_s(&self, ts_ns: i64) -> f64 {
        (ts_ns - self.first_ns.unwrap_or(ts_ns)) as f64 / 1e9
    }
}
