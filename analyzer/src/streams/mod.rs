//! Streams and upper layer of an association (issue 15 section 1; METRICS.md "Streams and upper
//! layer"): the streams each endpoint negotiated (RFC 9260 5.1.1) and added or reset by
//! RE-CONFIG (RFC 6525), per direction and stream the messages, bytes, ordered share, fragmented
//! messages, PPIDs and SSN gaps, DATA on invalid streams (RFC 9260 6.5) tied to the peer's
//! "Invalid Stream Identifier" ERROR / ABORT, PPID 0 where the port's protocol registers a PPID,
//! and the upper-layer protocol (`ppid` holds the IANA table and the well-known ports).
//!
//! The association tracker owns one `Streams` per association and feeds it every chunk; this
//! module knows nothing of the tracker. The DATA / I-DATA arm is the per-packet hot path: it
//! allocates only when a stream is first seen (a row, and a page of 256 stream ids), at most
//! `MAX_STREAMS` rows per direction (the rest are counted), and searches nothing. `report`
//! builds the JSON contract and the events, in words.

pub mod ppid;
mod report;
#[cfg(test)]
mod tests;
mod window;

pub use report::{
    AssocStreamsReport, NegotiatedReport, PpidCount, StreamEvent, StreamReport, UpperLayer,
};

use crate::packet::PacketCtx;
use crate::sctp::cause::{cause_tlvs, decode_causes, CauseInfo};
use crate::sctp::{types, Chunk, ChunkView, DataChunk, ReconfigParam};
use window::{SsnTrack, TsnWindow};

/// Streams tracked per direction; DATA on further streams is only counted (`untracked_*`).
pub const MAX_STREAMS: usize = 1024;
/// Distinct PPIDs counted per stream; messages with further PPIDs are counted together.
const PPIDS_PER_STREAM: usize = 4;
/// Events kept per association (later ones are counted in `events_dropped`).
pub const MAX_EVENTS: usize = 64;
/// RE-CONFIG requests awaiting their answer, per association (the oldest is forgotten).
const MAX_PENDING: usize = 16;
/// "No event" in the event index fields.
const NONE: u16 = u16::MAX;
/// "Its event was not kept" (past `MAX_EVENTS`, counted once) in the event index fields.
const DROPPED: u16 = u16::MAX - 1;
/// RFC 9260 3.3.10.1: Invalid Stream Identifier.
const CAUSE_INVALID_STREAM: u16 = 1;

/// RFC 6525 4: RE-CONFIG parameter types.
mod ptype {
    pub const OUT_SSN_RESET: u16 = 13;
    pub const IN_SSN_RESET: u16 = 14;
    pub const SSN_TSN_RESET: u16 = 15;
    pub const RESPONSE: u16 = 16;
    pub const ADD_OUT_STREAMS: u16 = 17;
    pub const ADD_IN_STREAMS: u16 = 18;
}
/// RFC 6525 4.4: results "Success - Performed" and "In progress".
const RESULT_PERFORMED: u32 = 1;
const RESULT_IN_PROGRESS: u32 = 6;

/// Streams and upper layer of one association: fed every chunk by the tracker.
#[derive(Debug, Clone, Default)]
pub struct Streams {
    /// Indexed by the DATA-sending endpoint.
    dirs: [Dir; 2],
    /// What each endpoint announced in its INIT / INIT-ACK, and RE-CONFIG additions.
    neg: [Negotiated; 2],
    /// The association's well-known port, looked up at its first DATA.
    port: Option<Option<&'static ppid::Port>>,
    events: Vec<Event>,
    events_dropped: u64,
    /// RE-CONFIG requests not yet answered, oldest first.
    pending: Vec<Pending>,
}

/// One endpoint's streams (RFC 9260 3.3.2: OS and MIS of its INIT or INIT-ACK).
#[derive(Debug, Clone, Copy, Default)]
struct Negotiated {
    os: Option<u16>,
    mis: Option<u16>,
    /// Outgoing streams added by Add Outgoing Streams requests the peer performed (RFC 6525 5.2.5).
    added_out: u32,
    /// Outgoing streams requested and not yet answered (DATA on them is not called invalid).
    pending_out: u32,
}

