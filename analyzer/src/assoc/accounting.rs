//! Every SCTP packet accounted for once: capture duplicates (`DupFilter`), packets that belong to
//! no association (`Unassociated`, RFC 9260 8.4, 8.5, 8.5.1), chunk counting by type as tshark
//! counts, and the checksum-offload verdict (`ChecksumTally`).

use std::net::IpAddr;

use crate::lifecycle::EndKind;
use crate::sctp::{ChunkError, ChunkErrorKind, ChunkIter};

/// A packet equal to one seen this soon from the same source to the same destination is a
/// capture duplicate (a Linux "any"-device capture shows a forwarded packet on both interfaces,
/// a mirror port sees both sides of a router) ...
pub const DUP_NS: i64 = 1_000_000;
/// ... or this soon when nothing came from the peer in between that could have triggered a
/// resend (the rule `tcp::flow` applies to TCP segments).
pub const DUP_QUIET_NS: i64 = 10_000_000;

/// Packets remembered by the duplicate filter: the copy of a packet in an "any"-device
/// capture or from a mirror port follows it within a few packets. Their content keys sit in one
/// small array, compared in one pass while it stays in the L1 cache (a hashed table of 4096
/// slots cost a cache miss per packet: +45% on the 1 GB benchmark; 32 keys cost 60
/// instructions a packet).
const DUP_RING: usize = 8;

/// What a packet is compared on: its SCTP bytes through their CRC32c (the checksum field when
/// it is valid, else the CRC computed here), its length, its addresses and its IPv4
/// Identification. TTL / hop limit and the link header are not part of it. Every copy of one
/// datagram has its Identification (RFC 791 3.1: a router forwards it unchanged), while a stack
/// that numbers its packets gives byte-identical ones new numbers: Linux sends bursts of equal
/// SACKs microseconds apart (a zero window, a backlog processed at once), each a packet of its
/// own. IPv6 has no Identification: there the bytes alone decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DupKey {
    pub content: u64,
    pub len: u32,
    pub ip_id: u16,
    pub addrs: u64,
}

impl DupKey {
    /// `bytes`: the captured SCTP packet (common header and chunks); `missing`: bytes the
    /// capture cut off; `checksum_ok`: the CRC32c verdict (None when cut).
    #[inline]
    pub fn new(
        bytes: &[u8],
        missing: u32,
        checksum_ok: Option<bool>,
        src: &IpAddr,
        dst: &IpAddr,
        ip_id: u16,
    ) -> Self {
        let field = crate::sctp::crc32c::stored(bytes).unwrap_or(0);
        // A valid checksum is a CRC32c of the whole packet already; otherwise (bad CRC,
        // offloaded, or cut by the snap length) compute one over what was captured.
        let content = if checksum_ok == Some(true) {
            u64::from(field)
        } else {
            (u64::from(crate::sctp::crc32c::compute(bytes)) << 32 | u64::from(field)) ^ (1 << 63)
        };
        DupKey {
            content,
            len: bytes.len() as u32 + missing,
            ip_id,
            addrs: addr_hash(src) ^ addr_hash(dst).rotate_left(17),
        }
    }
}

