//! Rows the inference records during the pass: RTT and SACK-delay samples, retransmissions,
//! timeouts, failovers, failbacks and messages (one struct per DataFrame row).

/// Index of a destination (path) within one direction.
pub type PathIdx = u16;

/// Which request/response pair gave an RTT sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttKind {
    /// First transmission of a TSN -> first SACK covering it (RFC 9260 6.3.1, Karn).
    Data,
    /// HEARTBEAT -> HEARTBEAT-ACK with the same info (RFC 9260 8.3).
    Heartbeat,
}

#[derive(Debug, Clone, Copy)]
pub struct RttSample {
    pub kind: RttKind,
    pub path: PathIdx,
    /// Time of the acknowledgement (SACK or HEARTBEAT-ACK).
    pub t_ns: i64,
    pub rtt_ns: i64,
    pub frame_req: u64,
    pub frame_ack: u64,
    /// DATA packets newly acknowledged by that SACK (1 for heartbeats).
    pub packets_acked: u32,
    pub tsn: Option<u32>,
    /// RFC 9260 6.3.1 estimate after this sample (SRTT + 4 RTTVAR), ms.
    pub est_rto_ms: f64,
}

/// A SACK that acknowledged exactly one new, lone DATA packet (a delayed-SACK candidate).
#[derive(Debug, Clone, Copy)]
pub struct LoneAck {
    pub path: PathIdx,
    pub t_ns: i64,
    /// SACK time - DATA time as seen at the vantage point.
    pub latency_ns: i64,
    pub frame_data: u64,
    pub frame_sack: u64,
}

/// How the timer that expired had been started, in the RFC 9260 6.3.2 model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerStart {
    /// R1: DATA sent with no timer running.
    Send,
    /// R3: restarted by a SACK that advanced the cumulative ack (stacks differ here).
    Sack,
    /// Restarted by the previous expiry (RFC 9260 6.3.3 E3).
    Expiry,
    /// Not known (capture started with data outstanding).
    Unknown,
}

impl TimerStart {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerStart::Send => "send",
            TimerStart::Sack => "sack",
            TimerStart::Expiry => "expiry",
            TimerStart::Unknown => "unknown",
        }
    }
}

/// One T3-rtx expiry, seen as a burst of timeout retransmissions.
#[derive(Debug, Clone)]
pub struct Timeout {
    pub t_ns: i64,
    pub frame: u64,
    /// Destination whose timer expired (where the data was outstanding).
    pub path: PathIdx,
    /// Destination the retransmission went to.
    pub to_path: PathIdx,
    pub timer_start: TimerStart,
    pub timer_start_ns: Option<i64>,
    /// Observed RTO: retransmission - start of the timer that expired.
    pub observed_rto_ns: Option<i64>,
    /// The same for a stack that does not restart the timer on SACKs (FreeBSD / usrsctp).
    pub observed_rto_nr_ns: Option<i64>,
    pub timer_start_nr: TimerStart,
    /// Consecutive timeouts on this path with no RTT sample in between (0 = first).
    pub backoff: u32,
    /// Chunks retransmitted by this expiry.
    pub chunks: u32,
    /// RFC 9260 6.3.1 estimate (SRTT + 4 RTTVAR, no RTO.min) of the path at the expiry, ms.
    pub est_rto_ms: Option<f64>,
    /// The estimate in 10 ms ticks (`DstState::est_rto_coarse_ms`: the highest such a kernel
    /// can hold; `est_rto_coarse_low_ms` the lowest).
    pub est_rto_coarse_ms: Option<f64>,
    pub est_rto_coarse_low_ms: Option<f64>,
    pub first_tsn: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtxKind {
    Fast,
    Timeout,
}

impl RtxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RtxKind::Fast => "fast",
            RtxKind::Timeout => "timeout",
        }
    }
}

/// `Retransmission::spurious` evidence: the peer's SACK listed the TSN as a duplicate (RFC 9260
/// 6.2), so an earlier copy had been taken.
pub const DUPLICATE_REPORTED: &str = "reported as duplicate TSN by the peer";
/// `Retransmission::peer_discarded` evidence: the original's packet reached the peer.
pub const PACKET_MATES_ACKED: &str = "other chunks of its packet were acknowledged";
/// The same at the receiver vantage, from the order of arrivals (`orig_passed_over`).
pub const LATER_ARRIVALS_ACKED: &str =
    "the receiver acknowledged TSNs that arrived after it, not it";

#[derive(Debug, Clone)]
pub struct Retransmission {
    pub tsn: u32,
    pub t_ns: i64,
    pub frame: u64,
    pub orig_t_ns: i64,
    pub orig_frame: u64,
    pub orig_path: PathIdx,
    pub path: PathIdx,
    pub kind: RtxKind,
    /// Index into the direction's timeouts for timeout retransmissions.
    pub timeout: Option<u32>,
    /// The original was delivered after all, with the evidence.
    pub spurious: Option<&'static str>,
    /// When a SACK first covered the TSN after this retransmission.
    pub acked_ns: Option<i64>,
    /// The copy before this retransmission reached the peer, which discarded it, with the
    /// evidence: another chunk of the original's packet was acknowledged (a packet is delivered
    /// whole or not at all, RFC 9260 6.10: the chunks share one IP datagram and one checksum),
    /// or, at the receiver vantage, the receiver acknowledged TSNs that arrived after that copy
    /// and not it (`orig_passed_over`).
    pub peer_discarded: Option<&'static str>,
    /// A gap block acknowledged a TSN first seen at least 1 ms after the copy before this
    /// retransmission, which stayed unacknowledged. At the receiver vantage the receiver handles
    /// arrivals in order, so it dropped that copy; at the sender it is a loss like any other.
    pub orig_passed_over: bool,
}

