//! Head-of-line blocking (issue 15 section 2; METRICS.md "Head-of-line blocking"): per direction
//! and stream, the ordered messages that had fully arrived but could not be delivered because
//! an earlier message of the same stream was missing (RFC 9260 6.6: ordered messages of a stream
//! are delivered in stream sequence number order), with the extra delay; and the counterfactual
//! of one stream for every message (delivery in TSN order, as one TCP byte stream delivers).
//!
//! Two clocks run side by side, because the vantage is only known at the end of the pass:
//! - `ARRIVALS`: a DATA chunk's first sight in the capture (at the receiver vantage, when it
//!   arrived); a TSN the receiver acknowledged before the capture showed it (the capture missed
//!   it) counts as arrived at that SACK at the latest;
//! - `SACKS`: the first SACK that acknowledges a TSN, by cumulative TSN ack or gap block (RFC
//!   9260 3.3.4; NR-SACK's non-renegable blocks too), which shows the receiver holding it at any
//!   vantage, late by the SACK's path delay.
//!
//! The report takes arrivals at the receiver vantage and SACKs elsewhere (`report`).
//!
//! A message whose earlier message the capture never showed (no DATA seen, only acknowledged)
//! cannot be given a delay: once the clock's cumulative point passes it, the messages behind it
//! are released and counted as `unattributed`, never as blocked. Memory is bounded: the TSNs from
//! the oldest one not settled by both clocks to the highest (at most `MAX_WINDOW`; past it the
//! oldest are dropped and the clock that still needed them says so), at most `MAX_STREAMS`
//! streams per direction, and per stream the messages waiting for an earlier one.

mod order;
mod report;
#[cfg(test)]
mod tests;

pub use report::HolReport;

use order::{next_number, StreamHol};

use crate::infer::stats::Samples;
use crate::packet::PacketCtx;
use crate::sctp::{Chunk, DataChunk, SackChunk};
use crate::serial;

/// The clock of DATA arrivals (index into the per-clock arrays).
pub const ARRIVALS: usize = 0;
/// The clock of SACKs.
pub const SACKS: usize = 1;
/// TSNs held per direction between the oldest unsettled one and the highest.
const MAX_WINDOW: usize = 1 << 14;
/// Streams followed per direction (DATA on further streams only takes part in the one-stream
/// counterfactual).
pub const MAX_STREAMS: usize = 1024;
/// Complete messages waiting for an earlier one, per stream and clock; past it the oldest is
/// released unattributed.
const MAX_WAITING: usize = 1 << 14;
/// A message is counted as blocked when it waited longer than this: shorter waits (a
/// retransmission landing a fraction of a millisecond after the message behind it, two SACKs
/// back to back) delay nothing a user would notice and make the count follow timestamp noise.
pub const MIN_WAIT_NS: i64 = 1_000_000;
/// "Not yet" in a slot's times.
const NOT_YET: i64 = i64::MIN;
/// A slot's stream when the stream is not followed (past `MAX_STREAMS`).
const NO_STREAM: u16 = u16::MAX;

/// Slot flags: the DATA chunk was seen (stream, number and the rest are known), and its bits.
const KNOWN: u8 = 1;
const FIRST: u8 = 2;
const LAST: u8 = 4;
const UNORDERED: u8 = 8;

/// One TSN of a direction.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// When each clock saw it arrive (`NOT_YET` before).
    t: [i64; 2],
    /// Stream sequence number (DATA) or message identifier (I-DATA).
    number: u32,
    /// Index into `Dir::streams`.
    stream: u16,
    flags: u8,
}

/// The flags of a slot whose DATA chunk `d` was seen (RFC 9260 3.3.1: B, E and U bits).
#[inline]
fn flags_of(d: &DataChunk) -> u8 {
    KNOWN
        | if d.flag_b { FIRST } else { 0 }
        | if d.flag_e { LAST } else { 0 }
        | if d.flag_u { UNORDERED } else { 0 }
}

