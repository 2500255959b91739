//! Streams DataFrames: one row per association, direction and stream (`streams`, with its
//! head-of-line columns), one row per association and direction with head-of-line blocking
//! (`hol`), and the upper-layer and negotiated-stream columns of the `associations` table, from
//! `streams::Streams` and `hol::Hol` (the figures are computed there; this file only lays them
//! out).

use polars::prelude::*;

use super::col;
use crate::analyze::CaptureAnalysis;
use crate::streams::StreamReport;

/// "60 NGAP:14 0:2": each PPID with its registry name and messages, most first.
fn ppids_text(r: &StreamReport) -> String {
    r.ppids
        .iter()
        .map(|p| match &p.name {
            Some(n) => format!("{} {n}:{}", p.ppid, p.messages),
            None => format!("{}:{}", p.ppid, p.messages),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One row per stream of every direction of every association.
pub(super) fn streams(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let tb = c.time_base();
    let rows: Vec<(u32, u32, StreamReport)> = c
        .associations
        .iter()
        .flat_map(|a| {
            (0..2u8).flat_map(move |s| {
                crate::report_infer::stream_reports(tb, a, s)
                    .into_iter()
                    .map(move |r| (a.id as u32, u32::from(s), r))
            })
        })
        .collect();
    let top = |r: &StreamReport| r.ppids.first().map(|p| p.ppid);
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); rows.len()]),
        col("assoc", rows.iter().map(|r| r.0).collect::<Vec<_>>()),
        col("sender", rows.iter().map(|r| r.1).collect::<Vec<_>>()),
        col(
            "stream",
            rows.iter()
                .map(|r| u32::from(r.2.stream))
                .collect::<Vec<_>>(),
        ),
        col(
            "messages",
            rows.iter().map(|r| r.2.messages).collect::<Vec<_>>(),
        ),
        col("bytes", rows.iter().map(|r| r.2.bytes).collect::<Vec<_>>()),
        col(
            "data_chunks",
            rows.iter().map(|r| r.2.data_chunks).collect::<Vec<_>>(),
        ),
        col(
            "ordered_share",
            rows.iter().map(|r| r.2.ordered_share).collect::<Vec<_>>(),
        ),
        col(
            "fragmented",
            rows.iter().map(|r| r.2.fragmented).collect::<Vec<_>>(),
        ),
        col(
            "ssn_gaps",
            rows.iter().map(|r| r.2.ssn_gaps).collect::<Vec<_>>(),
        ),
        col("ppid", rows.iter().map(|r| top(&r.2)).collect::<Vec<_>>()),
        col(
            "ppid_name",
            rows.iter()
                .map(|r| r.2.ppids.first().and_then(|p| p.name.clone()))
                .collect::<Vec<_>>(),
        ),
        col(
            "ppids",
            rows.iter().map(|r| ppids_text(&r.2)).collect::<Vec<_>>(),
        ),
        col(
            "first_s",
            rows.iter().map(|r| r.2.first_s).collect::<Vec<_>>(),
        ),
        col(
            "last_s",
            rows.iter().map(|r| r.2.last_s).collect::<Vec<_>>(),
        ),
        col(
            "hol_blocked_messages",
            rows.iter()
                .map(|r| r.2.hol_blocked_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "hol_delay_max_ms",
            rows.iter()
                .map(|r| r.2.hol_delay_ms.map(|d| d.max))
                .collect::<Vec<_>>(),
        ),
        col(
            "hol_delay_p95_ms",
            rows.iter()
                .map(|r| r.2.hol_delay_ms.map(|d| d.p95))
                .collect::<Vec<_>>(),
        ),
    ])
}