/// TSNs first seen on a failover's new destination that are followed (`Failover::to_first_seen`).
pub const OUTRUN_TSNS: usize = 64;

#[derive(Debug, Clone)]
pub struct Failover {
    pub t_ns: i64,
    pub frame: u64,
    pub from: PathIdx,
    pub to: PathIdx,
    /// First transmission on the old path never acknowledged in its original transmission.
    pub outage_start_ns: Option<i64>,
    pub outage_frame: Option<u64>,
    /// End of the latest capture gap before the failover (rotated files; `i64::MIN`: none): an
    /// outage that started before it has no failover time.
    pub gap_end_ns: i64,
    /// Last SACK received from the old path's address before the failover, and its frame.
    pub last_heard_ns: Option<i64>,
    pub last_heard_frame: u64,
    /// Timeouts on the old path since the outage started (indices into timeouts).
    pub timeouts: Vec<u32>,
    /// First retransmissions of originals sent on the old path since the outage started.
    pub episode_rtx: Vec<u32>,
    pub spurious: bool,
    pub evidence: Vec<String>,
    pub cause: Option<&'static str>,
    pub recommendation: Option<String>,
    /// Inferred Path.Max.Retrans from this failover, when the timeout chain is complete.
    pub pmr: Option<u32>,
    /// First HEARTBEAT the sender sent to the old destination after the failover, and the next
    /// one when no HEARTBEAT-ACK from there came in between.
    pub probe_ns: Option<i64>,
    pub probe2_ns: Option<i64>,
    /// The oldest HEARTBEAT to the old destination still unanswered at the failover.
    pub hb_unanswered_ns: Option<i64>,
    /// HEARTBEATs to the old destination sent while one was unanswered (Linux strikes then).
    pub hb_strikes_seen: HbStrikes,
    /// The latest original DATA transmission to the old destination before the failover (it
    /// was still taking new DATA then).
    pub new_to_old_ns: Option<i64>,
    /// Which rule moved the new DATA (RFC 9260 8.2 or RFC 7829 PF), with the expiries it took.
    pub policy: Option<FailoverPolicy>,
    /// Unanswered HEARTBEATs the policy's chain counted among its strikes (RFC 9260 8.3).
    pub hb_strikes: u32,
    /// Latest acknowledgement of a retransmitted chunk last sent to the old destination before
    /// the failover: a stack that clears the error count then (RFC 9260 8.2, Linux) restarts
    /// its chain of expiries there.
    pub chain_reset_ns: Option<i64>,
    /// TSNs first seen on `to` while it took the new DATA (up to `OUTRUN_TSNS`; past it,
    /// `moved`), less those seen again on `from` since.
    pub to_first_seen: Vec<u32>,
    pub moved: bool,
    /// When every TSN first seen on `to` had been seen again on `from`: at the receiver vantage,
    /// retransmissions that outran their originals delayed on the old path (an RTT spike), no
    /// new DATA moved (`summary::drop_outrun_failovers`). Cleared by a later first sight on `to`.
    pub outrun_ns: Option<i64>,
}

/// How a sender chose to move new DATA off a failing destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailoverPolicy {
    /// RFC 9260 8.2: after Path.Max.Retrans + 1 consecutive expiries the destination is inactive.
    Rfc { path_max_retrans: u32 },
    /// RFC 7829: after pf_retrans + 1 expiries the destination is potentially failed; new DATA
    /// moves while the old destination is probed with HEARTBEATs one RTO apart.
    Pf { pf_retrans: u32 },
}

impl FailoverPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            FailoverPolicy::Rfc { .. } => "rfc",
            FailoverPolicy::Pf { .. } => "pf",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Failback {
    pub t_ns: i64,
    pub frame: u64,
    pub to: PathIdx,
}

/// One user message (B..E fragments, RFC 9260 6.9).
#[derive(Debug, Clone, Copy)]
pub struct Message {
    pub stream: u16,
    pub ssn_mid: u32,
    pub first_tsn: u32,
    pub last_tsn: u32,
    pub bytes: u32,
    pub start_ns: i64,
    pub frame: u64,
    /// Acknowledged (sender) / delivered (receiver) by the cumulative ack.
    pub done_ns: Option<i64>,
}

/// The HEARTBEATs a sender sent to one destination while an earlier one was unanswered (since
/// the last HEARTBEAT-ACK from it): a Linux kernel strikes the destination at each (RFC 9260 8.3,
/// `sctp_do_8_2_transport_strike`). The latest `HB_STRIKES_KEPT` times and the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HbStrikes {
    latest: [i64; HB_STRIKES_KEPT],
    count: u32,
}

/// Strike times kept per destination.
const HB_STRIKES_KEPT: usize = 4;

impl Default for HbStrikes {
    fn default() -> Self {
        HbStrikes {
            latest: [i64::MIN; HB_STRIKES_KEPT],
            count: 0,
        }
    }
}

impl HbStrikes {
    pub fn push(&mut self, t_ns: i64) {
        self.latest[self.count as usize % HB_STRIKES_KEPT] = t_ns;
        self.count = self.count.saturating_add(1);
    }

    /// The strike times kept, oldest first.
    pub fn times(&self) -> impl Iterator<Item = i64> + '_ {
        let n = (self.count as usize).min(HB_STRIKES_KEPT);
        let start = self.count as usize - n;
        (start..self.count as usize).map(|i| self.latest[i % HB_STRIKES_KEPT])
    }

    /// Whether every strike is kept (the count at `times` is complete).
    pub fn complete(&self) -> bool {
        self.count as usize <= HB_STRIKES_KEPT
    }
}
