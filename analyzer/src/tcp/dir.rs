//! One direction of a TCP connection: the data one endpoint sends and the ACKs its peer returns.
//! Tracks the sequence space (RFC 9293 3.4, serial arithmetic per RFC 1982), outstanding
//! segments, RTT samples (Karn, RFC 6298 3; timestamps, RFC 7323 4), retransmissions with their
//! kind and spuriousness, RTO expiries with backoff, lone ACKs (delayed-ACK evidence) and
//! outages. State is bounded: outstanding segments and event rows are capped.

use std::collections::VecDeque;

pub use super::events::*;
use super::options::Options;
use crate::infer::stats::{add_per_second, Samples};
use crate::serial;

/// Outstanding segments remembered per direction; the oldest are forgotten past this.
pub const MAX_OUTSTANDING: usize = 16_384;
/// Event rows kept per direction (samples, retransmissions, timeouts); past this only counted.
pub const MAX_ROWS: usize = 200_000;
/// A hole filled this soon after it appeared is reordering, not a retransmission.
const REORDER_NS: i64 = 3_000_000;
/// Retransmissions this close after a timeout retransmission (no ACK between) belong to it.
const BURST_NS: i64 = 10_000_000;
/// RFC 5681 3.2: fast retransmit on the third duplicate ACK (without SACK).
const DUPTHRESH: u32 = 3;
/// Throughput bins kept (seconds since the flow started).
const MAX_BINS: usize = 86_400;
/// Distinct TSvals remembered for timestamp RTT measurement.
const TS_RING: usize = 8;
const NONE: u32 = u32::MAX;

/// Time and frame of the segment being processed, plus a vantage-free RTT hint.
#[derive(Debug, Clone, Copy)]
pub struct SegCtx {
    pub t_ns: i64,
    pub frame: u64,
    /// A round-trip time valid at any vantage (`TcpFlow::rtt_hint_ns`), when known.
    pub rtt_hint_ns: Option<i64>,
    /// Seconds-bin base: the flow's first timestamp.
    pub flow_start_ns: i64,
}

/// One outstanding (or missing) range of sequence space.
#[derive(Debug, Clone, Copy)]
struct SegRec {
    seq: u32,
    end: u32,
    first_ns: i64,
    last_ns: i64,
    first_frame: u64,
    last_frame: u64,
    tsval: Option<u32>,
    /// Transmissions seen; 0 for a hole (bytes never seen, revealed by a later segment).
    tx: u16,
    /// `sack_acks` and `dupacks` of the direction at its last transmission: loss indications
    /// since then are the difference (counters instead of per-segment updates keep an ACK O(1)).
    sack_base: u32,
    dup_base: u32,
    sacked: bool,
    hole: bool,
    reordered: bool,
    syn: bool,
    rtx_row: u32,
}

