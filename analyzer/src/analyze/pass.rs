//! The state of one pass over a capture (`Pass`): each SCTP packet classified by the tracker,
//! counted, checked for capture duplicates and fed chunk by chunk to the analyses; retired
//! associations and progress handed on (`Out`) to the emitting stage of `analyze::run`.

use std::collections::VecDeque;

use super::Options;
use crate::assoc::accounting::{chunk_types, CaptureAccounting, DupKey, FirstCopy};
use crate::assoc::{Association, Classified, PacketCtx, Tracker};
use crate::capture::rotation::Gap;
use crate::chunk_rows::ChunkRows;
use crate::packet::TimeBase;
use crate::pass_sink::{PassProgress, CHUNK_BATCH};
use crate::report::AssocReport;
use crate::sctp::{self, SctpPacket};
use crate::stage::{Batch, Item, ItemKind};

/// Retired TCP connections held before a hand-over (each is small; handing them on one by one
/// woke the emitting thread thousands of times a second on TCP-heavy captures).
const HANDOVER_TCP: usize = 16;
/// Warnings kept per capture; further ones are only counted.
const MAX_WARNINGS: usize = 50;
/// An association that ended stays with the tracker this long (capture time) before it is
/// handed on, so that its late packets (a repeated ABORT or SHUTDOWN-COMPLETE, late SACKs) are
/// counted with it: RFC 9260 9.2, the T5-shutdown-guard timer, 5 x RTO.Max (5 x 60 s).
const HOLD_ENDED_NS: i64 = 300_000_000_000;
/// Ended associations held at most (the oldest is handed on earlier): each keeps its detail
/// until it is summarised, so memory stays bounded.
const MAX_HELD: usize = 8;

/// Collects warnings up to a bound, counting the rest.
#[derive(Debug, Default)]
pub(super) struct Warnings {
    list: Vec<String>,
    suppressed: u64,
}

impl Warnings {
    pub(super) fn push(&mut self, w: impl FnOnce() -> String) {
        if self.list.len() < MAX_WARNINGS {
            self.list.push(w());
        } else {
            self.suppressed += 1;
        }
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        if self.suppressed > 0 {
            self.list
                .push(format!("{} more warnings not shown", self.suppressed));
        }
        self.list
    }
}

/// What the analysis hands on to the emitting stage, in capture order.
pub(super) enum Out {
    /// An association that ended (SHUTDOWN-COMPLETE or ABORT), with the capture's time base.
    Ended(Option<i64>, Box<Association>),
    /// A TCP connection retired, with the capture's time base.
    TcpRetired(Option<i64>, Box<crate::tcp::TcpFlow>),
    /// How far the pass is.
    Progress(PassProgress),
    /// Chunk rows of the packets analysed since the last hand-over (`RowSink` passes only).
    Chunks(Option<i64>, Box<ChunkRows>),
}

/// The report of an association that ended (`AssocInfer::finish_ended`, as `Pass::chunk` does
/// for associations that stay in the tracker).
pub(super) fn ended_report(
    mut assoc: Box<Association>,
    first_ns: Option<i64>,
    keep_rows: bool,
) -> AssocReport {
    assoc.timer_model_from_stack();
    assoc.infer.finish_ended(keep_rows);
    AssocReport::new(TimeBase { first_ns }, &assoc)
}

/// State of the pass over one capture.
pub(super) struct Pass<'o> {
    pub(super) opts: &'o Options,
    /// Streaming mode: associations are handed on (`Out::Ended`) as they end.
    pub(super) streaming: bool,
    /// An association that ended in the current packet, retired once the packet is done.
    pub(super) ended: Option<u32>,
    /// Ended associations still with the tracker (end time, id), oldest first (`HOLD_ENDED_NS`).
    pub(super) held: VecDeque<(i64, u32)>,
    pub(super) acct: CaptureAccounting,
    /// Retired associations and progress not yet handed on (see `drain`).
    pub(super) out: Vec<Out>,
    pub(super) emitted: u64,
    pub(super) emitted_tcp: u64,
    pub(super) tracker: Tracker,
    pub(super) tcp: crate::tcp::TcpTracker,
    pub(super) chunks: Option<ChunkRows>,
    /// Hand the chunk rows on in batches (`Out::Chunks`) instead of keeping them all.
    pub(super) stream_chunks: bool,
    pub(super) warnings: Warnings,
    /// Timestamp of the capture's first frame (the time base of emitted reports).
    pub(super) first_ns: Option<i64>,
    pub(super) sctp_packets: u64,
    pub(super) bad_checksums: u64,
    /// SCTP and TCP packets analysed (progress).
    pub(super) packets: u64,
    /// Capture gaps met (rotated captures), and the end of the latest one.
    pub(super) gaps: Vec<Gap>,
    pub(super) gap_end_ns: i64,
}

