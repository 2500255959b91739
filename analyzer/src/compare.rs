//! SCTP beside TCP (METRICS.md "TCP flows, for comparison"): one row per direction carrying data,
//! of every SCTP association and every TCP connection of a capture, with the same columns in the
//! same units, built from the JSON contract types so that the CLI, the DataFrame and the
//! dashboard agree.
//!
//! Definitions shared by both transports:
//! * duration: last - first packet of the association / connection (s);
//! * throughput: 8 x payload bytes sent by the direction, retransmissions included, / duration;
//!   goodput: the same with each byte once (SCTP: DATA bytes scaled by new / all DATA chunks);
//! * RTT: data RTT samples (Karn) of the primary path (SCTP: the path with most new DATA),
//!   sender vantage only;
//! * retransmission rate: retransmitted DATA chunks / DATA chunks, retransmitted segments / data
//!   segments;
//! * ack delay: median SACK delay (SCTP) or delayed-ACK timer delay (TCP);
//! * outage: SCTP failover time (outage start -> first new DATA on the alternate path) or TCP
//!   outage recovery time (last ACK of new data before the outage -> first one after it);
//! * head-of-line: messages that waited more than 1 ms for an earlier one of their stream and
//!   the sum of the waits (SCTP, `crate::hol`), beside the same losses on one stream (delivery
//!   in TSN order, as one TCP byte stream delivers). TCP rows leave them null.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::infer::stats::median;
use crate::report::AssocReport;
use crate::tcp::TcpFlowReport;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComparisonRow {
    /// `sctp` or `tcp`.
    pub transport: String,
    /// Association or connection id.
    pub id: usize,
    /// Data-sending endpoint (SCTP endpoint index; TCP 0 = client, 1 = server).
    pub sender: u8,
    /// "sender -> receiver".
    pub endpoints: String,
    pub vantage: String,
    pub duration_s: f64,
    pub handshake_ms: Option<f64>,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    pub rtt_median_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub retransmissions: u64,
    pub retransmission_rate: Option<f64>,
    pub timeouts: u64,
    pub observed_rto_median_ms: Option<f64>,
    pub rto_min_ms: Option<f64>,
    pub ack_delay_ms: Option<f64>,
    pub max_gap_ms: Option<f64>,
    pub max_transfer_ms: Option<f64>,
    /// How the direction got through an outage: `failover` (SCTP), `stall` (TCP), or null.
    pub recovery: Option<String>,
    /// Failover time (SCTP) or outage recovery time (TCP), ms.
    pub outage_ms: Option<f64>,
    /// Head-of-line blocking (SCTP): messages that waited for an earlier one of their stream,
    /// and the waits' sum, ms; null without the figures (`directions[].hol`) and for TCP.
    #[serde(default)]
    pub hol_blocked_messages: Option<u64>,
    #[serde(default)]
    pub hol_delay_sum_ms: Option<f64>,
    /// The same losses with every message on one stream (as one TCP byte stream delivers).
    #[serde(default)]
    pub single_stream_blocked_messages: Option<u64>,
    #[serde(default)]
    pub single_stream_delay_sum_ms: Option<f64>,
}

fn rate(bytes: f64, dur_s: f64) -> f64 {
    if dur_s > 0.0 {
        8.0 * bytes / dur_s
    } else {
        0.0
    }
}

fn sctp_rows(a: &AssocReport, out: &mut Vec<ComparisonRow>) {
    let dur = a.last_s - a.first_s;
    let ep = |i: usize| {
        a.endpoints.get(i).map_or("?".to_string(), |e| {
            format!("{}:{}", e.addresses.join(","), e.port)
        })
    };
    for d in &a.directions {
        let s = d.sender;
        let paths: Vec<_> = a.paths.iter().filter(|p| p.sender == s).collect();
        let bytes: u64 = paths.iter().map(|p| p.data_bytes).sum();
        let unique: f64 = paths
            .iter()
            .map(|p| {
                if p.data_chunks == 0 {
                    0.0
                } else {
                    p.data_bytes as f64 * p.infer.new_data_chunks as f64 / p.data_chunks as f64
                }
            })
            .sum();
        let primary = paths.iter().max_by_key(|p| p.infer.new_data_chunks);
        let rtt = primary.and_then(|p| p.infer.rtt_ms);
        let rtos: Vec<f64> = d
            .timeouts
            .iter()
            .filter_map(|t| t.observed_rto_ms)
            .collect();
        let fo = d.failovers.iter().find(|f| !f.spurious);
        out.push(ComparisonRow {
            transport: "sctp".into(),
            id: a.id,
            sender: s,
            endpoints: format!("{} -> {}", ep(s as usize), ep(1 - s as usize)),
            vantage: d.vantage.clone(),
            duration_s: dur,
            handshake_ms: a.handshake_ms,
            throughput_bps: rate(bytes as f64, dur),
            goodput_bps: rate(unique, dur),
            rtt_median_ms: rtt.map(|r| r.median),
            rtt_p95_ms: rtt.map(|r| r.p95),
            retransmissions: d.retransmissions.total,
            retransmission_rate: (d.data_chunks > 0)
                .then(|| d.retransmissions.total as f64 / d.data_chunks as f64),
            timeouts: d.timeouts.len() as u64,
            observed_rto_median_ms: median(&rtos),
            rto_min_ms: d.rto_min_ms,
            ack_delay_ms: d.sack_delay_ms.map(|x| x.median),
            max_gap_ms: d.max_gap_ms,
            max_transfer_ms: d.max_transfer_ms,
            recovery: fo.map(|_| "failover".to_string()),
            outage_ms: fo.and_then(|f| f.failover_ms),
            hol_blocked_messages: d.hol.as_ref().map(|h| h.blocked_messages),
            hol_delay_sum_ms: d.hol.as_ref().map(|h| h.delay_sum_ms),
            single_stream_blocked_messages: d
                .hol
                .as_ref()
                .map(|h| h.single_stream_blocked_messages),
            single_stream_delay_sum_ms: d.hol.as_ref().map(|h| h.single_stream_delay_sum_ms),
        });
    }
}

