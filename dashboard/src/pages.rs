//! Server-rendered pages (askama templates in the workspace's `templates/`): captures list,
//! upload, capture and compare (the association page is `assoc_page`). Every figure comes from
//! the stored `CaptureReport`.

use analyzer::report::{AssocReport, CaptureReport};
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry, summary};
use crate::error::{human_bytes, AppError};
use crate::lifecycle::{self, Accounting, Ended};
use crate::store::{Entry, Status};
use crate::streams_view;
use crate::views::{self, date, ms, opt, round, secs, JsonTable, NONE};
use crate::AppState;

pub struct IndexRow {
    pub id: String,
    pub name: String,
    pub size: String,
    pub size_bytes: u64,
    pub status: &'static str,
    pub error: String,
    pub packets: String,
    pub associations: String,
    pub tcp_flows: String,
    pub failovers: String,
    pub spurious: String,
    /// How the capture's associations ended ("7 aborted (User-Initiated Abort), 1 shutdown").
    pub ended: Ended,
    /// Upper layers of the associations ("NGAP", "Diameter, M3UA").
    pub upper_layer: String,
    pub date: String,
    pub uploaded: u64,
}

#[derive(Template, WebTemplate)]
#[template(path = "index.html")]
pub struct IndexPage {
    pub title: String,
    pub rows: Vec<IndexRow>,
    pub max_upload: String,
    pub max_upload_bytes: u64,
}

fn index_row(e: &Entry) -> IndexRow {
    let s = e.report.as_deref().map(summary);
    let f = |k: &str| {
        s.as_ref()
            .and_then(|s| s.get(k))
            .filter(|v| !v.is_null())
            .map_or(NONE.to_string(), views::cell)
    };
    IndexRow {
        id: e.meta.id.clone(),
        name: e.meta.name.clone(),
        size: human_bytes(e.meta.size),
        size_bytes: e.meta.size,
        status: e.meta.status.as_str(),
        error: e.meta.error.clone().unwrap_or_default(),
        packets: f("packets"),
        associations: f("associations"),
        tcp_flows: f("tcp_flows"),
        failovers: f("failovers"),
        spurious: f("spurious_failovers"),
        ended: e.report.as_deref().map_or(
            Ended {
                text: NONE.into(),
                class: "",
                title: String::new(),
            },
            lifecycle::ends_summary,
        ),
        upper_layer: e
            .report
            .as_deref()
            .map_or(NONE.into(), streams_view::capture_upper),
        date: date(e.meta.uploaded_unix as f64),
        uploaded: e.meta.uploaded_unix,
    }
}

pub async fn index(State(state): State<AppState>) -> IndexPage {
    IndexPage {
        title: "Captures".into(),
        rows: state.store().list().iter().map(index_row).collect(),
        max_upload: human_bytes(state.config().max_upload),
        max_upload_bytes: state.config().max_upload,
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "upload.html")]
pub struct UploadPage {
    pub title: String,
    pub max_upload: String,
    pub max_upload_bytes: u64,
}

pub async fn upload_page(State(state): State<AppState>) -> UploadPage {
    UploadPage {
        title: "Upload captures".into(),
        max_upload: human_bytes(state.config().max_upload),
        max_upload_bytes: state.config().max_upload,
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "pending.html")]
pub struct PendingPage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub status: &'static str,
    pub error: String,
}

pub struct AssocRow {
    pub id: usize,
    pub endpoints: String,
    pub handshake: String,
    pub packets: u64,
    pub data_bytes: u64,
    pub paths: usize,
    pub rtx: u64,
    pub timeouts: usize,
    pub failovers: usize,
    pub spurious: usize,
    pub first_s: String,
    pub last_s: String,
    pub ended: Ended,
    pub upper_layer: String,
}

pub struct TableLink {
    pub name: String,
    pub size: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "capture.html")]
pub struct CapturePage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub head: Vec<(String, String)>,
    pub assocs: Vec<AssocRow>,
    /// Associations not shown (past `MAX_ASSOC_ROWS`): the associations table has them all.
    pub more: usize,
    pub tcp: Vec<JsonTable>,
    pub tcp_note: String,
    pub warnings: Vec<String>,
    pub tables: Vec<TableLink>,
    /// How the associations ended, duplicates, unassociated packets.
    pub acc: Accounting,
    pub ends: Ended,
}

/// Most association rows the capture page renders (a large capture has thousands).
const MAX_ASSOC_ROWS: usize = 500;

fn endpoints(a: &AssocReport) -> String {
    a.endpoints
        .iter()
        .map(|e| format!("{}:{}", e.addresses.join(","), e.port))
        .collect::<Vec<_>>()
        .join(" ↔ ")
}

fn failover_counts(a: &AssocReport) -> (usize, usize) {
    let f = a.directions.iter().flat_map(|d| &d.failovers);
    let n = f.clone().count();
    (n, f.filter(|x| x.spurious).count())
}

