//! Per-direction TSN bookkeeping (one DATA sender and its peer's SACKs): RTT samples, lone-packet
//! SACK latencies, retransmissions, T3-rtx expiries, failover and failback, messages.

use std::collections::VecDeque;
use std::net::IpAddr;

use super::events::*;
use super::stats::{add_per_second, Running, Samples};
use crate::packet::PacketCtx;
use crate::sctp::{DataChunk, SackChunk};
use crate::serial;

pub use super::dst::DstState;

/// TSNs tracked at most per direction; older ones are forgotten (bounded memory).
const MAX_TSNS: usize = 1 << 20;
/// Event rows kept per direction (retransmissions, samples, messages); past this only counted.
pub const MAX_ROWS: usize = 200_000;
/// Entries scanned when a T3-rtx expiry marks the outstanding chunks of its destination.
const MAX_MARK_SCAN: usize = 1 << 16;
/// Duplicate TSNs of one SACK looked up among the retransmissions.
const MAX_DUPS_PER_SACK: usize = 1024;
/// RFC 9260 7.2.4: fast retransmit on the third miss indication.
const FAST_RTX_MISSES: u8 = 3;
/// A fast retransmission leaves when the SACK that marks it (or a later one opening cwnd) is
/// handled (RFC 9260 7.2.4), so wherever the capture is it follows a SACK within a round trip:
/// at least this long, or twice the longest RTT sample of the direction.
const FAST_RTX_AFTER_SACK_NS: i64 = 200_000_000;
/// How much later a gap-acknowledged TSN must have first been seen for an unacknowledged one to
/// count as passed over: packets arriving on two interfaces may be timestamped out of the order
/// the stack handles them by a fraction of this.
const PASSED_OVER_NS: i64 = 1_000_000;

#[derive(Debug, Clone, Copy)]
struct TsnEntry {
    first_ns: i64,
    last_ns: i64,
    first_frame: u64,
    first_path: PathIdx,
    last_path: PathIdx,
    pkt: u64,
    tx: u8,
    miss: u8,
    gap_acked: bool,
    /// Its transmission was captured (false for holes below a higher TSN).
    seen: bool,
    ibit: bool,
    /// A gap block acknowledged a TSN first seen at least `PASSED_OVER_NS` after this one's
    /// latest copy, while this one stayed unacknowledged (at the receiver vantage: the receiver
    /// took a later arrival and dropped this copy). Cleared when the TSN is sent again.
    passed_over: bool,
    /// Marked for retransmission by this T3-rtx expiry (RFC 9260 6.3.3 E1), not yet resent.
    marked: Option<u32>,
    /// Index of its latest retransmission row.
    rtx_row: Option<u32>,
}

/// The newly acknowledged TSN a SACK's RTT sample comes from: the fields of its `TsnEntry`
/// that the sample needs (not the whole entry: copying a just-copied entry cost a
/// store-forwarding stall per acknowledged TSN).
#[derive(Debug, Clone, Copy)]
struct RttCandidate {
    first_ns: i64,
    first_frame: u64,
    tsn: u32,
    first_path: PathIdx,
    ibit: bool,
}

/// Whether a captured SCTP packet is larger than one IP packet on a 1500-byte Ethernet link
/// carries: a GSO frame, which the capturing host's NIC (or a veth pair) sends as several wire
/// packets (RFC 9260 6.9: an SCTP sender fits its packets to the path MTU). A SACK after it
/// acknowledges more than one packet, so it is no delayed-SACK sample (METRICS.md: exactly
/// one DATA packet). On a jumbo-frame path this only drops the samples of large packets.
/// `len`: the SCTP packet's length; `ctx`: any packet of the association (for the address family
/// and UDP encapsulation).
fn oversize(len: u32, ctx: &PacketCtx) -> bool {
    const ETHERNET_MTU: u32 = 1500;
    let ip = match ctx.dst {
        IpAddr::V4(_) => 20,
        IpAddr::V6(_) => 40,
    };
    let udp = if ctx.udp_encap { 8 } else { 0 };
    len + ip + udp > ETHERNET_MTU
}