/// Per-direction state and results.
#[derive(Debug, Clone, Default)]
pub struct TcpDir {
    started: bool,
    /// End of the latest capture gap (rotated files) while the connection was open: nothing is
    /// measured from before it.
    pub gap_end_ns: Option<i64>,
    pub isn: Option<u32>,
    /// Another ISN seen in a SYN of this side (a second SYN-ACK stream), see `flow.rs`.
    pub alt_isn: Option<u32>,
    pub snd_una: u32,
    pub snd_nxt: u32,
    recs: VecDeque<SegRec>,
    /// Highest right edge SACKed, ACKs that SACKed data above SND.UNA, duplicate ACKs since the
    /// last ACK of new data.
    highest_sacked: Option<u32>,
    sack_acks: u32,
    dupacks: u32,
    // Counters.
    pub data_segments: u64,
    pub data_bytes: u64,
    pub new_bytes: u64,
    pub rtx_bytes: u64,
    pub reordered: u64,
    pub keepalives: u64,
    pub forgotten: u64,
    pub dropped_rows: u64,
    pub first_data_ns: Option<i64>,
    pub last_data_ns: Option<i64>,
    pub rwnd_max: u64,
    pub zero_windows: u64,
    // ACK side.
    last_peer_ack_ns: Option<i64>,
    last_win: Option<u32>,
    last_adv: Option<(i64, u64)>,
    /// Data outstanding since (time, frame): the last ACK of new data that left some, or the
    /// first send after everything was acknowledged.
    outstanding_since: Option<(i64, u64)>,
    timer: Option<(i64, TimerStart)>,
    consecutive_timeouts: u32,
    timeouts_since_adv: u32,
    recovery_point: Option<u32>,
    last_timeout_ns: Option<i64>,
    // Last transmission (for tail-loss-probe candidates and lone ACKs).
    last_tx_ns: Option<i64>,
    last_tx_quiet_ns: i64,
    ts_ring: [(u32, i64, u64); TS_RING],
    ts_n: usize,
    // RFC 6298 2 estimator (ms).
    srtt: Option<f64>,
    rttvar: f64,
    // Results.
    pub rtt: Samples,
    /// Smallest RTT sample of an ACK of two or more segments, and of the handshake (ms): the
    /// base RTT (`infer`).
    pub rtt_multi_min: Option<f64>,
    pub ts_rtt: Samples,
    pub handshake_rtt_min: Option<f64>,
    pub resp_min_ns: Option<i64>,
    pub rtt_rows: Vec<RttRow>,
    /// No table wanted: keep neither `rtt_rows` nor `bytes_per_s` (the summaries come from the
    /// samples and counters).
    pub skip_rows: bool,
    pub retransmissions: Vec<Retransmission>,
    pub timeouts: Vec<Timeout>,
    pub lone_acks: Vec<LoneAck>,
    pub outages: Vec<Outage>,
    pub transfer_ms: Samples,
    pub max_gap_ns: i64,
    pub bytes_per_s: Vec<u64>,
}

fn push_capped<T>(v: &mut Vec<T>, x: T, dropped: &mut u64) -> Option<u32> {
    if v.len() < MAX_ROWS {
        v.push(x);
        Some(v.len() as u32 - 1)
    } else {
        *dropped += 1;
        None
    }
}

impl TcpDir {
    /// Segments sent and not yet acknowledged (tracked ones).
    pub fn outstanding(&self) -> usize {
        self.recs.len()
    }

    /// After the connection was summarised (`infer::summarise`, `sum` for this direction):
    /// keeps only the summaries of the samples and drops the rows the summary was made from
    /// (lone ACKs, retransmission rows, rate bins, RTT rows, the empty outstanding-segment
    /// queue); what the report reads besides the summary (counters, timeouts, outages) stays.
    pub fn compact(&mut self, sum: Option<&super::infer::DirSummary>) {
        self.rtt.freeze_with(sum.and_then(|s| s.rtt));
        self.ts_rtt.freeze_with(sum.and_then(|s| s.ts_rtt));
        self.transfer_ms.freeze_with(sum.and_then(|s| s.transfer));
        if self.recs.is_empty() {
            self.recs = VecDeque::new();
        }
        self.lone_acks = Vec::new();
        self.retransmissions = Vec::new();
        self.bytes_per_s = Vec::new();
        self.rtt_rows = Vec::new();
    }

    /// Whether the sequence space is known (from a segment or an ACK of this direction).
    pub fn started(&self) -> bool {
        self.started
    }

    pub fn has_data(&self) -> bool {
        self.data_bytes > 0
    }

    pub fn srtt_ms(&self) -> Option<f64> {
        self.srtt
    }

    /// Restarts the sequence space at `seq` (a SYN with a new ISN before any data).
    pub fn restart(&mut self, seq: u32) {
        self.recs.clear();
        self.started = true;
        self.snd_una = seq;
        self.snd_nxt = seq;
        self.timer = None;
        self.consecutive_timeouts = 0;
        self.timeouts_since_adv = 0;
        self.recovery_point = None;
    }

