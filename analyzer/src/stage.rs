//! Stage one of the pass: reads frames, decodes link and IP, verifies SCTP checksums and packs
//! what the analysis needs into batches, so that a second thread can analyse one batch while
//! this one reads the next (`analyze::analyze_reader_streaming`).
//!
//! A batch keeps the order of the capture: the analysis sees the same packets, warnings and
//! time base in the same order as a single-threaded pass would, so both give identical output.

use std::net::IpAddr;

use crate::capture::rotation::{Gap, MemberFile, Rotation};
use crate::capture::CaptureReader;
use crate::decimal::{fmt_dur, plural};
use crate::encrypted::Encrypted;
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

/// One IP packet for the analysis, in 40 bytes (the reading thread writes them and the analysing
/// one reads them: halving the item from 80 bytes cut the reader's own time on TCP headers by a
/// quarter). Its addresses and bytes are in the batch's arena from `start` on (`Item::raw`).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub frame: u64,
    pub ts_ns: i64,
    /// The frame's offset in the file (low 48 bits: `offset`) and the packet's IPv4
    /// Identification (high 16: `ip_id`), packed so that the item stays 40 bytes.
    pub offset_ip_id: u64,
    /// `arena[start..]`: the source address, the destination address (4 or 16 bytes each, as
    /// `v6` says), then `len` bytes of the packet.
    pub start: u32,
    pub len: u32,
    /// Bytes announced by the IP header but not in `arena` (cut by the snap length, or a TCP
    /// payload that was not copied).
    pub missing: u32,
    pub ttl: u8,
    pub kind: ItemKind,
    /// SCTP: CRC32c verified (RFC 9260 6.8); `None` when the packet was cut by the capture.
    pub checksum_ok: Option<bool>,
    /// Bit 0: the source is IPv6; bit 1: the destination is. Bits 2-4: the Linux cooked-capture
    /// packet type + 1 (`link_packet_type`), 0 for other link types.
    pub v6: u8,
}

/// `Item::v6` bits of the link packet type.
const LINK_SHIFT: u8 = 2;
/// `Item::offset_ip_id`: where the Identification starts (a file offset stays below 2^48).
const IP_ID_SHIFT: u32 = 48;

// The size the comment above promises.
const _: () = assert!(std::mem::size_of::<Item>() == 40);

/// Appends an address to an arena (`Item::start`).
#[inline]
fn push_addr(arena: &mut Vec<u8>, a: &IpAddr) -> u8 {
    match a {
        IpAddr::V4(v) => {
            arena.extend_from_slice(&v.octets());
            0
        }
        IpAddr::V6(v) => {
            arena.extend_from_slice(&v.octets());
            1
        }
    }
}

impl Item {
    /// The source and destination addresses (4 or 16 bytes each, `net::ip_from_octets`) and
    /// the bytes of the packet, as the arena holds them (no `IpPacket` is built again).
    #[inline]
    pub fn raw<'a>(&self, arena: &'a [u8]) -> (&'a [u8], &'a [u8], &'a [u8]) {
        let at = self.start as usize;
        let n = if self.v6 & 1 != 0 { 16 } else { 4 };
        let m = if self.v6 & 2 != 0 { 16 } else { 4 };
        let (src, rest) = arena[at..].split_at(n);
        let (dst, rest) = rest.split_at(m);
        (src, dst, &rest[..self.len as usize])
    }

    /// The frame's offset in the file.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.offset_ip_id & ((1 << IP_ID_SHIFT) - 1)
    }

    /// The packet's IPv4 Identification (`IpPacket::ip_id`), 0 for IPv6.
    #[inline]
    pub fn ip_id(&self) -> u16 {
        (self.offset_ip_id >> IP_ID_SHIFT) as u16
    }

    /// The Linux cooked-capture packet type of the frame (`net::sll_packet_type`; types above 4
    /// read as 5), None for other link types.
    #[inline]
    pub fn link_packet_type(&self) -> Option<u8> {
        (self.v6 >> LINK_SHIFT).checked_sub(1)
    }
}

/// `Item::v6` bits for a link packet type.
fn link_bits(t: Option<u16>) -> u8 {
    t.map_or(0, |t| (t.min(5) as u8 + 1) << LINK_SHIFT)
}