/// Inference state of one direction: DATA from one endpoint, SACKs from the other.
#[derive(Debug, Clone, Default)]
pub struct DirInfer {
    pub dsts: Vec<DstState>,
    /// The smallest DATA chunk payload sent (0: none yet).
    min_payload: u32,
    /// The peer's latest SACK advertised a window below it (RFC 9260 6.1 A).
    peer_window_closed: bool,
    tsns: VecDeque<TsnEntry>,
    base_tsn: u32,
    cum_ack: Option<u32>,
    pub data_chunks: u64,
    pub data_packets: u64,
    pub ibit_chunks: u64,
    pub sacks: u64,
    /// SACKs by the number of DATA packets they newly acknowledged (index 8 = 8 or more).
    pub acked_pkts_hist: [u64; 9],
    pub forgotten_tsns: u64,
    pkt_seq: u64,
    in_data_packet: bool,
    cur_pkt_ibit: bool,
    last_data_ns: i64,
    last_data_pkt: u64,
    /// SCTP length of the last DATA packet (`oversize` reads it).
    last_data_len: u32,
    first_data_pkt: Option<u64>,
    /// A HEARTBEAT from the data sender since the last DATA (flushes a delayed SACK).
    hb_since_data: bool,
    prev_sack_had_gaps: bool,
    /// Destination that carried new DATA until now, and the one before a failover.
    cur_dst: Option<PathIdx>,
    pub rtt_rows: Vec<RttSample>,
    pub lone_acks: Vec<LoneAck>,
    pub timeouts: Vec<Timeout>,
    pub retransmissions: Vec<Retransmission>,
    pub rtx_fast: u64,
    pub rtx_timeout: u64,
    pub failovers: Vec<Failover>,
    pub failbacks: Vec<Failback>,
    pub messages: Vec<Message>,
    /// No tables wanted: keep neither `messages` rows nor the destinations' `bytes_per_s` bins,
    /// which only tables read (the report's message figures come from `transfer_ms` and the
    /// counters). Rows of every delivered message, grown and then dropped, were 3% of a
    /// JSON-only pass.
    pub skip_table_rows: bool,
    pub message_starts: Running,
    pub transfer_ms: Samples,
    pending_msgs: VecDeque<Message>,
    open_msg: Option<Message>,
    pub max_gap_ns: i64,
    last_msg_start_ns: Option<i64>,
    pub burst_starts: u64,
    pub deadline_missed: u64,
    pub first_ns: Option<i64>,
    pub dropped_rows: u64,
    last_delivery: Option<i64>,
    /// The destination `dst` found last.
    last_dst: PathIdx,
}

/// What the TSNs one SACK newly acknowledges add up to (`DirInfer::on_ack`).
struct AckTally {
    /// DATA packets newly acknowledged, the last one's sequence number, and the one when it is
    /// the only one.
    newly_pkts: u32,
    last_pkt: u64,
    lone_pkt: Option<u64>,
    /// The latest newly acknowledged, never retransmitted TSN (the RTT sample's).
    sample: Option<RttCandidate>,
    /// Bit per destination index (63 and up share the last) that a newly acknowledged TSN was
    /// last sent to.
    acked_paths: u64,
}

impl DirInfer {
    /// Index of destination `addr`, created on first use.
    #[inline]
    pub fn dst(&mut self, addr: IpAddr) -> PathIdx {
        // The destination before, most of the time (DATA and the SACKs from it name the same).
        let last = self.last_dst;
        if self
            .dsts
            .get(usize::from(last))
            .is_some_and(|d| d.addr == addr)
        {
            return last;
        }
        let i = self.dst_slow(addr);
        self.last_dst = i;
        i
    }

    #[cold]
    fn dst_slow(&mut self, addr: IpAddr) -> PathIdx {
        if let Some(i) = self.dsts.iter().position(|d| d.addr == addr) {
            return i as PathIdx;
        }
        if self.dsts.len() >= PathIdx::MAX as usize {
            return (self.dsts.len() - 1) as PathIdx;
        }
        self.dsts.push(DstState::new(addr));
        (self.dsts.len() - 1) as PathIdx
    }

    pub fn packet_start(&mut self) {
        self.in_data_packet = false;
        self.cur_pkt_ibit = false;
    }