    /// A SYN of this side's previous ISN (see `TcpFlow::syn_isn`): counted as a timer
    /// retransmission of that SYN; the tracked sequence space is left alone.
    pub fn other_isn_retransmission(&mut self, c: &SegCtx, seq: u32) {
        let row = Retransmission {
            t_ns: c.t_ns,
            frame: c.frame,
            seq,
            len: 1,
            orig_ns: None,
            orig_frame: None,
            kind: RtxKind::Timeout,
            spurious: None,
            orig_seen: false,
            ack_delay_ns: None,
            handshake: true,
        };
        push_capped(&mut self.retransmissions, row, &mut self.dropped_rows);
    }

    /// Offset of `x` from the oldest outstanding byte (orders the window, RFC 1982).
    fn off(&self, x: u32) -> u32 {
        x.wrapping_sub(self.recs.front().map_or(self.snd_una, |r| r.seq))
    }

    /// Splits the record holding `at` so that a record starts there.
    fn split_at(&mut self, at: u32) {
        if self.recs.len() >= MAX_OUTSTANDING {
            return;
        }
        let o = self.off(at);
        let i = self.recs.partition_point(|r| self.off(r.end) <= o);
        if let Some(r) = self.recs.get(i).copied() {
            if r.seq != at && serial::lt(r.seq, at) && serial::lt(at, r.end) {
                let mut tail = r;
                tail.seq = at;
                self.recs[i].end = at;
                self.recs.insert(i + 1, tail);
            }
        }
    }

    fn push_rec(&mut self, r: SegRec) {
        if self.recs.len() >= MAX_OUTSTANDING {
            self.recs.pop_front();
            self.forgotten += 1;
        }
        self.recs.push_back(r);
    }

    fn estimate(&mut self, r_ms: f64) {
        // RFC 6298 2.2 / 2.3: alpha 1/8, beta 1/4.
        crate::infer::stats::rtt_update(&mut self.srtt, &mut self.rttvar, r_ms);
    }

    #[inline(always)]
    fn sample(&mut self, row: RttRow) {
        // None across a capture gap (rotated files).
        if self.gap_end_ns.is_some_and(|g| row.t_ns - row.rtt_ns < g) {
            return;
        }
        let ms = row.rtt_ns as f64 / 1e6;
        self.resp_min_ns = Some(self.resp_min_ns.map_or(row.rtt_ns, |m| m.min(row.rtt_ns)));
        match row.kind {
            RttKind::Data => {
                self.rtt.push(ms);
                if row.segments_acked >= 2 {
                    self.rtt_multi_min = Some(self.rtt_multi_min.map_or(ms, |m| m.min(ms)));
                }
                self.estimate(ms);
            }
            RttKind::Handshake => {
                self.handshake_rtt_min = Some(self.handshake_rtt_min.map_or(ms, |m| m.min(ms)));
            }
            RttKind::Timestamp => self.ts_rtt.push(ms),
        }
        if !self.skip_rows {
            push_capped(&mut self.rtt_rows, row, &mut self.dropped_rows);
        }
    }

