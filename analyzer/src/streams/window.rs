//! The bitmaps a direction and its streams keep of what they have seen (`TsnWindow`: each TSN
//! counted once; `SsnTrack`: a stream's sequence numbers, their gaps healed by late messages).

/// TSNs below the highest one that are remembered as seen (a bitmap): an older one is taken as
/// a retransmission.
pub(super) const TSN_WINDOW: u32 = 1024;

/// The TSNs a direction has shown: the highest so far (RFC 9260 1.6 serial arithmetic) and which
/// of the `TSN_WINDOW` below it were seen, so that each TSN counts once whether or not the
/// capture saw its first transmission.
#[derive(Debug, Clone, Default)]
pub(super) struct TsnWindow {
    started: bool,
    highest: u32,
    /// Bit `tsn % TSN_WINDOW`: seen, for TSNs in (highest - TSN_WINDOW, highest].
    bits: [u64; (TSN_WINDOW / 64) as usize],
}

impl TsnWindow {
    /// True the first time `tsn` is seen; a TSN further below the highest than the window is
    /// taken as seen (a retransmission).
    #[inline]
    pub(super) fn first_time(&mut self, tsn: u32) -> bool {
        if !self.started {
            self.started = true;
            self.highest = tsn;
            let (w, b) = window_slot(tsn);
            self.bits[w] |= b;
            return true;
        }
        let d = crate::serial::diff(self.highest, tsn);
        if d == 1 {
            // The next TSN (the common case): its slot is the one leaving the window's far end.
            self.highest = tsn;
            let (w, b) = window_slot(tsn);
            self.bits[w] |= b;
            return true;
        }
        if d > 0 {
            if d >= i64::from(TSN_WINDOW) {
                self.bits = Default::default();
            } else {
                // Usually one step: the TSNs passed over leave the window's far end.
                for k in 1..=d as u32 {
                    let (w, b) = window_slot(self.highest.wrapping_add(k));
                    self.bits[w] &= !b;
                }
            }
            self.highest = tsn;
            let (w, b) = window_slot(tsn);
            self.bits[w] |= b;
            return true;
        }
        if -d >= i64::from(TSN_WINDOW) {
            return false;
        }
        let (w, b) = window_slot(tsn);
        let seen = self.bits[w] & b != 0;
        self.bits[w] |= b;
        !seen
    }
}

/// Sequence numbers below a stream's highest that are remembered as seen: a late message within
/// them heals its hole (`SsnTrack`). As many as `TSN_WINDOW`: a message delayed behind fewer
/// TSNs than that (a retransmission after a failover, with later messages sent meanwhile) is
/// late, not missing.
pub(super) const SSN_WINDOW: u32 = TSN_WINDOW;

/// Word and bit of number `n` in a bitmap of `TSN_WINDOW` (= `SSN_WINDOW`) bits indexed by `n`
/// modulo its size (`TsnWindow`, `SsnTrack`).
#[inline]
fn window_slot(n: u32) -> (usize, u64) {
    let i = n % TSN_WINDOW;
    ((i / 64) as usize, 1u64 << (i % 64))
}

/// Ordered stream sequence numbers (DATA: SSN, 16 bits; I-DATA: MID, 32 bits) of one stream:
/// the highest, which of the `SSN_WINDOW` below it were seen (bit `n % SSN_WINDOW`), and the
/// numbers that left that window unseen (skipped: never in the capture).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SsnTrack {
    started: bool,
    epoch: u16,
    highest: u32,
    bits: [u64; (SSN_WINDOW / 64) as usize],
    /// Numbers from the first one seen to the highest (positions past it are not gaps).
    span: u32,
    gaps: u64,
}

impl SsnTrack {
    /// Number `n` (SSN, or MID when `wide`) seen in reset epoch `epoch`.
    #[inline(always)]
    pub(super) fn add(&mut self, n: u32, wide: bool, epoch: u16) {
        if self.started && self.epoch == epoch {
            // RFC 9260 3.3.1: SSNs are 16 bits (serial); RFC 8260 2.1: MIDs 32.
            let next = if wide {
                self.highest.wrapping_add(1)
            } else {
                u32::from((self.highest as u16).wrapping_add(1))
            };
            if n == next {
                // The next number (the common case): it takes the slot of the one leaving the
                // window's far end, a gap when that one was not seen.
                let (w, b) = window_slot(n);
                if self.span >= SSN_WINDOW {
                    self.gaps += u64::from(self.bits[w] & b == 0);
                }
                self.bits[w] |= b;
                self.highest = n;
                self.span = self.span.saturating_add(1);
                return;
            }
        }
        self.add_any(n, wide, epoch);
    }

    /// `add` for a stream's first number, a reset, and any number but the next one.
    #[inline(never)]
    fn add_any(&mut self, n: u32, wide: bool, epoch: u16) {
        if !self.started || self.epoch != epoch {
            // First number, or the stream was reset (RFC 6525 5.2.2: numbering starts again).
            let gaps = self.gaps + self.window_gaps();
            *self = SsnTrack {
                started: true,
                epoch,
                highest: n,
                span: 1,
                gaps,
                ..SsnTrack::default()
            };
            let (w, b) = window_slot(n);
            self.bits[w] |= b;
            return;
        }
        // RFC 9260 3.3.1: SSNs are 16 bits (serial); RFC 8260 2.1: MIDs 32.
        let d: i64 = if wide {
            i64::from(n.wrapping_sub(self.highest) as i32)
        } else {
            i64::from((n as u16).wrapping_sub(self.highest as u16) as i16)
        };
        // The next number (d == 1) took `add`'s path.
        if d > 0 {
            let d = d as u32;
            if d >= SSN_WINDOW {
                // Every number in the window leaves it; so do those skipped beyond its reach.
                self.gaps += self.window_gaps() + u64::from(d - SSN_WINDOW);
                self.bits = Default::default();
            } else {
                // The numbers passed over take the slots of those leaving the window's far end
                // (usually one step): a gap when one left unseen.
                for k in 1..=d {
                    let m = self.highest.wrapping_add(k);
                    let (w, b) = window_slot(m);
                    if self.span.saturating_add(k) > SSN_WINDOW {
                        self.gaps += u64::from(self.bits[w] & b == 0);
                    }
                    self.bits[w] &= !b;
                }
            }
            let (w, b) = window_slot(n);
            self.bits[w] |= b;
            self.highest = n;
            self.span = self.span.saturating_add(d);
        } else if d < 0 {
            // A late message (sent or captured out of order) fills its hole.
            let back = d.unsigned_abs();
            if back < u64::from(SSN_WINDOW) && back < u64::from(self.span) {
                let (w, b) = window_slot(n);
                self.bits[w] |= b;
            }
        }
    }

    /// Numbers still missing inside the window. Every bit set is inside it: a number's bit is
    /// cleared when it leaves, and none below the first is set.
    pub(super) fn window_gaps(&self) -> u64 {
        if !self.started {
            return 0;
        }
        let held = self.span.min(SSN_WINDOW);
        let seen: u32 = self.bits.iter().map(|w| w.count_ones()).sum();
        u64::from(held.saturating_sub(seen))
    }

    pub(super) fn total_gaps(&self) -> u64 {
        self.gaps + self.window_gaps()
    }
}
