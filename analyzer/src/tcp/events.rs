//! Event rows of one TCP direction: RTT samples, retransmissions, RTO expiries, lone ACKs,
//! outages (one row per event, kept by `dir::TcpDir`, reported by `report` and `frames`).

/// Fast or timeout, as for SCTP (RFC 5681 3.2 / RFC 6298 5 here).
pub use crate::infer::events::RtxKind;

/// What started the retransmission timer that expired (RFC 6298 5, RFC 8985 7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerStart {
    /// 5.1: data sent while nothing was outstanding.
    Send,
    /// 5.3: an ACK of new data with data still outstanding.
    Ack,
    /// RFC 8985 7.3: the timer is re-armed after a tail loss probe.
    Probe,
    /// 5.5/5.6: the previous expiry (backoff chain).
    Timeout,
    /// The capture started with data outstanding.
    Unknown,
}

impl TimerStart {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerStart::Send => "send",
            TimerStart::Ack => "ack",
            TimerStart::Probe => "probe",
            TimerStart::Timeout => "timeout",
            TimerStart::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttKind {
    /// Karn sample of a data (or FIN) segment, RFC 6298 3.
    Data,
    /// SYN or SYN-ACK answered: the peer answers at once, so this is a clean RTT.
    Handshake,
    /// TSval echoed in TSecr, RFC 7323 4.1.
    Timestamp,
}

impl RttKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RttKind::Data => "data",
            RttKind::Handshake => "handshake",
            RttKind::Timestamp => "timestamp",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RttRow {
    pub t_ns: i64,
    pub rtt_ns: i64,
    pub kind: RttKind,
    /// Sequence number acknowledged (end of the sampled segment).
    pub ack: u32,
    pub segments_acked: u32,
    pub frame_data: u64,
    pub frame_ack: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Retransmission {
    pub t_ns: i64,
    pub frame: u64,
    pub seq: u32,
    pub len: u32,
    pub orig_ns: Option<i64>,
    pub orig_frame: Option<u64>,
    pub kind: RtxKind,
    pub spurious: Option<&'static str>,
    /// The whole segment had been seen before (a duplicate at a receiver vantage).
    pub orig_seen: bool,
    /// ACK that first covered it, minus its time.
    pub ack_delay_ns: Option<i64>,
    pub handshake: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Timeout {
    pub t_ns: i64,
    pub frame: u64,
    pub seq: u32,
    pub backoff: u32,
    /// Resolved at the end of the pass (sender vantage only).
    pub observed_rto_ns: Option<i64>,
    pub timer_start: TimerStart,
    /// Timer start by RFC 6298 (send from idle, ACK of new data, or previous expiry).
    pub start_ns: Option<i64>,
    pub start_kind: TimerStart,
    /// The last transmission before this expiry (a tail loss probe candidate): time, and the
    /// quiet time before it (no transmission, no ACK).
    pub probe: Option<(i64, i64)>,
    pub srtt_ms: Option<f64>,
    pub rttvar_ms: f64,
    pub handshake: bool,
    pub segments: u32,
    /// Base RTO fitted to this expiry's backoff chain (first of a chain only).
    pub chain_rto_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
pub struct LoneAck {
    pub t_ns: i64,
    pub latency_ns: i64,
    pub frame_data: u64,
    pub frame_ack: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Outage {
    /// The last ACK of new data before the outage.
    pub start_ns: i64,
    pub start_frame: u64,
    /// When data became outstanding after that ACK (the ACK itself when some still was).
    pub data_since_ns: i64,
    pub data_since_frame: u64,
    pub recovered_ns: i64,
    pub frame: u64,
    pub timeouts: u32,
}
