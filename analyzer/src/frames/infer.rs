//! DataFrames of the timer inference: rtt_samples, sack_delays, timeouts, retransmissions,
//! failovers, path_metrics, messages (one row per event, as METRICS.md defines them).

use polars::prelude::*;

use super::col;
use crate::analyze::CaptureAnalysis;
use crate::assoc::Association;
use crate::infer::direction::DirInfer;
use crate::infer::events::RttKind;

/// (association, direction sender, direction state) for every direction with state.
fn dirs(c: &CaptureAnalysis) -> impl Iterator<Item = (&Association, usize, &DirInfer)> {
    c.associations
        .iter()
        .flat_map(|a| (0..2).map(move |s| (a, s, &a.infer.dirs[s])))
}

fn addr(d: &DirInfer, p: u16) -> String {
    d.dsts
        .get(p as usize)
        .map_or(String::new(), |x| crate::net::ip_text(&x.addr))
}

/// Builds a frame from (name, column) pairs collected row by row.
macro_rules! frame {
    ($c:expr, $n:expr; $($name:literal => $v:expr),* $(,)?) => {
        DataFrame::new_infer_height(vec![
            col("capture", vec![$c.file.as_str(); $n]),
            $(col($name, $v)),*
        ])
    };
}

pub fn rtt_samples(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            d.rtt_rows
                .iter()
                .map(move |r| (a.id as u32, s as u32, d, r))
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| addr(r.2, r.3.path)).collect::<Vec<_>>(),
        "kind" => rows.iter().map(|r| if r.3.kind == RttKind::Data { "data" } else { "heartbeat" }).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.3.t_ns)).collect::<Vec<_>>(),
        "rtt_ms" => rows.iter().map(|r| r.3.rtt_ns as f64 / 1e6).collect::<Vec<_>>(),
        "packets_acked" => rows.iter().map(|r| r.3.packets_acked).collect::<Vec<_>>(),
        "tsn" => rows.iter().map(|r| r.3.tsn).collect::<Vec<_>>(),
        "est_rto_ms" => rows.iter().map(|r| r.3.est_rto_ms.is_finite().then_some(r.3.est_rto_ms)).collect::<Vec<_>>(),
        "frame_request" => rows.iter().map(|r| r.3.frame_req).collect::<Vec<_>>(),
        "frame_ack" => rows.iter().map(|r| r.3.frame_ack).collect::<Vec<_>>(),
    )
}

pub fn sack_delays(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = c
        .associations
        .iter()
        .flat_map(|a| {
            (0..2).flat_map(move |s| {
                a.infer.summary[s].iter().flat_map(move |sum| {
                    sum.sack_delay_samples
                        .iter()
                        .map(move |x| (a.id as u32, s as u32, &a.infer.dirs[s], x))
                })
            })
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| addr(r.2, r.3.path)).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.3.t_ns)).collect::<Vec<_>>(),
        "sack_delay_ms" => rows.iter().map(|r| r.3.delay_ms).collect::<Vec<_>>(),
        "frame_data" => rows.iter().map(|r| r.3.frame_data).collect::<Vec<_>>(),
        "frame_sack" => rows.iter().map(|r| r.3.frame_sack).collect::<Vec<_>>(),
    )
}

pub fn timeouts(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            d.timeouts
                .iter()
                .map(move |t| (a.id as u32, s as u32, d, t))
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.3.t_ns)).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| addr(r.2, r.3.path)).collect::<Vec<_>>(),
        "to" => rows.iter().map(|r| addr(r.2, r.3.to_path)).collect::<Vec<_>>(),
        "observed_rto_ms" => rows.iter().map(|r| r.3.observed_rto_ns.map(|n| n as f64 / 1e6)).collect::<Vec<_>>(),
        "backoff" => rows.iter().map(|r| r.3.backoff).collect::<Vec<_>>(),
        "timer_start" => rows.iter().map(|r| r.3.timer_start.as_str()).collect::<Vec<_>>(),
        "est_rto_ms" => rows.iter().map(|r| r.3.est_rto_ms).collect::<Vec<_>>(),
        "chunks" => rows.iter().map(|r| r.3.chunks).collect::<Vec<_>>(),
        "tsn" => rows.iter().map(|r| r.3.first_tsn).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.3.frame).collect::<Vec<_>>(),
    )
}