    /// A segment sent by this direction's endpoint: `len` payload bytes (cut bytes included),
    /// SYN and FIN each take one sequence number (RFC 9293 3.4).
    pub fn on_data(
        &mut self,
        c: &SegCtx,
        seq: u32,
        len: u32,
        syn: bool,
        fin: bool,
        tsval: Option<u32>,
    ) {
        if !self.started {
            self.restart(seq);
        }
        if syn && self.isn.is_none() {
            self.isn = Some(seq);
        }
        let seg_len = len + u32::from(syn) + u32::from(fin);
        if seg_len == 0 {
            return;
        }
        let end = seq.wrapping_add(seg_len);
        // RFC 9293 3.8.4: a keep-alive carries SND.NXT-1 and zero or one garbage byte.
        if !syn
            && !fin
            && len <= 1
            && self.snd_una == self.snd_nxt
            && seq == self.snd_nxt.wrapping_sub(1)
        {
            self.keepalives += 1;
            return;
        }
        self.data_segments += 1;
        self.data_bytes += u64::from(len);
        self.first_data_ns.get_or_insert(c.t_ns);
        self.last_data_ns = Some(c.t_ns);
        // Throughput bins feed the tables alone.
        if !self.skip_rows {
            let elapsed = c.t_ns - c.flow_start_ns;
            add_per_second(&mut self.bytes_per_s, elapsed, u64::from(len), MAX_BINS);
        }
        let mut new_from = seq;
        if serial::lt(seq, self.snd_nxt) {
            let rtx_end = if serial::lt(end, self.snd_nxt) {
                end
            } else {
                self.snd_nxt
            };
            self.retransmitted(c, seq, rtx_end, end, syn, tsval);
            new_from = rtx_end;
        } else if serial::lt(self.snd_nxt, seq) {
            // Bytes never seen: lost before the capture point (or by the capture). Remember the
            // hole so that its later fill is recognised.
            let hole = SegRec {
                seq: self.snd_nxt,
                end: seq,
                first_ns: c.t_ns,
                last_ns: c.t_ns,
                first_frame: c.frame,
                last_frame: c.frame,
                tsval,
                tx: 0,
                sack_base: self.sack_acks,
                dup_base: self.dupacks,
                sacked: false,
                hole: true,
                reordered: false,
                syn: false,
                rtx_row: NONE,
            };
            if self.snd_una == self.snd_nxt && self.timer.is_none() {
                self.timer = Some((c.t_ns, TimerStart::Send));
                self.outstanding_since = Some((c.t_ns, c.frame));
            }
            self.push_rec(hole);
            self.snd_nxt = seq;
        }
        if serial::lt(new_from, end) {
            if self.snd_una == self.snd_nxt {
                // RFC 6298 5.1: the timer starts when data is sent and it is not running.
                self.timer = Some((c.t_ns, TimerStart::Send));
                self.outstanding_since = Some((c.t_ns, c.frame));
            }
            // Unique payload bytes (goodput): SYN and FIN take sequence space, not payload.
            let p0 = seq.wrapping_add(u32::from(syn));
            let p1 = p0.wrapping_add(len);
            let from = if serial::lt(new_from, p0) {
                p0
            } else {
                new_from
            };
            if serial::lt(from, p1) {
                self.new_bytes += u64::from(p1.wrapping_sub(from));
            }
            self.push_rec(SegRec {
                seq: new_from,
                end,
                first_ns: c.t_ns,
                last_ns: c.t_ns,
                first_frame: c.frame,
                last_frame: c.frame,
                tsval,
                tx: 1,
                sack_base: self.sack_acks,
                dup_base: self.dupacks,
                sacked: false,
                hole: false,
                reordered: false,
                syn,
                rtx_row: NONE,
            });
            self.snd_nxt = end;
        }
        if let Some(ts) = tsval {
            let last = (self.ts_n > 0).then(|| self.ts_ring[(self.ts_n - 1) % TS_RING].0);
            if last != Some(ts) {
                self.ts_ring[self.ts_n % TS_RING] = (ts, c.t_ns, c.frame);
                self.ts_n += 1;
            }
        }
        let since = self
            .last_tx_ns
            .into_iter()
            .chain(self.last_peer_ack_ns)
            .max()
            .unwrap_or(c.t_ns);
        self.last_tx_quiet_ns = c.t_ns - since;
        self.last_tx_ns = Some(c.t_ns);
    }

