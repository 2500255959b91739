//! Lifecycle DataFrames: one row per association event (`events`), and the end columns of the
//! `associations` table, from `lifecycle::Lifecycle::report` (computed once per association).

use polars::prelude::*;

use super::col;
use crate::analyze::CaptureAnalysis;
use crate::lifecycle::LifecycleReport;
use crate::sctp::cause::CauseInfo;

/// Each association's lifecycle report (with the stream events merged, as in the JSON), in the
/// order of `c.associations`.
pub(super) fn reports(c: &CaptureAnalysis) -> Vec<LifecycleReport> {
    c.associations
        .iter()
        .map(|a| crate::report::lifecycle_report(c.time_base(), a))
        .collect()
}

/// Causes in one cell: "User-Initiated Abort (12): reason; ...".
pub(super) fn causes_text(causes: &[CauseInfo]) -> String {
    causes
        .iter()
        .map(|c| match &c.detail {
            Some(d) => format!("{} ({}): {d}", c.name, c.code),
            None => format!("{} ({})", c.name, c.code),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The lifecycle columns of the `associations` table.
pub(super) fn assoc_columns(c: &CaptureAnalysis, r: &[LifecycleReport]) -> Vec<Column> {
    let a = &c.associations;
    vec![
        col(
            "handshake_started",
            r.iter().map(|x| x.handshake_started).collect::<Vec<_>>(),
        ),
        col(
            "end_kind",
            r.iter().map(|x| x.end.kind.clone()).collect::<Vec<_>>(),
        ),
        col(
            "end_by",
            r.iter()
                .map(|x| x.end.by.map(u32::from))
                .collect::<Vec<_>>(),
        ),
        col("end_s", r.iter().map(|x| x.end.t_s).collect::<Vec<_>>()),
        col(
            "end_frame",
            r.iter().map(|x| x.end.frame).collect::<Vec<_>>(),
        ),
        col(
            "end_causes",
            r.iter()
                .map(|x| causes_text(&x.end.causes))
                .collect::<Vec<_>>(),
        ),
        col(
            "duplicate_frames",
            a.iter().map(|x| x.duplicate_frames).collect::<Vec<_>>(),
        ),
        col(
            "after_end_packets",
            r.iter().map(|x| x.after_end_packets).collect::<Vec<_>>(),
        ),
        col(
            "filter",
            r.iter().map(|x| x.filter.clone()).collect::<Vec<_>>(),
        ),
    ]
}

/// One row per lifecycle event of every association.
pub(super) fn events(c: &CaptureAnalysis, r: &[LifecycleReport]) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = c
        .associations
        .iter()
        .zip(r)
        .flat_map(|(a, l)| l.events.iter().map(move |e| (a.id as u32, e)))
        .collect();
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); rows.len()]),
        col("assoc", rows.iter().map(|r| r.0).collect::<Vec<_>>()),
        col("t_s", rows.iter().map(|r| r.1.t_s).collect::<Vec<_>>()),
        col("frame", rows.iter().map(|r| r.1.frame).collect::<Vec<_>>()),
        col(
            "by",
            rows.iter()
                .map(|r| r.1.by.map(u32::from))
                .collect::<Vec<_>>(),
        ),
        col(
            "kind",
            rows.iter().map(|r| r.1.kind.clone()).collect::<Vec<_>>(),
        ),
        col(
            "detail",
            rows.iter().map(|r| r.1.detail.clone()).collect::<Vec<_>>(),
        ),
        col(
            "causes",
            rows.iter()
                .map(|r| causes_text(&r.1.causes))
                .collect::<Vec<_>>(),
        ),
        col(
            "delay_ms",
            rows.iter().map(|r| r.1.delay_ms).collect::<Vec<_>>(),
        ),
        col(
            "chunks",
            rows.iter()
                .map(|r| r.1.chunks.join(" "))
                .collect::<Vec<_>>(),
        ),
        col(
            "filter",
            rows.iter().map(|r| r.1.filter.clone()).collect::<Vec<_>>(),
        ),
    ])
}