const EMPTY: Slot = Slot {
    t: [NOT_YET; 2],
    number: 0,
    stream: NO_STREAM,
    flags: 0,
};

/// Waits of blocked messages, ms (count, sum and quantiles: `Samples`): made at the first one
/// (most streams never wait).
type Delays = Option<Box<Samples>>;

#[inline]
fn push_wait(d: &mut Delays, ms: f64) {
    d.get_or_insert_with(Box::default).push(ms);
}

/// The figures of one clock for a direction.
#[derive(Debug, Clone, Default)]
struct Clock {
    /// Every TSN up to this one has arrived on this clock (meaningful once `advanced`).
    cum: u32,
    /// The highest TSN at or below `cum` that ends a message (or is unknown): the slots up to it
    /// are done with for this clock.
    boundary: u32,
    /// Slots above `cum` that have arrived on this clock (0: the in-order fast path applies).
    above: u32,
    /// Some TSN arrived on this clock.
    advanced: bool,
    /// Complete messages (ordered and unordered) whose every fragment arrived.
    messages: u64,
    /// Messages released behind an earlier one the capture never showed: no delay given.
    unattributed: u64,
    /// One stream for all: messages delivered once the cumulative point passed them, those
    /// that waited, and how long.
    single_messages: u64,
    single_blocked: u64,
    single_delays: Delays,
    /// Streams with waiting messages (the release check runs only then).
    waiting_streams: u32,
    /// TSNs this clock still needed were dropped (`MAX_WINDOW`): figures incomplete.
    overflowed: bool,
}

/// One direction: the DATA of one sending endpoint.
#[derive(Debug, Clone, Default)]
struct Dir {
    started: bool,
    /// The TSNs held are `base..end` (serial arithmetic): below `base` both clocks are done.
    base: u32,
    end: u32,
    /// Slot of TSN `t` at `t & (ring.len() - 1)`; the length is a power of two.
    ring: Vec<Slot>,
    /// I-DATA: message identifiers are 32 bits (RFC 8260 2.1); DATA: SSNs are 16 (RFC 9260
    /// 3.3.1).
    wide: bool,
    /// The sender's INIT / INIT-ACK was seen: its streams number from 0 (RFC 9260 6.5).
    fresh: bool,
    streams: Vec<StreamHol>,
    /// Index in `streams` of the last stream looked up.
    last: u16,
    clocks: [Clock; 2],
    /// DATA chunks on streams past `MAX_STREAMS`.
    untracked: u64,
}

/// Head-of-line blocking of one association: fed DATA / I-DATA, SACK / NR-SACK and INIT /
/// INIT-ACK chunks by the tracker (`Hol::wants`). The per-direction state is made at the first
/// DATA (associations without DATA, by the million in an attack capture, hold 24 bytes; one
/// DATA chunk makes a few hundred).
#[derive(Debug, Clone, Default)]
pub struct Hol {
    /// Each endpoint's first TSN from its INIT / INIT-ACK (RFC 9260 3.3.2), kept for its DATA.
    init_tsn: [Option<u32>; 2],
    dirs: [Option<Box<Dir>>; 2],
}

impl Hol {
    /// Whether `chunk` reads chunks of this type.
    #[inline]
    pub fn wants(ctype: u8) -> bool {
        use crate::sctp::types::*;
        matches!(ctype, DATA | I_DATA | SACK | NR_SACK | INIT | INIT_ACK)
    }

    /// One chunk sent by endpoint `sender`; `epoch` is the sender's stream-reset epoch (bumped
    /// by each RE-CONFIG stream reset, RFC 6525 5.2.2: numbering starts again).
    #[inline]
    pub fn chunk(&mut self, ctx: &PacketCtx, sender: u8, chunk: &Chunk<'_>, epoch: u16) {
        let s = usize::from(sender & 1);
        match chunk {
            Chunk::Data(d) => self.data(ctx, sender, d, epoch),
            Chunk::Sack(k) => self.sack(ctx, sender, k),
            Chunk::Init(i) => {
                self.init_tsn[s] = Some(i.initial_tsn);
            }
            _ => {}
        }
    }

