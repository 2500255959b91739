//! Stalled associations (METRICS.md is silent; issue 15 "Stalled associations"): episodes in
//! which the association is alive, the peer still answering, but a direction's data does not
//! move:
//! - `zero_window`: the receiver advertises a window below one DATA packet while the sender has
//!   data outstanding or probes it (RFC 9260 6.1 rule A: only a zero-window probe may go);
//! - `pmtu_black_hole`: one DATA packet is sent again and again (three times or more) and never
//!   acknowledged while smaller DATA packets sent after it get through (the peer's gap blocks
//!   acknowledge TSNs above it): the path drops packets above some size (RFC 4821 / RFC 8899
//!   path MTU discovery), whatever passed before;
//! - `frozen_cum_ack`: SACKs keep arriving (three or more) but the cumulative TSN ack does not
//!   advance for longer than max(1 s, 3 RTO) while DATA is outstanding, and they report nothing
//!   received beyond it (no gap blocks: not loss recovery waiting for a retransmission) and
//!   their window is open (a closed one is a `zero_window`: the freeze is timed from its last
//!   closed SACK) — a receiver that stopped taking data, a peer stack fault; or SACKs with gap
//!   blocks while one TSN is sent again and again (three times or more) and never acknowledged
//!   though DATA packets as large or larger, first sent after its first resend to a destination
//!   it was resent to, are (their TSNs in the gap blocks): neither the path nor the size keeps
//!   it out, the peer or a middlebox refuses that TSN (`Episode::size` > 0 tells this kind).
//!
//! Fed the DATA / I-DATA and SACK / NR-SACK chunks of one association by the tracker
//! (`Stalls::wants`); knows nothing of the other analyses. The RTO part of the `frozen_cum_ack`
//! threshold is applied when the report is made (`report`), from the timer inference.

mod report;
#[cfg(test)]
mod tests;

pub use report::StallReport;

use std::net::IpAddr;

use crate::packet::PacketCtx;
use crate::sctp::{types, Chunk, DataChunk, SackChunk};
use crate::serial;

/// The least time a frozen cumulative ack must last (the RTO part comes at report time).
pub const MIN_FROZEN_NS: i64 = 1_000_000_000;
/// SACKs that must arrive without advancing the cumulative ack for a `frozen_cum_ack`.
const FROZEN_SACKS: u32 = 3;
/// Sends of one large DATA packet that make a `pmtu_black_hole`.
const BLACK_HOLE_SENDS: u32 = 3;
/// A closed zero-window episode is kept when it took at least this long: a window that closes
/// for a few ms while the reader drains it (Linux flaps so after a stall) is flow control at
/// work, however many SACKs told it.
const MIN_ZERO_NS: i64 = 100_000_000;
/// Episodes kept per association (bounded state: later ones are not kept).
pub const MAX_EPISODES: usize = 32;
// `Dir::open` holds episode indices as u8.
const _: () = assert!(MAX_EPISODES <= u8::MAX as usize);

/// Why a direction stalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    ZeroWindow,
    PmtuBlackHole,
    FrozenCumAck,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::ZeroWindow => "zero_window",
            Cause::PmtuBlackHole => "pmtu_black_hole",
            Cause::FrozenCumAck => "frozen_cum_ack",
        }
    }
}

/// One stall of one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// The DATA sender whose data stalled.
    pub sender: u8,
    pub cause: Cause,
    pub start_ns: i64,
    pub frame: u64,
    /// None while it lasts (at the capture's end: still stalled).
    pub end: Option<(i64, u64)>,
    /// SACKs from the peer during the episode.
    pub sacks: u32,
    /// DATA packets sent during it (zero-window probes, the large packet's sends).
    pub data_sends: u32,
    /// zero_window: the smallest window advertised; frozen_cum_ack: the cumulative TSN ack.
    pub value: u32,
    /// pmtu_black_hole: the large packet's size, and the largest DATA packet first sent after
    /// it while later ones got through, bytes. frozen_cum_ack of a refused TSN: the size of the
    /// packet that carried it, and of the later one as large or larger that was acknowledged
    /// (0 for a freeze without gap blocks).
    pub size: u32,
    pub acked_max: u32,
    /// frozen_cum_ack of a refused TSN: that TSN.
    pub tsn: u32,
}

