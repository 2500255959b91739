//! Ordered delivery within each stream (RFC 9260 6.6) under one clock: the number each stream
//! delivers next, the complete messages waiting for an earlier one, and the waits.

use std::collections::VecDeque;

use super::{push_wait, Clock, Delays, Dir, MAX_STREAMS, MAX_WAITING, MIN_WAIT_NS, NO_STREAM};

/// A complete message waiting for an earlier one of its stream.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    pub(super) number: u32,
    pub(super) first_tsn: u32,
    pub(super) complete_ns: i64,
}

/// One stream under one clock.
#[derive(Debug, Clone, Default)]
pub(super) struct StreamClock {
    /// The number the stream delivers next (None until its first DATA told it).
    pub(super) next: Option<u32>,
    /// Ascending by number from `next`.
    pub(super) waiting: VecDeque<Waiting>,
    /// Ordered messages delivered (with or without waiting).
    pub(super) delivered: u64,
    pub(super) blocked: u64,
    pub(super) delays: Delays,
}

#[derive(Debug, Clone)]
pub(super) struct StreamHol {
    pub(super) sid: u16,
    /// The direction's stream-reset epoch this stream's numbering belongs to.
    pub(super) epoch: u16,
    pub(super) clocks: [StreamClock; 2],
}

/// `a - b` in the serial arithmetic of message numbers (16-bit SSN or 32-bit MID).
#[inline]
pub(super) fn number_diff(a: u32, b: u32, wide: bool) -> i64 {
    if wide {
        i64::from(a.wrapping_sub(b) as i32)
    } else {
        i64::from((a as u16).wrapping_sub(b as u16) as i16)
    }
}

#[inline]
pub(super) fn next_number(n: u32, wide: bool) -> u32 {
    if wide {
        n.wrapping_add(1)
    } else {
        u32::from((n as u16).wrapping_add(1))
    }
}

impl Dir {
    /// The stream index of `sid`, made on first sight; `NO_STREAM` past `MAX_STREAMS`.
    #[inline(always)]
    pub(super) fn stream(&mut self, sid: u16, number: u32, epoch: u16) -> u16 {
        // The stream looked up last, in the same reset epoch (the common case).
        if let Some(h) = self.streams.get(usize::from(self.last)) {
            if h.sid == sid && h.epoch == epoch {
                return self.last;
            }
        }
        self.stream_slow(sid, number, epoch)
    }

    /// `stream` past its shortcut: another stream, a new one, or a reset.
    #[inline(never)]
    fn stream_slow(&mut self, sid: u16, number: u32, epoch: u16) -> u16 {
        let last = usize::from(self.last);
        let i = match self.streams.get(last) {
            Some(h) if h.sid == sid => last,
            _ => match self.streams.iter().position(|h| h.sid == sid) {
                Some(i) => i,
                None => {
                    if self.streams.len() >= MAX_STREAMS {
                        self.untracked += 1;
                        return NO_STREAM;
                    }
                    // RFC 9260 6.5: numbering starts at 0 on each stream; without the start
                    // of the association, at the first number seen.
                    let next = Some(if self.fresh && epoch == 0 { 0 } else { number });
                    let clock = StreamClock {
                        next,
                        ..StreamClock::default()
                    };
                    if self.streams.is_empty() {
                        self.streams.reserve_exact(1);
                    }
                    self.streams.push(StreamHol {
                        sid,
                        epoch,
                        clocks: [clock.clone(), clock],
                    });
                    self.streams.len() - 1
                }
            },
        };
        self.last = i as u16;
        let h = &mut self.streams[i];
        if h.epoch != epoch {
            // A stream reset: the numbering starts again (RFC 6525 5.2.2); what waited under
            // the old numbering is released without a delay.
            h.epoch = epoch;
            for (c, clock) in h.clocks.iter_mut().zip(self.clocks.iter_mut()) {
                if !c.waiting.is_empty() {
                    clock.unattributed += c.waiting.len() as u64;
                    clock.waiting_streams -= 1;
                    c.waiting.clear();
                }
                c.next = Some(number);
            }
        }
        i as u16
    }