    /// A DATA or I-DATA chunk sent by endpoint `sender` (what `chunk` does with one; the pass
    /// calls it directly, without matching the chunk's type once more).
    #[inline(always)]
    pub fn data(&mut self, ctx: &PacketCtx, sender: u8, d: &DataChunk, epoch: u16) {
        if let Some(dir) = self.dirs[usize::from(sender & 1)].as_deref_mut() {
            if dir.started && dir.data_in_order(ctx.ts_ns, d, epoch) {
                return;
            }
        }
        self.data_any(ctx, sender, d, epoch);
    }

    /// `data` for any DATA chunk (made out of line: `data` inlines the common case only).
    #[inline(never)]
    fn data_any(&mut self, ctx: &PacketCtx, sender: u8, d: &DataChunk, epoch: u16) {
        let s = usize::from(sender & 1);
        let init_tsn = self.init_tsn[s];
        let dir = self.dirs[s].get_or_insert_with(Box::default);
        if !dir.started {
            match init_tsn {
                Some(first) => {
                    // RFC 9260 6.5: the sender's streams number from 0.
                    dir.fresh = true;
                    dir.start(first);
                }
                None => dir.start(d.tsn),
            }
        }
        dir.data(ctx.ts_ns, d, epoch);
    }

    /// A SACK or NR-SACK chunk sent by endpoint `sender` (what `chunk` does with one).
    #[inline]
    pub fn sack(&mut self, ctx: &PacketCtx, sender: u8, k: &SackChunk<'_>) {
        if let Some(dir) = &mut self.dirs[1 - usize::from(sender & 1)] {
            dir.sack(ctx.ts_ns, k);
        }
    }

    fn dir(&self, sender: u8) -> Option<&Dir> {
        self.dirs[usize::from(sender & 1)]
            .as_deref()
            .filter(|d| d.started)
    }
}

/// The earlier of two TSNs (serial arithmetic).
#[inline]
fn serial_min(a: u32, b: u32) -> u32 {
    if serial::lt(a, b) {
        a
    } else {
        b
    }
}

impl Dir {
    fn start(&mut self, tsn: u32) {
        self.started = true;
        self.base = tsn;
        self.end = tsn;
        for c in &mut self.clocks {
            c.cum = tsn.wrapping_sub(1);
            c.boundary = c.cum;
        }
    }

    /// Whether `tsn` is held (`base..end`).
    #[inline]
    fn held(&self, tsn: u32) -> bool {
        tsn.wrapping_sub(self.base) < self.end.wrapping_sub(self.base)
    }

    #[inline]
    fn at(&self, tsn: u32) -> &Slot {
        &self.ring[tsn as usize & (self.ring.len() - 1)]
    }

    #[inline]
    fn at_mut(&mut self, tsn: u32) -> &mut Slot {
        let mask = self.ring.len() - 1;
        &mut self.ring[tsn as usize & mask]
    }

    /// Holds `tsn` (and every TSN between the highest held and it); false below the base.
    #[inline]
    fn hold(&mut self, tsn: u32) -> bool {
        if tsn == self.end && (self.end.wrapping_sub(self.base) as usize) < self.ring.len() {
            // The next new TSN with room for it (the common case).
            *self.at_mut(tsn) = EMPTY;
            self.end = tsn.wrapping_add(1);
            return true;
        }
        self.hold_slow(tsn)
    }