/// Packets in capture order, with the warnings met between them.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub arena: Vec<u8>,
    pub items: Vec<Item>,
    /// `(i, text)`: a warning met before `items[i]` (or after the last item when `i == len`).
    pub warnings: Vec<(usize, String)>,
    /// `(i, gap)`: a capture gap at a file boundary of a rotated capture, before `items[i]`.
    pub gaps: Vec<(usize, Gap)>,
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
        self.gaps.clear();
    }
}

/// What stage one knows once the capture is read.
pub(crate) struct StageEnd {
    pub reader: CaptureReader,
    /// The link / IP decoder (its counters and pending fragments).
    pub net: NetDecoder,
    pub first_ns: Option<i64>,
    /// The latest timestamp of any frame (the last frame's, in a capture in time order).
    pub last_ns: Option<i64>,
    pub tcp_packets: u64,
    /// Frames stamped earlier than a frame before them.
    pub order: TimeOrder,
    /// NFLOG frames, and those without the kernel's timestamp.
    pub nflog: NflogStamps,
    /// Encrypted traffic that may carry SCTP: DTLS (WebRTC data channels), IPsec ESP.
    pub encrypted: Encrypted,
    /// Frames read, all files of a rotated capture together.
    pub frames: u64,
    /// The reader's warnings (of every file of a rotated capture, each naming its file).
    pub warnings: Vec<String>,
    /// The files of a rotated capture (empty for one file).
    pub members: Vec<MemberFile>,
}

/// Frames whose timestamp is earlier than that of a frame before them in the file. A capture on
/// several interfaces or on Linux's "any" device has a few, microseconds behind (an outgoing
/// packet is stamped when handed to the capture, an incoming one on arrival, and they reach the
/// file in another order); files appended to one another (`mergecap -a`) have them seconds
/// behind. The analysis takes packets in file order, so time differences across them are off by
/// up to the lag.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TimeOrder {
    pub frames: u64,
    /// The first such frame, and how far behind the latest timestamp before it (ns).
    pub first: Option<(u64, i64)>,
    /// The frame furthest behind, and by how much (ns).
    pub most: Option<(u64, i64)>,
}

/// Frames this little behind an earlier one are what capturing on several interfaces does; more
/// is a file out of time order.
const SMALL_TIME_LAG_NS: i64 = 1_000_000;

impl TimeOrder {
    #[cold]
    fn behind(&mut self, frame: u64, lag_ns: i64) {
        self.frames += 1;
        self.first.get_or_insert((frame, lag_ns));
        if self.most.is_none_or(|(_, m)| lag_ns > m) {
            self.most = Some((frame, lag_ns));
        }
    }

    /// The capture warning, when a frame was behind.
    pub fn warning(&self) -> Option<String> {
        let ((first, first_lag), (most, lag)) = self.first.zip(self.most)?;
        let n = self.frames;
        let frames = plural(n, "frame is", "frames are");
        let which = if n == 1 {
            format!("frame {first}, {} behind", fmt_dur(first_lag))
        } else if first == most {
            format!(
                "the first and furthest behind: frame {first}, {}",
                fmt_dur(lag)
            )
        } else {
            format!(
                "the first frame {first}, {} behind; the furthest frame {most}, {} behind",
                fmt_dur(first_lag),
                fmt_dur(lag)
            )
        };
        let why = if lag < SMALL_TIME_LAG_NS {
            "a capture on several interfaces or on Linux's \"any\" device does this (an outgoing packet is stamped when handed to the capture, an incoming one on arrival)"
        } else {
            "the file is not in time order (files appended with `mergecap -a`, or interfaces written in turn): put it in order first (`reordercap IN OUT`)"
        };
        Some(format!("{frames} stamped earlier than a frame before them ({which}): {why}; the analysis takes packets in file order, so times measured across them (RTT, SACK delay, RTO, failover) can be off by up to {}", fmt_dur(lag)))
    }
}

/// NFLOG frames (`tcpdump -i nflog:N`): their record time is when libpcap read a batch of them,
/// so a frame that carries the kernel's timestamp of its packet (`net::nflog_timestamp`) is
/// timed by that instead; one that does not keeps the batch's time.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NflogStamps {
    pub frames: u64,
    /// Frames timed by the kernel's timestamp, and the largest difference from their record
    /// time (ns).
    pub stamped: u64,
    pub most_apart_ns: i64,
    pub unstamped: u64,
    /// The first frame without a timestamp.
    pub first_unstamped: Option<u64>,
}