/// One direction (the DATA of one sending endpoint).
#[derive(Debug, Clone)]
struct Dir {
    tsns: TsnWindow,
    /// Stream id -> 1 + index into `rows` (0: none), in pages of 256 ids made on first use.
    pages: Vec<Option<Box<[u16; 256]>>>,
    /// In order of first appearance.
    rows: Vec<StreamRow>,
    /// Index in `rows` of the stream of the latest DATA.
    last_row: u16,
    /// DATA on streams past `MAX_STREAMS`.
    untracked_messages: u64,
    untracked_bytes: u64,
    /// DATA on a stream id not below this is invalid (u32::MAX: the peer's MIS is unknown).
    limit: u32,
    /// Bumped by each stream reset of this direction: rows then take their next SSN afresh.
    epoch: u16,
    /// Index of this direction's `ppid_missing` event.
    ppid_missing: u16,
    /// Index of the `invalid_stream` event of streams past `MAX_STREAMS`.
    invalid_untracked: u16,
}

impl Default for Dir {
    fn default() -> Self {
        Dir {
            tsns: TsnWindow::default(),
            pages: Vec::new(),
            rows: Vec::new(),
            last_row: 0,
            untracked_messages: 0,
            untracked_bytes: 0,
            limit: u32::MAX,
            epoch: 0,
            ppid_missing: NONE,
            invalid_untracked: NONE,
        }
    }
}

/// One stream of one direction.
#[derive(Debug, Clone)]
struct StreamRow {
    sid: u16,
    /// Index of this stream's `invalid_stream` event.
    invalid_event: u16,
    /// DATA / I-DATA chunks (each TSN once).
    chunks: u64,
    /// Messages: B fragments (an unfragmented chunk has B and E).
    messages: u64,
    unordered: u64,
    /// Messages whose B fragment lacks E.
    fragmented: u64,
    bytes: u64,
    first_ns: i64,
    last_ns: i64,
    first_frame: u64,
    ssn: SsnTrack,
    /// (PPID, messages), in order of first appearance.
    ppids: [(u32, u64); PPIDS_PER_STREAM],
    n_ppids: u8,
    /// Messages with a PPID past the first `PPIDS_PER_STREAM`.
    other_ppids: u64,
}

impl StreamRow {
    fn new(sid: u16, ctx: &PacketCtx) -> Self {
        StreamRow {
            sid,
            invalid_event: NONE,
            chunks: 0,
            messages: 0,
            unordered: 0,
            fragmented: 0,
            bytes: 0,
            first_ns: ctx.ts_ns,
            last_ns: ctx.ts_ns,
            first_frame: ctx.frame,
            ssn: SsnTrack::default(),
            ppids: [(0, 0); PPIDS_PER_STREAM],
            n_ppids: 0,
            other_ppids: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, ctx: &PacketCtx, d: &DataChunk, epoch: u16) {
        self.chunks += 1;
        self.bytes += u64::from(d.payload_len);
        self.last_ns = ctx.ts_ns;
        if !d.flag_u {
            // Every fragment carries its message's SSN / MID (RFC 9260 3.3.1, RFC 8260 2.1).
            self.ssn.add(d.ssn_or_mid, d.idata, epoch);
        }
        if !d.flag_b {
            return;
        }
        self.messages += 1;
        self.unordered += u64::from(d.flag_u);
        self.fragmented += u64::from(!d.flag_e);
        // I-DATA carries the PPID in its B fragment only (RFC 8260 2.1); DATA in every chunk,
        // read once per message too.
        let ppid = d.ppid_or_fsn;
        let n = usize::from(self.n_ppids);
        if let Some(e) = self.ppids[..n].iter_mut().find(|e| e.0 == ppid) {
            e.1 += 1;
        } else if n < PPIDS_PER_STREAM {
            self.ppids[n] = (ppid, 1);
            self.n_ppids += 1;
        } else {
            self.other_ppids += 1;
        }
    }
}

impl Dir {
    /// The row of stream `sid`, made on first sight; None past `MAX_STREAMS`.
    #[inline(always)]
    fn row(&mut self, sid: u16, ctx: &PacketCtx) -> Option<&mut StreamRow> {
        // Consecutive DATA mostly go to one stream: the last row used is tried first.
        let last = usize::from(self.last_row);
        if self.rows.get(last).is_some_and(|r| r.sid == sid) {
            return self.rows.get_mut(last);
        }
        self.other_row(sid, ctx)
    }