pub fn retransmissions(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            d.retransmissions
                .iter()
                .map(move |t| (a.id as u32, s as u32, d, t))
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "tsn" => rows.iter().map(|r| r.3.tsn).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.3.t_ns)).collect::<Vec<_>>(),
        "orig_time_s" => rows.iter().map(|r| c.rel_s(r.3.orig_t_ns)).collect::<Vec<_>>(),
        "orig_path" => rows.iter().map(|r| addr(r.2, r.3.orig_path)).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| addr(r.2, r.3.path)).collect::<Vec<_>>(),
        "kind" => rows.iter().map(|r| r.3.kind.as_str()).collect::<Vec<_>>(),
        "spurious" => rows.iter().map(|r| r.3.spurious.is_some()).collect::<Vec<_>>(),
        "spurious_evidence" => rows.iter().map(|r| r.3.spurious).collect::<Vec<_>>(),
        "peer_discarded" => rows.iter().map(|r| r.3.peer_discarded.is_some()).collect::<Vec<_>>(),
        "peer_discarded_evidence" => rows.iter().map(|r| r.3.peer_discarded).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.3.frame).collect::<Vec<_>>(),
        "orig_frame" => rows.iter().map(|r| r.3.orig_frame).collect::<Vec<_>>(),
        "filter" => rows.iter().map(|r| format!("sctp.data_tsn_raw == {}", r.3.tsn)).collect::<Vec<_>>(),
    )
}

/// New DATA bytes per path per second of the direction (throughput over time).
pub fn throughput(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            let start = d.first_ns.map_or(0.0, |t| c.rel_s(t).floor());
            d.dsts.iter().flat_map(move |p| {
                p.bytes_per_s.iter().enumerate().map(move |(i, b)| {
                    (
                        a.id as u32,
                        s as u32,
                        crate::net::ip_text(&p.addr),
                        start + i as f64,
                        *b,
                    )
                })
            })
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>(),
        "second_s" => rows.iter().map(|r| r.3).collect::<Vec<_>>(),
        "bytes" => rows.iter().map(|r| r.4).collect::<Vec<_>>(),
        "bps" => rows.iter().map(|r| r.4 * 8).collect::<Vec<_>>(),
    )
}

pub fn failovers(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            d.failovers
                .iter()
                .map(move |t| (a.id as u32, s as u32, d, t))
        })
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "time_s" => rows.iter().map(|r| c.rel_s(r.3.t_ns)).collect::<Vec<_>>(),
        "from" => rows.iter().map(|r| addr(r.2, r.3.from)).collect::<Vec<_>>(),
        "to" => rows.iter().map(|r| addr(r.2, r.3.to)).collect::<Vec<_>>(),
        "outage_start_s" => rows.iter().map(|r| r.3.outage_start_ns.map(|t| c.rel_s(t))).collect::<Vec<_>>(),
        "failover_ms" => rows.iter().map(|r| r.3.outage_start_ns.map(|t| (r.3.t_ns - t) as f64 / 1e6)).collect::<Vec<_>>(),
        "timeouts" => rows.iter().map(|r| r.3.timeouts.len() as u32).collect::<Vec<_>>(),
        "spurious" => rows.iter().map(|r| r.3.spurious).collect::<Vec<_>>(),
        "cause" => rows.iter().map(|r| r.3.cause).collect::<Vec<_>>(),
        "recommendation" => rows.iter().map(|r| r.3.recommendation.clone()).collect::<Vec<_>>(),
        "path_max_retrans" => rows.iter().map(|r| r.3.pmr).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.3.frame).collect::<Vec<_>>(),
    )
}