pub(crate) fn table_links(state: &AppState, id: &str) -> Vec<TableLink> {
    state
        .store()
        .table_names(id)
        .into_iter()
        .map(|name| {
            let size = state
                .store()
                .table_path(id, &name)
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(String::new(), |m| human_bytes(m.len()));
            TableLink { name, size }
        })
        .collect()
}

fn capture_head(r: &CaptureReport) -> Vec<(String, String)> {
    let s = summary(r);
    let rtx: u64 = r
        .associations
        .iter()
        .flat_map(|a| &a.directions)
        .map(|d| d.retransmissions.total)
        .sum();
    vec![
        (
            "format".into(),
            opt(r.format.clone()) + if r.gzip { " (gzip)" } else { "" },
        ),
        ("packets".into(), r.packets.to_string()),
        ("SCTP packets".into(), r.sctp_packets.to_string()),
        ("TCP packets".into(), r.tcp_packets.to_string()),
        ("bad checksums".into(), lifecycle::checksum_words(r)),
        (
            "duplicate frames".into(),
            r.accounting.duplicate_frames.to_string(),
        ),
        (
            "unassociated packets".into(),
            r.accounting.unassociated.packets.to_string(),
        ),
        ("start".into(), r.start_epoch_s.map_or(NONE.into(), date)),
        ("duration (s)".into(), secs(r.duration_s)),
        ("associations".into(), r.associations.len().to_string()),
        ("upper layer".into(), streams_view::capture_upper(r)),
        ("TCP flows".into(), views::cell(&s["tcp_flows"])),
        ("retransmissions".into(), rtx.to_string()),
        ("failovers".into(), views::cell(&s["failovers"])),
        (
            "spurious failovers".into(),
            views::cell(&s["spurious_failovers"]),
        ),
    ]
}

pub(crate) fn pending(e: &Entry) -> Response {
    PendingPage {
        title: e.meta.name.clone(),
        id: e.meta.id.clone(),
        name: e.meta.name.clone(),
        status: e.meta.status.as_str(),
        error: e.meta.error.clone().unwrap_or_default(),
    }
    .into_response()
}

pub async fn capture(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    let Some(r) = e.report.clone().filter(|_| e.meta.status == Status::Done) else {
        return Ok(pending(&e));
    };
    let more = r.associations.len().saturating_sub(MAX_ASSOC_ROWS);
    let assocs = r
        .associations
        .iter()
        .take(MAX_ASSOC_ROWS)
        .map(|a| {
            let (f, sp) = failover_counts(a);
            AssocRow {
                id: a.id,
                endpoints: endpoints(a),
                handshake: ms(a.handshake_ms),
                packets: a.packets,
                data_bytes: a.data_bytes,
                paths: a.paths.len(),
                rtx: a.directions.iter().map(|d| d.retransmissions.total).sum(),
                timeouts: a.directions.iter().map(|d| d.timeouts.len()).sum(),
                failovers: f,
                spurious: sp,
                first_s: secs(a.first_s),
                last_s: secs(a.last_s),
                ended: lifecycle::ended(a),
                upper_layer: streams_view::assoc_upper(a),
            }
        })
        .collect();
    // Only the TCP rows of the comparison are shown here.
    let tcp_rows: Vec<_> = r
        .comparison
        .iter()
        .filter(|c| c.transport == "tcp")
        .collect();
    let v = serde_json::json!({
        "tcp_flows": views::tcp_flows_value(&r),
        "comparison": serde_json::to_value(&tcp_rows).unwrap_or(serde_json::Value::Null),
    });
    let (tcp, tcp_note) = tcp_tables(&v, r.tcp_packets);
    Ok(CapturePage {
        title: e.meta.name.clone(),
        id: id.clone(),
        name: e.meta.name.clone(),
        head: capture_head(&r),
        assocs,
        more,
        tcp,
        tcp_note,
        warnings: r.warnings.clone(),
        tables: table_links(&state, &id),
        acc: lifecycle::accounting(&r),
        ends: lifecycle::ends_summary(&r),
    }
    .into_response())
}