/// A DATA packet sent more than once and never acknowledged (the first such of a direction).
#[derive(Debug, Clone, Copy)]
struct Big {
    tsn: u32,
    size: u32,
    first_ns: i64,
    first_frame: u64,
    sends: u32,
    /// The largest DATA packet first sent since its first resend.
    later_max: u32,
    /// A SACK acknowledged (gap blocks) a TSN above it: later packets got through.
    passed: bool,
    /// The destinations it was resent to (two kept).
    dsts: [Option<IpAddr>; 2],
    /// The first DATA packet first sent after its first resend to one of `dsts`, at least as
    /// large as it: TSN and size.
    probe: Option<(u32, u32)>,
    /// A SACK acknowledged `probe`'s TSN in a gap block: the path takes packets of that size.
    probe_acked: bool,
}

#[derive(Debug, Clone, Default)]
struct Dir {
    highest: Option<u32>,
    cum: Option<u32>,
    /// When the cumulative ack last advanced (or was first seen), or a SACK said why it did
    /// not (gap blocks, a closed window).
    advanced: Option<(i64, u64)>,
    /// When the cumulative ack last advanced (or was first seen), and the SACKs since.
    moved: Option<(i64, u64)>,
    sacks_unmoved: u32,
    sacks_since: u32,
    /// Index in `episodes` of the open episode of each cause.
    open: [Option<u8>; 3],
    last_frame: u64,
    /// The smallest DATA chunk payload sent: a window below it takes no packet.
    min_payload: Option<u32>,
    /// Boxed: most directions never resend a packet, and many associations are alive at once.
    big: Option<Box<Big>>,
    /// The first SACK of the current closed window (RFC 9260 6.1 A), while it stays closed.
    closed_since: Option<(i64, u64, u32)>,
}