    /// The data sender sent a HEARTBEAT: RFC 9260 6.2 lets the receiver bundle the pending SACK.
    pub fn heartbeat_from_sender(&mut self) {
        self.hb_since_data = true;
    }

    /// The data sender sent a HEARTBEAT to `addr`: the first one after a failover from that
    /// address is the probe of the old path (RFC 7829 4: a potentially failed destination is
    /// probed one RTO apart; an inactive one, RFC 9260 8.3, a heartbeat interval apart).
    pub fn heartbeat_to(&mut self, ctx: &PacketCtx) {
        let Some(i) = self.dsts.iter().position(|d| d.addr == ctx.dst) else {
            return;
        };
        let d = &mut self.dsts[i];
        let unanswered = d.hb_unanswered_since;
        let again = unanswered.is_some();
        match unanswered {
            None => d.hb_unanswered_since = Some(ctx.ts_ns),
            Some(_) => d.hb_strikes.push(ctx.ts_ns),
        }
        if let Some(f) = self.failovers.last_mut() {
            if usize::from(f.from) == i && ctx.ts_ns >= f.t_ns {
                // The HEARTBEAT of the timer event that moved the DATA may leave just after it.
                if again && ctx.ts_ns - f.t_ns <= super::chain::SAME_EVENT_NS {
                    f.hb_strikes_seen.push(ctx.ts_ns);
                }
                match f.probe_ns {
                    None => f.probe_ns = Some(ctx.ts_ns),
                    // No HEARTBEAT-ACK since the first probe: it is still unanswered.
                    Some(p) if f.probe2_ns.is_none() && unanswered.is_some_and(|u| u <= p) => {
                        f.probe2_ns = Some(ctx.ts_ns);
                    }
                    _ => {}
                }
            }
        }
    }

    fn entry_idx(&self, tsn: u32) -> Option<usize> {
        if self.tsns.is_empty() {
            return None;
        }
        let off = tsn.wrapping_sub(self.base_tsn) as usize;
        (off < self.tsns.len() && serial::ge(tsn, self.base_tsn)).then_some(off)
    }

    fn highest(&self) -> Option<u32> {
        (!self.tsns.is_empty()).then(|| self.base_tsn.wrapping_add(self.tsns.len() as u32 - 1))
    }

    /// A DATA or I-DATA chunk (RFC 9260 3.3.1, RFC 8260 2.1) sent by this direction's sender.
    pub fn data(&mut self, ctx: &PacketCtx, d: &DataChunk, deadline_ns: Option<i64>) {
        let path = self.dst(ctx.dst);
        if !self.in_data_packet {
            self.in_data_packet = true;
            self.pkt_seq += 1;
            self.data_packets += 1;
            self.first_data_pkt.get_or_insert(self.pkt_seq);
        }
        self.first_ns.get_or_insert(ctx.ts_ns);
        self.data_chunks += 1;
        self.min_payload = match self.min_payload {
            0 => d.payload_len,
            m => m.min(d.payload_len),
        };
        if d.flag_i {
            self.ibit_chunks += 1;
            self.cur_pkt_ibit = true;
        }
        self.last_data_ns = ctx.ts_ns;
        self.last_data_pkt = self.pkt_seq;
        self.last_data_len = ctx.len;
        self.hb_since_data = false;

        let below_cum = self.cum_ack.is_some_and(|c| serial::le(d.tsn, c));
        let is_new = !below_cum && self.highest().is_none_or(|h| serial::gt(d.tsn, h));
        if is_new {
            self.new_tsn(ctx, d, path, deadline_ns);
            return;
        }
        match self.entry_idx(d.tsn) {
            Some(i) if self.tsns[i].seen => self.retransmit(ctx, d.tsn, i, path),
            Some(i) => {
                // A hole filled: the first transmission we see of this TSN.
                let pkt = self.pkt_seq;
                let e = &mut self.tsns[i];
                e.seen = true;
                e.first_ns = ctx.ts_ns;
                e.last_ns = ctx.ts_ns;
                e.first_frame = ctx.frame;
                e.first_path = path;
                e.last_path = path;
                e.pkt = pkt;
                e.tx = 1;
                e.ibit = d.flag_i;
                self.dsts[path as usize].outstanding += 1;
            }
            None if below_cum => {
                // Retransmission of a TSN already acknowledged: the original was delivered.
                self.note_outrun(ctx, d.tsn, path);
                self.push_rtx(Retransmission {
                    tsn: d.tsn,
                    t_ns: ctx.ts_ns,
                    frame: ctx.frame,
                    orig_t_ns: ctx.ts_ns,
                    orig_frame: ctx.frame,
                    orig_path: path,
                    path,
                    kind: RtxKind::Timeout,
                    timeout: None,
                    spurious: Some("already acknowledged"),
                    acked_ns: None,
                    peer_discarded: None,
                    orig_passed_over: false,
                });
                self.rtx_timeout += 1;
                self.dsts[path as usize].retransmissions += 1;
            }
            None => {}
        }
    }