/// One row per association and direction with head-of-line figures (`directions[i].hol`).
pub(super) fn hol(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<(u32, u32, crate::hol::HolReport)> = c
        .associations
        .iter()
        .flat_map(|a| {
            (0..2u8).filter_map(move |s| {
                let sum = a.infer.summary[usize::from(s)].as_ref()?;
                let h = a.hol.report(s, sum.vantage, a.last_ns)?;
                Some((a.id as u32, u32::from(s), h))
            })
        })
        .collect();
    let dist = |f: fn(&crate::hol::HolReport) -> Option<crate::infer::stats::Dist>,
                q: fn(&crate::infer::stats::Dist) -> f64| {
        rows.iter()
            .map(|r| f(&r.2).as_ref().map(q))
            .collect::<Vec<_>>()
    };
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); rows.len()]),
        col("assoc", rows.iter().map(|r| r.0).collect::<Vec<_>>()),
        col("sender", rows.iter().map(|r| r.1).collect::<Vec<_>>()),
        col(
            "vantage",
            rows.iter()
                .map(|r| r.2.vantage.as_str())
                .collect::<Vec<_>>(),
        ),
        col(
            "clock",
            rows.iter().map(|r| r.2.clock.as_str()).collect::<Vec<_>>(),
        ),
        col(
            "messages",
            rows.iter().map(|r| r.2.messages).collect::<Vec<_>>(),
        ),
        col(
            "ordered_messages",
            rows.iter()
                .map(|r| r.2.ordered_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "blocked_messages",
            rows.iter()
                .map(|r| r.2.blocked_messages)
                .collect::<Vec<_>>(),
        ),
        col("delay_median_ms", dist(|h| h.delay_ms, |d| d.median)),
        col("delay_p95_ms", dist(|h| h.delay_ms, |d| d.p95)),
        col("delay_max_ms", dist(|h| h.delay_ms, |d| d.max)),
        col(
            "delay_sum_ms",
            rows.iter().map(|r| r.2.delay_sum_ms).collect::<Vec<_>>(),
        ),
        col(
            "single_stream_blocked_messages",
            rows.iter()
                .map(|r| r.2.single_stream_blocked_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "single_stream_delay_p95_ms",
            dist(|h| h.single_stream_delay_ms, |d| d.p95),
        ),
        col(
            "single_stream_delay_max_ms",
            dist(|h| h.single_stream_delay_ms, |d| d.max),
        ),
        col(
            "single_stream_delay_sum_ms",
            rows.iter()
                .map(|r| r.2.single_stream_delay_sum_ms)
                .collect::<Vec<_>>(),
        ),
        col(
            "waiting_at_end_messages",
            rows.iter()
                .map(|r| r.2.waiting_at_end_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "waiting_at_end_max_ms",
            rows.iter()
                .map(|r| r.2.waiting_at_end_max_ms)
                .collect::<Vec<_>>(),
        ),
        col(
            "single_stream_waiting_at_end_messages",
            rows.iter()
                .map(|r| r.2.single_stream_waiting_at_end_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "unattributed_messages",
            rows.iter()
                .map(|r| r.2.unattributed_messages)
                .collect::<Vec<_>>(),
        ),
        col(
            "streams",
            rows.iter().map(|r| r.2.streams).collect::<Vec<_>>(),
        ),
    ])
}

/// The streams columns of the `associations` table: upper layer and negotiated streams.
pub(super) fn assoc_columns(c: &CaptureAnalysis) -> Vec<Column> {
    let a = &c.associations;
    let upper: Vec<_> = a
        .iter()
        .map(|x| {
            x.streams
                .upper_layer([x.endpoints[0].port, x.endpoints[1].port])
        })
        .collect();
    let neg: Vec<_> = a.iter().map(|x| x.streams.negotiated()).collect();
    let field = |ep: usize, f: fn(&crate::streams::NegotiatedReport) -> Option<u16>| {
        neg.iter()
            .map(|n| n.get(ep).and_then(f).map(u32::from))
            .collect::<Vec<_>>()
    };
    vec![
        col(
            "upper_layer",
            upper.iter().map(|u| u.name.clone()).collect::<Vec<_>>(),
        ),
        col(
            "upper_layer_ppid",
            upper.iter().map(|u| u.ppid).collect::<Vec<_>>(),
        ),
        col(
            "upper_layer_evidence",
            upper.iter().map(|u| u.evidence.clone()).collect::<Vec<_>>(),
        ),
        col("os_0", field(0, |n| n.os)),
        col("mis_0", field(0, |n| n.mis)),
        col("os_1", field(1, |n| n.os)),
        col("mis_1", field(1, |n| n.mis)),
    ]
}