impl Dir {
    fn outstanding(&self) -> bool {
        match (self.highest, self.cum) {
            (Some(h), Some(c)) => serial::gt(h, c),
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// The stall detector of one association.
#[derive(Debug, Clone, Default)]
pub struct Stalls {
    dirs: [Dir; 2],
    episodes: Vec<Episode>,
}

fn slot(c: Cause) -> usize {
    match c {
        Cause::ZeroWindow => 0,
        Cause::PmtuBlackHole => 1,
        Cause::FrozenCumAck => 2,
    }
}

impl Stalls {
    /// Whether `chunk` reads chunks of this type (DATA, I-DATA, SACK, NR-SACK).
    #[inline]
    pub fn wants(ctype: u8) -> bool {
        matches!(
            ctype,
            types::DATA | types::I_DATA | types::SACK | types::NR_SACK
        )
    }

    /// A chunk sent by endpoint `sender` (0 / 1). Inlined into the caller's loop: a call per
    /// chunk cost more than the common case's work.
    #[inline(always)]
    pub fn chunk(&mut self, ctx: &PacketCtx, sender: u8, chunk: &Chunk<'_>) {
        match chunk {
            Chunk::Data(d) => self.data_chunk(ctx, sender, d),
            Chunk::Sack(k) => self.sack_chunk(ctx, sender, k),
            _ => {}
        }
    }

    /// A DATA or I-DATA chunk sent by endpoint `sender` (what `chunk` does with one; the pass
    /// calls it directly, without matching the chunk's type once more).
    #[inline(always)]
    pub fn data_chunk(&mut self, ctx: &PacketCtx, sender: u8, d: &DataChunk) {
        self.data(ctx, usize::from(sender & 1), d.tsn, d.payload_len);
    }

    /// A SACK or NR-SACK chunk sent by endpoint `sender` (what `chunk` does with one).
    #[inline(always)]
    pub fn sack_chunk(&mut self, ctx: &PacketCtx, sender: u8, k: &SackChunk<'_>) {
        let s = usize::from(sender & 1);
        let gaps = k.n_gap_blocks > 0;
        let highest_gap = if gaps && self.dirs[1 - s].big.is_some() {
            self.gap_acked(1 - s, k)
        } else {
            None
        };
        self.sack(ctx, 1 - s, k.cum_tsn_ack, k.a_rwnd, gaps, highest_gap)
    }

    /// While a resent packet is watched: the highest TSN the SACK's gap blocks acknowledge, and
    /// whether they acknowledge the watched packet's probe (RFC 9260 3.3.4: gap blocks are
    /// offsets from the cumulative TSN ack).
    #[cold]
    fn gap_acked(&mut self, s: usize, k: &SackChunk<'_>) -> Option<u32> {
        let cum = k.cum_tsn_ack;
        let b = self.dirs[s].big.as_deref_mut()?;
        let highest_end = k.gap_blocks().map(|g| g.end).max();
        if let (Some((tsn, _)), false) = (b.probe, b.probe_acked) {
            let off = tsn.wrapping_sub(cum);
            b.probe_acked = off <= u32::from(u16::MAX)
                && k.gap_blocks().any(|g| {
                    g.start <= g.end && (u32::from(g.start)..=u32::from(g.end)).contains(&off)
                });
            if !b.probe_acked && highest_end.is_some_and(|e| u32::from(e) > off) {
                // Later TSNs arrived and the probe did not: it was lost; the next packet that
                // qualifies probes instead.
                b.probe = None;
            }
        }
        highest_end.map(|e| cum.wrapping_add(u32::from(e)))
    }

    /// The episodes so far, in the order they began.
    pub fn episodes(&self) -> &[Episode] {
        &self.episodes
    }

    fn open(&mut self, s: usize, cause: Cause, start: (i64, u64), fill: impl FnOnce(&mut Episode)) {
        if self.dirs[s].open[slot(cause)].is_some() {
            return;
        }
        if self.episodes.len() >= MAX_EPISODES {
            return;
        }
        let mut e = Episode {
            sender: s as u8,
            cause,
            start_ns: start.0,
            frame: start.1,
            end: None,
            sacks: 0,
            data_sends: 0,
            value: 0,
            size: 0,
            acked_max: 0,
            tsn: 0,
        };
        fill(&mut e);
        // Below MAX_EPISODES (checked above): fits a u8 (many associations are alive at once).
        self.dirs[s].open[slot(cause)] = Some(self.episodes.len() as u8);
        self.episodes.push(e);
    }

    fn close(&mut self, s: usize, cause: Cause, ctx: &PacketCtx) {
        if let Some(i) = self.dirs[s].open[slot(cause)].take() {
            self.episodes[usize::from(i)].end = Some((ctx.ts_ns, ctx.frame));
        }
    }

    fn open_episode(&mut self, s: usize, cause: Cause) -> Option<&mut Episode> {
        let i = self.dirs[s].open[slot(cause)]?;
        self.episodes.get_mut(usize::from(i))
    }

    /// A DATA chunk of direction `s`: the common case (a first send, nothing closed) touches a
    /// few fields; the rest is in `#[cold]` helpers.
    #[inline(always)]
    fn data(&mut self, ctx: &PacketCtx, s: usize, tsn: u32, payload: u32) {
        let d = &mut self.dirs[s];
        let new_packet = ctx.frame != d.last_frame;
        d.last_frame = ctx.frame;
        d.min_payload = Some(d.min_payload.map_or(payload, |m| m.min(payload)));
        let first_send = d.highest.is_none_or(|h| serial::gt(tsn, h));
        if first_send {
            d.highest = Some(tsn);
            if let (true, Some(b)) = (new_packet, d.big.as_deref_mut()) {
                b.later_max = b.later_max.max(ctx.len);
                if b.probe.is_none() && ctx.len >= b.size && b.dsts.contains(&Some(ctx.dst)) {
                    b.probe = Some((tsn, ctx.len));
                }
            }
        } else if new_packet {
            self.resent(ctx, s, tsn);
        }
        let d = &self.dirs[s];
        if new_packet && (d.closed_since.is_some() || d.open[slot(Cause::ZeroWindow)].is_some()) {
            self.probe(s);
        }
    }

    /// A DATA packet sent again (RFC 8899 / 4821: if it is larger than the ones that get
    /// through after it, the path drops it for its size).
    #[cold]
    fn resent(&mut self, ctx: &PacketCtx, s: usize, tsn: u32) {
        let d = &mut self.dirs[s];
        match d.big.as_deref_mut() {
            Some(b) if b.tsn == tsn => {
                b.sends += 1;
                if !b.dsts.contains(&Some(ctx.dst)) {
                    if let Some(free) = b.dsts.iter_mut().find(|x| x.is_none()) {
                        *free = Some(ctx.dst);
                    }
                }
            }
            Some(_) => return,
            None => {
                d.big = Some(Box::new(Big {
                    tsn,
                    size: ctx.len,
                    first_ns: ctx.ts_ns,
                    first_frame: ctx.frame,
                    sends: 2,
                    later_max: 0,
                    passed: false,
                    dsts: [Some(ctx.dst), None],
                    probe: None,
                    probe_acked: false,
                }))
            }
        }
        self.check_black_hole(s);
    }

    /// A TSN sent again and again that a path taking packets as large does not deliver (its
    /// probe was acknowledged): the cumulative ack is frozen on it since it last moved.
    fn check_refused(&mut self, s: usize) {
        let d = &self.dirs[s];
        let (Some(b), Some(moved), Some(cum)) = (d.big.as_deref().copied(), d.moved, d.cum) else {
            return;
        };
        if b.sends < BLACK_HOLE_SENDS || !b.probe_acked {
            return;
        }
        let acked = b.probe.map_or(0, |p| p.1);
        let sacks = d.sacks_unmoved;
        self.open(s, Cause::FrozenCumAck, moved, |e| {
            e.value = cum;
            e.size = b.size;
            e.acked_max = acked;
            e.tsn = b.tsn;
            // This SACK is counted below.
            e.sacks = sacks.saturating_sub(1);
        });
        if let Some(e) = self.open_episode(s, Cause::FrozenCumAck) {
            e.sacks += 1;
            if e.size > 0 {
                e.data_sends = b.sends;
            }
        }
    }

    fn check_black_hole(&mut self, s: usize) {
        let Some(b) = self.dirs[s].big.as_deref().copied() else {
            return;
        };
        if b.sends >= BLACK_HOLE_SENDS && b.passed && b.later_max > 0 && b.later_max < b.size {
            self.open(s, Cause::PmtuBlackHole, (b.first_ns, b.first_frame), |e| {
                e.size = b.size;
                e.acked_max = b.later_max;
                e.value = b.tsn;
            });
        }
        if let Some(e) = self.open_episode(s, Cause::PmtuBlackHole) {
            e.data_sends = b.sends;
        }
        if let Some(e) = self.open_episode(s, Cause::FrozenCumAck) {
            if e.size > 0 {
                e.data_sends = b.sends;
            }
        }
    }

    /// DATA into a closed window is a probe: the sender has data (at the receiver vantage the
    /// SACKs acknowledge everything that arrived, nothing looks outstanding).
    #[cold]
    fn probe(&mut self, s: usize) {
        if let Some((t, f, rwnd)) = self.dirs[s].closed_since {
            self.open(s, Cause::ZeroWindow, (t, f), |e| {
                e.value = rwnd;
                e.sacks = 1;
            });
        }
        if let Some(e) = self.open_episode(s, Cause::ZeroWindow) {
            e.data_sends += 1;
        }
    }

    /// A SACK for direction `s`; `gaps`: it reports DATA received beyond the cumulative ack,
    /// `highest_gap` the highest TSN it so acknowledges (computed only while a resent packet is
    /// watched).
    #[inline(always)]
    fn sack(
        &mut self,
        ctx: &PacketCtx,
        s: usize,
        cum: u32,
        a_rwnd: u32,
        gaps: bool,
        highest_gap: Option<u32>,
    ) {
        let d = &mut self.dirs[s];
        let advanced = d.cum.is_none_or(|c| serial::gt(cum, c));
        // RFC 9260 6.1 A: a window below the smallest DATA chunk this sender sends takes none.
        let closed = a_rwnd < d.min_payload.unwrap_or(1).max(1);
        if let (Some(b), Some(h)) = (d.big.as_deref_mut(), highest_gap) {
            if serial::gt(h, b.tsn) && !b.passed {
                b.passed = true;
                self.check_black_hole(s);
            }
        }
        let d = &mut self.dirs[s];
        d.sacks_unmoved += 1;
        if advanced {
            d.cum = Some(cum);
            d.advanced = Some((ctx.ts_ns, ctx.frame));
            d.moved = d.advanced;
            d.sacks_unmoved = 0;
            d.sacks_since = 0;
            if d.big.is_some() || d.open[slot(Cause::FrozenCumAck)].is_some() {
                self.advanced_over(ctx, s, cum);
            }
        } else if gaps {
            // Loss recovery: the receiver takes data beyond a missing TSN (RFC 9260 6.2), the
            // cumulative ack waits for its retransmission. Not a frozen receiver, unless the
            // missing TSN is refused (`check_refused`).
            d.sacks_since = 0;
            d.advanced = Some((ctx.ts_ns, ctx.frame));
            if d.big.as_ref().is_some_and(|b| b.probe_acked) {
                self.check_refused(s);
            } else {
                self.close(s, Cause::FrozenCumAck, ctx);
            }
        } else if closed {
            // The closed window is why the cumulative ack stands (a `zero_window`): a freeze
            // is timed from its last closed SACK, once the window opened again.
            d.sacks_since = 0;
            d.advanced = Some((ctx.ts_ns, ctx.frame));
            self.close(s, Cause::FrozenCumAck, ctx);
        } else {
            d.sacks_since += 1;
            if d.sacks_since >= FROZEN_SACKS {
                self.frozen(ctx, s, cum);
            }
        }
        if closed || self.dirs[s].closed_since.is_some() {
            self.window(ctx, s, a_rwnd, closed);
        }
    }

    /// The cumulative ack passed a large packet sent again, or ended a freeze.
    #[cold]
    fn advanced_over(&mut self, ctx: &PacketCtx, s: usize, cum: u32) {
        if self.dirs[s]
            .big
            .as_ref()
            .is_some_and(|b| serial::le(b.tsn, cum))
        {
            self.dirs[s].big = None;
            self.close(s, Cause::PmtuBlackHole, ctx);
        }
        self.close(s, Cause::FrozenCumAck, ctx);
    }

    /// A SACK that did not advance the cumulative ack, the third or later in a row.
    #[cold]
    fn frozen(&mut self, ctx: &PacketCtx, s: usize, cum: u32) {
        if let Some(e) = self.open_episode(s, Cause::FrozenCumAck) {
            e.sacks += 1;
            return;
        }
        // Every SACK counted here had an open window (a closed one restarts the count), so no
        // zero window is open.
        let d = &self.dirs[s];
        let frozen = d.outstanding()
            && d.advanced
                .is_some_and(|(t, _)| ctx.ts_ns - t >= MIN_FROZEN_NS);
        if frozen {
            let start = d.advanced.expect("checked");
            let sacks = d.sacks_since;
            self.open(s, Cause::FrozenCumAck, start, |e| {
                e.value = cum;
                e.sacks = sacks;
            });
        }
    }

    /// A SACK with a closed window, or the first open one after it.
    #[cold]
    fn window(&mut self, ctx: &PacketCtx, s: usize, a_rwnd: u32, closed: bool) {
        let outstanding = self.dirs[s].outstanding();
        let zero_open = self.dirs[s].open[slot(Cause::ZeroWindow)].is_some();
        if closed {
            let d = &mut self.dirs[s];
            if d.closed_since.is_none() {
                d.closed_since = Some((ctx.ts_ns, ctx.frame, a_rwnd));
            }
            if !zero_open && outstanding {
                self.open(s, Cause::ZeroWindow, (ctx.ts_ns, ctx.frame), |e| {
                    e.value = a_rwnd;
                });
            }
            if let Some(e) = self.open_episode(s, Cause::ZeroWindow) {
                e.sacks += 1;
                e.value = e.value.min(a_rwnd);
            }
            return;
        }
        self.dirs[s].closed_since = None;
        if !zero_open {
            return;
        }
        let i = usize::from(self.dirs[s].open[slot(Cause::ZeroWindow)].expect("open"));
        let e = &self.episodes[i];
        let short = ctx.ts_ns - e.start_ns < MIN_ZERO_NS;
        if short && i + 1 == self.episodes.len() {
            // A window that reopened within MIN_ZERO_NS is not a stall.
            self.episodes.pop();
            self.dirs[s].open[slot(Cause::ZeroWindow)] = None;
        } else {
            self.close(s, Cause::ZeroWindow, ctx);
        }
    }
}
