//! DataFrames of the TCP connections and of the SCTP-vs-TCP comparison: tcp_flows (one row per
//! connection direction), tcp_rtt_samples, tcp_retransmissions, tcp_timeouts, tcp_delayed_acks,
//! tcp_throughput and comparison.

use polars::prelude::*;

use super::col;
use crate::analyze::CaptureAnalysis;
use crate::report::CaptureReport;
use crate::tcp::dir::TcpDir;
use crate::tcp::report::{endpoint, seq_filter};
use crate::tcp::TcpFlow;

/// Builds a frame from (name, column) pairs collected row by row.
macro_rules! frame {
    ($c:expr, $n:expr; $($name:literal => $v:expr),* $(,)?) => {
        DataFrame::new_infer_height(vec![
            col("capture", vec![$c.file.as_str(); $n]),
            $(col($name, $v)),*
        ])
    };
}

/// (connection, direction sender, direction state) for both directions of every connection.
fn dirs(c: &CaptureAnalysis) -> impl Iterator<Item = (&TcpFlow, usize, &TcpDir)> {
    c.tcp_flows
        .iter()
        .flat_map(|f| (0..2).map(move |s| (f, s, &f.dirs[s])))
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

pub fn tcp_flows(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .filter_map(|(f, s, d)| f.summary[s].as_ref().map(|m| (f, s, d, m)))
        .collect();
    let dist = |d: Option<crate::infer::stats::Dist>, g: fn(&crate::infer::stats::Dist) -> f64| {
        d.as_ref().map(g)
    };
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0.id as u32).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1 as u32).collect::<Vec<_>>(),
        "client" => rows.iter().map(|r| endpoint(r.0.ep[0])).collect::<Vec<_>>(),
        "server" => rows.iter().map(|r| endpoint(r.0.ep[1])).collect::<Vec<_>>(),
        "handshake_seen" => rows.iter().map(|r| r.0.handshake_seen()).collect::<Vec<_>>(),
        "handshake_ms" => rows.iter().map(|r| r.0.handshake_ns().map(ms)).collect::<Vec<_>>(),
        "first_s" => rows.iter().map(|r| c.rel_s(r.0.first_ns)).collect::<Vec<_>>(),
        "last_s" => rows.iter().map(|r| c.rel_s(r.0.last_ns)).collect::<Vec<_>>(),
        "packets" => rows.iter().map(|r| r.0.packets).collect::<Vec<_>>(),
        "duplicate_frames" => rows.iter().map(|r| r.0.duplicates).collect::<Vec<_>>(),
        "vantage" => rows.iter().map(|r| r.3.vantage.as_str()).collect::<Vec<_>>(),
        "data_segments" => rows.iter().map(|r| r.2.data_segments).collect::<Vec<_>>(),
        "data_bytes" => rows.iter().map(|r| r.2.new_bytes).collect::<Vec<_>>(),
        "retransmissions" => rows.iter().map(|r| r.3.rtx_total).collect::<Vec<_>>(),
        "rtx_fast" => rows.iter().map(|r| r.3.rtx_fast).collect::<Vec<_>>(),
        "rtx_timeout" => rows.iter().map(|r| r.3.rtx_timeout).collect::<Vec<_>>(),
        "rtx_spurious" => rows.iter().map(|r| r.3.rtx_spurious).collect::<Vec<_>>(),
        "base_rtt_ms" => rows.iter().map(|r| r.3.base_rtt_ms).collect::<Vec<_>>(),
        "rtt_median_ms" => rows.iter().map(|r| dist(r.3.rtt, |d| d.median)).collect::<Vec<_>>(),
        "rtt_p95_ms" => rows.iter().map(|r| dist(r.3.rtt, |d| d.p95)).collect::<Vec<_>>(),
        "timeouts" => rows.iter().map(|r| r.2.timeouts.len() as u32).collect::<Vec<_>>(),
        "rto_first_ms" => rows.iter().map(|r| r.3.rto_first_ms).collect::<Vec<_>>(),
        "rto_min_ms" => rows.iter().map(|r| r.3.rto_min_ms).collect::<Vec<_>>(),
        "rto_model" => rows.iter().map(|r| r.3.rto_model).collect::<Vec<_>>(),
        "delayed_ack_ms" => rows.iter().map(|r| dist(r.3.delayed_ack, |d| d.median)).collect::<Vec<_>>(),
        "outages" => rows.iter().map(|r| r.2.outages.len() as u32).collect::<Vec<_>>(),
        "max_outage_ms" => rows.iter().map(|r| r.2.outages.iter().map(|o| ms(o.recovered_ns - o.start_ns)).reduce(f64::max)).collect::<Vec<_>>(),
        "max_gap_ms" => rows.iter().map(|r| r.3.max_gap_ms).collect::<Vec<_>>(),
        "max_transfer_ms" => rows.iter().map(|r| dist(r.3.transfer, |d| d.max)).collect::<Vec<_>>(),
        "throughput_bps" => rows.iter().map(|r| r.3.throughput_bps).collect::<Vec<_>>(),
        "goodput_bps" => rows.iter().map(|r| r.3.goodput_bps).collect::<Vec<_>>(),
    )
}

