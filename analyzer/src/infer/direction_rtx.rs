//! Retransmissions of one direction (RFC 9260 6.3.3 timeout, 7.2.4 fast retransmit) and their
//! grouping into T3-rtx expiries: the rows, the outage bookkeeping and the timers they restart;
//! and retransmissions that outran their originals past a failover (`note_outrun`).

use super::*;

impl DirInfer {
    pub(super) fn push_rtx(&mut self, r: Retransmission) -> Option<u32> {
        if self.retransmissions.len() >= MAX_ROWS {
            self.dropped_rows += 1;
            return None;
        }
        self.retransmissions.push(r);
        Some(self.retransmissions.len() as u32 - 1)
    }

    /// A SACK of this direction came at most a round trip before `now`: at least
    /// `FAST_RTX_AFTER_SACK_NS`, or twice the longest RTT sample (RFC 9260 7.2.4: a fast
    /// retransmission leaves when the SACK that marks it is handled). Read from the
    /// destinations' latest SACK and longest RTT, only when a chunk is resent.
    fn sack_within_a_round_trip(&self, now: i64) -> bool {
        let last_sack = self.dsts.iter().filter_map(|d| d.last_sack_from_ns).max();
        let max_rtt_ms = self
            .dsts
            .iter()
            .filter_map(|d| d.rtt.max())
            .fold(0.0, f64::max);
        let window = FAST_RTX_AFTER_SACK_NS.max((2.0 * max_rtt_ms * 1e6) as i64);
        last_sack.is_some_and(|s| now - s <= window)
    }

    /// The first sight of `tsn`, on `path`: followed when the latest failover's new destination
    /// takes the new DATA (`Failover::to_first_seen`).
    pub(super) fn note_first_sight(&mut self, path: PathIdx, tsn: u32) {
        let cur = self.cur_dst;
        let Some(f) = self.failovers.last_mut() else {
            return;
        };
        if path != f.to || cur != Some(path) || f.moved {
            return;
        }
        f.outrun_ns = None;
        if f.to_first_seen.len() < crate::infer::events::OUTRUN_TSNS {
            f.to_first_seen.push(tsn);
        } else {
            f.moved = true;
        }
    }

    /// A second copy of `tsn`, on `path`: when the latest failover's new destination showed it
    /// first and it comes on the old one, it was a retransmission outrunning its original
    /// (`Failover::outrun_ns`).
    pub(super) fn note_outrun(&mut self, ctx: &PacketCtx, tsn: u32, path: PathIdx) {
        let Some(f) = self.failovers.last_mut() else {
            return;
        };
        if path != f.from || f.moved {
            return;
        }
        if let Some(i) = f.to_first_seen.iter().position(|&t| t == tsn) {
            f.to_first_seen.swap_remove(i);
            if f.to_first_seen.is_empty() {
                f.outrun_ns = Some(ctx.ts_ns);
            }
        }
    }

