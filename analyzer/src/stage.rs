//! Stage one of the pass: reads frames, decodes link and IP, verifies SCTP checksums and packs
//! what the analysis needs into batches, so that a second thread can analyse one batch while
//! this one reads the next (`analyze::analyze_reader_streaming`).
//!
//! A batch keeps the order of the capture: the analysis sees the same packets, warnings and
//! time base in the same order as a single-threaded pass would, so both give identical output.

use std::net::IpAddr;

use crate::capture::CaptureReader;
use crate::net::{self, IpPacket, NetDecoder};
use crate::sctp;

/// When pipelined, a batch is handed on once it holds this many packets ...
///
/// Measured on the 1 GB bench captures: 1024 packets cost a hand-over (and, when the analysis
/// waits, a thread wake-up) every ~70 us on TCP headers; 4096 cut TCP-on time by 15%.
const BATCH_ITEMS: usize = 4096;
/// ... or this many payload bytes: small enough that the batch is still in cache when the
/// analysing thread reads it (1 MiB batches of SCTP measured 10% slower than 320 KiB).
const BATCH_BYTES: usize = 320 << 10;
/// The first batch of a pipelined capture is this many times smaller, and each next one twice
/// the size of the one before, up to the limits above: the analysis starts at once, and a
/// small capture (a 1 MB one holds ~7,000 packets) is still split into enough batches for the
/// two threads to overlap.
const FIRST_BATCH_DIVISOR: usize = 16;
/// Unpipelined (one thread reads and analyses), a batch has no hand-over to amortise: it stays
/// at a quarter of the limits, in cache, and small in memory (full-size batches, allocated per
/// capture, made a batch of 200 one-megabyte captures with `--jobs 1` 20% slower).
const UNPIPELINED_DIVISOR: usize = 4;

/// What a batched packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    /// An SCTP packet (IP protocol 132), or one carried over UDP (RFC 6951) when `udp`.
    Sctp { udp: bool },
    /// A TCP segment: only its header is kept (the tracker reads headers and lengths only).
    Tcp,
}

/// One IP packet for the analysis; its bytes are `arena[start..start + len]` of its batch.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub frame: u64,
    pub ts_ns: i64,
    pub offset: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub start: u32,
    pub len: u32,
    /// Bytes announced by the IP header but not in `arena` (cut by the snap length, or a TCP
    /// payload that was not copied).
    pub missing: u32,
    pub ttl: u8,
    pub kind: ItemKind,
    /// SCTP: CRC32c verified (RFC 9260 6.8); `None` when the packet was cut by the capture.
    pub checksum_ok: Option<bool>,
}

impl Item {
    /// The packet as the decoder gave it (payload cut as described at `missing`).
    pub fn ip<'a>(&self, arena: &'a [u8]) -> IpPacket<'a> {
        IpPacket {
            src: self.src,
            dst: self.dst,
            // The transport the payload was dispatched on (RFC 6951: SCTP in UDP is protocol 17).
            proto: match self.kind {
                ItemKind::Sctp { udp: false } => 132,
                ItemKind::Sctp { udp: true } => 17,
                ItemKind::Tcp => 6,
            },
            ttl: self.ttl,
            payload: std::borrow::Cow::Borrowed(self.bytes(arena)),
            missing: self.missing as usize,
            reassembled: false,
        }
    }

    pub fn bytes<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.start as usize..(self.start + self.len) as usize]
    }
}

/// Packets in capture order, with the warnings met between them.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub arena: Vec<u8>,
    pub items: Vec<Item>,
    /// `(i, text)`: a warning met before `items[i]` (or after the last item when `i == len`).
    pub warnings: Vec<(usize, String)>,
    /// Timestamp of the capture's first frame, once one was read.
    pub first_ns: Option<i64>,
    /// Bytes of the input consumed when the batch was closed (progress).
    pub input_bytes: u64,
}

impl Batch {
    fn clear(&mut self) {
        self.arena.clear();
        self.items.clear();
        self.warnings.clear();
    }
}

/// What stage one knows once the capture is read.
pub(crate) struct StageEnd {
    pub reader: CaptureReader,
    /// The link / IP decoder (its counters and pending fragments).
    pub net: NetDecoder,
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    pub tcp_packets: u64,
}

/// Reads a capture into batches.
pub(crate) struct Stage {
    reader: CaptureReader,
    net: NetDecoder,
    sctp_udp_ports: Vec<u16>,
    tcp: bool,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    tcp_packets: u64,
    done: bool,
    /// The next batch's limits are the full ones divided by this.
    divisor: usize,
    /// The smallest `divisor` reached (1 when pipelined).
    min_divisor: usize,
}