/// By reference: a copied `IpAddr` is read with wide loads (see `Pass::sctp_packet`).
#[inline]
fn addr_hash(a: &IpAddr) -> u64 {
    match *a {
        IpAddr::V4(v) => u64::from(u32::from(v)).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        IpAddr::V6(v) => {
            let x = u128::from(v);
            ((x >> 64) as u64 ^ (x as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        }
    }
}

/// Where the first copy of a packet went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstCopy {
    /// Association and sending endpoint, None for an unassociated packet.
    pub assoc: Option<(u32, u8)>,
    /// Packets the peer had sent in that association when the first copy came.
    pub peer_seen: u64,
    /// Link packet type of the first copy (`stage::Item::link_packet_type`).
    pub link: Option<u8>,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    key: DupKey,
    ts_ns: i64,
    first: FirstCopy,
}

/// Finds capture duplicates among a capture's SCTP packets.
#[derive(Debug)]
pub struct DupFilter {
    /// Low 32 bits of the `DupKey::content` of the last `DUP_RING` packets (a prefilter: 32-bit
    /// lanes compare in one SSE2 instruction), and their whole keys (`None`: empty).
    contents: [u32; DUP_RING],
    slots: [Option<Slot>; DUP_RING],
    next: usize,
    /// Duplicates per (first copy's, duplicate's) link packet type (0-5, 6 = none).
    pub link_pairs: [[u64; 7]; 7],
}

impl Default for DupFilter {
    fn default() -> Self {
        DupFilter {
            contents: [0; DUP_RING],
            slots: [None; DUP_RING],
            next: 0,
            link_pairs: [[0; 7]; 7],
        }
    }
}

impl DupFilter {
    /// The first copy of a packet with this key seen within the duplicate window, if any.
    /// `peer_seen(assoc, sender)` tells how many packets the peer has sent now.
    #[inline]
    pub fn find(
        &self,
        key: &DupKey,
        ts_ns: i64,
        peer_seen: impl Fn(u32, u8) -> Option<u64>,
    ) -> Option<FirstCopy> {
        // One branch-free pass over the small key array (vectorised) rules out nearly every
        // packet; only a hit looks at the slots.
        let low = key.content as u32;
        let mut hit = false;
        for &c in &self.contents {
            hit |= c == low;
        }
        if !hit {
            return None;
        }
        // The latest earlier packet with this key (the same bytes may be in the ring twice).
        let s = self
            .slots
            .iter()
            .flatten()
            .filter(|s| s.key == *key && s.ts_ns <= ts_ns)
            .max_by_key(|s| s.ts_ns)?;
        let dt = ts_ns - s.ts_ns;
        if !(0..=DUP_QUIET_NS).contains(&dt) {
            return None;
        }
        let quiet = || match s.first.assoc {
            Some((a, sender)) => peer_seen(a, sender) == Some(s.first.peer_seen),
            None => false,
        };
        (dt <= DUP_NS || quiet()).then_some(s.first)
    }

    /// Remembers a packet that was not a duplicate (in place of the oldest).
    #[inline]
    pub fn insert(&mut self, key: DupKey, ts_ns: i64, first: FirstCopy) {
        let i = self.next;
        self.next = (i + 1) % DUP_RING;
        self.contents[i] = key.content as u32;
        self.slots[i] = Some(Slot { key, ts_ns, first });
    }

    /// Counts the link evidence of one duplicate.
    pub fn note_link(&mut self, first: Option<u8>, dup: Option<u8>) {
        let ix = |t: Option<u8>| usize::from(t.map_or(6, |t| t.min(5)));
        self.link_pairs[ix(first)][ix(dup)] += 1;
    }

    /// The link-layer evidence in words ("Linux cooked-capture packet types: outgoing + host
    /// (1800)"), None when the link header tells nothing (Ethernet, raw IP).
    pub fn link_evidence(&self) -> Option<String> {
        let mut pairs: Vec<(u64, String)> = Vec::new();
        for (i, row) in self.link_pairs.iter().enumerate() {
            for (j, &n) in row.iter().enumerate() {
                if n == 0 || (i == 6 && j == 6) {
                    continue;
                }
                let name = |t: usize| {
                    if t == 6 {
                        "none"
                    } else {
                        crate::net::sll_packet_type_name(t as u16)
                    }
                };
                pairs.push((n, format!("{} + {} ({n})", name(i), name(j))));
            }
        }
        if pairs.is_empty() {
            return None;
        }
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0));
        let list: Vec<String> = pairs.into_iter().map(|p| p.1).collect();
        Some(format!(
            "Linux cooked-capture packet types of first copy + duplicate: {}",
            list.join(", ")
        ))
    }
}

/// Chunk counts per type in order of first appearance, with the malformed ones apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkTally {
    pub counts: Vec<(u8, u64)>,
    /// Chunks whose length field was below 4 (counted under no type) or ran past the packet.
    pub malformed: u64,
}

impl ChunkTally {
    pub fn add(&mut self, ctype: u8) {
        self.add_n(ctype, 1);
    }

    pub fn add_n(&mut self, ctype: u8, n: u64) {
        match self.counts.iter_mut().find(|(t, _)| *t == ctype) {
            Some((_, c)) => *c += n,
            None => self.counts.push((ctype, n)),
        }
    }