    /// [a, b) of a segment ending at `seg_end` was sent before.
    fn retransmitted(
        &mut self,
        c: &SegCtx,
        a: u32,
        b: u32,
        seg_end: u32,
        syn: bool,
        tsval: Option<u32>,
    ) {
        let base = self.recs.front().map_or(self.snd_una, |r| r.seq);
        let acked = self.recs.is_empty() || serial::le(b, base);
        let (mut orig, mut all_seen, mut any_hole, mut all_holes) = (None, true, false, true);
        let (mut indicated, mut i0, mut i1) = (false, 0, 0);
        if !acked {
            let a2 = if serial::lt(a, base) { base } else { a };
            self.split_at(a2);
            self.split_at(b);
            let (oa, ob) = (self.off(a2), self.off(b));
            i0 = self.recs.partition_point(|r| self.off(r.end) <= oa);
            // Records are in sequence order within a window below 2^31 (RFC 1982); a wild
            // segment can break that, and then covers nothing.
            i1 = self.recs.partition_point(|r| self.off(r.seq) < ob).max(i0);
            for (k, r) in self.recs.range(i0..i1).enumerate() {
                if orig.is_none() && !r.hole {
                    orig = Some((r.first_ns, r.first_frame));
                }
                all_seen &= r.tx > 0;
                any_hole |= r.hole && r.tx == 0;
                all_holes &= r.hole && r.tx == 0;
                // RFC 6675 4 / RFC 8985 6.2: data SACKed above it since its last transmission;
                // RFC 5681 3.2: three duplicate ACKs for the first unacknowledged segment.
                let sacked_above = self.highest_sacked.is_some_and(|h| serial::le(r.end, h))
                    && self.sack_acks.wrapping_sub(r.sack_base) >= 1;
                let since = if self.last_adv.is_some_and(|(t, _)| r.last_ns > t) {
                    self.dupacks.saturating_sub(r.dup_base)
                } else {
                    self.dupacks
                };
                let dup = i0 + k == 0 && since >= DUPTHRESH;
                indicated |= sacked_above || dup;
            }
            if i0 < i1 && all_holes {
                // A fill of bytes never seen: reordering when it comes at once or carries an
                // older timestamp than the segment that revealed the hole (RFC 7323 3).
                let h = self.recs[i0];
                let older_ts = matches!((tsval, h.tsval), (Some(x), Some(y)) if serial::le(x, y));
                if c.t_ns - h.first_ns < REORDER_NS || older_ts {
                    for r in self.recs.range_mut(i0..i1) {
                        self.new_bytes += u64::from(r.end.wrapping_sub(r.seq));
                        r.tx = 1;
                        r.reordered = true;
                        r.first_ns = c.t_ns;
                        r.last_ns = c.t_ns;
                        r.first_frame = c.frame;
                        r.last_frame = c.frame;
                        r.tsval = tsval;
                    }
                    self.reordered += 1;
                    return;
                }
            }
        }
        self.rtx_bytes += u64::from(seg_end.wrapping_sub(a));
        // Fast retransmission (RFC 5681 3.2, RFC 6675 5, RFC 8985 6.2): a loss indication for
        // the segment, or an ongoing recovery, and an ACK arrival just before it (at a receiver
        // vantage the retransmission comes one RTT after the ACK that triggered it).
        let window = c.rtt_hint_ns.map_or(200_000_000, |h| h * 3 / 2) + 10_000_000;
        let ack_recent = self.last_peer_ack_ns.is_some_and(|t| c.t_ns - t <= window);
        let in_recovery = self
            .recovery_point
            .is_some_and(|rp| serial::lt(self.snd_una, rp));
        let kind = if ack_recent && (indicated || in_recovery) && !syn {
            RtxKind::Fast
        } else {
            RtxKind::Timeout
        };
        let row = Retransmission {
            t_ns: c.t_ns,
            frame: c.frame,
            seq: a,
            len: seg_end.wrapping_sub(a),
            orig_ns: orig.map(|o| o.0),
            orig_frame: orig.map(|o| o.1),
            kind,
            // RFC 2883 / 3522: data already cumulatively acknowledged had arrived.
            spurious: serial::le(seg_end, self.snd_una)
                .then_some("retransmits data already acknowledged"),
            orig_seen: !acked && !any_hole && all_seen && serial::le(seg_end, self.snd_nxt),
            ack_delay_ns: None,
            handshake: syn,
        };
        let row_idx = push_capped(&mut self.retransmissions, row, &mut self.dropped_rows);
        for r in self.recs.range_mut(i0..i1) {
            if r.hole && r.tx == 0 {
                // First sight of these bytes: they count as unique data.
                self.new_bytes += u64::from(r.end.wrapping_sub(r.seq));
                r.first_ns = c.t_ns;
                r.first_frame = c.frame;
            }
            r.tx = r.tx.saturating_add(1);
            r.last_ns = c.t_ns;
            r.last_frame = c.frame;
            r.tsval = tsval;
            r.sack_base = self.sack_acks;
            r.dup_base = self.dupacks;
            r.rtx_row = row_idx.unwrap_or(NONE);
        }
        match kind {
            RtxKind::Fast => {
                self.recovery_point.get_or_insert(self.snd_nxt);
            }
            RtxKind::Timeout => self.timeout(c, a, syn),
        }
    }