pub fn path_metrics(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| {
            d.dsts.iter().map(move |p| {
                let hb = crate::report_infer::heartbeat_figures(a, s as u8, p);
                (a.id as u32, s as u32, p, hb)
            })
        })
        .collect();
    let q = |d: Option<crate::infer::stats::Dist>, f: fn(&crate::infer::stats::Dist) -> f64| {
        d.as_ref().map(f)
    };
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "path" => rows.iter().map(|r| crate::net::ip_text(&r.2.addr)).collect::<Vec<_>>(),
        "new_data_chunks" => rows.iter().map(|r| r.2.new_data_chunks).collect::<Vec<_>>(),
        "new_data_bytes" => rows.iter().map(|r| r.2.new_data_bytes).collect::<Vec<_>>(),
        "retransmissions" => rows.iter().map(|r| r.2.retransmissions).collect::<Vec<_>>(),
        "rtt_n" => rows.iter().map(|r| r.2.rtt.len()).collect::<Vec<_>>(),
        "rtt_min_ms" => rows.iter().map(|r| q(r.2.rtt.dist(), |d| d.min)).collect::<Vec<_>>(),
        "rtt_median_ms" => rows.iter().map(|r| q(r.2.rtt.dist(), |d| d.median)).collect::<Vec<_>>(),
        "rtt_p95_ms" => rows.iter().map(|r| q(r.2.rtt.dist(), |d| d.p95)).collect::<Vec<_>>(),
        "hb_rtt_median_ms" => rows.iter().map(|r| q(r.2.hb_rtt.dist(), |d| d.median)).collect::<Vec<_>>(),
        "base_rtt_ms" => rows.iter().map(|r| r.2.base_rtt_ms()).collect::<Vec<_>>(),
        "est_rto_ms" => rows.iter().map(|r| r.2.est_rto_ms()).collect::<Vec<_>>(),
        "hb_periods" => rows.iter().map(|r| r.3.hb_period_ms.map_or(0, |d| d.n)).collect::<Vec<_>>(),
        "hb_period_median_ms" => rows.iter().map(|r| q(r.3.hb_period_ms, |d| d.median)).collect::<Vec<_>>(),
        "hb_interval_ms" => rows.iter().map(|r| r.3.hb_interval_ms).collect::<Vec<_>>(),
        "dead_path_detect_s" => rows.iter().map(|r| r.3.dead_path_detect_s).collect::<Vec<_>>(),
    )
}

pub fn messages(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = dirs(c)
        .flat_map(|(a, s, d)| d.messages.iter().map(move |m| (a.id as u32, s as u32, m)))
        .collect();
    frame!(c, rows.len();
        "assoc" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        "sender" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        "stream" => rows.iter().map(|r| r.2.stream as u32).collect::<Vec<_>>(),
        "ssn_mid" => rows.iter().map(|r| r.2.ssn_mid).collect::<Vec<_>>(),
        "first_tsn" => rows.iter().map(|r| r.2.first_tsn).collect::<Vec<_>>(),
        "last_tsn" => rows.iter().map(|r| r.2.last_tsn).collect::<Vec<_>>(),
        "bytes" => rows.iter().map(|r| r.2.bytes).collect::<Vec<_>>(),
        "start_s" => rows.iter().map(|r| c.rel_s(r.2.start_ns)).collect::<Vec<_>>(),
        "done_s" => rows.iter().map(|r| r.2.done_ns.map(|t| c.rel_s(t))).collect::<Vec<_>>(),
        "transfer_ms" => rows.iter().map(|r| r.2.done_ns.map(|t| (t - r.2.start_ns) as f64 / 1e6)).collect::<Vec<_>>(),
        "frame" => rows.iter().map(|r| r.2.frame).collect::<Vec<_>>(),
    )
}