    /// Counts the chunks of one packet (`chunk_types`).
    pub fn packet(&mut self, chunks: ChunkIter<'_>, bytes: &[u8]) {
        chunk_types(chunks, bytes, |t, malformed| {
            if let Some(t) = t {
                self.add(t);
            }
            if malformed {
                self.malformed += 1;
            }
        });
    }
}

/// Walks the chunks of one packet as tshark counts them, calling `f(type, malformed)` per chunk
/// (see `malformed_type`). The walk ends at the first malformed chunk.
pub fn chunk_types(chunks: ChunkIter<'_>, bytes: &[u8], mut f: impl FnMut(Option<u8>, bool)) {
    for c in chunks {
        match c {
            Ok(v) => f(Some(v.ctype), false),
            Err(e) => {
                if let Some(t) = malformed_type(&e, bytes) {
                    f(t, true);
                }
                break;
            }
        }
    }
}

/// How tshark counts a chunk that could not be walked: one whose length goes past the packet end
/// under its type (`Some(Some(type))`), one with a length below 4 under no type (`Some(None)`,
/// RFC 9260 3.2: the length counts the 4-byte chunk header); any other error is no chunk (None).
pub fn malformed_type(e: &ChunkError, bytes: &[u8]) -> Option<Option<u8>> {
    match e.kind {
        ChunkErrorKind::PastEnd { .. } => Some(bytes.get(e.offset).copied()),
        ChunkErrorKind::LengthTooSmall(_) => Some(None),
        _ => None,
    }
}

/// Why a packet belongs to no association.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnassocReason {
    /// An ABORT that matches no association (RFC 9260 8.4 rule 2: an OOTB ABORT is discarded).
    OotbAbort,
    /// A SHUTDOWN-COMPLETE that matches no association (8.4 rule 6).
    OotbShutdownComplete,
    /// A SHUTDOWN-ACK that matches no association (8.4 rule 5: answered by SHUTDOWN-COMPLETE).
    OotbShutdownAck,
    /// A tag that is neither of the two of the established association on the same ports and
    /// addresses (8.5: the receiver silently discards it).
    BadVtag,
    /// A packet without one decodable chunk (8.4: nothing to process).
    NoChunk,
    /// A late packet of an association already reported and dropped (streamed out after its
    /// end; see `Tracker::retire`).
    AfterReportedEnd,
    /// The bound on associations tracked at once was reached.
    Limit,
}

impl UnassocReason {
    pub fn as_str(self) -> &'static str {
        match self {
            UnassocReason::OotbAbort => "ootb_abort",
            UnassocReason::OotbShutdownComplete => "ootb_shutdown_complete",
            UnassocReason::OotbShutdownAck => "ootb_shutdown_ack",
            UnassocReason::BadVtag => "bad_vtag",
            UnassocReason::NoChunk => "no_chunk",
            UnassocReason::AfterReportedEnd => "after_reported_end",
            UnassocReason::Limit => "limit",
        }
    }
}

/// Distinct addresses and port pairs kept in the unassociated record.
const MAX_UNASSOC_LIST: usize = 64;

/// The capture-level record of packets that belong to no association.
#[derive(Debug, Clone, Default)]
pub struct Unassociated {
    pub packets: u64,
    pub chunks: ChunkTally,
    pub reasons: Vec<(UnassocReason, u64)>,
    /// (source, destination) address pairs, at most `MAX_UNASSOC_LIST`.
    pub addresses: Vec<(IpAddr, IpAddr)>,
    /// (source port, destination port), at most `MAX_UNASSOC_LIST`.
    pub ports: Vec<(u16, u16)>,
    pub first_frame: Option<u64>,
    pub last_frame: Option<u64>,
}