    fn hold_slow(&mut self, tsn: u32) -> bool {
        let off = serial::diff(self.base, tsn);
        if off < 0 {
            return false;
        }
        if self.held(tsn) {
            return true;
        }
        let need = off as usize + 1;
        if need > self.ring.len() {
            if need > MAX_WINDOW {
                // Far past the window: drop what is held up to there (the clocks that still
                // needed it say so).
                let drop_to = tsn.wrapping_sub((MAX_WINDOW / 2) as u32);
                self.drop_below(drop_to);
                return self.hold_slow(tsn);
            }
            self.grow(need);
        }
        // The slots after the highest held were TSNs below the base: cleared for reuse.
        let mut t = self.end;
        while t != tsn.wrapping_add(1) {
            *self.at_mut(t) = EMPTY;
            t = t.wrapping_add(1);
        }
        self.end = tsn.wrapping_add(1);
        true
    }

    /// A ring of at least `need` slots, the held ones in place.
    #[cold]
    fn grow(&mut self, need: usize) {
        let len = need.next_power_of_two().max(4);
        let mut ring = vec![EMPTY; len];
        let mut t = self.base;
        while t != self.end {
            ring[t as usize & (len - 1)] = *self.at(t);
            t = t.wrapping_add(1);
        }
        self.ring = ring;
    }

    /// The next new TSN, in order on the arrivals clock (the common case): its slot is written
    /// once, whole, and passes at once (what `hold`, the first sight and `in_order` do for it
    /// step by step in `data`). False, and nothing done, for any other DATA.
    #[inline(always)]
    fn data_in_order(&mut self, ts_ns: i64, d: &DataChunk, epoch: u16) -> bool {
        let tsn = d.tsn;
        let c = &self.clocks[ARRIVALS];
        if !(tsn == self.end
            && (self.end.wrapping_sub(self.base) as usize) < self.ring.len()
            && c.above == 0
            && tsn == c.cum.wrapping_add(1))
        {
            return false;
        }
        self.wide |= d.idata;
        let stream = self.stream(d.stream_id, d.ssn_or_mid, epoch);
        let mask = self.ring.len() - 1;
        let slot = Slot {
            t: [ts_ns, NOT_YET],
            number: d.ssn_or_mid,
            stream,
            flags: flags_of(d),
        };
        self.ring[tsn as usize & mask] = slot;
        self.end = tsn.wrapping_add(1);
        self.pass_in_order(ARRIVALS, tsn, ts_ns, slot);
        self.retire();
        true
    }

    /// Any DATA chunk of this direction (`Hol::data` tries `data_in_order` first).
    #[inline]
    fn data(&mut self, ts_ns: i64, d: &DataChunk, epoch: u16) {
        self.wide |= d.idata;
        if !self.hold(d.tsn) {
            return;
        }
        let tsn = d.tsn;
        let i = tsn as usize & (self.ring.len() - 1);
        if self.ring[i].flags & KNOWN == 0 {
            let stream = self.stream(d.stream_id, d.ssn_or_mid, epoch);
            let slot = &mut self.ring[i];
            slot.number = d.ssn_or_mid;
            slot.stream = stream;
            slot.flags = flags_of(d);
            if slot.t != [NOT_YET; 2] {
                self.late_meta(tsn);
            }
        }
        let c = &self.clocks[ARRIVALS];
        if c.above == 0 && tsn == c.cum.wrapping_add(1) && self.ring[i].t[ARRIVALS] == NOT_YET {
            self.ring[i].t[ARRIVALS] = ts_ns;
            self.in_order(ARRIVALS, tsn, ts_ns);
        } else if self.arrive(ARRIVALS, tsn, ts_ns) {
            self.advance(ARRIVALS, ts_ns);
        }
        self.retire();
    }

    /// The DATA of a TSN acknowledged before the capture showed it (a SACK came first): its
    /// message may be complete now.
    #[cold]
    fn late_meta(&mut self, tsn: u32) {
        for k in [ARRIVALS, SACKS] {
            let t = self.at(tsn).t[k];
            if t != NOT_YET {
                self.complete_check(k, tsn, t);
            }
        }
    }