    fn new_tsn(&mut self, ctx: &PacketCtx, d: &DataChunk, path: PathIdx, deadline_ns: Option<i64>) {
        if self.tsns.is_empty() {
            self.base_tsn = d.tsn;
        } else if let Some(h) = self.highest() {
            // Holes: TSNs the capture did not show (lost before a receiver-side capture).
            let gap = serial::diff(h, d.tsn) - 1;
            if gap > MAX_TSNS as i64 {
                self.forgotten_tsns += self.tsns.len() as u64;
                self.tsns.clear();
                self.base_tsn = d.tsn;
            } else {
                for _ in 0..gap {
                    self.tsns.push_back(TsnEntry {
                        first_ns: ctx.ts_ns,
                        last_ns: ctx.ts_ns,
                        first_frame: 0,
                        first_path: path,
                        last_path: path,
                        pkt: 0,
                        tx: 0,
                        miss: 0,
                        gap_acked: false,
                        seen: false,
                        ibit: false,
                        passed_over: false,
                        marked: None,
                        rtx_row: None,
                    });
                }
            }
        }
        self.tsns.push_back(TsnEntry {
            first_ns: ctx.ts_ns,
            last_ns: ctx.ts_ns,
            first_frame: ctx.frame,
            first_path: path,
            last_path: path,
            pkt: self.pkt_seq,
            tx: 1,
            miss: 0,
            gap_acked: false,
            seen: true,
            ibit: d.flag_i,
            passed_over: false,
            marked: None,
            rtx_row: None,
        });
        while self.tsns.len() > MAX_TSNS {
            self.tsns.pop_front();
            self.base_tsn = self.base_tsn.wrapping_add(1);
            self.forgotten_tsns += 1;
        }
        let first_ns = self.first_ns.unwrap_or(ctx.ts_ns);
        let dst = &mut self.dsts[path as usize];
        dst.new_data_chunks += 1;
        dst.last_new_ns = Some(ctx.ts_ns);
        dst.new_data_bytes += d.payload_len as u64;
        dst.outstanding += 1;
        if !self.skip_table_rows {
            let elapsed = ctx.ts_ns - first_ns;
            add_per_second(&mut dst.bytes_per_s, elapsed, d.payload_len as u64, 1 << 20);
        }
        // RFC 9260 6.3.2 R1: DATA sent with no T3-rtx timer running starts it.
        if dst.timer_start.is_none() {
            dst.timer_start = Some((ctx.ts_ns, TimerStart::Send));
        }
        if dst.timer_nr.is_none() {
            dst.timer_nr = Some((ctx.ts_ns, TimerStart::Send));
        }
        self.switch_check(ctx, path);
        self.note_first_sight(path, d.tsn);
        self.message_chunk(ctx, d, deadline_ns);
    }