impl Unassociated {
    /// One unassociated packet (its chunks already counted into `chunks`).
    pub fn packet(
        &mut self,
        frame: u64,
        src: IpAddr,
        dst: IpAddr,
        ports: (u16, u16),
        why: UnassocReason,
    ) {
        self.packets += 1;
        self.first_frame.get_or_insert(frame);
        self.last_frame = Some(frame);
        match self.reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, n)) => *n += 1,
            None => {
                self.reasons.push((why, 1));
                self.reasons.sort();
            }
        }
        if self.addresses.len() < MAX_UNASSOC_LIST && !self.addresses.contains(&(src, dst)) {
            self.addresses.push((src, dst));
        }
        if self.ports.len() < MAX_UNASSOC_LIST && !self.ports.contains(&ports) {
            self.ports.push(ports);
        }
    }
}

/// What a capture's pass accounts for beside its associations: duplicates, unassociated
/// packets, checksum verdicts and how associations ended.
#[derive(Debug, Default)]
pub struct CaptureAccounting {
    pub dups: DupFilter,
    /// Capture duplicates (not analysed) and their chunks.
    pub duplicates: u64,
    pub duplicate_chunks: ChunkTally,
    pub unassociated: Unassociated,
    /// Chunks of the associations done so far (`association_done`).
    pub assoc_chunks: ChunkTally,
    pub checksums: ChecksumTally,
    /// Associations by end kind, in `EndKind` order of first appearance.
    pub ends: Vec<(EndKind, u64)>,
    /// ABORT causes of the associations that ended by ABORT (or failed their handshake by one):
    /// (code, name, associations).
    pub abort_causes: Vec<(u16, String, u64)>,
}

impl CaptureAccounting {
    /// Tallies an association that is done (its lifecycle finished): end kind, ABORT causes,
    /// checksums per endpoint.
    pub fn association_done(&mut self, a: &super::Association) {
        let kind = a.lifecycle.end_kind();
        match self.ends.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.ends.push((kind, 1)),
        }
        let mut seen: Vec<u16> = Vec::new();
        for c in a.lifecycle.abort_causes() {
            if seen.contains(&c.code) {
                continue;
            }
            seen.push(c.code);
            match self.abort_causes.iter_mut().find(|x| x.0 == c.code) {
                Some(x) => x.2 += 1,
                None => self.abort_causes.push((c.code, c.name.clone(), 1)),
            }
        }
        for &(t, n) in &a.chunk_counts {
            self.assoc_chunks.add_n(t, n);
        }
        self.assoc_chunks.malformed += a.malformed_chunks;
        let e = &a.endpoints;
        self.checksums.association(
            a.sent,
            a.bad_from,
            [&e[0].addresses[..], &e[1].addresses[..]],
        );
    }
}

impl CaptureAccounting {
    /// Warnings in words a user understands: duplicates with their link-layer evidence, and
    /// the checksum verdict.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.duplicates > 0 {
            out.push(format!(
                "{} SCTP packets were captured twice (same SCTP bytes from the same source to the same destination within 1 ms, or within 10 ms with nothing from the peer in between; TTL / hop limit and link header ignored): counted as duplicate frames, not analysed again{}",
                self.duplicates,
                self.dups
                    .link_evidence()
                    .map_or(String::new(), |e| format!(". {e}"))
            ));
        }
        let c = &self.checksums;
        if c.adler32 > 0 {
            out.push(format!(
                "{} SCTP packets carry a valid Adler-32 checksum (RFC 2960 6.8; CRC32c since RFC 3309 and RFC 9260 6.8): an old SCTP stack, counted as valid checksums",
                c.adler32
            ));
        }
        match c.offload() {
            Some(true) => {
                let addrs: Vec<String> = c.bad_side.iter().map(crate::net::ip_text).collect();
                out.push(format!(
                    "{} bad SCTP checksums are checksum offload at the capturing host, not corruption ({} of them are 0{}): the network card fills the CRC32c in after the capture point",
                    c.bad,
                    c.bad_zero,
                    if addrs.is_empty() {
                        String::new()
                    } else {
                        format!("; all sent by {}, whose peers' checksums are valid", addrs.join(", "))
                    }
                ));
            }
            Some(false) => out.push(format!(
                "{} SCTP packets have a bad CRC32c, not only from one side nor all 0: corruption (RFC 9260 6.8: the receiver discards them), not checksum offload",
                c.bad
            )),
            None => {}
        }
        out
    }
}