    /// An ordered message of stream index `st` is complete on clock `k` at `t`.
    #[inline]
    pub(super) fn ordered_complete(
        &mut self,
        k: usize,
        st: u16,
        number: u32,
        first_tsn: u32,
        t: i64,
    ) {
        let wide = self.wide;
        let sc = &mut self.streams[usize::from(st)].clocks[k];
        let next = *sc.next.get_or_insert(number);
        if next == number && sc.waiting.is_empty() {
            // In order, nothing waiting (the common case).
            sc.delivered += 1;
            sc.next = Some(next_number(number, wide));
            return;
        }
        let clock = &mut self.clocks[k];
        let d = number_diff(number, next, wide);
        if d == 0 {
            sc.delivered += 1;
            sc.next = Some(next_number(number, wide));
            Self::drain(sc, clock, wide, t);
        } else if d > 0 {
            // An earlier message of the stream is missing: it waits (RFC 9260 6.6).
            let w = Waiting {
                number,
                first_tsn,
                complete_ns: t,
            };
            if sc.waiting.is_empty() {
                clock.waiting_streams += 1;
                sc.waiting.push_back(w);
            } else {
                let at = sc
                    .waiting
                    .iter()
                    .rposition(|x| number_diff(x.number, number, wide) < 0)
                    .map_or(0, |p| p + 1);
                if sc.waiting.get(at).is_some_and(|x| x.number == number) {
                    return;
                }
                sc.waiting.insert(at, w);
                if sc.waiting.len() > MAX_WAITING {
                    // Bounded: the oldest goes as if the missing one came, without a delay.
                    Self::release(sc, clock, wide);
                }
            }
        }
        // d < 0: a number already passed (released, or a stream reset not seen): nothing.
    }

    /// Delivers the waiting messages that follow `next` at `t`.
    fn drain(sc: &mut StreamClock, clock: &mut Clock, wide: bool, t: i64) {
        if sc.waiting.is_empty() {
            return;
        }
        while let Some(w) = sc.waiting.front() {
            if Some(w.number) != sc.next {
                break;
            }
            let wait = t.saturating_sub(w.complete_ns);
            if wait > MIN_WAIT_NS {
                sc.blocked += 1;
                push_wait(&mut sc.delays, wait as f64 / 1e6);
            }
            sc.delivered += 1;
            sc.next = Some(next_number(w.number, wide));
            sc.waiting.pop_front();
        }
        if sc.waiting.is_empty() {
            clock.waiting_streams -= 1;
        }
    }

    /// Every TSN up to `clock`'s cumulative point arrived, yet the stream still waits for a
    /// message below it: one the capture never showed. What waits behind it is released.
    pub(super) fn release_below(sc: &mut StreamClock, clock: &mut Clock, wide: bool) {
        let cum = clock.cum;
        while sc
            .waiting
            .front()
            .is_some_and(|w| crate::serial::le(w.first_tsn, cum))
        {
            Self::release(sc, clock, wide);
        }
    }

    /// The missing message before the oldest waiting one will not be seen: the waiting
    /// messages from the oldest on that follow each other are delivered without a delay
    /// (counted `unattributed`).
    pub(super) fn release(sc: &mut StreamClock, clock: &mut Clock, wide: bool) {
        let Some(first) = sc.waiting.front() else {
            return;
        };
        sc.next = Some(first.number);
        while let Some(w) = sc.waiting.front() {
            if Some(w.number) != sc.next {
                break;
            }
            clock.unattributed += 1;
            sc.delivered += 1;
            sc.next = Some(next_number(w.number, wide));
            sc.waiting.pop_front();
        }
        if sc.waiting.is_empty() {
            clock.waiting_streams -= 1;
        }
    }
}
