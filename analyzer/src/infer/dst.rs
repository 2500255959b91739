//! Per-destination state of one direction (`DstState`): counters, the RFC 9260 6.3.1 RTT
//! estimator (exact and in 10 ms ticks), the T3-rtx timer's start, outage and heartbeat
//! bookkeeping.

use std::net::IpAddr;

use super::events::{HbStrikes, TimerStart};
use super::stats::{Running, Samples};

/// Per-destination state and counters of a direction.
#[derive(Debug, Clone)]
pub struct DstState {
    pub addr: IpAddr,
    pub new_data_chunks: u64,
    pub new_data_bytes: u64,
    pub retransmissions: u64,
    pub rtt: Samples,
    pub rtt_multi: Running,
    pub hb_rtt: Samples,
    /// HEARTBEATs this endpoint sent to the destination (RFC 9260 8.3).
    pub hb_period: super::heartbeat::HbPeriod,
    /// New DATA bytes per second of capture time (throughput over time).
    pub bytes_per_s: Vec<u64>,
    pub(super) outstanding: u32,
    pub(super) timer_start: Option<(i64, TimerStart)>,
    /// The same timer for a stack that does not restart it on SACKs (FreeBSD / usrsctp).
    pub(super) timer_nr: Option<(i64, TimerStart)>,
    /// Timeouts since the last RTT sample on this path (backoff rank of the next one).
    pub(super) consecutive_timeouts: u32,
    pub(super) last_timeout: Option<u32>,
    /// First-transmission time of the latest TSN acknowledged in its original transmission.
    pub(super) last_good_ns: i64,
    /// Packet (per-direction sequence number) of that TSN (`u64::MAX`: none yet).
    pub(super) last_good_pkt: u64,
    /// Earliest original transmission never acknowledged since `last_good_ns`, or the
    /// expired copy of a chunk already resent that opened the episode (`begin_episode`).
    pub(super) lost_since: Option<(i64, u64)>,
    /// Timeouts since `lost_since` was set.
    pub(super) episode_timeouts: Vec<u32>,
    /// First retransmissions of originals sent here since `lost_since` was set (row indices).
    pub(super) episode_rtx: Vec<u32>,
    /// RFC 9260 6.3.1 estimator state in ms.
    pub(super) srtt: Option<f64>,
    pub(super) rttvar: f64,
    /// The same estimator in whole 10 ms ticks with the integer shifts of a kernel that keeps
    /// it in jiffies (Linux at HZ 100): (SRTT, RTTVAR) in ticks, every round trip rounded up
    /// to whole ticks (`coarse`, the highest estimate such a kernel can hold) and down
    /// (`coarse_low`, the lowest).
    pub(super) coarse: Option<(u32, u32)>,
    pub(super) coarse_low: Option<(u32, u32)>,
    /// Last HEARTBEAT-ACK received for this destination.
    pub last_hb_ack_ns: Option<i64>,
    /// The oldest HEARTBEAT sent to this destination since its last HEARTBEAT-ACK.
    pub hb_unanswered_since: Option<i64>,
    /// Every HEARTBEAT sent to it while one was unanswered (since that HEARTBEAT-ACK).
    pub hb_strikes: HbStrikes,
    /// Latest original (new) DATA transmission to it.
    pub(super) last_new_ns: Option<i64>,
    /// Last SACK that came from this address (the path still carried traffic then).
    pub last_sack_from_ns: Option<i64>,
    /// Its frame.
    pub last_sack_from_frame: u64,
    /// Latest acknowledgement of a retransmitted chunk last sent to this destination.
    pub(super) acked_rtx_ns: Option<i64>,
}

/// SRTT + 4 RTTVAR of a tick estimator (`stats::rtt_update_ticks`) in ms.
fn ticks_rto_ms(e: Option<(u32, u32)>) -> Option<f64> {
    e.map(|(s, v)| f64::from(s.saturating_add(v.saturating_mul(4))) * 10.0)
}

impl DstState {
    pub(crate) fn new(addr: IpAddr) -> Self {
        DstState {
            addr,
            new_data_chunks: 0,
            new_data_bytes: 0,
            retransmissions: 0,
            rtt: Samples::default(),
            rtt_multi: Running::default(),
            hb_rtt: Samples::default(),
            hb_period: Default::default(),
            bytes_per_s: Vec::new(),
            outstanding: 0,
            timer_start: None,
            timer_nr: None,
            consecutive_timeouts: 0,
            last_timeout: None,
            last_good_ns: i64::MIN,
            last_good_pkt: u64::MAX,
            lost_since: None,
            episode_timeouts: Vec::new(),
            episode_rtx: Vec::new(),
            srtt: None,
            rttvar: 0.0,
            coarse: None,
            coarse_low: None,
            last_hb_ack_ns: None,
            hb_unanswered_since: None,
            hb_strikes: Default::default(),
            last_new_ns: None,
            last_sack_from_ns: None,
            last_sack_from_frame: 0,
            acked_rtx_ns: None,
        }
    }

    /// Opens an outage episode at `at` (time, frame), with `expiry` as its first timeout.
    pub(super) fn begin_episode(&mut self, at: (i64, u64), expiry: Option<u32>) {
        self.lost_since = Some(at);
        self.episode_timeouts.clear();
        self.episode_rtx.clear();
        self.episode_timeouts.extend(expiry);
    }

    /// RFC 9260 6.3.1 C2/C3: update SRTT/RTTVAR with a new measurement; returns SRTT + 4 RTTVAR.
    pub(super) fn estimate(&mut self, r_ms: f64) -> f64 {
        super::stats::rtt_update(&mut self.srtt, &mut self.rttvar, r_ms);
        self.coarse = Some(super::stats::rtt_update_ticks(self.coarse, r_ms, true));
        self.coarse_low = Some(super::stats::rtt_update_ticks(self.coarse_low, r_ms, false));
        self.srtt.unwrap_or(r_ms) + 4.0 * self.rttvar
    }

    /// The estimate a stack keeping SRTT / RTTVAR in 10 ms ticks would hold (no RTO.min clamp):
    /// integer arithmetic keeps RTTVAR at one or two ticks, so it runs far above the exact
    /// estimate at small RTTs (120 ms at a 40 ms RTT).
    pub fn est_rto_coarse_ms(&self) -> Option<f64> {
        ticks_rto_ms(self.coarse)
    }

    /// `est_rto_coarse_ms` with every round trip rounded down to whole ticks: the lowest RTO
    /// such a kernel can hold.
    pub fn est_rto_coarse_low_ms(&self) -> Option<f64> {
        ticks_rto_ms(self.coarse_low)
    }

    /// A HEARTBEAT-ACK for this destination with its RTT in ms.
    pub fn heartbeat_acked(&mut self, rtt_ms: f64) {
        self.estimate(rtt_ms);
        self.consecutive_timeouts = 0;
    }

    /// The current RFC estimate SRTT + 4 RTTVAR in ms (no RTO.min clamp).
    pub fn est_rto_ms(&self) -> Option<f64> {
        self.srtt.map(|s| s + 4.0 * self.rttvar)
    }

    /// Base RTT (METRICS.md): min of heartbeat RTTs and multi-packet data RTT samples, ms.
    pub fn base_rtt_ms(&self) -> Option<f64> {
        match (self.hb_rtt.min(), self.rtt_multi.min()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