impl Stage {
    /// `pipelined`: batches are handed to another thread (sizes above).
    pub fn new(
        reader: CaptureReader,
        sctp_udp_ports: Vec<u16>,
        tcp: bool,
        pipelined: bool,
    ) -> Stage {
        Stage {
            reader,
            net: NetDecoder::new(),
            sctp_udp_ports,
            tcp,
            first_ns: None,
            last_ns: None,
            tcp_packets: 0,
            done: false,
            divisor: if pipelined {
                FIRST_BATCH_DIVISOR
            } else {
                UNPIPELINED_DIVISOR
            },
            min_divisor: if pipelined { 1 } else { UNPIPELINED_DIVISOR },
        }
    }

    /// Fills `b` (cleared first) with the next packets; false once the capture is exhausted
    /// (the batch may still hold its last packets).
    pub fn fill(&mut self, b: &mut Batch) -> bool {
        b.clear();
        let (items, bytes) = (BATCH_ITEMS / self.divisor, BATCH_BYTES / self.divisor);
        self.divisor = (self.divisor / 2).max(self.min_divisor);
        while !self.done && b.items.len() < items && b.arena.len() < bytes {
            let Some(frame) = self.reader.next_frame() else {
                self.done = true;
                break;
            };
            if self.first_ns.is_none() {
                self.first_ns = Some(frame.ts_ns);
            }
            self.last_ns = Some(frame.ts_ns);
            let (number, ts_ns, offset) = (frame.number, frame.ts_ns, frame.offset);
            match self.net.decode(&frame) {
                Ok(Some(ip)) => {
                    let at = (number, ts_ns, offset);
                    push_ip(
                        b,
                        &ip,
                        at,
                        &self.sctp_udp_ports,
                        self.tcp,
                        &mut self.tcp_packets,
                    );
                }
                Ok(None) => {}
                Err(e) => b.warnings.push((
                    b.items.len(),
                    format!("frame {number} (offset {offset}): {e}"),
                )),
            }
        }
        b.first_ns = self.first_ns;
        b.input_bytes = self.reader.input_bytes_read();
        !self.done
    }

    pub fn finish(self) -> StageEnd {
        StageEnd {
            reader: self.reader,
            net: self.net,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            tcp_packets: self.tcp_packets,
        }
    }
}

/// Dispatches an IP packet by protocol: SCTP (132), SCTP over UDP (RFC 6951), TCP (6); other
/// protocols are not needed by the analysis.
fn push_ip(
    b: &mut Batch,
    ip: &IpPacket<'_>,
    (frame, ts_ns, offset): (u64, i64, u64),
    sctp_udp_ports: &[u16],
    track_tcp: bool,
    tcp_packets: &mut u64,
) {
    let (kind, bytes, mut missing) = match ip.proto {
        132 => (ItemKind::Sctp { udp: false }, &ip.payload[..], ip.missing),
        17 => {
            let Some((sp, dp, payload)) = net::transport::udp(&ip.payload) else {
                return;
            };
            if !(sctp_udp_ports.contains(&sp) || sctp_udp_ports.contains(&dp)) {
                return;
            }
            // RFC 6951 5.1: the SCTP packet follows the UDP header.
            (ItemKind::Sctp { udp: true }, payload, ip.missing)
        }
        6 => {
            *tcp_packets += 1;
            if !track_tcp {
                return;
            }
            (ItemKind::Tcp, &ip.payload[..], ip.missing)
        }
        _ => return,
    };
    let bytes = match kind {
        ItemKind::Tcp => {
            // RFC 9293 3.1: Data Offset (byte 12, high nibble) x 4 = header length; the
            // payload is accounted for in `missing` only.
            let hlen = bytes
                .get(12)
                .map_or(bytes.len(), |o| usize::from(o >> 4) * 4);
            let keep = hlen.max(20).min(bytes.len());
            missing += bytes.len() - keep;
            &bytes[..keep]
        }
        ItemKind::Sctp { .. } => bytes,
    };
    // RFC 9260 6.8: a packet with a bad CRC32c would be discarded by the receiver; we flag it
    // and still analyse it. A packet cut by the snap length cannot be checked.
    let checksum_ok = match kind {
        ItemKind::Sctp { .. } if missing == 0 && bytes.len() >= sctp::wire::COMMON_HEADER_LEN => {
            Some(sctp::crc32c::verify(bytes))
        }
        _ => None,
    };
    let start = b.arena.len();
    b.arena.extend_from_slice(bytes);
    b.items.push(Item {
        frame,
        ts_ns,
        offset,
        src: ip.src,
        dst: ip.dst,
        start: start as u32,
        len: bytes.len() as u32,
        missing: missing as u32,
        ttl: ip.ttl,
        kind,
        checksum_ok,
    });
}