/// Addresses named as the bad side of checksum offload.
const MAX_OFFLOAD_ADDRS: usize = 16;

/// Bad CRC32c checksums of a capture, to tell checksum offload at the capturing host from
/// corruption: tallied per association endpoint when an association is done.
#[derive(Debug, Clone, Default)]
pub struct ChecksumTally {
    pub bad: u64,
    /// Bad checksums whose field is 0 (offload leaves the field unset).
    pub bad_zero: u64,
    /// Associations with a bad checksum where every packet of one endpoint was bad and the
    /// other endpoint sent packets, all valid; and those where it was otherwise.
    pub one_sided: u64,
    pub mixed: u64,
    /// Bad checksums on packets of no association (no peer to compare with).
    pub unattributed: u64,
    /// Packets whose CRC32c is wrong but whose checksum is a valid Adler-32 (RFC 2960 6.8, an
    /// old stack): valid, not counted in `bad`.
    pub adler32: u64,
    /// Addresses of the endpoints whose packets were all bad.
    pub bad_side: Vec<IpAddr>,
}

impl ChecksumTally {
    /// An association's checksums: per endpoint (packets sent, bad ones) and its addresses.
    pub fn association(&mut self, sent: [u64; 2], bad: [u64; 2], addrs: [&[IpAddr]; 2]) {
        if bad[0] + bad[1] == 0 {
            return;
        }
        let all_bad = |i: usize| bad[i] == sent[i] && sent[i] > 0;
        let all_good = |i: usize| bad[i] == 0 && sent[i] > 0;
        let side = if all_bad(0) && all_good(1) {
            Some(0)
        } else if all_bad(1) && all_good(0) {
            Some(1)
        } else {
            None
        };
        match side {
            Some(i) => {
                self.one_sided += 1;
                for a in addrs[i] {
                    if self.bad_side.len() < MAX_OFFLOAD_ADDRS && !self.bad_side.contains(a) {
                        self.bad_side.push(*a);
                    }
                }
            }
            None => self.mixed += 1,
        }
    }