/// TCP tables of the capture page from the report's JSON (when the analyzer reports TCP): the
/// flows, and the comparison figures of their directions.
fn tcp_tables(v: &serde_json::Value, tcp_packets: u64) -> (Vec<JsonTable>, String) {
    let Some(flows) = v.get("tcp_flows") else {
        return (
            Vec::new(),
            format!(
                "{tcp_packets} TCP packets; this analyzer version does not report TCP flows yet."
            ),
        );
    };
    if flows.as_array().is_some_and(|a| a.is_empty()) {
        return (Vec::new(), "No TCP flow in this capture.".into());
    }
    let mut out = Vec::new();
    if let Some(t) = views::array_table("TCP flows", flows, 24) {
        let first = [
            "id",
            "client",
            "server",
            "handshake_seen",
            "handshake_ms",
            "packets",
            "data_bytes",
            "closed",
            "first_s",
            "last_s",
        ];
        out.push(views::reorder(t, &first));
    }
    let tcp_rows: Vec<serde_json::Value> = v
        .get("comparison")
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
        .filter(|r| r["transport"] == "tcp")
        .cloned()
        .collect();
    if let Some(t) = views::array_table(
        "TCP directions (comparison figures)",
        &serde_json::Value::Array(tcp_rows),
        40,
    ) {
        let first = [
            "id",
            "sender",
            "endpoints",
            "throughput_bps",
            "goodput_bps",
            "rtt_median_ms",
            "retransmissions",
            "timeouts",
            "observed_rto_median_ms",
            "recovery",
            "outage_ms",
            "max_gap_ms",
        ];
        let mut t = views::reorder(t, &first);
        t.columns.truncate(first.len());
        for r in &mut t.rows {
            r.truncate(first.len());
        }
        out.push(t);
    }
    (out, String::new())
}

#[derive(Template, WebTemplate)]
#[template(path = "compare.html")]
pub struct ComparePage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub sctp: JsonTable,
    pub tcp: Vec<JsonTable>,
    pub comparison: Vec<JsonTable>,
    pub note: String,
}

/// SCTP side of the comparison: one column per association direction, metric by metric.
fn sctp_metrics(r: &CaptureReport) -> JsonTable {
    let mut cols = Vec::new();
    let mut rows: Vec<Vec<String>> = [
        "handshake (ms)",
        "DATA bytes",
        "throughput (kbit/s)",
        "base RTT (ms)",
        "SACK / delayed-ACK delay (ms)",
        "retransmissions (fast/timeout/spurious)",
        "timeouts",
        "RTO.min (ms)",
        "max transfer (ms)",
        "max delivery gap (ms)",
        "failovers (spurious)",
        "failover / outage recovery (ms)",
    ]
    .iter()
    .map(|s| vec![s.to_string()])
    .collect();
    for a in &r.associations {
        for d in &a.directions {
            cols.push(format!("SCTP #{} sender {}", a.id, d.sender));
            let bytes: u64 = a
                .paths
                .iter()
                .filter(|p| p.sender == d.sender)
                .map(|p| p.data_bytes)
                .sum();
            let span = (a.last_s - a.first_s).max(1e-9);
            let rx = &d.retransmissions;
            let fo: Vec<String> = d
                .failovers
                .iter()
                .map(|f| f.failover_ms.map_or(NONE.into(), views::exact))
                .collect();
            let vals = [
                ms(a.handshake_ms),
                bytes.to_string(),
                round(bytes as f64 * 8.0 / span / 1000.0, 1),
                ms(d.base_rtt_ms),
                d.sack_delay_ms.map_or(NONE.into(), |x| round(x.median, 3)),
                format!("{}/{}/{}", rx.fast, rx.timeout, rx.spurious),
                d.timeouts.len().to_string(),
                ms(d.rto_min_ms),
                ms(d.max_transfer_ms),
                ms(d.max_gap_ms),
                format!(
                    "{} ({})",
                    d.failovers.len(),
                    d.failovers.iter().filter(|f| f.spurious).count()
                ),
                if fo.is_empty() {
                    NONE.into()
                } else {
                    fo.join(", ")
                },
            ];
            for (row, v) in rows.iter_mut().zip(vals) {
                row.push(v);
            }
        }
    }
    JsonTable {
        title: "SCTP associations".into(),
        columns: cols,
        rows,
    }
}

pub async fn compare(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, r) = done_report(&state, &id)?;
    let v = views::report_value(&r);
    let comparison: Vec<JsonTable> = match v.get("comparison") {
        Some(c) => views::comparison_table(c)
            .map(|t| vec![t])
            .unwrap_or_else(|| views::tables_of("Comparison", c)),
        None => Vec::new(),
    };
    let tcp: Vec<JsonTable> = if comparison.is_empty() {
        v.get("tcp_flows")
            .and_then(|f| views::array_table("TCP flows", f, 40))
            .map(|t| views::transpose(&t, Some("id")))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    let note = if v.get("tcp_flows").is_none() {
        format!(
            "This capture has {} TCP packets; this analyzer version does not report TCP flows \
             yet, so only the SCTP side is shown.",
            r.tcp_packets
        )
    } else if v.get("comparison").is_none() {
        "The analyzer reports TCP flows but no comparison: both sides are shown as reported.".into()
    } else if comparison.is_empty() {
        "Neither an SCTP association nor a TCP connection carried data.".into()
    } else {
        String::new()
    };
    Ok(ComparePage {
        title: format!("{} — SCTP vs TCP", e.meta.name),
        id: id.clone(),
        name: e.meta.name.clone(),
        sctp: if comparison.is_empty() {
            sctp_metrics(&r)
        } else {
            JsonTable::default()
        },
        tcp,
        comparison,
        note,
    }
    .into_response())
}