    /// `row` when the stream is not the last one used.
    #[inline(never)]
    fn other_row(&mut self, sid: u16, ctx: &PacketCtx) -> Option<&mut StreamRow> {
        // Most associations use a few streams: those are found by a scan of the rows, and the
        // pages of the index are only made past `SCAN_ROWS` (two allocations less per
        // association on the per-packet path).
        if self.rows.len() <= SCAN_ROWS {
            if let Some(i) = self.rows.iter().position(|r| r.sid == sid) {
                self.last_row = i as u16;
                return self.rows.get_mut(i);
            }
        } else {
            let (page, at) = (usize::from(sid >> 8), usize::from(sid & 0xff));
            if let Some(Some(p)) = self.pages.get(page) {
                if p[at] != 0 {
                    self.last_row = p[at] - 1;
                    return self.rows.get_mut(usize::from(p[at] - 1));
                }
            }
        }
        if self.rows.len() >= MAX_STREAMS {
            return None;
        }
        if self.rows.is_empty() {
            self.rows.reserve_exact(2);
        }
        self.rows.push(StreamRow::new(sid, ctx));
        self.last_row = (self.rows.len() - 1) as u16;
        if self.rows.len() == SCAN_ROWS + 1 {
            // Index every row from now on.
            for i in 0..self.rows.len() {
                let sid = self.rows[i].sid;
                self.index(sid, i);
            }
        } else if self.rows.len() > SCAN_ROWS + 1 {
            self.index(sid, self.rows.len() - 1);
        }
        self.rows.last_mut()
    }

    /// Enters row `i` (stream `sid`) in the paged index.
    fn index(&mut self, sid: u16, i: usize) {
        let (page, at) = (usize::from(sid >> 8), usize::from(sid & 0xff));
        if self.pages.len() <= page {
            self.pages.resize_with(page + 1, || None);
        }
        let p = self.pages[page].get_or_insert_with(|| Box::new([0; 256]));
        // At most MAX_STREAMS (1024) rows: the index fits.
        p[at] = i as u16 + 1;
    }

    /// The row of stream `sid`, if it was seen.
    fn find(&self, sid: u16) -> Option<&StreamRow> {
        if self.rows.len() <= SCAN_ROWS {
            return self.rows.iter().find(|r| r.sid == sid);
        }
        let p = self.pages.get(usize::from(sid >> 8))?.as_ref()?;
        let i = p[usize::from(sid & 0xff)];
        (i != 0).then(|| &self.rows[usize::from(i - 1)])
    }
}

/// Streams of a direction found by scanning its rows before the paged index is made.
const SCAN_ROWS: usize = 4;

/// One event as recorded (the report words it).
#[derive(Debug, Clone)]
struct Event {
    ts_ns: i64,
    frame: u64,
    /// The endpoint that sent the event's chunk.
    by: u8,
    ctype: u8,
    what: What,
}

#[derive(Debug, Clone)]
enum What {
    /// DATA on stream `sid` of the direction `by` -> peer, not below `limit` (RFC 9260 6.5).
    InvalidStream {
        sid: u16,
        limit: u32,
        os: Option<u16>,
        peer_mis: Option<u16>,
        added: u32,
        chunks: u64,
        rejected: Option<Rejection>,
    },
    /// The peer (`by`) reported an Invalid Stream Identifier the DATA of which was not judged
    /// invalid here (its MIS not captured, or DATA not seen).
    InvalidStreamReported {
        sid: u16,
        data_frame: Option<u64>,
        reports: u64,
        cause: CauseInfo,
    },
    /// PPID 0 in the direction `by` -> peer on a port whose protocol registers a PPID.
    PpidMissing {
        port: &'static ppid::Port,
        messages: u64,
    },
    /// RE-CONFIG stream reset request (RFC 6525 4.1-4.3).
    StreamReset {
        ptype: u16,
        streams: u16,
        seq: u32,
        answer: Option<Answer>,
    },
    /// RE-CONFIG Add Outgoing / Incoming Streams request (RFC 6525 4.5, 4.6).
    StreamsAdded {
        outgoing: bool,
        n: u16,
        seq: u32,
        answer: Option<Answer>,
    },
}

/// The peer's ERROR / ABORT naming the invalid stream.
#[derive(Debug, Clone)]
struct Rejection {
    frame: u64,
    ts_ns: i64,
    ctype: u8,
    cause: CauseInfo,
}

/// How a RE-CONFIG request was answered.
#[derive(Debug, Clone, Copy)]
struct Answer {
    frame: u64,
    /// Re-configuration Response result; None when answered by the peer's Outgoing SSN Reset
    /// Request (RFC 6525 4.1: the implicit answer to an Incoming SSN Reset Request).
    result: Option<u32>,
}

/// A RE-CONFIG request awaiting its answer.
#[derive(Debug, Clone, Copy)]
struct Pending {
    requester: u8,
    seq: u32,
    ptype: u16,
    /// Add Outgoing Streams: the streams requested.
    n: u16,
    event: u16,
}

impl Streams {
    /// The stream-reset epoch of endpoint `sender`'s streams: bumped by each reset of them
    /// (RFC 6525 5.2.2: their numbering starts again).
    #[inline]
    pub fn epoch(&self, sender: u8) -> u16 {
        self.dirs[usize::from(sender & 1)].epoch
    }