pub fn tcp_rtt_samples(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(f, s, d)| d.rtt_rows.iter().map(move |r| (f, s, r)))
        .collect();
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0.id as u32).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1 as u32).collect::<Vec<_>>(),
        "kind" => rows.iter().map(|r| r.2.kind.as_str()).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.2.t_ns)).collect::<Vec<_>>(),
        "rtt_ms" => rows.iter().map(|r| ms(r.2.rtt_ns)).collect::<Vec<_>>(),
        "ack" => rows.iter().map(|r| r.2.ack).collect::<Vec<_>>(),
        "segments_acked" => rows.iter().map(|r| r.2.segments_acked).collect::<Vec<_>>(),
        "frame_data" => rows.iter().map(|r| r.2.frame_data).collect::<Vec<_>>(),
        "frame_ack" => rows.iter().map(|r| r.2.frame_ack).collect::<Vec<_>>(),
    )
}

pub fn tcp_retransmissions(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(f, s, d)| d.retransmissions.iter().map(move |r| (f, s, r)))
        .collect();
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0.id as u32).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1 as u32).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.2.t_ns)).collect::<Vec<_>>(),
        "seq" => rows.iter().map(|r| r.2.seq).collect::<Vec<_>>(),
        "len" => rows.iter().map(|r| r.2.len).collect::<Vec<_>>(),
        "kind" => rows.iter().map(|r| r.2.kind.as_str()).collect::<Vec<_>>(),
        "spurious" => rows.iter().map(|r| r.2.spurious.is_some()).collect::<Vec<_>>(),
        "spurious_evidence" => rows.iter().map(|r| r.2.spurious).collect::<Vec<_>>(),
        "handshake" => rows.iter().map(|r| r.2.handshake).collect::<Vec<_>>(),
        "orig_time_s" => rows.iter().map(|r| r.2.orig_ns.map(|t| c.rel_s(t))).collect::<Vec<_>>(),
        "ack_after_ms" => rows.iter().map(|r| r.2.ack_delay_ns.map(ms)).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.2.frame).collect::<Vec<_>>(),
        "orig_frame" => rows.iter().map(|r| r.2.orig_frame).collect::<Vec<_>>(),
        "filter" => rows.iter().map(|r| seq_filter(r.0, r.1, r.2.seq)).collect::<Vec<_>>(),
    )
}

pub fn tcp_timeouts(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(f, s, d)| d.timeouts.iter().map(move |t| (f, s, t)))
        .collect();
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0.id as u32).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1 as u32).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.2.t_ns)).collect::<Vec<_>>(),
        "observed_rto_ms" => rows.iter().map(|r| r.2.observed_rto_ns.map(ms)).collect::<Vec<_>>(),
        "backoff" => rows.iter().map(|r| r.2.backoff).collect::<Vec<_>>(),
        "timer_start" => rows.iter().map(|r| r.2.timer_start.as_str()).collect::<Vec<_>>(),
        "chain_rto_ms" => rows.iter().map(|r| r.2.chain_rto_ms).collect::<Vec<_>>(),
        "srtt_ms" => rows.iter().map(|r| r.2.srtt_ms).collect::<Vec<_>>(),
        "handshake" => rows.iter().map(|r| r.2.handshake).collect::<Vec<_>>(),
        "segments" => rows.iter().map(|r| r.2.segments).collect::<Vec<_>>(),
        "seq" => rows.iter().map(|r| r.2.seq).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.2.frame).collect::<Vec<_>>(),
        "filter" => rows.iter().map(|r| seq_filter(r.0, r.1, r.2.seq)).collect::<Vec<_>>(),
    )
}