    /// A retransmission by the timer: a new expiry, or part of the burst of the last one.
    fn timeout(&mut self, c: &SegCtx, seq: u32, syn: bool) {
        if let (Some(t0), Some(last)) = (self.last_timeout_ns, self.timeouts.last_mut()) {
            if self.timeouts_since_adv > 0 && c.t_ns - t0 < BURST_NS {
                last.segments += 1;
                return;
            }
        }
        // RFC 6298 5.5: each expiry doubles the RTO until an ACK of new data (backoff rank).
        let backoff = self.consecutive_timeouts;
        let (start_ns, start_kind) = if backoff > 0 {
            (self.last_timeout_ns, TimerStart::Timeout)
        } else {
            match self.timer {
                Some((t, k)) => (Some(t), k),
                None => (None, TimerStart::Unknown),
            }
        };
        // A timer started before a capture gap: what ran in the gap is unseen.
        let (start_ns, start_kind) = match (start_ns, self.gap_end_ns) {
            (Some(s), Some(g)) if s < g => (None, TimerStart::Unknown),
            _ => (start_ns, start_kind),
        };
        let probe = match (self.last_tx_ns, start_ns) {
            (Some(p), Some(s)) if p > s && backoff == 0 => Some((p, self.last_tx_quiet_ns)),
            _ => None,
        };
        let t = Timeout {
            t_ns: c.t_ns,
            frame: c.frame,
            seq,
            backoff,
            observed_rto_ns: None,
            timer_start: start_kind,
            start_ns,
            start_kind,
            probe,
            srtt_ms: self.srtt,
            rttvar_ms: self.rttvar,
            handshake: syn,
            segments: 1,
            chain_rto_ms: None,
        };
        push_capped(&mut self.timeouts, t, &mut self.dropped_rows);
        self.consecutive_timeouts += 1;
        self.timeouts_since_adv += 1;
        self.last_timeout_ns = Some(c.t_ns);
        // RFC 6298 5.5/5.6: the timer restarts with the retransmission.
        self.timer = Some((c.t_ns, TimerStart::Timeout));
        // RFC 6298 5.7 / RFC 6582: a timeout ends a fast recovery.
        self.recovery_point = None;
    }