    /// Whether `chunk` needs to see chunks of this type at all (DATA / I-DATA, INIT / INIT-ACK,
    /// RE-CONFIG, ERROR, ABORT): the others (SACK, HEARTBEAT, ...) are not passed, which spares
    /// the per-packet path a call.
    #[inline]
    pub fn wants(ctype: u8) -> bool {
        matches!(
            ctype,
            types::DATA
                | types::I_DATA
                | types::INIT
                | types::INIT_ACK
                | types::RE_CONFIG
                | types::ERROR
                | types::ABORT
        )
    }

    /// Every chunk of the association up to the one that ended it. `sender` is the index (0/1)
    /// of the sending endpoint. The DATA arm allocates nothing but a stream's first row; it is
    /// inlined into the caller's loop (a call per chunk cost more than its work).
    #[inline(always)]
    pub fn chunk(&mut self, ctx: &PacketCtx, sender: u8, view: &ChunkView<'_>, chunk: &Chunk<'_>) {
        let s = usize::from(sender & 1);
        match chunk {
            Chunk::Data(d) => self.data_from(ctx, s, d),
            Chunk::Sack(_) => {}
            Chunk::Init(init) => {
                // RFC 9260 3.3.2 / 3.3.3: the sender's outbound streams and maximum inbound
                // streams (the latest INIT / INIT-ACK counts: retransmissions repeat them).
                self.neg[s].os = Some(init.outbound_streams);
                self.neg[s].mis = Some(init.inbound_streams);
                self.update_limits();
            }
            Chunk::Reconfig { params } => self.reconfig(ctx, s, view.ctype, params),
            Chunk::Error { .. } | Chunk::Abort { .. } => self.causes(ctx, s, view),
            _ => {}
        }
    }

    /// A DATA or I-DATA chunk sent by endpoint `sender` (what `chunk` does with one; the pass
    /// calls it directly, without matching the chunk's type once more).
    #[inline(always)]
    pub fn data(&mut self, ctx: &PacketCtx, sender: u8, d: &DataChunk) {
        self.data_from(ctx, usize::from(sender & 1), d);
    }

    #[inline(always)]
    fn data_from(&mut self, ctx: &PacketCtx, s: usize, d: &DataChunk) {
        let dir = &mut self.dirs[s];
        if !dir.tsns.first_time(d.tsn) {
            return;
        }
        let epoch = dir.epoch;
        let invalid = u32::from(d.stream_id) >= dir.limit;
        let (tracked, invalid_event) = match dir.row(d.stream_id, ctx) {
            Some(row) => {
                row.add(ctx, d, epoch);
                (true, row.invalid_event)
            }
            None => {
                dir.untracked_bytes += u64::from(d.payload_len);
                dir.untracked_messages += u64::from(d.flag_b);
                (false, dir.invalid_untracked)
            }
        };
        if invalid {
            self.invalid(ctx, s, d, tracked, invalid_event);
        }
        // The port's protocol is looked up once; most ports register no PPID (no check then).
        if d.flag_b && d.ppid_or_fsn == 0 && !matches!(self.port, Some(None)) {
            self.ppid_zero(ctx, s, d);
        }
    }

    /// DATA on a stream not below the streams usable in its direction (RFC 9260 6.5).
    #[cold]
    fn invalid(&mut self, ctx: &PacketCtx, s: usize, d: &DataChunk, tracked: bool, ev: u16) {
        if ev == DROPPED {
            return;
        }
        if let Some(Event {
            what: What::InvalidStream { chunks, .. },
            ..
        }) = self.events.get_mut(usize::from(ev))
        {
            *chunks += 1;
            return;
        }
        let what = What::InvalidStream {
            sid: d.stream_id,
            limit: self.dirs[s].limit,
            os: self.neg[s].os,
            peer_mis: self.neg[1 - s].mis,
            added: self.neg[s].added_out + self.neg[s].pending_out,
            chunks: 1,
            rejected: None,
        };
        let ctype = if d.idata { types::I_DATA } else { types::DATA };
        let i = self.push(ctx, s, ctype, what).unwrap_or(DROPPED);
        let dir = &mut self.dirs[s];
        if !tracked {
            dir.invalid_untracked = i;
        } else if let Some(row) = dir.row(d.stream_id, ctx) {
            row.invalid_event = i;
        }
    }

