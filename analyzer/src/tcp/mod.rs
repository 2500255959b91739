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
//! * State is bounded: at most `MAX_FLOWS` connections open at once (then a warning),
//!   `dir::MAX_OUTSTANDING` outstanding segments and `dir::MAX_ROWS` event rows per direction.
//!   Without tables (`keep_rows` off) a connection that is over is summarised at once and retired
//!   (`TcpTracker::take_retired`) after `RETIRE_NS` of silence, so memory stays flat over any
//!   number of connections.

pub mod dir;
pub mod events;
pub mod flow;
pub mod infer;
pub mod options;
pub mod report;

#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::{IpAddr, Ipv4Addr};

use crate::net::IpPacket;
pub use flow::TcpFlow;
pub use options::{Options, TcpSegment};
pub use report::TcpFlowReport;

/// Connections tracked at once; segments of further connections are only counted.
pub const MAX_FLOWS: usize = 100_000;

/// A connection that is over (closed, nothing outstanding) and silent this long is retired:
/// RFC 9293 3.6.1, TIME-WAIT lasts 2 x MSL with MSL = 2 minutes; past it no segment of the old
/// connection can be in the network, and a later one on the same 4-tuple starts a new connection.
pub const RETIRE_NS: i64 = 240_000_000_000;

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

/// A segment's addresses as a batch holds them: 4 bytes (IPv4) or 16 (IPv6) each, network
/// order. Connection keys are made from the bytes; `IpAddr`s only for a new connection.
#[derive(Clone, Copy)]
pub struct RawAddrs<'a> {
    pub src: &'a [u8],
    pub dst: &'a [u8],
}

impl RawAddrs<'_> {
    fn src_ip(&self) -> IpAddr {
        crate::net::ip_from_octets(self.src)
    }

    fn dst_ip(&self) -> IpAddr {
        crate::net::ip_from_octets(self.dst)
    }

    /// `key_of` for these addresses: IPv4 pairs straight from the bytes.
    #[inline]
    fn key(&self, sp: u16, dp: u16) -> (Key, bool, bool) {
        match (<[u8; 4]>::try_from(self.src), <[u8; 4]>::try_from(self.dst)) {
            (Ok(s), Ok(d)) => key4(pack4(s.into(), sp), pack4(d.into(), dp)),
            _ => key_of(&self.src_ip(), sp, &self.dst_ip(), dp),
        }
    }
}

/// The key of an IPv4 connection from its packed endpoints (`pack4`) in segment order.
#[inline]
fn key4(a: u64, b: u64) -> (Key, bool, bool) {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    (
        Key::V4((u128::from(lo) << 48) | u128::from(hi)),
        a <= b,
        a == b,
    )
}

#[inline]
fn key_of(src: &IpAddr, sp: u16, dst: &IpAddr, dp: u16) -> (Key, bool, bool) {
    // By reference: the addresses are read field by field, as the decoder just wrote them.
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => key4(pack4(*s, sp), pack4(*d, dp)),
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
    /// Connections by slot (index entries point here); a retired one leaves its slot free.
    slots: Vec<Option<TcpFlow>>,
    free: Vec<u32>,
    /// Id of the next connection (ids count connections in order of their first segment).
    next_id: usize,
    /// Connections summarised when they settled, soonest heard from first: (last segment, slot,
    /// id).
    settled: BinaryHeap<Reverse<(i64, u32, usize)>>,
    /// Connections retired and not yet taken (`take_retired`), or kept for `finish`.
    retired: Vec<TcpFlow>,
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
    /// Warnings of connections already retired.
    warnings: Vec<String>,
}