    /// Failover (new DATA to another destination) and failback (back to the old primary).
    fn switch_check(&mut self, ctx: &PacketCtx, path: PathIdx) {
        let Some(cur) = self.cur_dst else {
            self.cur_dst = Some(path);
            return;
        };
        if cur == path {
            return;
        }
        self.cur_dst = Some(path);
        if let Some(last) = self.failovers.last() {
            if last.from == path && last.to == cur {
                self.failbacks.push(Failback {
                    t_ns: ctx.ts_ns,
                    frame: ctx.frame,
                    to: path,
                });
                return;
            }
        }
        let old = &self.dsts[cur as usize];
        self.failovers.push(Failover {
            t_ns: ctx.ts_ns,
            frame: ctx.frame,
            from: cur,
            to: path,
            outage_start_ns: old.lost_since.map(|l| l.0),
            outage_frame: old.lost_since.map(|l| l.1),
            gap_end_ns: ctx.gap_end_ns,
            last_heard_ns: old.last_sack_from_ns,
            last_heard_frame: old.last_sack_from_frame,
            timeouts: old.episode_timeouts.clone(),
            episode_rtx: old.episode_rtx.clone(),
            spurious: false,
            evidence: Vec::new(),
            cause: None,
            recommendation: None,
            pmr: None,
            probe_ns: None,
            probe2_ns: None,
            hb_unanswered_ns: old.hb_unanswered_since,
            hb_strikes_seen: old.hb_strikes,
            new_to_old_ns: old.last_new_ns,
            hb_strikes: 0,
            policy: None,
            chain_reset_ns: old.acked_rtx_ns,
            to_first_seen: Vec::new(),
            moved: false,
            outrun_ns: None,
        });
        // The episode that led to this failover is closed; a later one starts afresh.
        let old = &mut self.dsts[cur as usize];
        old.lost_since = None;
        old.episode_timeouts.clear();
        old.episode_rtx.clear();
    }

    fn message_chunk(&mut self, ctx: &PacketCtx, d: &DataChunk, deadline_ns: Option<i64>) {
        // RFC 9260 3.3.1: B marks the first fragment of a user message, E the last.
        if d.flag_b || self.open_msg.is_none() {
            // Not across a capture gap (rotated files): the messages in it are unseen.
            if let Some(prev) = self.last_msg_start_ns.filter(|&p| p >= ctx.gap_end_ns) {
                let gap = ctx.ts_ns - prev;
                self.message_starts.push(gap as f64 / 1e6);
                if gap < 1_000_000 {
                    self.burst_starts += 1;
                }
            }
            self.last_msg_start_ns = Some(ctx.ts_ns);
            let m = Message {
                stream: d.stream_id,
                ssn_mid: d.ssn_or_mid,
                first_tsn: d.tsn,
                last_tsn: d.tsn,
                bytes: d.payload_len,
                start_ns: ctx.ts_ns,
                frame: ctx.frame,
                done_ns: None,
            };
            // A whole message in one chunk (the common case) goes straight to the pending ones:
            // kept open and taken back, it was copied right after its fields were updated.
            if d.flag_e {
                self.open_msg = None;
                if self.pending_msgs.len() < MAX_ROWS {
                    self.pending_msgs.push_back(m);
                }
            } else {
                self.open_msg = Some(m);
            }
            return;
        }
        if let Some(m) = &mut self.open_msg {
            m.last_tsn = d.tsn;
            m.bytes = m.bytes.saturating_add(d.payload_len);
        }
        if d.flag_e {
            if let Some(m) = self.open_msg.take() {
                let _ = deadline_ns;
                if self.pending_msgs.len() < MAX_ROWS {
                    self.pending_msgs.push_back(m);
                }
            }
        }
    }

    /// Drops the lone-packet SACK candidates taken at or after `t_ns`: a HEARTBEAT the SACK
    /// sender sent with them or within 2 ms flushed them (RFC 9260 6.2 allows bundling).
    pub fn drop_lone_acks_since(&mut self, t_ns: i64) {
        while self.lone_acks.last().is_some_and(|l| l.t_ns >= t_ns) {
            self.lone_acks.pop();
        }
    }