fn tcp_rows(f: &TcpFlowReport, out: &mut Vec<ComparisonRow>) {
    let dur = f.last_s - f.first_s;
    for d in f.directions.iter().filter(|d| d.data_bytes > 0) {
        let (from, to) = if d.sender == 0 {
            (&f.client, &f.server)
        } else {
            (&f.server, &f.client)
        };
        let rtos: Vec<f64> = d
            .timeouts
            .iter()
            .filter_map(|t| t.observed_rto_ms)
            .collect();
        let worst = d
            .outages
            .iter()
            .max_by(|a, b| a.recovery_ms.total_cmp(&b.recovery_ms));
        out.push(ComparisonRow {
            transport: "tcp".into(),
            id: f.id,
            sender: d.sender,
            endpoints: format!("{from} -> {to}"),
            vantage: d.vantage.clone(),
            duration_s: dur,
            handshake_ms: f.handshake_ms,
            throughput_bps: d.throughput_bps,
            goodput_bps: d.goodput_bps,
            rtt_median_ms: d.rtt_ms.map(|r| r.median),
            rtt_p95_ms: d.rtt_ms.map(|r| r.p95),
            retransmissions: d.retransmissions.total,
            retransmission_rate: (d.data_segments > 0)
                .then(|| d.retransmissions.total as f64 / d.data_segments as f64),
            timeouts: d.timeouts.len() as u64,
            observed_rto_median_ms: median(&rtos),
            rto_min_ms: d.rto_min_ms,
            ack_delay_ms: d.delayed_ack_ms.map(|x| x.median),
            max_gap_ms: d.max_gap_ms,
            max_transfer_ms: d.max_transfer_ms,
            recovery: worst.map(|_| "stall".to_string()),
            outage_ms: worst.map(|o| o.recovery_ms),
            hol_blocked_messages: None,
            hol_delay_sum_ms: None,
            single_stream_blocked_messages: None,
            single_stream_delay_sum_ms: None,
        });
    }
}

/// The comparison rows of one capture: SCTP association directions, then TCP ones.
pub fn rows(assocs: &[AssocReport], flows: &[TcpFlowReport]) -> Vec<ComparisonRow> {
    let mut out = Vec::new();
    for a in assocs {
        sctp_rows(a, &mut out);
    }
    for f in flows {
        tcp_rows(f, &mut out);
    }
    out
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
}

/// "34/865": messages that waited and the sum of their waits (ms), or "-".
fn waits(n: Option<u64>, sum_ms: Option<f64>) -> String {
    match (n, sum_ms) {
        (Some(n), Some(s)) => format!("{n}/{s:.0}"),
        _ => "-".to_string(),
    }
}

/// The comparison as a text table, one line per direction.
pub fn render_text(file: &str, rows: &[ComparisonRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "== {file}");
    if rows.is_empty() {
        let _ = writeln!(s, "   no SCTP association or TCP connection carried data");
        return s;
    }
    let w = rows
        .iter()
        .map(|r| r.endpoints.len())
        .max()
        .unwrap_or(0)
        .max(18);
    let _ = writeln!(
        s,
        "{:<5} {:>3} {:<w$} {:<8} {:>8} {:>8} {:>10} {:>8} {:>8} {:>6} {:>4} {:>8} {:>8} {:>8} {:>9} {:>9} {:<9} {:>9} {:>13} {:>13}",
        "proto", "id", "sender -> receiver", "vantage", "dur s", "hs ms", "goodput", "rtt med", "rtt p95",
        "rtx %", "TOs", "RTO med", "RTO.min", "ack dly", "max gap", "max xfer", "recovery", "outage ms",
        "HOL n/ms", "1-stream n/ms"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<5} {:>3} {:<w$} {:<8} {:>8.3} {:>8} {:>10} {:>8} {:>8} {:>6} {:>4} {:>8} {:>8} {:>8} {:>9} {:>9} {:<9} {:>9} {:>13} {:>13}",
            r.transport,
            r.id,
            r.endpoints,
            r.vantage,
            r.duration_s,
            num(r.handshake_ms, 1),
            crate::decimal::Fixed(r.goodput_bps, 0).to_string(),
            num(r.rtt_median_ms, 1),
            num(r.rtt_p95_ms, 1),
            num(r.retransmission_rate.map(|x| 100.0 * x), 2),
            r.timeouts,
            num(r.observed_rto_median_ms, 0),
            num(r.rto_min_ms, 0),
            num(r.ack_delay_ms, 1),
            num(r.max_gap_ms, 0),
            num(r.max_transfer_ms, 0),
            r.recovery.as_deref().unwrap_or("-"),
            num(r.outage_ms, 0),
            waits(r.hol_blocked_messages, r.hol_delay_sum_ms),
            waits(
                r.single_stream_blocked_messages,
                r.single_stream_delay_sum_ms
            ),
        );
    }
    s
}
