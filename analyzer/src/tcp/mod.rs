//! TCP connection tracking for the SCTP-vs-TCP comparison (METRICS.md "TCP flows, for
//! comparison"): segments are decoded without allocation (`options`), grouped into connections by
//! 4-tuple with handshake, close and port reuse (`flow`), tracked per direction (`dir`), and
//! summarised at the end of the pass (`infer`) into the JSON contract (`report`).
//!
//! Rules worth knowing:
//! * Client: the sender of the SYN; without a SYN, the receiver of a SYN-ACK; without either,
//!   the endpoint with the higher port (ephemeral ports are high, RFC 6335 6), ties going to the
//!   sender of the first segment seen.
//! * A SYN (without ACK) on a known 4-tuple starts a new connection after FIN/RST or when its
//!   ISN differs from the tracked one (RFC 9293 3.4.1 port reuse).
//! * Sequence numbers compare in serial arithmetic (RFC 1982, `crate::serial`), so wrap-around
//!   is handled everywhere.
//! * A frame identical to a recent one of its side (header and checksum) within 1 ms, or within
//!   10 ms with nothing from the peer in between, is a capture duplicate, not a retransmission.
//! * State is bounded: at most `MAX_FLOWS` connections (then a warning), `dir::MAX_OUTSTANDING`
//!   outstanding segments and `dir::MAX_ROWS` event rows per direction.

pub mod dir;
pub mod events;
pub mod flow;
pub mod infer;
pub mod options;
pub mod report;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use crate::net::IpPacket;
pub use flow::TcpFlow;
pub use options::{Options, TcpSegment};
pub use report::TcpFlowReport;

/// Connections tracked per capture; segments of further connections are only counted.
pub const MAX_FLOWS: usize = 100_000;

/// Index entries: the flow's position, with `CLIENT_LO` set when its client is the endpoint
/// that sorts first in the key (so a segment's side follows from the key alone).
const CLIENT_LO: u32 = 1 << 31;

/// An IPv4 endpoint as address << 16 | port (orders like `(IpAddr, u16)` within the family).
#[inline]
fn pack4(a: Ipv4Addr, p: u16) -> u64 {
    (u64::from(u32::from(a)) << 16) | u64::from(p)
}

/// An IPv6 connection's endpoints, in canonical order. (A mixed-family pair, which no IP packet
/// carries, is keyed with its IPv4 address mapped.)
type V6Key = (u128, u16, u128, u16);

/// A segment's connection key, in a canonical order so both directions find it: IPv4 4-tuples
/// packed into 96 bits, IPv6 ones as integers; plus whether the source sorts first and whether
/// both endpoints are the same.
#[derive(Clone, Copy)]
enum Key {
    V4(u128),
    V6(V6Key),
}

#[inline]
fn key_of(src: &IpAddr, sp: u16, dst: &IpAddr, dp: u16) -> (Key, bool, bool) {
    // By reference: the addresses are read field by field, as the decoder just wrote them.
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let (a, b) = (pack4(*s, sp), pack4(*d, dp));
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            (
                Key::V4((u128::from(lo) << 48) | u128::from(hi)),
                a <= b,
                a == b,
            )
        }
        _ => {
            let v6 = |x: &IpAddr| match x {
                IpAddr::V4(v) => u128::from(v.to_ipv6_mapped()),
                IpAddr::V6(v) => u128::from(*v),
            };
            let (a, b) = ((v6(src), sp), (v6(dst), dp));
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            (Key::V6((lo.0, lo.1, hi.0, hi.1)), a <= b, a == b)
        }
    }
}

/// Streams TCP segments of one capture into connections.
#[derive(Debug)]
pub struct TcpTracker {
    flows: Vec<TcpFlow>,
    index4: HashMap<u128, u32, crate::fxhash::FxBuild>,
    index6: HashMap<V6Key, u32, crate::fxhash::FxBuild>,
    /// The last IPv4 key looked up and its entry (u32::MAX: none): consecutive segments mostly
    /// belong to the same connection.
    last4: (u128, u32),
    max_flows: usize,
    /// Segments whose header could not be read.
    pub malformed: u64,
    /// Segments of connections past `MAX_FLOWS`.
    pub over_limit: u64,
    /// Keep per-sample rows (the `tcp_rtt_samples` table); off for JSON-only runs.
    pub keep_rows: bool,
}

impl Default for TcpTracker {
    fn default() -> Self {
        TcpTracker::new()
    }
}

/// The tracker's result: connections in order of their first segment, and warnings.
#[derive(Debug, Default)]
pub struct TcpResult {
    pub flows: Vec<TcpFlow>,
    pub warnings: Vec<String>,
}

impl TcpTracker {
    pub fn new() -> Self {
        TcpTracker::with_limit(MAX_FLOWS)
    }