    /// The fast path: TSN `tsn`, the next after clock `k`'s cumulative point with nothing
    /// above it, has just arrived at `t` (its time set): it passes at once.
    #[inline(always)]
    fn in_order(&mut self, k: usize, tsn: u32, t: i64) {
        let slot = self.ring[tsn as usize & (self.ring.len() - 1)];
        self.pass_in_order(k, tsn, t, slot);
    }

    /// `in_order` with the TSN's slot at hand.
    #[inline(always)]
    fn pass_in_order(&mut self, k: usize, tsn: u32, t: i64, slot: Slot) {
        let c = &mut self.clocks[k];
        c.cum = tsn;
        c.advanced = true;
        let f = slot.flags;
        if f & (KNOWN | LAST) != KNOWN {
            c.boundary = tsn;
        }
        if f & (KNOWN | FIRST | LAST) == KNOWN | FIRST | LAST {
            c.messages += 1;
            c.single_messages += 1;
            if f & UNORDERED != 0 {
                return;
            }
            // NO_STREAM is past any index.
            if let Some(h) = self.streams.get_mut(usize::from(slot.stream)) {
                let sc = &mut h.clocks[k];
                if sc.next == Some(slot.number) && sc.waiting.is_empty() {
                    // In order, nothing waiting on the stream (the common case).
                    sc.delivered += 1;
                    sc.next = Some(next_number(slot.number, self.wide));
                    return;
                }
                self.ordered_complete(k, slot.stream, slot.number, tsn, t);
                self.release_passed(k, slot.stream);
            }
        } else if f & KNOWN != 0 {
            self.fragment_in_order(k, tsn, t, f);
        }
    }

    /// Stream `st` waits on clock `k` for a message below the cumulative point, every TSN of
    /// which has arrived: one the capture never showed. What waits behind it is released (as
    /// `advance_over` does when the point moves over several TSNs at once).
    #[cold]
    fn release_passed(&mut self, k: usize, st: u16) {
        let wide = self.wide;
        let clock = &mut self.clocks[k];
        Self::release_below(&mut self.streams[usize::from(st)].clocks[k], clock, wide);
    }

    /// `in_order` for a fragment: its message is complete when its last fragment is.
    #[cold]
    fn fragment_in_order(&mut self, k: usize, tsn: u32, t: i64, flags: u8) {
        self.complete_check(k, tsn, t);
        if flags & LAST != 0 {
            self.clocks[k].single_messages += 1;
        }
    }

    fn sack(&mut self, ts_ns: i64, k: &SackChunk<'_>) {
        if !self.started || self.base == self.end {
            return;
        }
        // TSNs above the highest DATA held are not taken: a later SACK acknowledges them again
        // once their DATA (or a later one) was seen.
        let top = self.end.wrapping_sub(1);
        let cum = k.cum_tsn_ack;
        // RFC 9260 3.3.4: every TSN up to the cumulative TSN ack was received.
        let upto = serial_min(cum, top);
        let from = self.clocks[SACKS].cum.wrapping_add(1);
        if serial::ge(upto, from) {
            let fast = self.clocks[SACKS].above == 0;
            let mut tsn = from;
            loop {
                if fast {
                    // Nothing above the cumulative point: every slot here is unset, each
                    // passes in turn (a slot at or below the cumulative point needs no time).
                    self.in_order(SACKS, tsn, ts_ns);
                } else {
                    self.arrive(SACKS, tsn, ts_ns);
                }
                if tsn == upto {
                    break;
                }
                tsn = tsn.wrapping_add(1);
            }
        }
        // The capture missed DATA the receiver got: it arrived by this SACK at the latest.
        let from = self.clocks[ARRIVALS].cum.wrapping_add(1);
        if serial::ge(upto, from) {
            let mut tsn = from;
            loop {
                self.arrive(ARRIVALS, tsn, ts_ns);
                if tsn == upto {
                    break;
                }
                tsn = tsn.wrapping_add(1);
            }
        }
        // Gap ack blocks (and NR-SACK's non-renegable ones): offsets from the cumulative ack.
        if !(k.gap_bytes.is_empty() && k.nr_gap_bytes.is_empty()) {
            self.gap_blocks(ts_ns, k);
        }
        self.advance(SACKS, ts_ns);
        self.advance(ARRIVALS, ts_ns);
        self.retire();
    }