pub fn tcp_delayed_acks(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = c
        .tcp_flows
        .iter()
        .flat_map(|f| {
            (0..2).flat_map(move |s| {
                f.summary[s].iter().flat_map(move |m| {
                    m.delack_samples
                        .iter()
                        .map(move |x| (f.id as u32, s as u32, x))
                })
            })
        })
        .collect();
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.2.t_ns)).collect::<Vec<_>>(),
        "ack_delay_ms" => rows.iter().map(|r| r.2.delay_ms).collect::<Vec<_>>(),
        "frame_data" => rows.iter().map(|r| r.2.frame_data).collect::<Vec<_>>(),
        "frame_ack" => rows.iter().map(|r| r.2.frame_ack).collect::<Vec<_>>(),
    )
}

/// Payload bytes per second of each direction (throughput over time).
pub fn tcp_throughput(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(f, s, d)| {
            let t0 = c.rel_s(f.first_ns);
            d.bytes_per_s
                .iter()
                .enumerate()
                .map(move |(i, b)| (f.id as u32, s as u32, t0 + i as f64, *b))
        })
        .collect();
    frame!(c, rows.len();
        "flow" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "second_start_s" => rows.iter().map(|r| r.2).collect::<Vec<_>>(),
        "bytes" => rows.iter().map(|r| r.3).collect::<Vec<_>>(),
        "throughput_bps" => rows.iter().map(|r| 8.0 * r.3 as f64).collect::<Vec<_>>(),
    )
}

/// The comparison rows (`compare::rows`) as a table.
pub fn comparison(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows = CaptureReport::from_analysis(c).comparison;
    frame!(c, rows.len();
        "transport" => rows.iter().map(|r| r.transport.as_str()).collect::<Vec<_>>(),
        "id" => rows.iter().map(|r| r.id as u32).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.sender as u32).collect::<Vec<_>>(),
        "endpoints" => rows.iter().map(|r| r.endpoints.as_str()).collect::<Vec<_>>(),
        "vantage" => rows.iter().map(|r| r.vantage.as_str()).collect::<Vec<_>>(),
        "duration_s" => rows.iter().map(|r| r.duration_s).collect::<Vec<_>>(),
        "handshake_ms" => rows.iter().map(|r| r.handshake_ms).collect::<Vec<_>>(),
        "throughput_bps" => rows.iter().map(|r| r.throughput_bps).collect::<Vec<_>>(),
        "goodput_bps" => rows.iter().map(|r| r.goodput_bps).collect::<Vec<_>>(),
        "rtt_median_ms" => rows.iter().map(|r| r.rtt_median_ms).collect::<Vec<_>>(),
        "rtt_p95_ms" => rows.iter().map(|r| r.rtt_p95_ms).collect::<Vec<_>>(),
        "retransmissions" => rows.iter().map(|r| r.retransmissions).collect::<Vec<_>>(),
        "retransmission_rate" => rows.iter().map(|r| r.retransmission_rate).collect::<Vec<_>>(),
        "timeouts" => rows.iter().map(|r| r.timeouts).collect::<Vec<_>>(),
        "observed_rto_median_ms" => rows.iter().map(|r| r.observed_rto_median_ms).collect::<Vec<_>>(),
        "rto_min_ms" => rows.iter().map(|r| r.rto_min_ms).collect::<Vec<_>>(),
        "ack_delay_ms" => rows.iter().map(|r| r.ack_delay_ms).collect::<Vec<_>>(),
        "max_gap_ms" => rows.iter().map(|r| r.max_gap_ms).collect::<Vec<_>>(),
        "max_transfer_ms" => rows.iter().map(|r| r.max_transfer_ms).collect::<Vec<_>>(),
        "recovery" => rows.iter().map(|r| r.recovery.as_deref()).collect::<Vec<_>>(),
        "outage_ms" => rows.iter().map(|r| r.outage_ms).collect::<Vec<_>>(),
        "hol_blocked_messages" => rows.iter().map(|r| r.hol_blocked_messages).collect::<Vec<_>>(),
        "hol_delay_sum_ms" => rows.iter().map(|r| r.hol_delay_sum_ms).collect::<Vec<_>>(),
        "single_stream_blocked_messages" => rows.iter().map(|r| r.single_stream_blocked_messages).collect::<Vec<_>>(),
        "single_stream_delay_sum_ms" => rows.iter().map(|r| r.single_stream_delay_sum_ms).collect::<Vec<_>>(),
    )
}