    /// An ACK from the peer: cumulative `ack`, scaled window, options (SACK, timestamps);
    /// `pure` when the segment carries no data, SYN or FIN (RFC 5681 2 duplicate ACK rules).
    pub fn on_ack(&mut self, c: &SegCtx, ack: u32, win: u32, o: &Options, pure: bool) {
        self.last_peer_ack_ns = Some(c.t_ns);
        self.rwnd_max = self.rwnd_max.max(u64::from(win));
        if win == 0 {
            self.zero_windows += 1;
        }
        if !self.started {
            // Mid-connection start: the peer tells where this side's sequence space is.
            self.restart(ack);
            self.last_win = Some(win);
            return;
        }
        let blocks = o.sack_blocks();
        let mut first_normal = 0;
        if let Some(&(l, r)) = blocks.first() {
            // RFC 2883 4: a D-SACK is a first block below the cumulative ACK, or inside the
            // second block; it reports a duplicate arrival.
            let inside_second = blocks
                .get(1)
                .is_some_and(|&(l2, r2)| serial::ge(l, l2) && serial::le(r, r2));
            if serial::le(r, ack) || inside_second {
                self.dsack(l, r);
                first_normal = 1;
            }
        }
        let mut sacked_above = false;
        for &(l, r) in &blocks[first_normal..] {
            if serial::le(r, ack) || serial::ge(l, r) {
                continue;
            }
            sacked_above = true;
            if self.highest_sacked.is_none_or(|h| serial::gt(r, h)) {
                self.highest_sacked = Some(r);
            }
            // RFC 2018 3: every segment inside [l, r) has arrived. Walk back from the right
            // edge (where the newest arrival is) and stop at the first segment already known:
            // blocks repeat on every ACK, so this keeps the work per ACK small.
            let span = r.wrapping_sub(l);
            let or = self.off(r);
            let mut j = self.recs.partition_point(|x| self.off(x.seq) < or);
            while j > 0 {
                j -= 1;
                let x = &mut self.recs[j];
                if x.seq.wrapping_sub(l) >= span {
                    break;
                }
                if x.end.wrapping_sub(l) <= span {
                    if x.sacked {
                        break;
                    }
                    x.sacked = true;
                }
            }
        }
        if sacked_above {
            self.sack_acks = self.sack_acks.wrapping_add(1);
        }
        let outstanding = self.snd_una != self.snd_nxt;
        if serial::gt(ack, self.snd_una) {
            if serial::gt(ack, self.snd_nxt) {
                // Acknowledges bytes the capture never saw.
                self.snd_nxt = ack;
            }
            self.advance(c, ack, o.ts.map(|t| t.1));
        } else if ack == self.snd_una
            && pure
            && outstanding
            && self.last_win == Some(win)
            && !sacked_above
        {
            // RFC 5681 2: a duplicate ACK (same ACK, same window, no data, data outstanding).
            self.dupacks = self.dupacks.wrapping_add(1);
        }
        self.last_win = Some(win);
    }

    /// RFC 2883: [l, r) arrived twice. A retransmission wholly inside it was not needed.
    fn dsack(&mut self, l: u32, r: u32) {
        for x in self.retransmissions.iter_mut().rev().take(4096) {
            let inside = x.seq.wrapping_sub(l) < r.wrapping_sub(l)
                && x.seq.wrapping_add(x.len).wrapping_sub(l) <= r.wrapping_sub(l);
            if inside {
                x.spurious
                    .get_or_insert("D-SACK reported the data as a duplicate");
                return;
            }
        }
    }