    /// The SACK's gap ack blocks (and NR-SACK's non-renegable ones): offsets from its
    /// cumulative TSN ack (RFC 9260 3.3.4); a block whose start is above its end is skipped.
    fn gap_blocks(&mut self, ts_ns: i64, k: &SackChunk<'_>) {
        let cum = k.cum_tsn_ack;
        for g in k.gap_blocks().chain(k.nr_gap_blocks()) {
            if g.start > g.end || g.start == 0 {
                continue;
            }
            for off in g.start..=g.end {
                let tsn = cum.wrapping_add(u32::from(off));
                if !self.held(tsn) {
                    break;
                }
                self.arrive(SACKS, tsn, ts_ns);
                self.arrive(ARRIVALS, tsn, ts_ns);
            }
        }
    }

    /// TSN `tsn` (held) arrives on clock `k` at `t` (the first time only): its message may be
    /// complete. True when it was new.
    #[inline]
    fn arrive(&mut self, k: usize, tsn: u32, t: i64) -> bool {
        if serial::le(tsn, self.clocks[k].cum) {
            // Passed already (its slot's time may be unset: see `sack`).
            return false;
        }
        let slot = self.at_mut(tsn);
        if slot.t[k] != NOT_YET {
            return false;
        }
        slot.t[k] = t;
        let known = slot.flags & KNOWN != 0;
        // Above the cumulative point (everything at or below it has a time).
        self.clocks[k].above += 1;
        if known {
            self.complete_check(k, tsn, t);
        }
        true
    }

    /// The message of the (known) TSN `tsn` on clock `k`, one of its fragments having arrived:
    /// when every fragment has, it is complete at the latest arrival, `t` at least (delivered,
    /// or waiting for an earlier one).
    fn complete_check(&mut self, k: usize, tsn: u32, t: i64) {
        let Some((first_tsn, complete_ns)) = self.message_complete(k, tsn, t) else {
            return;
        };
        let slot = *self.at(tsn);
        self.clocks[k].messages += 1;
        if slot.flags & UNORDERED != 0 || slot.stream == NO_STREAM {
            // RFC 9260 6.6: an unordered message is delivered at once.
            return;
        }
        self.ordered_complete(k, slot.stream, slot.number, first_tsn, complete_ns);
    }

    /// The first TSN of the message holding `tsn` and the latest arrival of its fragments on
    /// clock `k` (`t` at least), when every fragment is known and has arrived (fragments of a
    /// message have consecutive TSNs, RFC 9260 6.9; fragments below the base arrived on both
    /// clocks).
    #[inline]
    fn message_complete(&self, k: usize, tsn: u32, t: i64) -> Option<(u32, i64)> {
        // Arrived: a time, or at or below the cumulative point (the SACK clock's fast path
        // passes slots without writing their time).
        let cum = self.clocks[k].cum;
        let ok = |tsn: u32, s: &Slot| {
            s.flags & KNOWN != 0 && (s.t[k] != NOT_YET || serial::le(tsn, cum))
        };
        let mut latest = t.max(self.at(tsn).t[k]);
        let mut first = tsn;
        while self.at(first).flags & FIRST == 0 {
            let prev = first.wrapping_sub(1);
            if !self.held(prev) {
                break;
            }
            let p = self.at(prev);
            if !ok(prev, p) || p.flags & LAST != 0 {
                return None;
            }
            first = prev;
            latest = latest.max(p.t[k]);
        }
        let mut last = tsn;
        while self.at(last).flags & LAST == 0 {
            last = last.wrapping_add(1);
            if !self.held(last) {
                return None;
            }
            let n = self.at(last);
            if !ok(last, n) || n.flags & FIRST != 0 {
                return None;
            }
            latest = latest.max(n.t[k]);
        }
        Some((first, latest))
    }