    /// A TSN sent again (RFC 9260 6.3.3 timeout, 7.2.4 fast retransmit).
    pub(super) fn retransmit(&mut self, ctx: &PacketCtx, tsn: u32, i: usize, path: PathIdx) {
        let e = self.tsns[i];
        if e.tx == 1 {
            self.note_outrun(ctx, tsn, path);
        }
        // Three miss indications make a fast retransmission only when a SACK came just before
        // (RFC 9260 7.2.4); long after the last one only a T3-rtx expiry sends it (6.3.3 E3):
        // a fast retransmission lost on an alternate path whose RTO is still RTO.Initial.
        let kind = if e.miss >= FAST_RTX_MISSES && self.sack_within_a_round_trip(ctx.ts_ns) {
            self.rtx_fast += 1;
            RtxKind::Fast
        } else {
            self.rtx_timeout += 1;
            RtxKind::Timeout
        };
        let timer_path = e.last_path;
        let timeout = match (kind, e.marked) {
            // Marked by an earlier expiry and sent now as cwnd allows (RFC 9260 7.2.3).
            (RtxKind::Timeout, Some(t)) => {
                if let Some(ev) = self.timeouts.get_mut(t as usize) {
                    ev.chunks += 1;
                }
                Some(t)
            }
            (RtxKind::Timeout, None) => Some(self.timeout_event(ctx, tsn, &e, timer_path, path)),
            _ => None,
        };
        // Another chunk of the original's packet was acknowledged in its first transmission (the
        // latest such packet of that destination; packets are numbered per direction): the
        // packet reached the peer.
        let od = &self.dsts[e.first_path as usize];
        let peer_discarded = (e.tx == 1 && e.seen && !e.gap_acked && e.pkt == od.last_good_pkt)
            .then_some(PACKET_MATES_ACKED);
        let row = self.push_rtx(Retransmission {
            tsn,
            t_ns: ctx.ts_ns,
            frame: ctx.frame,
            orig_t_ns: e.first_ns,
            orig_frame: e.first_frame,
            orig_path: e.first_path,
            path,
            kind,
            timeout,
            spurious: None,
            acked_ns: None,
            peer_discarded,
            orig_passed_over: e.passed_over,
        });
        // Outage bookkeeping: an original never acknowledged (RFC 9260 8.2 error counting), sent
        // after the last one acknowledged or discarded by the peer from that very packet.
        if e.tx == 1 {
            let od = &mut self.dsts[e.first_path as usize];
            if (e.first_ns > od.last_good_ns || peer_discarded.is_some())
                && od.lost_since.is_none_or(|l| e.first_ns < l.0)
            {
                match od.lost_since {
                    None => od.begin_episode((e.first_ns, e.first_frame), timeout),
                    Some(_) => od.lost_since = Some((e.first_ns, e.first_frame)),
                }
            }
            if od.lost_since.is_some() && od.episode_rtx.len() < 4096 {
                if let Some(r) = row {
                    od.episode_rtx.push(r);
                }
            }
        }
        let ent = &mut self.tsns[i];
        ent.tx = ent.tx.saturating_add(1);
        ent.miss = 0;
        ent.last_ns = ctx.ts_ns;
        ent.rtx_row = row;
        ent.passed_over = false;
        let from = ent.last_path;
        ent.marked = None;
        ent.last_path = path;
        if from != path {
            let f = &mut self.dsts[from as usize];
            f.outstanding = f.outstanding.saturating_sub(1);
            if f.outstanding == 0 {
                f.timer_start = None;
                f.timer_nr = None;
            }
            self.dsts[path as usize].outstanding += 1;
        }
        self.dsts[path as usize].retransmissions += 1;
        // RFC 9260 6.3.3 E3 / 6.3.2 R1: the retransmission (re)starts the timer of the
        // destination it is sent to when that timer is not running.
        // An expiry restarts its own destination's timer; resent elsewhere, the send starts it.
        let start = if timeout.is_some_and(|t| {
            let t = &self.timeouts[t as usize];
            t.t_ns == ctx.ts_ns && t.path == path
        }) {
            TimerStart::Expiry
        } else {
            TimerStart::Send
        };
        let dst = &mut self.dsts[path as usize];
        if dst.timer_start.is_none() {
            dst.timer_start = Some((ctx.ts_ns, start));
        }
        if dst.timer_nr.is_none() {
            dst.timer_nr = Some((ctx.ts_ns, start));
        }
    }