    /// True: checksum offload at the capturing host (every bad checksum is 0, or the bad ones
    /// all came from one side of their association while the other side's were valid); false:
    /// corruption; None: no bad checksum. (RFC 9260 6.8: the receiver discards a packet with a
    /// bad CRC32c, so a real corruption shows as a loss; offload never reaches the wire.)
    pub fn offload(&self) -> Option<bool> {
        if self.bad == 0 {
            return None;
        }
        Some(
            self.bad_zero == self.bad
                || (self.one_sided > 0 && self.mixed == 0 && self.unattributed == 0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sctp::SctpPacket;

    fn v4(a: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, a])
    }

    #[test]
    fn a_copy_soon_after_is_a_duplicate_and_a_late_one_needs_a_quiet_peer() {
        let bytes = [0u8; 16];
        let key = DupKey::new(&bytes, 0, Some(false), &v4(1), &v4(2), 7);
        assert_eq!(key, DupKey::new(&bytes, 0, Some(false), &v4(1), &v4(2), 7));
        assert_ne!(key, DupKey::new(&bytes, 0, Some(false), &v4(2), &v4(1), 7));
        let mut f = DupFilter::default();
        let first = FirstCopy {
            assoc: Some((3, 0)),
            peer_seen: 5,
            link: Some(4),
        };
        f.insert(key, 1_000, first);
        // Within 1 ms: a duplicate whatever the peer did.
        assert_eq!(f.find(&key, 900_000, |_, _| Some(9)), Some(first));
        // 5 ms later: only when the peer sent nothing in between.
        assert_eq!(f.find(&key, 5_000_000, |_, _| Some(5)), Some(first));
        assert_eq!(f.find(&key, 5_000_000, |_, _| Some(6)), None);
        // Past 10 ms, or before the first copy: never.
        assert_eq!(f.find(&key, 20_000_000, |_, _| Some(5)), None);
        assert_eq!(f.find(&key, 0, |_, _| Some(5)), None);
        // Other bytes: no match.
        let other = DupKey::new(&[1u8; 16], 0, Some(false), &v4(1), &v4(2), 7);
        assert_eq!(f.find(&other, 2_000, |_, _| Some(5)), None);
        // The same bytes with another IPv4 Identification: a packet of its own (Linux's bursts
        // of equal SACKs, lab run lk_zerowin_rcvbuf).
        let renumbered = DupKey::new(&bytes, 0, Some(false), &v4(1), &v4(2), 8);
        assert_eq!(f.find(&renumbered, 2_000, |_, _| Some(5)), None);
        f.note_link(Some(4), Some(0));
        f.note_link(Some(4), Some(0));
        assert_eq!(
            f.link_evidence().as_deref(),
            Some(
                "Linux cooked-capture packet types of first copy + duplicate: outgoing + host (2)"
            )
        );
        assert_eq!(DupFilter::default().link_evidence(), None);
    }

    #[test]
    fn chunks_with_a_length_below_four_are_counted_under_no_type() {
        // Common header, a DATA chunk of 20 bytes, then a chunk header of length 0.
        let mut p = vec![0u8; 12];
        p.extend_from_slice(&[0, 3, 0, 20]);
        p.extend_from_slice(&[0; 16]);
        p.extend_from_slice(&[0, 0, 0, 0]);
        let pkt = SctpPacket::new_checked(&p[..]).unwrap();
        let (mut t, mut types) = (ChunkTally::default(), Vec::new());
        t.packet(pkt.chunks(0), &p);
        chunk_types(pkt.chunks(0), &p, |c, _| types.extend(c));
        assert_eq!(
            (t.counts.clone(), t.malformed, types),
            (vec![(0, 1)], 1, vec![0])
        );
        // A length past the packet end: counted under its type, and as malformed.
        let mut q = vec![0u8; 12];
        q.extend_from_slice(&[6, 0, 0, 40, 0, 0, 0, 0]);
        let pkt = SctpPacket::new_checked(&q[..]).unwrap();
        let (mut t, mut types) = (ChunkTally::default(), Vec::new());
        t.packet(pkt.chunks(0), &q);
        chunk_types(pkt.chunks(0), &q, |c, _| types.extend(c));
        assert_eq!((t.counts, t.malformed, types), (vec![(6, 1)], 1, vec![6]));
    }

    #[test]
    fn unassociated_packets_keep_reasons_addresses_and_frames() {
        let mut u = Unassociated::default();
        u.packet(7, v4(1), v4(2), (1, 2), UnassocReason::BadVtag);
        u.packet(9, v4(1), v4(2), (1, 2), UnassocReason::OotbAbort);
        u.packet(12, v4(3), v4(2), (5, 2), UnassocReason::BadVtag);
        assert_eq!(u.packets, 3);
        assert_eq!(
            u.reasons,
            vec![(UnassocReason::OotbAbort, 1), (UnassocReason::BadVtag, 2)]
        );
        assert_eq!(u.addresses, vec![(v4(1), v4(2)), (v4(3), v4(2))]);
        assert_eq!(u.ports, vec![(1, 2), (5, 2)]);
        assert_eq!((u.first_frame, u.last_frame), (Some(7), Some(12)));
    }

    #[test]
    fn offload_is_one_side_bad_or_all_zero_and_corruption_otherwise() {
        let a: &[IpAddr] = &[v4(1)];
        let b: &[IpAddr] = &[v4(2)];
        let mut t = ChecksumTally::default();
        assert_eq!(t.offload(), None);
        // The capturing host's sent packets all bad, the peer's all valid.
        t.bad = 10;
        t.association([10, 8], [10, 0], [a, b]);
        assert_eq!((t.offload(), t.bad_side.clone()), (Some(true), vec![v4(1)]));
        // A bad checksum on both sides: corruption.
        t.association([10, 8], [3, 1], [a, b]);
        assert_eq!(t.offload(), Some(false));
        // One side bad while the peer sent nothing tells nothing either way: not offload.
        let mut lone = ChecksumTally {
            bad: 1,
            ..Default::default()
        };
        lone.association([1, 0], [1, 0], [a, b]);
        assert_eq!((lone.one_sided, lone.offload()), (0, Some(false)));
        // Unless every bad checksum is 0.
        t.bad_zero = 10;
        assert_eq!(t.offload(), Some(true));
    }
}