    /// One TSN newly acknowledged by a SACK (cumulatively or in a gap block): its destination's
    /// counters, the RTT candidate, the retransmission it ends (`sack`).
    #[inline(always)]
    fn on_ack(&mut self, ctx: &PacketCtx, tally: &mut AckTally, e: &TsnEntry, tsn: u32) {
        if !e.seen {
            return;
        }
        if e.pkt != tally.last_pkt {
            tally.newly_pkts += 1;
            tally.last_pkt = e.pkt;
            tally.lone_pkt = Some(e.pkt);
        }
        tally.acked_paths |= 1u64 << (e.last_path.min(63));
        let d = &mut self.dsts[e.last_path as usize];
        d.outstanding = d.outstanding.saturating_sub(1);
        if e.tx == 1 {
            // Karn (RFC 9260 6.3.1 C5): only never-retransmitted TSNs give RTT samples.
            if tally.sample.is_none_or(|s| e.first_ns > s.first_ns) {
                tally.sample = Some(RttCandidate {
                    first_ns: e.first_ns,
                    first_frame: e.first_frame,
                    tsn,
                    first_path: e.first_path,
                    ibit: e.ibit,
                });
            }
            let od = &mut self.dsts[e.first_path as usize];
            if e.first_ns >= od.last_good_ns {
                od.last_good_ns = e.first_ns;
                od.last_good_pkt = e.pkt;
            }
            if od.lost_since.is_some_and(|l| e.first_ns > l.0) {
                od.lost_since = None;
                od.episode_timeouts.clear();
                od.episode_rtx.clear();
            }
            // RFC 9260 8.2: an acknowledgement clears the destination's error count.
            od.consecutive_timeouts = 0;
        } else if let Some(r) = e.rtx_row {
            // RFC 9260 8.2: acknowledging a DATA chunk clears the error count of the
            // destination it was last sent to (Linux does so for a retransmitted one too;
            // usrsctp was seen not to): remembered, the summary applies it by stack.
            self.dsts[e.last_path as usize].acked_rtx_ns = Some(ctx.ts_ns);
            if let Some(row) = self.retransmissions.get_mut(r as usize) {
                row.acked_ns.get_or_insert(ctx.ts_ns);
            }
            // Eifel-like: acknowledged sooner after the retransmission than a round trip
            // of the retransmission's path allows, so the original got there.
            let rt = ctx.ts_ns - e.last_ns;
            if let Some(base) = self.dsts[e.last_path as usize].base_rtt_ms() {
                if (rt as f64) < 0.5 * base * 1e6 {
                    if let Some(row) = self.retransmissions.get_mut(r as usize) {
                        row.spurious
                            .get_or_insert("acknowledged within half an RTT of the retransmission");
                    }
                }
            }
        }
    }