/// A connection that hit a state bound says so.
fn bounds_warning(f: &TcpFlow) -> Option<String> {
    let forgotten: u64 = f.dirs.iter().map(|d| d.forgotten).sum();
    let dropped: u64 = f.dirs.iter().map(|d| d.dropped_rows).sum();
    (forgotten + dropped > 0).then(|| {
        format!(
            "TCP connection {}: {forgotten} outstanding segments forgotten, {dropped} event rows not kept (bounds)",
            f.id
        )
    })
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
            slots: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            settled: Default::default(),
            retired: Vec::new(),
            index4: HashMap::default(),
            index6: HashMap::default(),
            last4: (0, u32::MAX),
            // Entries keep the client flag in the top bit.
            max_flows: max_flows.min((CLIENT_LO - 1) as usize),
            malformed: 0,
            over_limit: 0,
            warnings: Vec::new(),
        }
    }

    /// One IP packet carrying TCP (protocol 6); `ip.missing` bytes were cut by the snap length.
    pub fn segment(&mut self, frame: u64, ts_ns: i64, ip: &IpPacket<'_>) {
        let octets = |a: &IpAddr| -> ([u8; 16], usize) {
            let mut b = [0; 16];
            match a {
                IpAddr::V4(v) => {
                    b[..4].copy_from_slice(&v.octets());
                    (b, 4)
                }
                IpAddr::V6(v) => (v.octets(), 16),
            }
        };
        let ((src, n), (dst, m)) = (octets(&ip.src), octets(&ip.dst));
        let addrs = RawAddrs {
            src: &src[..n],
            dst: &dst[..m],
        };
        self.segment_raw(frame, ts_ns, addrs, &ip.payload, ip.missing);
    }

    /// `segment` for a TCP segment in `bytes` (its IP payload, `missing` bytes cut by the snap
    /// length) between `addrs`, as a batch holds it.
    /// A capture gap (rotated files) ended at `end_ns`: the open connections measure nothing
    /// from before it.
    #[cold]
    pub fn capture_gap(&mut self, end_ns: i64) {
        for f in self.slots.iter_mut().flatten() {
            for d in &mut f.dirs {
                d.gap_end_ns = Some(end_ns);
            }
        }
    }

    pub fn segment_raw(
        &mut self,
        frame: u64,
        ts_ns: i64,
        addrs: RawAddrs<'_>,
        bytes: &[u8],
        missing: usize,
    ) {
        if self
            .settled
            .peek()
            .is_some_and(|s| ts_ns - s.0 .0 >= RETIRE_NS)
        {
            self.retire_silent(ts_ns);
        }
        let Ok(seg) = TcpSegment::new_checked(bytes) else {
            self.malformed += 1;
            return;
        };
        let len = seg.payload_len(missing);
        let (sp, dp) = (seg.src_port(), seg.dst_port());
        let (key, src_lo, same) = addrs.key(sp, dp);
        // Which endpoint sent the segment, from an index entry (`TcpFlow::side`).
        let side = |entry: u32| usize::from(!same && src_lo != (entry & CLIENT_LO != 0));
        let fl = seg.flags();
        let syn_only = fl & options::flags::SYN != 0 && fl & options::flags::ACK == 0;
        let found = self.last_v4(&key).or_else(|| self.lookup(key));
        let entry = match found {
            Some(en) => {
                let f = self.flow(en);
                if syn_only && f.syn_starts_new(side(en), seg.seq()) {
                    self.open(key, src_lo, ts_ns, frame, addrs, (sp, dp), fl)
                } else {
                    Some(en)
                }
            }
            None => self.open(key, src_lo, ts_ns, frame, addrs, (sp, dp), fl),
        };
        let Some(en) = entry else {
            self.over_limit += 1;
            return;
        };
        let o = Options::parse(&seg);
        let e = side(en);
        let slot = en & !CLIENT_LO;
        let f = self.slots[slot as usize]
            .as_mut()
            .expect("index entries point at live connections");
        debug_assert_eq!(e, f.side((addrs.src_ip(), sp)));
        f.segment(ts_ns, frame, e, &seg, &o, len);
        if !self.keep_rows && !f.summarised && f.settled() {
            // Over (closed, nothing outstanding): summarised now, its rows dropped (memory flat
            // over any number of connections; a late duplicate only updates the counters), and
            // retired once silent for `RETIRE_NS`.
            infer::summarise(f);
            for (d, sum) in f.dirs.iter_mut().zip(&f.summary) {
                d.compact(sum.as_deref());
            }
            f.summarised = true;
            self.settled.push(Reverse((ts_ns, slot, f.id)));
        }
    }

    /// The live connection an index entry points at.
    fn flow(&self, en: u32) -> &TcpFlow {
        self.slots[(en & !CLIENT_LO) as usize]
            .as_ref()
            .expect("index entries point at live connections")
    }

    /// Retires settled connections silent for `RETIRE_NS` at `now_ns` (oldest first); one heard
    /// from since it settled goes back in the queue with its last segment's time.
    #[cold]
    #[inline(never)]
    fn retire_silent(&mut self, now_ns: i64) {
        while let Some(&Reverse((t, slot, id))) = self.settled.peek() {
            if now_ns - t < RETIRE_NS {
                break;
            }
            self.settled.pop();
            let Some(f) = self.slots[slot as usize].as_ref().filter(|f| f.id == id) else {
                continue;
            };
            if now_ns - f.last_ns < RETIRE_NS {
                self.settled.push(Reverse((f.last_ns, slot, id)));
                continue;
            }
            let (a, b) = (f.ep[0], f.ep[1]);
            let (key, _, _) = key_of(&a.0, a.1, &b.0, b.1);
            // The 4-tuple may have a newer connection already (port reuse): its entry stays.
            if self.lookup(key).is_some_and(|en| en & !CLIENT_LO == slot) {
                match key {
                    Key::V4(k) => {
                        self.index4.remove(&k);
                    }
                    Key::V6(k) => {
                        self.index6.remove(&k);
                    }
                }
                self.last4 = (0, u32::MAX);
            }
            let mut f = self.slots[slot as usize].take().expect("checked above");
            self.free.push(slot);
            infer::refresh(&mut f);
            if self.warnings.len() < 64 {
                self.warnings.extend(bounds_warning(&f));
            }
            self.retired.push(f);
        }
    }

    /// Connections retired since the last call (each summarised, its rows dropped), in the
    /// order they were retired.
    pub fn take_retired(&mut self) -> std::vec::Drain<'_, TcpFlow> {
        self.retired.drain(..)
    }

    /// Whether connections wait in `take_retired`.
    pub fn has_retired(&self) -> bool {
        !self.retired.is_empty()
    }

    /// Connections open (not retired).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The entry of the last IPv4 connection looked up, when `key` is its key: consecutive
    /// segments mostly belong to the same connection, and this comparison, inlined where
    /// segments come in, costs less than the call to `lookup`.
    #[inline(always)]
    fn last_v4(&self, key: &Key) -> Option<u32> {
        match key {
            Key::V4(k) if self.last4.1 != u32::MAX && self.last4.0 == *k => Some(self.last4.1),
            _ => None,
        }
    }

    fn lookup(&mut self, key: Key) -> Option<u32> {
        if let Some(en) = self.last_v4(&key) {
            return Some(en);
        }
        match key {
            Key::V4(k) => {
                let en = *self.index4.get(&k)?;
                self.last4 = (k, en);
                Some(en)
            }
            Key::V6(k) => self.index6.get(&k).copied(),
        }
    }

    /// A new connection (out of line: its state is built on the stack, a few KB that the
    /// per-segment path should not reserve on every call).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn open(
        &mut self,
        key: Key,
        src_lo: bool,
        ts_ns: i64,
        frame: u64,
        addrs: RawAddrs<'_>,
        (sp, dp): (u16, u16),
        fl: u8,
    ) -> Option<u32> {
        if self.live() >= self.max_flows {
            return None;
        }
        let (src, dst) = ((addrs.src_ip(), sp), (addrs.dst_ip(), dp));
        let id = self.next_id;
        self.next_id += 1;
        let mut f = TcpFlow::new(id, ts_ns, frame, src, dst, fl);
        for d in &mut f.dirs {
            d.skip_rows = !self.keep_rows;
        }
        let client_lo = (f.ep[0] == src) == src_lo;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(f);
                s
            }
            None => {
                self.slots.push(Some(f));
                (self.slots.len() - 1) as u32
            }
        };
        let en = slot | if client_lo { CLIENT_LO } else { 0 };
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

    /// Ends the pass: every connection is summarised (`infer`); the result lists the retired
    /// connections not taken and those still open, in id order.
    pub fn finish(self) -> TcpResult {
        let mut warnings = Vec::new();
        if self.over_limit > 0 {
            warnings.push(format!(
                "TCP: more than {} connections open at once; {} segments of further connections not tracked",
                self.max_flows, self.over_limit
            ));
        }
        if self.malformed > 0 {
            warnings.push(format!(
                "TCP: {} segments with an unreadable header",
                self.malformed
            ));
        }
        warnings.extend(self.warnings);
        let mut open: Vec<TcpFlow> = self.slots.into_iter().flatten().collect();
        for f in &mut open {
            if f.summarised {
                infer::refresh(f);
            } else {
                infer::summarise(f);
            }
        }
        open.sort_unstable_by_key(|f| f.id);
        warnings.extend(open.iter().filter_map(bounds_warning));
        let mut flows = self.retired;
        flows.append(&mut open);
        flows.sort_unstable_by_key(|f| f.id);
        TcpResult { flows, warnings }
    }
}