impl NflogStamps {
    /// Counts an NFLOG frame; its time: the kernel's when it carries it, else `record_ns`.
    #[cold]
    fn frame(&mut self, number: u64, data: &[u8], record_ns: i64) -> i64 {
        self.frames += 1;
        match net::nflog_timestamp(data) {
            Some(Some(t)) => {
                self.stamped += 1;
                self.most_apart_ns = self.most_apart_ns.max(record_ns.abs_diff(t) as i64);
                t
            }
            Some(None) => {
                self.unstamped += 1;
                self.first_unstamped.get_or_insert(number);
                record_ns
            }
            None => record_ns,
        }
    }

    /// The capture warnings: frames timed by the kernel's timestamp, frames without one.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.stamped > 0 {
            out.push(format!("{} timed by the kernel's timestamp of their packet (NFULA_TIMESTAMP), not by their capture record, which tells when libpcap read them: the kernel hands nflog frames over in batches, and the two differed by up to {}", plural(self.stamped, "NFLOG frame is", "NFLOG frames are"), fmt_dur(self.most_apart_ns)));
        }
        if let Some(first) = self.first_unstamped {
            let (n, of) = (self.unstamped, self.frames);
            out.push(format!("{n} of {of} NFLOG frames carry no kernel timestamp (no NFULA_TIMESTAMP; the first frame {first}): libpcap stamps such a frame when it reads it, and the kernel hands nflog frames over in batches (when its buffer fills, or every second by default), so their times are the batch's, not the packets': time-based figures from them (RTT, SACK delay, RTO, failover, stalls) cannot be trusted, counts, sequence numbers and events can (packets logged in the output hook carry no timestamp)"));
        }
        out
    }
}