impl<'o> Pass<'o> {
    pub(super) fn new(opts: &'o Options, streaming: bool) -> Self {
        Pass {
            opts,
            streaming,
            ended: None,
            held: VecDeque::new(),
            acct: CaptureAccounting::default(),
            out: Vec::new(),
            emitted: 0,
            emitted_tcp: 0,
            tracker: {
                let mut t = Tracker::new(opts.limits);
                t.skip_table_rows = !opts.keep_rows;
                t.release_ended = streaming;
                t
            },
            tcp: {
                let mut t = crate::tcp::TcpTracker::new();
                t.keep_rows = opts.keep_rows;
                t
            },
            chunks: opts.keep_chunks.then(ChunkRows::default),
            stream_chunks: false,
            warnings: Warnings::default(),
            first_ns: None,
            sctp_packets: 0,
            bad_checksums: 0,
            packets: 0,
            gaps: Vec::new(),
            gap_end_ns: i64::MIN,
        }
    }

    /// Analyses a batch of packets from `stage`, in order, with the warnings met between them.
    pub(super) fn batch(&mut self, b: &mut Batch) {
        if self.first_ns.is_none() {
            self.first_ns = b.first_ns;
        }
        self.packets += b.items.len() as u64;
        let mut warnings = std::mem::take(&mut b.warnings).into_iter().peekable();
        let mut gaps = b.gaps.iter().peekable();
        // Index of the item before which the next warning or capture gap was met (one
        // comparison per item).
        let next_mark = |w: Option<&(usize, String)>, g: Option<&&(usize, Gap)>| {
            w.map_or(usize::MAX, |w| w.0)
                .min(g.map_or(usize::MAX, |g| g.0))
        };
        let mut next = next_mark(warnings.peek(), gaps.peek());
        for (i, item) in b.items.iter().enumerate() {
            if i >= next {
                while let Some((_, w)) = warnings.next_if(|(at, _)| *at <= i) {
                    self.warnings.push(|| w);
                }
                while let Some((_, g)) = gaps.next_if(|(at, _)| *at <= i) {
                    self.gap(*g);
                }
                next = next_mark(warnings.peek(), gaps.peek());
            }
            match item.kind {
                ItemKind::Sctp { .. } => self.sctp_packet(item, &b.arena),
                ItemKind::Tcp => {
                    let (src, dst, bytes) = item.raw(&b.arena);
                    let addrs = crate::tcp::RawAddrs { src, dst };
                    self.tcp.segment_raw(
                        item.frame,
                        item.ts_ns,
                        addrs,
                        bytes,
                        item.missing as usize,
                    );
                    if self.streaming && self.tcp.has_retired() {
                        let first_ns = self.first_ns;
                        for f in self.tcp.take_retired() {
                            self.emitted_tcp += 1;
                            self.out.push(Out::TcpRetired(first_ns, Box::new(f)));
                        }
                    }
                }
            }
        }
        for (_, w) in warnings {
            self.warnings.push(|| w);
        }
        for (_, g) in gaps {
            self.gap(*g);
        }
    }

    /// A capture gap at a file boundary of a rotated capture: kept, and from here on no figure
    /// is measured across it (`PacketCtx::gap_end_ns`).
    #[cold]
    fn gap(&mut self, g: Gap) {
        self.gap_end_ns = g.end_ns;
        self.tcp.capture_gap(g.end_ns);
        self.gaps.push(g);
    }

    /// Whether what the pass holds should be handed on now rather than with the next progress:
    /// an ended association goes at once (holding them measured slower), retired TCP
    /// connections in groups.
    pub(super) fn handover_due(&self) -> bool {
        self.out.len() >= HANDOVER_TCP
            || self.out.iter().any(|o| matches!(o, Out::Ended(..)))
            || (self.stream_chunks && self.chunks.as_ref().is_some_and(|c| c.len() >= CHUNK_BATCH))
    }