    pub fn with_limit(max_flows: usize) -> Self {
        TcpTracker {
            keep_rows: true,
            flows: Vec::new(),
            index4: HashMap::default(),
            index6: HashMap::default(),
            last4: (0, u32::MAX),
            // Entries keep the client flag in the top bit.
            max_flows: max_flows.min((CLIENT_LO - 1) as usize),
            malformed: 0,
            over_limit: 0,
        }
    }

    /// One IP packet carrying TCP (protocol 6); `ip.missing` bytes were cut by the snap length.
    pub fn segment(&mut self, frame: u64, ts_ns: i64, ip: &IpPacket<'_>) {
        let Ok(seg) = TcpSegment::new_checked(&ip.payload) else {
            self.malformed += 1;
            return;
        };
        let len = seg.payload_len(ip.missing);
        let (sp, dp) = (seg.src_port(), seg.dst_port());
        let (key, src_lo, same) = key_of(&ip.src, sp, &ip.dst, dp);
        // Which endpoint sent the segment, from an index entry (`TcpFlow::side`).
        let side = |entry: u32| usize::from(!same && src_lo != (entry & CLIENT_LO != 0));
        let fl = seg.flags();
        let syn_only = fl & options::flags::SYN != 0 && fl & options::flags::ACK == 0;
        let found = self.lookup(key);
        let entry = match found {
            Some(en) => {
                let f = &self.flows[(en & !CLIENT_LO) as usize];
                if syn_only && f.syn_starts_new(side(en), seg.seq()) {
                    self.open(key, src_lo, ts_ns, frame, (ip.src, sp), (ip.dst, dp), fl)
                } else {
                    Some(en)
                }
            }
            None => self.open(key, src_lo, ts_ns, frame, (ip.src, sp), (ip.dst, dp), fl),
        };
        let Some(en) = entry else {
            self.over_limit += 1;
            return;
        };
        let o = Options::parse(&seg);
        let e = side(en);
        let f = &mut self.flows[(en & !CLIENT_LO) as usize];
        debug_assert_eq!(e, f.side((ip.src, sp)));
        f.segment(ts_ns, frame, e, &seg, &o, len);
        if !self.keep_rows && !f.summarised && f.settled() {
            // Over (closed, nothing outstanding): summarised now, its rows dropped (memory flat
            // over any number of connections; a late duplicate only updates the counters).
            infer::summarise(f);
            for d in &mut f.dirs {
                d.compact();
            }
            f.summarised = true;
        }
    }

    #[inline]
    fn lookup(&mut self, key: Key) -> Option<u32> {
        match key {
            Key::V4(k) => {
                if self.last4.1 != u32::MAX && self.last4.0 == k {
                    return Some(self.last4.1);
                }
                let en = *self.index4.get(&k)?;
                self.last4 = (k, en);
                Some(en)
            }
            Key::V6(k) => self.index6.get(&k).copied(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        key: Key,
        src_lo: bool,
        ts_ns: i64,
        frame: u64,
        src: (IpAddr, u16),
        dst: (IpAddr, u16),
        fl: u8,
    ) -> Option<u32> {
        if self.flows.len() >= self.max_flows {
            return None;
        }
        let id = self.flows.len();
        let mut f = TcpFlow::new(id, ts_ns, frame, src, dst, fl);
        for d in &mut f.dirs {
            d.skip_rows = !self.keep_rows;
        }
        let client_lo = (f.ep[0] == src) == src_lo;
        self.flows.push(f);
        let en = id as u32 | if client_lo { CLIENT_LO } else { 0 };
        match key {
            Key::V4(k) => {
                self.index4.insert(k, en);
                self.last4 = (k, en);
            }
            Key::V6(k) => {
                self.index6.insert(k, en);
            }
        }
        Some(en)
    }

    /// Ends the pass: every connection is summarised (`infer`).
    pub fn finish(self) -> TcpResult {
        let mut warnings = Vec::new();
        if self.over_limit > 0 {
            warnings.push(format!(
                "TCP: more than {} connections; {} segments of further connections not tracked",
                self.max_flows, self.over_limit
            ));
        }
        if self.malformed > 0 {
            warnings.push(format!(
                "TCP: {} segments with an unreadable header",
                self.malformed
            ));
        }
        let mut flows = self.flows;
        for f in &mut flows {
            if f.summarised {
                infer::refresh(f);
            } else {
                infer::summarise(f);
            }
            let forgotten: u64 = f.dirs.iter().map(|d| d.forgotten).sum();
            let dropped: u64 = f.dirs.iter().map(|d| d.dropped_rows).sum();
            if forgotten + dropped > 0 {
                warnings.push(format!(
                    "TCP connection {}: {forgotten} outstanding segments forgotten, {dropped} event rows not kept (bounds)",
                    f.id
                ));
            }
        }
        TcpResult { flows, warnings }
    }
}