/// Reads a capture into batches.
pub(crate) struct Stage {
    reader: CaptureReader,
    net: NetDecoder,
    sctp_udp_ports: Vec<u16>,
    tcp: bool,
    first_ns: Option<i64>,
    /// The latest timestamp so far (`TimeOrder`; `i64::MIN` before the first frame).
    latest_ns: i64,
    tcp_packets: u64,
    encrypted: Encrypted,
    order: TimeOrder,
    nflog: NflogStamps,
    done: bool,
    /// The next batch's limits are the full ones divided by this.
    divisor: usize,
    /// The smallest `divisor` reached (1 when pipelined).
    min_divisor: usize,
    /// The files still to read of a rotated capture (None: one file).
    rotation: Option<Box<Rotation>>,
    /// Frames of the files before the current one (frame numbers run on).
    frame_base: u64,
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
            latest_ns: i64::MIN,
            tcp_packets: 0,
            encrypted: Encrypted::default(),
            order: TimeOrder::default(),
            nflog: NflogStamps::default(),
            done: false,
            divisor: if pipelined {
                FIRST_BATCH_DIVISOR
            } else {
                UNPIPELINED_DIVISOR
            },
            min_divisor: if pipelined { 1 } else { UNPIPELINED_DIVISOR },
            rotation: None,
            frame_base: 0,
        }
    }

    /// Reads the files of `rotation` after the reader's (a rotated capture).
    pub fn with_rotation(mut self, rotation: Option<Rotation>) -> Stage {
        self.rotation = rotation.map(Box::new);
        self
    }

    /// The current file ended: on to the next file of a rotated capture (a gap before it goes
    /// into the batch). False when none is left.
    #[cold]
    fn next_file(&mut self, b: &mut Batch) -> bool {
        let last_ns = self.last_ns();
        let Some(rot) = self.rotation.as_mut() else {
            return false;
        };
        let Some((reader, gap)) = rot.next(&self.reader, last_ns) else {
            return false;
        };
        self.reader = reader;
        self.frame_base = rot.frame_base;
        if let Some(g) = gap {
            b.gaps.push((b.items.len(), g));
        }
        true
    }

    /// Fills `b` (cleared first) with the next packets; false once the capture is exhausted
    /// (the batch may still hold its last packets).
    pub fn fill(&mut self, b: &mut Batch) -> bool {
        b.clear();
        let (items, bytes) = (BATCH_ITEMS / self.divisor, BATCH_BYTES / self.divisor);
        self.divisor = (self.divisor / 2).max(self.min_divisor);
        while !self.done && b.items.len() < items && b.arena.len() < bytes {
            // Bound by reference, not moved out of the Option: the move copied the frame
            // with wide loads right after the reader's narrower stores (a store-forwarding
            // stall per frame).
            let next = self.reader.next_frame();
            let Some(frame) = &next else {
                if self.next_file(b) {
                    continue;
                }
                self.done = true;
                break;
            };
            let (number, offset) = (frame.number + self.frame_base, frame.offset);
            let ts_ns = if frame.linktype == net::LINKTYPE_NFLOG {
                self.nflog.frame(number, frame.data, frame.ts_ns)
            } else {
                frame.ts_ns
            };
            if self.first_ns.is_none() {
                self.first_ns = Some(ts_ns);
            }
            if ts_ns >= self.latest_ns {
                self.latest_ns = ts_ns;
            } else {
                self.order.behind(number, self.latest_ns - ts_ns);
            }
            let link = link_bits(net::sll_packet_type(frame.linktype, frame.data));
            // By reference too (the decoded packet's addresses are 17-byte enums).
            match &self.net.decode(frame) {
                Ok(Some(ip)) => {
                    let at = (number, ts_ns, offset, link);
                    push_ip(
                        b,
                        ip,
                        at,
                        &self.sctp_udp_ports,
                        self.tcp,
                        (&mut self.tcp_packets, &mut self.encrypted),
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
        b.input_bytes =
            self.reader.input_bytes_read() + self.rotation.as_ref().map_or(0, |r| r.bytes_base);
        !self.done
    }

    /// The latest timestamp read, if a frame was.
    fn last_ns(&self) -> Option<i64> {
        self.first_ns.map(|_| self.latest_ns)
    }

    pub fn finish(self) -> StageEnd {
        let last_ns = self.last_ns();
        let (frames, warnings, members) = match self.rotation {
            None => (
                self.reader.frames_read(),
                self.reader.warnings().to_vec(),
                Vec::new(),
            ),
            Some(mut rot) => {
                rot.close_current(&self.reader, last_ns);
                (rot.frame_base, rot.warnings, rot.members)
            }
        };
        StageEnd {
            frames,
            warnings,
            members,
            reader: self.reader,
            net: self.net,
            first_ns: self.first_ns,
            last_ns,
            tcp_packets: self.tcp_packets,
            encrypted: self.encrypted,
            order: self.order,
            nflog: self.nflog,
        }
    }
}

/// Dispatches an IP packet by protocol: SCTP (132), SCTP over UDP (RFC 6951), TCP (6); other
/// protocols are not needed by the analysis, except that encrypted traffic which may carry SCTP
/// is counted (DTLS over UDP, IPsec ESP over IP or UDP).
fn push_ip(
    b: &mut Batch,
    ip: &IpPacket<'_>,
    (frame, ts_ns, offset, link): (u64, i64, u64, u8),
    sctp_udp_ports: &[u16],
    track_tcp: bool,
    (tcp_packets, encrypted): (&mut u64, &mut Encrypted),
) {
    let (kind, bytes, mut missing) = match ip.proto {
        132 => (ItemKind::Sctp { udp: false }, &ip.payload[..], ip.missing),
        17 => {
            let Some((sp, dp, payload)) = net::transport::udp(&ip.payload) else {
                return;
            };
            if !(sctp_udp_ports.contains(&sp) || sctp_udp_ports.contains(&dp)) {
                encrypted.udp(frame, (ip.src, ip.dst), (sp, dp), payload, ip.missing > 0);
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
        crate::encrypted::IPPROTO_ESP => {
            encrypted.esp(frame, ip.src, ip.dst, &ip.payload);
            return;
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
    let v6 = push_addr(&mut b.arena, &ip.src) | push_addr(&mut b.arena, &ip.dst) << 1 | link;
    b.arena.extend_from_slice(bytes);
    b.items.push(Item {
        frame,
        ts_ns,
        offset_ip_id: offset & ((1 << IP_ID_SHIFT) - 1) | u64::from(ip.ip_id) << IP_ID_SHIFT,
        start: start as u32,
        len: bytes.len() as u32,
        missing: missing as u32,
        ttl: ip.ttl,
        kind,
        checksum_ok,
        v6,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn packet(src: IpAddr, dst: IpAddr, proto: u8, payload: &[u8]) -> IpPacket<'_> {
        IpPacket {
            src,
            dst,
            proto,
            ttl: 7,
            ip_id: 0x1234,
            payload: Cow::Borrowed(payload),
            missing: 0,
            reassembled: false,
        }
    }

    /// Frames stamped earlier than the latest timestamp before them are counted (the first and
    /// the furthest behind), a tie is not, and the capture ends at its latest timestamp.
    #[test]
    fn frames_behind_the_latest_timestamp_are_counted() {
        // Classic pcap, microseconds, Ethernet (a frame too short to decode: no packet).
        let mut bytes = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&65535u32.to_le_bytes());
        bytes.extend_from_slice(&1u32.to_le_bytes());
        for secs in [10u32, 20, 15, 30, 5, 30] {
            for v in [secs, 0, 4, 4] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(&[0; 4]);
        }
        let reader = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes))).unwrap();
        let mut stage = Stage::new(reader, Vec::new(), false, false);
        let mut b = Batch::default();
        while stage.fill(&mut b) {}
        let end = stage.finish();
        assert_eq!(end.frames, 6);
        assert_eq!(end.order.frames, 2);
        assert_eq!(end.order.first, Some((3, 5_000_000_000)));
        assert_eq!(end.order.most, Some((5, 25_000_000_000)));
        assert_eq!(
            (end.first_ns, end.last_ns),
            (Some(10_000_000_000), Some(30_000_000_000))
        );
    }

    /// Items keep their addresses in the arena before their bytes: every family pairing reads
    /// back as it was pushed, and the bytes after them are the packet's.
    #[test]
    fn items_read_back_addresses_and_bytes() {
        let v4 = |a| IpAddr::V4(Ipv4Addr::new(10, 0, 0, a));
        let v6 = |a| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, a));
        let sctp: Vec<u8> = (0..40u8).collect();
        let mut tcp = vec![0u8; 32];
        tcp[12] = 8 << 4; // Data Offset: 32-byte header.
        tcp.extend_from_slice(&[0xee; 100]);
        let cases = [
            (v4(1), v4(2), 132, &sctp[..]),
            (v6(1), v6(2), 132, &sctp[..]),
            (v4(3), v6(4), 6, &tcp[..]),
            (v6(5), v4(6), 6, &tcp[..]),
        ];
        let mut b = Batch::default();
        let mut tcp_packets = 0;
        for (i, (s, d, proto, bytes)) in cases.iter().enumerate() {
            let link = link_bits(Some(i as u16 * 3));
            // A file offset near the top of the 48 bits it may use.
            let at = (i as u64, i as i64, (1 << 47) + i as u64, link);
            push_ip(
                &mut b,
                &packet(*s, *d, *proto, bytes),
                at,
                &[],
                true,
                (&mut tcp_packets, &mut Encrypted::default()),
            );
        }
        assert_eq!((b.items.len(), tcp_packets), (4, 2));
        for (i, (item, (s, d, proto, bytes))) in b.items.iter().zip(&cases).enumerate() {
            let kind = if *proto == 6 {
                ItemKind::Tcp
            } else {
                ItemKind::Sctp { udp: false }
            };
            let (src, dst, payload) = item.raw(&b.arena);
            let addrs = (net::ip_from_octets(src), net::ip_from_octets(dst));
            assert_eq!((addrs, item.kind, item.ttl), ((*s, *d), kind, 7));
            assert_eq!(
                (item.offset(), item.ip_id()),
                ((1 << 47) + i as u64, 0x1234)
            );
            // Packet types 0, 3, 6 (read as 5: "other") and 9 (likewise) come back.
            assert_eq!(item.link_packet_type(), Some((i as u8 * 3).min(5)));
            if *proto == 6 {
                // RFC 9293 3.1: the header only; the payload is counted as missing.
                assert_eq!((payload, item.missing), (&bytes[..32], 100));
            } else {
                assert_eq!((payload, item.missing), (*bytes, 0));
            }
        }
    }
}