    /// What the pass hands on after a batch: retired associations, chunk rows (`RowSink`
    /// passes, once a batch is full), then progress.
    pub(super) fn drain(&mut self, input_bytes: u64) -> std::vec::Drain<'_, Out> {
        if self.stream_chunks {
            if let Some(rows) = self.chunks.as_mut().filter(|c| c.len() >= CHUNK_BATCH) {
                let rows = std::mem::take(rows);
                self.out.push(Out::Chunks(self.first_ns, Box::new(rows)));
            }
        }
        self.out.push(Out::Progress(PassProgress {
            bytes: input_bytes,
            packets: self.packets,
            associations: self.tracker.created(),
        }));
        self.out.drain(..)
    }

    /// One SCTP packet (checksum already verified by `stage`).
    #[inline(always)]
    fn sctp_packet(&mut self, item: &Item, arena: &[u8]) {
        let (frame, ts_ns, offset) = (item.frame, item.ts_ns, item.offset());
        let (src, dst, bytes) = item.raw(arena);
        let missing = item.missing as usize;
        let pkt = match SctpPacket::new_checked(bytes) {
            Ok(p) => p,
            Err(e) => {
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): SCTP common header: {e}"));
                return;
            }
        };
        self.sctp_packets += 1;
        let mut checksum_ok = item.checksum_ok;
        if checksum_ok == Some(false) && sctp::adler32::verify(bytes) {
            // RFC 2960 6.8: an old stack's Adler-32 (CRC32c since RFC 3309): valid.
            self.acct.checksums.adler32 += 1;
            checksum_ok = Some(true);
        }
        if checksum_ok == Some(false) {
            self.bad_checksums += 1;
            self.acct.checksums.bad += 1;
            if sctp::crc32c::stored(bytes) == Some(0) {
                self.acct.checksums.bad_zero += 1;
            }
        }
        let unset = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
        let mut ctx = PacketCtx {
            frame,
            ts_ns,
            src: unset,
            dst: unset,
            src_port: pkt.src_port(),
            dst_port: pkt.dst_port(),
            vtag: pkt.verification_tag(),
            checksum_ok,
            udp_encap: item.kind == (ItemKind::Sctp { udp: true }),
            ttl: item.ttl,
            len: bytes.len() as u32 + item.missing,
            gap_end_ns: self.gap_end_ns,
        };
        // The addresses are written in place: built apart and moved in, each was copied with
        // a wide load right after its narrower stores (a store-forwarding stall per packet).
        ctx.src = crate::net::ip_from_octets(src);
        ctx.dst = crate::net::ip_from_octets(dst);
        // Borrowed from here on: rebound by value (`let ctx = ctx`), the whole context was
        // copied once more per packet.
        let ctx = &ctx;
        self.release_held(ts_ns);
        // A capture duplicate is counted, never analysed again (METRICS.md "Accounting").
        let key = DupKey::new(
            bytes,
            item.missing,
            checksum_ok,
            &ctx.src,
            &ctx.dst,
            item.ip_id(),
        );
        let link = item.link_packet_type();
        let tracker = &self.tracker;
        if let Some(first) = self
            .acct
            .dups
            .find(&key, ts_ns, |a, s| tracker.peer_sent(a, s))
        {
            self.duplicate(first, link, &pkt, missing, bytes);
            return;
        }
        let mut iter = pkt.chunks(missing);
        let mut first_err = None;
        let first_view = match iter.next() {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => {
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): {e}"));
                first_err = Some(e);
                None
            }
            None => None,
        };
        // Decoded once: the tracker classifies the packet by it, then the analysis reads it.
        // Parsed into its own binding and only borrowed after (`Option::map` moved the chunk
        // with wide loads right after parse's narrower stores: a store-forwarding stall).
        // Without a first chunk the result is a placeholder error, never read as such.
        let first_parsed = match &first_view {
            Some(v) => v.parse(),
            None => Err(sctp::ChunkError {
                offset: 0,
                kind: sctp::ChunkErrorKind::TrailingBytes(0),
            }),
        };
        let first_chunk = first_view.as_ref().and(first_parsed.as_ref().ok());
        let classified = self.tracker.classify(ctx, first_chunk);
        if let Some(old) = self.tracker.take_restarted() {
            self.end_association(old, ts_ns);
        }
        let (a, sender, path, ended) = match classified {
            Classified::Assoc {
                a,
                sender,
                path,
                ended,
            } => (a, sender, path, ended),
            Classified::Unassociated(why) => {
                let first = FirstCopy {
                    assoc: None,
                    peer_seen: 0,
                    link,
                };
                self.acct.dups.insert(key, ts_ns, first);
                if checksum_ok == Some(false) {
                    self.acct.checksums.unattributed += 1;
                }
                let u = &mut self.acct.unassociated;
                u.chunks.packet(pkt.chunks(missing), bytes);
                u.packet(frame, ctx.src, ctx.dst, (ctx.src_port, ctx.dst_port), why);
                return;
            }
        };
        let assoc = self.tracker.get_mut(a);
        let first = FirstCopy {
            assoc: Some((a, sender)),
            peer_seen: assoc.sent[1 - sender as usize],
            link,
        };
        self.acct.dups.insert(key, ts_ns, first);
        if ended {
            // After its end (until the T5 guard): counted with it, not analysed.
            let mut types = Vec::new();
            chunk_types(pkt.chunks(missing), bytes, |t, malformed| {
                if malformed {
                    assoc.count_malformed(t);
                } else if let Some(t) = t {
                    assoc.count_type(t);
                }
                types.extend(t);
            });
            assoc.lifecycle.after_end(ctx, sender, &types);
            return;
        }
        let infer = &mut assoc.infer;
        if infer.deadline_ns.is_none() {
            infer.deadline_ns = self.opts.deadline_ms.map(|d| (d * 1e6) as i64);
        }
        infer.packet_start(ctx, sender);
        if let Some(e) = first_err {
            self.malformed(a, bytes, &e);
        }
        if let Some(v) = &first_view {
            self.chunk(a, ctx, sender, path, offset, v, &first_parsed);
            release(first_parsed);
            for item in iter {
                match item {
                    Ok(v) => {
                        let parsed = v.parse();
                        self.chunk(a, ctx, sender, path, offset, &v, &parsed);
                        release(parsed);
                    }
                    Err(e) => {
                        self.warnings
                            .push(|| format!("frame {frame} (offset {offset}): {e}"));
                        self.malformed(a, bytes, &e);
                        break;
                    }
                }
            }
        }
        self.tracker.get_mut(a).infer.packet_end(ctx, sender);
        if let Some(ended) = self.ended.take() {
            self.end_association(ended, ts_ns);
        }
    }

    /// A capture duplicate: counted for the capture and its first copy's association.
    fn duplicate(
        &mut self,
        first: FirstCopy,
        link: Option<u8>,
        pkt: &SctpPacket<&[u8]>,
        missing: usize,
        bytes: &[u8],
    ) {
        self.acct.duplicates += 1;
        self.acct.dups.note_link(first.link, link);
        self.acct
            .duplicate_chunks
            .packet(pkt.chunks(missing), bytes);
        if let Some(assoc) = first.assoc.and_then(|(a, _)| self.tracker.live_mut(a)) {
            assoc.duplicate_frames += 1;
        }
    }

    /// An association ended (SHUTDOWN-COMPLETE, ABORT, restart). Streaming, it is held for its
    /// late packets and handed on later (`release_held`); otherwise it is summarised now, so
    /// that its detail can go (bounded memory over long captures).
    fn end_association(&mut self, a: u32, now_ns: i64) {
        if self.streaming {
            self.held.push_back((now_ns, a));
            if self.held.len() > MAX_HELD {
                if let Some((_, old)) = self.held.pop_front() {
                    self.emit_ended(old, now_ns);
                }
            }
        } else {
            let assoc = self.tracker.get_mut(a);
            assoc.timer_model_from_stack();
            assoc.infer.finish_ended(self.opts.keep_rows);
        }
    }

    /// Hands on the held associations whose T5 guard has passed.
    #[inline]
    fn release_held(&mut self, now_ns: i64) {
        while let Some(&(at, a)) = self.held.front() {
            if now_ns.saturating_sub(at) <= HOLD_ENDED_NS {
                break;
            }
            self.held.pop_front();
            self.emit_ended(a, now_ns);
        }
    }

    /// At the capture's end: hands on every held association (streaming).
    pub(super) fn release_all(&mut self) {
        while let Some((at, a)) = self.held.pop_front() {
            self.emit_ended(a, at);
        }
    }

    /// Retires an ended association: handed on whole, summarised by the receiving stage.
    fn emit_ended(&mut self, a: u32, now_ns: i64) {
        if let Some(mut assoc) = self.tracker.retire(a, now_ns) {
            assoc.lifecycle.finish();
            self.acct.association_done(&assoc);
            self.emitted += 1;
            self.out.push(Out::Ended(self.first_ns, assoc));
        }
    }

    /// A chunk whose header is present but whose length is impossible (RFC 9260 3.2): counted
    /// as tshark counts it (`accounting::chunk_types`); the walk of that packet ends there.
    fn malformed(&mut self, a: u32, bytes: &[u8], e: &sctp::ChunkError) {
        if let Some(ctype) = crate::assoc::accounting::malformed_type(e, bytes) {
            self.tracker.get_mut(a).count_malformed(ctype);
        }
    }

    /// Warns of the first gap block of a SACK whose start is above its end.
    #[cold]
    fn gap_block_check(&mut self, frame: u64, offset: u64, s: &sctp::SackChunk<'_>) {
        if let Some(g) = s
            .gap_blocks()
            .chain(s.nr_gap_blocks())
            .find(|g| g.start > g.end)
        {
            self.warnings.push(|| {
                format!(
                    "frame {frame} (offset {offset}): SACK gap block start {} > end {} ignored",
                    g.start, g.end
                )
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn chunk(
        &mut self,
        a: u32,
        ctx: &PacketCtx,
        sender: u8,
        path: usize,
        offset: u64,
        view: &sctp::ChunkView<'_>,
        parsed: &Result<sctp::Chunk<'_>, sctp::ChunkError>,
    ) {
        // By reference: moving a decoded chunk out of its result copies it.
        let chunk = match parsed {
            Ok(c) => Some(c),
            Err(e) => {
                let frame = ctx.frame;
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): {e}"));
                None
            }
        };
        if let Some(sctp::Chunk::Sack(s)) = chunk {
            // RFC 9260 3.3.4: a gap block's start is not above its end; inference skips one that is.
            if !(s.gap_bytes.is_empty() && s.nr_gap_bytes.is_empty()) {
                self.gap_block_check(ctx.frame, offset, s);
            }
        }
        self.tracker.chunk(a, ctx, sender, path, view, chunk);
        let assoc = self.tracker.get_mut(a);
        match chunk {
            // DATA and SACK, most chunks by far, go to each analysis's own entry for them: the
            // same calls, in the same order, as `chunk` makes for them, without each analysis
            // matching the chunk's type again.
            Some(sctp::Chunk::Data(d)) => {
                assoc.infer.data(ctx, sender, d);
                assoc.lifecycle.data(ctx, sender);
                assoc.streams.data(ctx, sender, d);
                assoc.stalls.data_chunk(ctx, sender, d);
                let epoch = assoc.streams.epoch(sender);
                assoc.hol.data(ctx, sender, d, epoch);
            }
            Some(sctp::Chunk::Sack(k)) => {
                assoc.infer.sack(ctx, sender, k);
                assoc.lifecycle.sack(ctx, sender);
                assoc.stalls.sack_chunk(ctx, sender, k);
                assoc.hol.sack(ctx, sender, k);
            }
            Some(c) => {
                assoc.infer.chunk(ctx, sender, view, c);
                assoc.lifecycle.chunk(ctx, sender, view, c);
                if let sctp::Chunk::Init(init) = c {
                    assoc.stack.init(sender, ctx.vtag, view, init);
                }
                if crate::streams::Streams::wants(view.ctype) {
                    assoc.streams.chunk(ctx, sender, view, c);
                }
                if crate::stalls::Stalls::wants(view.ctype) {
                    assoc.stalls.chunk(ctx, sender, c);
                }
                if crate::hol::Hol::wants(view.ctype) {
                    let epoch = assoc.streams.epoch(sender);
                    assoc.hol.chunk(ctx, sender, c, epoch);
                }
            }
            None => {
                // An ABORT whose causes are malformed still ends the association.
                assoc.lifecycle.unparsed(ctx, sender, view);
            }
        }
        if matches!(
            view.ctype,
            sctp::types::SHUTDOWN_COMPLETE | sctp::types::ABORT
        ) {
            // RFC 9260 9.2 / 9.1: the association is over (`end_association`).
            self.ended = Some(a);
        }
        if let Some(rows) = &mut self.chunks {
            rows.push(ctx, a, sender, view, chunk);
        }
    }
}

/// Drops a decoded chunk. DATA and SACK, most chunks, own nothing (their gap blocks and TSNs
/// are borrowed from the packet): the drop glue, a call and a match over every chunk type, is
/// skipped for them.
#[inline(always)]
fn release(parsed: Result<sctp::Chunk<'_>, sctp::ChunkError>) {
    if matches!(parsed, Ok(sctp::Chunk::Data(_) | sctp::Chunk::Sack(_))) {
        std::mem::forget(parsed);
    }
}
