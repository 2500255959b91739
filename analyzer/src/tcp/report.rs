//! JSON contract of the TCP connections (`"tcp_flows"` of a capture), built from `TcpFlow` after
//! the pass. Every event carries its frame number and a Wireshark display filter.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::dir::TcpDir;
use super::flow::TcpFlow;
use super::infer::DirSummary;
use crate::infer::stats::Dist;
use crate::packet::TimeBase;
use crate::report_infer::RtxCounts;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TcpFlowReport {
    pub id: usize,
    /// "ip:port" ("[v6]:port" for IPv6).
    pub client: String,
    pub server: String,
    /// How the client was told: `syn`, `syn-ack`, or `port` (higher port; no handshake seen).
    pub client_rule: String,
    pub handshake_seen: bool,
    pub first_s: f64,
    pub last_s: f64,
    pub first_frame: u64,
    pub packets: u64,
    /// Frames dropped as capture duplicates (not retransmissions).
    pub duplicate_frames: u64,
    /// Unique payload bytes [client -> server, server -> client].
    pub data_bytes: [u64; 2],
    /// SYN -> ACK of the SYN-ACK (RFC 9293 3.5).
    pub handshake_ms: Option<f64>,
    /// `fin`, `rst` or null (still open at the end of the capture).
    pub closed: Option<String>,
    /// Options of [client, server] from their SYNs.
    pub options: [TcpOptionsReport; 2],
    pub directions: Vec<TcpDirReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TcpOptionsReport {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TcpTimeoutReport {
    pub t_s: f64,
    pub observed_rto_ms: Option<f64>,
    pub backoff: u32,
    /// What started the timer: send, ack, probe (RFC 8985 TLP), timeout, unknown.
    pub timer_start: String,
    /// Base RTO fitted to this expiry's backoff chain (first expiry of a chain).
    pub chain_rto_ms: Option<f64>,
    pub seq: u32,
    pub segments: u32,
    pub handshake: bool,
    pub frame: u64,
    pub filter: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TcpOutageReport {
    pub start_s: f64,
    pub recovered_s: f64,
    pub recovery_ms: f64,
    pub timeouts: u32,
    pub start_frame: u64,
    pub frame: u64,
    pub filter: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TcpDirReport {
    /// 0 = client sends, 1 = server sends.
    pub sender: u8,
    pub vantage: String,
    pub vantage_evidence: String,
    pub data_segments: u64,
    pub data_bytes: u64,
    pub base_rtt_ms: Option<f64>,
    /// Karn samples (RFC 6298 3), sender vantage only.
    pub rtt_ms: Option<Dist>,
    /// TSval/TSecr samples (RFC 7323 4.1), sender vantage only.
    pub ts_rtt_ms: Option<Dist>,
    pub retransmissions: RtxCounts,
    pub timeouts: Vec<TcpTimeoutReport>,
    pub rto_first_ms: Option<f64>,
    pub rto_min_ms: Option<f64>,
    pub rto_min_evidence: u32,
    /// `linux` (SRTT + max(4 RTTVAR, rto_min)) or `rfc6298` (max(RTO.min, SRTT + 4 RTTVAR)).
    pub rto_model: Option<String>,
    pub delayed_ack_ms: Option<Dist>,
    pub delayed_ack_share: Option<f64>,
    pub outages: Vec<TcpOutageReport>,
    pub max_gap_ms: Option<f64>,
    pub max_transfer_ms: Option<f64>,
    pub p95_transfer_ms: Option<f64>,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    pub max_rwnd_bytes: u64,
}

/// "ip:port", bracketed for IPv6.
pub fn endpoint(ep: (IpAddr, u16)) -> String {
    match ep.0 {
        IpAddr::V4(a) => format!("{a}:{}", ep.1),
        IpAddr::V6(a) => format!("[{a}]:{}", ep.1),
    }
}

/// Display filter for the segments of one direction starting at `seq` (raw, so relative
/// sequence numbers do not matter).
pub fn seq_filter(f: &TcpFlow, sender: usize, seq: u32) -> String {
    let (src, sp) = f.ep[sender];
    let dp = f.ep[1 - sender].1;
    let ipf = if src.is_ipv4() { "ip.src" } else { "ipv6.src" };
    format!("{ipf} == {src} && tcp.srcport == {sp} && tcp.dstport == {dp} && tcp.seq_raw == {seq}")
}

fn range_filter(f: &TcpFlow, a: u64, b: u64) -> String {
    format!(
        "frame.number >= {a} && frame.number <= {b} && tcp.port == {} && tcp.port == {}",
        f.ep[0].1, f.ep[1].1
    )
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

impl TcpFlowReport {
    pub fn new(c: TimeBase, f: &TcpFlow) -> Self {
        let opt = |i: usize| TcpOptionsReport {
            mss: f.opts[i].mss,
            wscale: f.opts[i].wscale,
            sack_permitted: f.opts[i].sack_permitted,
            timestamps: f.opts[i].timestamps,
        };
        TcpFlowReport {
            id: f.id,
            client: endpoint(f.ep[0]),
            server: endpoint(f.ep[1]),
            client_rule: f.client_rule.as_str().to_string(),
            handshake_seen: f.handshake_seen(),
            first_s: c.rel_s(f.first_ns),
            last_s: c.rel_s(f.last_ns),
            first_frame: f.first_frame,
            packets: f.packets,
            duplicate_frames: f.duplicates,
            data_bytes: [f.dirs[0].new_bytes, f.dirs[1].new_bytes],
            handshake_ms: f.handshake_ns().map(ms),
            closed: if f.rst {
                Some("rst".into())
            } else if f.fin[0] && f.fin[1] {
                Some("fin".into())
            } else {
                None
            },
            options: [opt(0), opt(1)],
            directions: (0..2)
                .filter_map(|s| {
                    let sum = f.summary[s].as_ref()?;
                    Some(dir_report(c, f, s, &f.dirs[s], sum))
                })
                .collect(),
        }
    }
}

fn dir_report(c: TimeBase, f: &TcpFlow, s: usize, d: &TcpDir, sum: &DirSummary) -> TcpDirReport {
    TcpDirReport {
        sender: s as u8,
        vantage: sum.vantage.as_str().to_string(),
        vantage_evidence: sum.vantage_evidence.clone(),
        data_segments: d.data_segments,
        data_bytes: d.new_bytes,
        base_rtt_ms: sum.base_rtt_ms,
        rtt_ms: sum.rtt,
        ts_rtt_ms: sum.ts_rtt,
        retransmissions: RtxCounts {
            total: sum.rtx_total,
            fast: sum.rtx_fast,
            timeout: sum.rtx_timeout,
            spurious: sum.rtx_spurious,
            peer_discarded: None,
        },
        timeouts: d
            .timeouts
            .iter()
            .map(|t| TcpTimeoutReport {
                t_s: c.rel_s(t.t_ns),
                observed_rto_ms: t.observed_rto_ns.map(ms),
                backoff: t.backoff,
                timer_start: t.timer_start.as_str().to_string(),
                chain_rto_ms: t.chain_rto_ms,
                seq: t.seq,
                segments: t.segments,
                handshake: t.handshake,
                frame: t.frame,
                filter: seq_filter(f, s, t.seq),
            })
            .collect(),
        rto_first_ms: sum.rto_first_ms,
        rto_min_ms: sum.rto_min_ms,
        rto_min_evidence: sum.rto_min_evidence,
        rto_model: sum.rto_model.map(str::to_string),
        delayed_ack_ms: sum.delayed_ack,
        delayed_ack_share: sum.delayed_ack_share,
        outages: d
            .outages
            .iter()
            .map(|o| TcpOutageReport {
                start_s: c.rel_s(o.start_ns),
                recovered_s: c.rel_s(o.recovered_ns),
                recovery_ms: ms(o.recovered_ns - o.start_ns),
                timeouts: o.timeouts,
                start_frame: o.start_frame,
                frame: o.frame,
                filter: range_filter(f, o.start_frame, o.frame),
            })
            .collect(),
        max_gap_ms: sum.max_gap_ms,
        max_transfer_ms: sum.transfer.map(|t| t.max),
        p95_transfer_ms: sum.transfer.map(|t| t.p95),
        throughput_bps: sum.throughput_bps,
        goodput_bps: sum.goodput_bps,
        max_rwnd_bytes: d.rwnd_max,
    }
}