    /// A message with PPID 0 (unspecified, RFC 9260 3.3.1).
    fn ppid_zero(&mut self, ctx: &PacketCtx, s: usize, d: &DataChunk) {
        let port = *self.port.get_or_insert_with(|| {
            let mut ports = [0u16; 2];
            ports[s] = ctx.src_port;
            ports[1 - s] = ctx.dst_port;
            ppid::assoc_port(ports)
        });
        let Some(port) = port.filter(|p| p.ppid.is_some()) else {
            return;
        };
        let ev = self.dirs[s].ppid_missing;
        if ev == DROPPED {
            return;
        }
        if let Some(Event {
            what: What::PpidMissing { messages, .. },
            ..
        }) = self.events.get_mut(usize::from(ev))
        {
            *messages += 1;
            return;
        }
        let ctype = if d.idata { types::I_DATA } else { types::DATA };
        let what = What::PpidMissing { port, messages: 1 };
        self.dirs[s].ppid_missing = self.push(ctx, s, ctype, what).unwrap_or(DROPPED);
    }

    /// Streams usable per direction: min(sender's OS, receiver's MIS) (RFC 9260 5.1.1) plus the
    /// streams added by RE-CONFIG; unknown (no check) without the receiver's MIS.
    fn update_limits(&mut self) {
        for s in 0..2 {
            let (me, peer) = (self.neg[s], self.neg[1 - s]);
            self.dirs[s].limit = match peer.mis {
                Some(mis) => u32::from(mis.min(me.os.unwrap_or(u16::MAX)))
                    .saturating_add(me.added_out)
                    .saturating_add(me.pending_out),
                None => u32::MAX,
            };
        }
    }

    /// ERROR / ABORT causes "Invalid Stream Identifier" (RFC 9260 3.3.10.1) from endpoint `s`:
    /// tied to the peer's DATA on that stream.
    fn causes(&mut self, ctx: &PacketCtx, s: usize, view: &ChunkView<'_>) {
        let sids: Vec<u16> = cause_tlvs(view.value)
            .filter(|(code, body)| *code == CAUSE_INVALID_STREAM && body.len() >= 2)
            .map(|(_, body)| u16::from_be_bytes([body[0], body[1]]))
            .collect();
        if sids.is_empty() {
            return;
        }
        let decoded: Vec<CauseInfo> = decode_causes(view.value)
            .into_iter()
            .filter(|c| c.code == CAUSE_INVALID_STREAM)
            .collect();
        for (k, sid) in sids.into_iter().enumerate() {
            let cause = decoded.get(k).cloned().unwrap_or_else(|| CauseInfo {
                code: CAUSE_INVALID_STREAM,
                name: "Invalid Stream Identifier".to_string(),
                detail: Some(format!("stream {sid}")),
            });
            self.rejected(ctx, s, view.ctype, sid, cause);
        }
    }

    fn rejected(&mut self, ctx: &PacketCtx, s: usize, ctype: u8, sid: u16, cause: CauseInfo) {
        let data_dir = 1 - s;
        // A bounded search (at most MAX_EVENTS), on a rare chunk.
        for e in &mut self.events {
            match &mut e.what {
                What::InvalidStream {
                    sid: x, rejected, ..
                } if *x == sid && usize::from(e.by) == data_dir => {
                    rejected.get_or_insert(Rejection {
                        frame: ctx.frame,
                        ts_ns: ctx.ts_ns,
                        ctype,
                        cause,
                    });
                    return;
                }
                What::InvalidStreamReported {
                    sid: x, reports, ..
                } if *x == sid && usize::from(e.by) == s => {
                    *reports += 1;
                    return;
                }
                _ => {}
            }
        }
        let data_frame = self.dirs[data_dir].find(sid).map(|r| r.first_frame);
        self.push(
            ctx,
            s,
            ctype,
            What::InvalidStreamReported {
                sid,
                data_frame,
                reports: 1,
                cause,
            },
        );
    }