    /// A SACK or NR-SACK (RFC 9260 3.3.4, 6.2.1) from the peer acknowledging this direction.
    /// `hb_flush`: the SACK sender sent a HEARTBEAT within 2 ms before this SACK.
    pub fn sack(
        &mut self,
        ctx: &PacketCtx,
        s: &SackChunk<'_>,
        deadline_ns: Option<i64>,
        hb_flush: bool,
    ) {
        self.sacks += 1;
        // RFC 9260 6.1 A: a window below the smallest DATA chunk sent takes none.
        self.peer_window_closed = s.a_rwnd < self.min_payload.max(1);
        let from = self.dst(ctx.src);
        self.dsts[from as usize].last_sack_from_ns = Some(ctx.ts_ns);
        self.dsts[from as usize].last_sack_from_frame = ctx.frame;
        let mut tally = AckTally {
            newly_pkts: 0,
            last_pkt: u64::MAX,
            lone_pkt: None,
            sample: None,
            acked_paths: 0,
        };
        let old_cum = self.cum_ack;
        let cum = s.cum_tsn_ack;
        let advanced = old_cum.is_none_or(|c| serial::gt(cum, c));
        let has_gaps = s.n_gap_blocks > 0;
        let has_dups = s.n_dup_tsns > 0;

        // Cumulative ack (RFC 9260 6.2.1 D): every TSN up to it is acknowledged now (on the
        // first SACK seen too, for captures that start mid-association).
        if advanced {
            while serial::le(self.base_tsn, cum) {
                let Some(front) = self.tsns.pop_front() else {
                    break;
                };
                let tsn = self.base_tsn;
                self.base_tsn = tsn.wrapping_add(1);
                if !front.gap_acked {
                    self.on_ack(ctx, &mut tally, &front, tsn);
                }
            }
            self.cum_ack = Some(cum);
            if self.tsns.is_empty() {
                self.base_tsn = cum.wrapping_add(1);
            }
        }
        // Gap ack blocks (RFC 9260 3.3.4): offsets from the cumulative ack; start > end is invalid.
        let mut highest_gap: Option<u32> = None;
        // The latest first sight of a TSN these gap blocks newly acknowledge.
        let mut newest_gap_first_ns = i64::MIN;
        if serial::ge(cum, self.cum_ack.unwrap_or(cum)) {
            for g in s.gap_blocks() {
                if g.start == 0 || g.start > g.end {
                    continue;
                }
                let lo = cum.wrapping_add(g.start as u32);
                let hi = cum.wrapping_add(g.end as u32);
                highest_gap =
                    Some(highest_gap.map_or(hi, |h| if serial::gt(hi, h) { hi } else { h }));
                let mut t = lo;
                loop {
                    if let Some(i) = self.entry_idx(t) {
                        if !self.tsns[i].gap_acked {
                            self.tsns[i].gap_acked = true;
                            let e = self.tsns[i];
                            if e.seen {
                                newest_gap_first_ns = newest_gap_first_ns.max(e.first_ns);
                            }
                            self.on_ack(ctx, &mut tally, &e, t);
                        }
                    } else if self.highest().is_none_or(|h| serial::gt(t, h)) {
                        break;
                    }
                    if t == hi {
                        break;
                    }
                    t = t.wrapping_add(1);
                }
            }
        }
        // Miss indications (RFC 9260 7.2.4): TSNs below the highest gap-acked one still missing.
        if let Some(hg) = highest_gap {
            let n = self.tsns.len();
            for i in 0..n {
                let t = self.base_tsn.wrapping_add(i as u32);
                if !serial::lt(t, hg) {
                    break;
                }
                let e = &mut self.tsns[i];
                if e.seen && !e.gap_acked {
                    e.miss = e.miss.saturating_add(1);
                    // Its latest copy came before every copy of a TSN the peer took now.
                    if e.last_ns <= newest_gap_first_ns.saturating_sub(PASSED_OVER_NS) {
                        e.passed_over = true;
                    }
                }
            }
        }
        // Duplicate TSNs (RFC 9260 6.2): the receiver got a TSN twice, so its retransmission was
        // spurious. Bounded per SACK: a crafted one may list 65 535 of them.
        let dups = if self.retransmissions.is_empty() {
            0
        } else {
            MAX_DUPS_PER_SACK
        };
        for dup in s.dup_tsns().take(dups) {
            if let Some(r) = self.find_rtx(dup) {
                self.retransmissions[r]
                    .spurious
                    .get_or_insert(DUPLICATE_REPORTED);
            }
        }

        // RTT sample (one per SACK: the latest newly acknowledged, never retransmitted TSN);
        // none across a capture gap (rotated files: the SACK may have come in the gap).
        let sample = tally.sample.filter(|e| e.first_ns >= ctx.gap_end_ns);
        if let Some(e) = sample {
            let tsn = e.tsn;
            let rtt = ctx.ts_ns - e.first_ns;
            let dst = &mut self.dsts[e.first_path as usize];
            let est = dst.estimate(rtt as f64 / 1e6);
            dst.rtt.push(rtt as f64 / 1e6);
            if tally.newly_pkts >= 2 {
                dst.rtt_multi.push(rtt as f64 / 1e6);
            }
            dst.consecutive_timeouts = 0;
            if self.rtt_rows.len() < MAX_ROWS {
                self.rtt_rows.push(RttSample {
                    kind: RttKind::Data,
                    path: e.first_path,
                    t_ns: ctx.ts_ns,
                    rtt_ns: rtt,
                    frame_req: e.first_frame,
                    frame_ack: ctx.frame,
                    packets_acked: tally.newly_pkts,
                    tsn: Some(tsn),
                    est_rto_ms: est,
                });
            } else {
                self.dropped_rows += 1;
            }
        }
        // Lone-packet acknowledgement: a delayed-SACK candidate (METRICS.md "SACK delay").
        if let (1, Some(pkt), Some(e)) = (tally.newly_pkts, tally.lone_pkt, sample) {
            if advanced
                && !has_gaps
                && !has_dups
                && !self.prev_sack_had_gaps
                && pkt == self.last_data_pkt
                && !oversize(self.last_data_len, ctx)
                && Some(pkt) != self.first_data_pkt
                && !self.hb_since_data
                && !hb_flush
                && !e.ibit
                && self.lone_acks.len() < MAX_ROWS
            {
                self.lone_acks.push(LoneAck {
                    path: e.first_path,
                    t_ns: ctx.ts_ns,
                    latency_ns: ctx.ts_ns - self.last_data_ns,
                    frame_data: e.first_frame,
                    frame_sack: ctx.frame,
                });
            }
        }
        self.prev_sack_had_gaps = has_gaps;
        if tally.newly_pkts > 0 {
            self.acked_pkts_hist[(tally.newly_pkts as usize).min(8)] += 1;
        }

        // RFC 9260 6.3.2 R2/R3: stop the timer when nothing is outstanding; restart it when the
        // cumulative ack advanced and acknowledged data of that destination.
        for (i, d) in self.dsts.iter_mut().enumerate() {
            if d.outstanding == 0 {
                d.timer_start = None;
                d.timer_nr = None;
            } else if advanced && tally.acked_paths & (1u64 << i.min(63)) != 0 {
                d.timer_start = Some((ctx.ts_ns, TimerStart::Sack));
            }
        }
        if advanced {
            self.messages_acked(ctx, cum, deadline_ns);
        }
    }

