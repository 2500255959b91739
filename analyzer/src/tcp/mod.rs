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
use std::net::IpAddr;

use crate::net::IpPacket;
pub use flow::TcpFlow;
pub use options::{Options, TcpSegment};
pub use report::TcpFlowReport;

/// Connections tracked per capture; segments of further connections are only counted.
pub const MAX_FLOWS: usize = 100_000;

/// A connection's 4-tuple, in a canonical order so both directions find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FlowKey {
    lo: (IpAddr, u16),
    hi: (IpAddr, u16),
}

impl FlowKey {
    fn new(a: (IpAddr, u16), b: (IpAddr, u16)) -> Self {
        if a <= b {
            FlowKey { lo: a, hi: b }
        } else {
            FlowKey { lo: b, hi: a }
        }
    }
}

/// Streams TCP segments of one capture into connections.
#[derive(Debug)]
pub struct TcpTracker {
    flows: Vec<TcpFlow>,
    index: HashMap<FlowKey, u32, crate::fxhash::FxBuild>,
    max_flows: usize,
    /// Segments whose header could not be read.
    pub malformed: u64,
    /// Segments of connections past `MAX_FLOWS`.
    pub over_limit: u64,
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
            flows: Vec::new(),
            index: HashMap::default(),
            max_flows,
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
        let o = Options::parse(&seg);
        let len = seg.payload_len(ip.missing);
        let src = (ip.src, seg.src_port());
        let dst = (ip.dst, seg.dst_port());
        let key = FlowKey::new(src, dst);
        let fl = seg.flags();
        let syn_only = fl & options::flags::SYN != 0 && fl & options::flags::ACK == 0;
        let idx = match self.index.get(&key) {
            Some(&i) => {
                let f = &self.flows[i as usize];
                if syn_only && f.syn_starts_new(f.side(src), seg.seq()) {
                    self.open(key, ts_ns, frame, src, dst, fl)
                } else {
                    Some(i)
                }
            }
            None => self.open(key, ts_ns, frame, src, dst, fl),
        };
        let Some(i) = idx else {
            self.over_limit += 1;
            return;
        };
        let f = &mut self.flows[i as usize];
        let e = f.side(src);
        f.segment(ts_ns, frame, e, &seg, &o, len);
    }

    fn open(
        &mut self,
        key: FlowKey,
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
        self.flows
            .push(TcpFlow::new(id, ts_ns, frame, src, dst, fl));
        self.index.insert(key, id as u32);
        Some(id as u32)
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
            infer::summarise(f);
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