    /// Moves clock `k`'s cumulative point over the TSNs that have arrived, at `t`: the one-stream
    /// counterfactual delivers every message that ends there; streams waiting for a message
    /// below the new point that the capture never showed are released.
    #[inline]
    fn advance(&mut self, k: usize, t: i64) {
        if self.clocks[k].above != 0 {
            self.advance_over(k, t);
        }
    }

    fn advance_over(&mut self, k: usize, t: i64) {
        let mut tsn = self.clocks[k].cum.wrapping_add(1);
        let start = tsn;
        while self.held(tsn) && self.at(tsn).t[k] != NOT_YET {
            let slot = *self.at(tsn);
            let c = &mut self.clocks[k];
            c.above -= 1;
            if slot.flags & (KNOWN | LAST) != KNOWN {
                c.boundary = tsn;
            }
            if slot.flags & (KNOWN | LAST) == KNOWN | LAST {
                // One stream for all: delivered now, complete at its last fragment's arrival.
                let mut complete = slot.t[k];
                let mut j = tsn;
                while self.at(j).flags & FIRST == 0 {
                    let prev = j.wrapping_sub(1);
                    if !self.held(prev) {
                        break;
                    }
                    let p = self.at(prev);
                    if p.flags & KNOWN == 0 || p.flags & LAST != 0 {
                        break;
                    }
                    j = prev;
                    complete = complete.max(p.t[k]);
                }
                let c = &mut self.clocks[k];
                c.single_messages += 1;
                let wait = t.saturating_sub(complete);
                if wait > MIN_WAIT_NS {
                    c.single_blocked += 1;
                    push_wait(&mut c.single_delays, wait as f64 / 1e6);
                }
            }
            tsn = tsn.wrapping_add(1);
        }
        if tsn == start {
            return;
        }
        let clock = &mut self.clocks[k];
        clock.advanced = true;
        clock.cum = tsn.wrapping_sub(1);
        if clock.waiting_streams == 0 {
            return;
        }
        let wide = self.wide;
        for h in &mut self.streams {
            Self::release_below(&mut h.clocks[k], clock, wide);
        }
    }

    /// Drops the slots both clocks are done with, whole messages at a time (the one-stream
    /// counterfactual reads a message's earlier fragments when its last one passes).
    #[inline]
    fn retire(&mut self) {
        let done = serial_min(self.clocks[ARRIVALS].boundary, self.clocks[SACKS].boundary);
        let base = done.wrapping_add(1);
        if serial::gt(base, self.base) {
            self.base = base;
        }
    }

    /// Drops every slot below `tsn` (window overflow): a clock whose cumulative point was below
    /// loses those TSNs and says so.
    #[cold]
    fn drop_below(&mut self, tsn: u32) {
        if serial::gt(tsn, self.end) {
            self.end = tsn;
        }
        self.base = tsn;
        let wide = self.wide;
        for k in [ARRIVALS, SACKS] {
            let lost = serial::lt(self.clocks[k].cum, tsn.wrapping_sub(1));
            if !lost {
                continue;
            }
            let mut above = 0;
            let mut t = tsn;
            while t != self.end {
                above += u32::from(self.at(t).t[k] != NOT_YET);
                t = t.wrapping_add(1);
            }
            let clock = &mut self.clocks[k];
            clock.cum = tsn.wrapping_sub(1);
            clock.boundary = clock.cum;
            clock.above = above;
            clock.overflowed = true;
            for h in &mut self.streams {
                while !h.clocks[k].waiting.is_empty() {
                    Self::release(&mut h.clocks[k], clock, wide);
                }
            }
        }
    }
}