    /// An ACK of new data up to `ack` (RFC 9293 3.10.7.4 SND.UNA update).
    fn advance(&mut self, c: &SegCtx, ack: u32, tsecr: Option<u32>) {
        let t = c.t_ns;
        let mut newly = 0u32;
        let mut cand: Option<SegRec> = None;
        let mut last_popped: Option<SegRec> = None;
        while let Some(&front) = self.recs.front() {
            if serial::le(front.end, ack) {
                self.recs.pop_front();
                newly += 1;
                last_popped = Some(front);
                if front.tx == 1 && !front.sacked && !front.reordered && !front.hole {
                    // Karn (RFC 6298 3): only segments sent once give samples.
                    cand = Some(front);
                }
                if !front.hole && front.tx >= 1 {
                    self.transfer_ms.push((t - front.first_ns) as f64 / 1e6);
                }
                if front.rtx_row != NONE {
                    if let Some(x) = self.retransmissions.get_mut(front.rtx_row as usize) {
                        if x.ack_delay_ns.is_none() {
                            x.ack_delay_ns = Some(t - x.t_ns);
                            // RFC 3522 (Eifel): the ACK echoes a timestamp older than the
                            // retransmission's, so the original was acknowledged.
                            if let (Some(e), Some(v)) = (tsecr, front.tsval) {
                                if serial::lt(e, v) {
                                    x.spurious.get_or_insert(
                                        "Eifel: the ACK echoes the original's timestamp",
                                    );
                                }
                            }
                        }
                    }
                }
            } else if serial::lt(front.seq, ack) {
                // Part of a segment acknowledged: the rest stays outstanding.
                self.recs[0].seq = ack;
                break;
            } else {
                break;
            }
        }
        if let Some(r) = cand {
            let kind = if r.syn {
                RttKind::Handshake
            } else {
                RttKind::Data
            };
            self.sample(RttRow {
                t_ns: t,
                rtt_ns: t - r.first_ns,
                kind,
                ack,
                segments_acked: newly,
                frame_data: r.first_frame,
                frame_ack: c.frame,
            });
        }
        // Lone ACK (METRICS.md "SACK delay"): exactly one segment acknowledged and nothing
        // sent after it before the ACK.
        if let (1, Some(r)) = (newly, last_popped) {
            if r.tx == 1 && !r.syn && !r.hole && Some(r.last_ns) == self.last_tx_ns {
                let l = LoneAck {
                    t_ns: t,
                    latency_ns: t - r.last_ns,
                    frame_data: r.last_frame,
                    frame_ack: c.frame,
                };
                push_capped(&mut self.lone_acks, l, &mut self.dropped_rows);
            }
        }
        // RFC 7323 4.1 (RTTM): the echoed TSval dates the segment that triggered the ACK.
        if let Some(e) = tsecr {
            let n = self.ts_n.min(TS_RING);
            for k in 0..n {
                let (v, ns, fr) = self.ts_ring[(self.ts_n - 1 - k) % TS_RING];
                if v == e {
                    self.sample(RttRow {
                        t_ns: t,
                        rtt_ns: t - ns,
                        kind: RttKind::Timestamp,
                        ack,
                        segments_acked: newly,
                        frame_data: fr,
                        frame_ack: c.frame,
                    });
                    break;
                }
            }
        }
        self.snd_una = ack;
        // RFC 6298 5.2 / 5.3: stop the timer when all is acknowledged, else restart it.
        self.timer = (self.snd_una != self.snd_nxt).then_some((t, TimerStart::Ack));
        self.consecutive_timeouts = 0;
        self.dupacks = 0;
        if self
            .recovery_point
            .is_some_and(|rp| serial::ge(self.snd_una, rp))
        {
            self.recovery_point = None;
        }
        if let Some((p, pf)) = self.last_adv {
            // An outage (METRICS.md "TCP flows"): no ACK of new data across a timer expiry. A
            // gap within a couple of RTTs is not one, whatever was retransmitted in it.
            let min_gap = c
                .rtt_hint_ns
                .or(self.srtt.map(|s| (s * 1e6) as i64))
                .map_or(10_000_000, |h| (2 * h).max(10_000_000));
            if self.timeouts_since_adv > 0 && t - p >= min_gap {
                let (ds, dsf) = self.outstanding_since.unwrap_or((p, pf));
                let o = Outage {
                    start_ns: p,
                    start_frame: pf,
                    data_since_ns: ds.max(p),
                    data_since_frame: if ds >= p { dsf } else { pf },
                    recovered_ns: t,
                    frame: c.frame,
                    timeouts: self.timeouts_since_adv,
                };
                push_capped(&mut self.outages, o, &mut self.dropped_rows);
            }
            self.max_gap_ns = self.max_gap_ns.max(t - p);
        }
        self.timeouts_since_adv = 0;
        self.last_adv = Some((t, c.frame));
        self.outstanding_since = (self.snd_una != self.snd_nxt).then_some((t, c.frame));
    }
}