    fn find_rtx(&self, tsn: u32) -> Option<usize> {
        // Recent retransmissions are at the end.
        self.retransmissions
            .iter()
            .rev()
            .take(4096)
            .position(|r| r.tsn == tsn)
            .map(|p| self.retransmissions.len() - 1 - p)
    }

    fn messages_acked(&mut self, ctx: &PacketCtx, cum: u32, deadline_ns: Option<i64>) {
        let mut delivered_any = false;
        while let Some(&front) = self.pending_msgs.front() {
            if !serial::le(front.last_tsn, cum) {
                break;
            }
            self.pending_msgs.pop_front();
            let mut m = front;
            m.done_ns = Some(ctx.ts_ns);
            if m.start_ns >= ctx.gap_end_ns {
                self.transfer_ms.push((ctx.ts_ns - m.start_ns) as f64 / 1e6);
            }
            delivered_any = true;
            if !self.skip_table_rows && self.messages.len() < MAX_ROWS {
                self.messages.push(m);
            }
        }
        if delivered_any {
            if let Some(prev) = self.last_delivery_ns().filter(|&p| p >= ctx.gap_end_ns) {
                let gap = ctx.ts_ns - prev;
                self.max_gap_ns = self.max_gap_ns.max(gap);
                if deadline_ns.is_some_and(|d| gap > d) {
                    self.deadline_missed += 1;
                }
            }
            self.last_delivery = Some(ctx.ts_ns);
        }
    }

    fn last_delivery_ns(&self) -> Option<i64> {
        self.last_delivery
    }

    /// Drops per-event rows and samples, keeping counters, summaries and the events that the
    /// JSON report lists (timeouts, retransmissions, failovers); `sum` is the direction's summary.
    pub fn compact(&mut self, sum: Option<&super::summary::DirSummary>) {
        self.tsns = VecDeque::new();
        self.rtt_rows = Vec::new();
        self.lone_acks = Vec::new();
        self.messages = Vec::new();
        self.pending_msgs = VecDeque::new();
        // The summary holds what is read of these (no second computation).
        self.transfer_ms
            .freeze_with(sum.and_then(|s| s.transfer_ms));
        self.message_starts.freeze();
        self.retransmissions.shrink_to_fit();
        self.timeouts.shrink_to_fit();
        self.failovers.shrink_to_fit();
        self.dsts.shrink_to_fit();
        for d in &mut self.dsts {
            d.rtt.freeze();
            d.rtt_multi.freeze();
            d.hb_rtt.freeze();
            d.bytes_per_s = Vec::new();
            d.episode_rtx = Vec::new();
            d.episode_timeouts = Vec::new();
        }
    }

    /// The destination that carries new DATA now.
    pub fn current_dst(&self) -> Option<PathIdx> {
        self.cur_dst
    }
}

#[path = "direction_rtx.rs"]
mod rtx;

#[cfg(test)]
#[path = "direction_tests.rs"]
pub(in crate::infer) mod tests;