    /// RE-CONFIG from endpoint `s` (RFC 6525 3.1, 4).
    fn reconfig(&mut self, ctx: &PacketCtx, s: usize, ctype: u8, params: &[ReconfigParam]) {
        for p in params {
            let Some(seq) = p.req_seq else { continue };
            let what = match p.ptype {
                ptype::OUT_SSN_RESET => {
                    // 5.2.2: the sender's outgoing streams restart their numbering.
                    self.dirs[s].epoch = self.dirs[s].epoch.wrapping_add(1);
                    if let Some(r) = p.resp_seq {
                        // 4.1: also the implicit answer to the peer's Incoming SSN Reset Request.
                        self.answer(ctx, 1 - s, r, None, Some(ptype::IN_SSN_RESET));
                    }
                    What::StreamReset {
                        ptype: p.ptype,
                        streams: p.stream_count,
                        seq,
                        answer: None,
                    }
                }
                ptype::IN_SSN_RESET => What::StreamReset {
                    ptype: p.ptype,
                    streams: p.stream_count,
                    seq,
                    answer: None,
                },
                ptype::SSN_TSN_RESET => {
                    // 5.2.4: every stream of both directions restarts.
                    for d in &mut self.dirs {
                        d.epoch = d.epoch.wrapping_add(1);
                    }
                    What::StreamReset {
                        ptype: p.ptype,
                        streams: 0,
                        seq,
                        answer: None,
                    }
                }
                ptype::RESPONSE => {
                    self.answer(ctx, 1 - s, seq, p.result, None);
                    continue;
                }
                ptype::ADD_OUT_STREAMS | ptype::ADD_IN_STREAMS => {
                    let n = p.new_streams.unwrap_or(0);
                    let outgoing = p.ptype == ptype::ADD_OUT_STREAMS;
                    if outgoing {
                        self.neg[s].pending_out += u32::from(n);
                    }
                    What::StreamsAdded {
                        outgoing,
                        n,
                        seq,
                        answer: None,
                    }
                }
                _ => continue,
            };
            let event = self.push(ctx, s, ctype, what).unwrap_or(NONE);
            if self.pending.len() >= MAX_PENDING {
                let old = self.pending.remove(0);
                self.forget(old);
            }
            self.pending.push(Pending {
                requester: s as u8,
                seq,
                ptype: p.ptype,
                n: p.new_streams.unwrap_or(0),
                event,
            });
        }
        self.update_limits();
    }

    /// The answer to endpoint `requester`'s request `seq` (of type `only`, if given).
    fn answer(
        &mut self,
        ctx: &PacketCtx,
        requester: usize,
        seq: u32,
        result: Option<u32>,
        only: Option<u16>,
    ) {
        let Some(i) = self.pending.iter().position(|p| {
            usize::from(p.requester) == requester
                && p.seq == seq
                && only.is_none_or(|t| t == p.ptype)
        }) else {
            return;
        };
        let p = self.pending[i];
        let answer = Answer {
            frame: ctx.frame,
            result,
        };
        if let Some(Event {
            what: What::StreamReset { answer: a, .. } | What::StreamsAdded { answer: a, .. },
            ..
        }) = self.events.get_mut(usize::from(p.event))
        {
            *a = Some(answer);
        }
        if result == Some(RESULT_IN_PROGRESS) {
            // 4.4: a final response follows.
            return;
        }
        self.pending.remove(i);
        if p.ptype == ptype::ADD_OUT_STREAMS {
            let me = &mut self.neg[requester];
            me.pending_out = me.pending_out.saturating_sub(u32::from(p.n));
            if result == Some(RESULT_PERFORMED) {
                // 5.2.5: the peer added as many inbound streams.
                me.added_out += u32::from(p.n);
            }
        }
    }

    /// A request forgotten unanswered (past `MAX_PENDING`).
    fn forget(&mut self, p: Pending) {
        if p.ptype == ptype::ADD_OUT_STREAMS {
            let me = &mut self.neg[usize::from(p.requester)];
            me.pending_out = me.pending_out.saturating_sub(u32::from(p.n));
        }
    }

    /// Records an event; None past `MAX_EVENTS` (counted).
    fn push(&mut self, ctx: &PacketCtx, s: usize, ctype: u8, what: What) -> Option<u16> {
        if self.events.len() >= MAX_EVENTS {
            self.events_dropped += 1;
            return None;
        }
        self.events.push(Event {
            ts_ns: ctx.ts_ns,
            frame: ctx.frame,
            by: s as u8,
            ctype,
            what,
        });
        Some((self.events.len() - 1) as u16)
    }

    /// Events not kept past the bound.
    pub fn events_dropped(&self) -> u64 {
        self.events_dropped
    }
}