    /// Groups timeout retransmissions into T3-rtx expiries and returns the expiry's index.
    fn timeout_event(
        &mut self,
        ctx: &PacketCtx,
        tsn: u32,
        e: &TsnEntry,
        timer_path: PathIdx,
        to: PathIdx,
    ) -> u32 {
        let dst = &self.dsts[timer_path as usize];
        if let Some(li) = dst.last_timeout {
            let last = &self.timeouts[li as usize];
            // Chunks marked by one expiry go out as cwnd allows (RFC 9260 7.2.3: cwnd = 1 MTU):
            // a chunk not yet retransmitted since that expiry, within half its RTO, belongs to it.
            let window = last.observed_rto_ns.unwrap_or(0).max(20_000_000) / 2;
            if e.last_ns < last.t_ns && ctx.ts_ns - last.t_ns < window {
                let li = li as usize;
                self.timeouts[li].chunks += 1;
                return li as u32;
            }
        }
        let (start_ns, kind) = match dst.timer_start {
            Some((s, k)) if s <= ctx.ts_ns => (Some(s), k),
            _ => (Some(e.last_ns), TimerStart::Unknown),
        };
        let (nr_ns, nr_kind) = match dst.timer_nr {
            Some((s, k)) if s <= ctx.ts_ns => (Some(s), k),
            _ => (None, TimerStart::Unknown),
        };
        // RFC 9260 6.1 A: with the peer's window closed the sender only probes it, and when its
        // timer started is not in the trace (a probe is no first transmission from idle).
        let (start_ns, kind, nr_ns, nr_kind) = if self.peer_window_closed {
            (None, TimerStart::Unknown, None, TimerStart::Unknown)
        } else {
            (start_ns, kind, nr_ns, nr_kind)
        };
        // A timer started before a capture gap (rotated files): what ran in the gap is unseen.
        let before_gap = |s: Option<i64>| s.filter(|&s| s >= ctx.gap_end_ns);
        let (start_ns, kind) = match before_gap(start_ns) {
            None if start_ns.is_some() => (None, TimerStart::Unknown),
            _ => (start_ns, kind),
        };
        let (nr_ns, nr_kind) = match before_gap(nr_ns) {
            None if nr_ns.is_some() => (None, TimerStart::Unknown),
            _ => (nr_ns, nr_kind),
        };
        let backoff = dst.consecutive_timeouts;
        let est_rto_ms = dst.est_rto_ms();
        let est_rto_coarse_ms = dst.est_rto_coarse_ms();
        let est_rto_coarse_low_ms = dst.est_rto_coarse_low_ms();
        self.timeouts.push(Timeout {
            est_rto_ms,
            est_rto_coarse_ms,
            est_rto_coarse_low_ms,
            t_ns: ctx.ts_ns,
            frame: ctx.frame,
            path: timer_path,
            to_path: to,
            timer_start: kind,
            timer_start_ns: start_ns,
            observed_rto_ns: start_ns.map(|s| ctx.ts_ns - s),
            observed_rto_nr_ns: nr_ns.map(|s| ctx.ts_ns - s),
            timer_start_nr: nr_kind,
            backoff,
            chunks: 1,
            first_tsn: tsn,
        });
        let idx = self.timeouts.len() as u32 - 1;
        // A copy already resent (it has a retransmission row), sent to this destination after
        // the last SACK from it and after its last acknowledged original, expired: the path
        // fell silent with only retransmissions in flight, and the outage (as far as the trace
        // tells) starts at that copy; each expiry strikes the destination (RFC 9260 8.2).
        let copy_frame = e
            .rtx_row
            .and_then(|r| self.retransmissions.get(r as usize))
            .map(|r| r.frame);
        let dst = &mut self.dsts[timer_path as usize];
        if let Some(fr) = copy_frame.filter(|_| {
            dst.lost_since.is_none()
                && e.last_ns > dst.last_good_ns
                && dst.last_sack_from_ns.is_none_or(|h| e.last_ns > h)
        }) {
            dst.begin_episode((e.last_ns, fr), None);
        }
        dst.consecutive_timeouts += 1;
        dst.last_timeout = Some(idx);
        if dst.lost_since.is_some() {
            dst.episode_timeouts.push(idx);
        }
        // RFC 9260 6.3.3 E1 and 6.4.1: every chunk outstanding to that destination is marked for
        // retransmission to the alternate destination the first one went to; the expired
        // destination's timer stops, and the alternate's starts when a chunk is sent there (E3).
        let moved = dst.outstanding;
        dst.outstanding = 0;
        dst.timer_start = None;
        dst.timer_nr = None;
        if to != timer_path {
            self.dsts[to as usize].outstanding += moved;
        } else {
            self.dsts[to as usize].outstanding = moved;
        }
        for ent in self.tsns.iter_mut().take(MAX_MARK_SCAN) {
            if ent.seen && !ent.gap_acked && ent.last_path == timer_path {
                ent.marked = Some(idx);
                ent.last_path = to;
            }
        }
        idx
    }
}
