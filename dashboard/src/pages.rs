//! Server-rendered pages (askama templates in the workspace's `templates/`): captures list,
//! upload, capture, association and compare. Every figure comes from the stored `CaptureReport`.

use analyzer::report::{AssocReport, CaptureReport};
use analyzer::report_infer::DirectionReport;
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry, find_assoc, summary};
use crate::error::{human_bytes, AppError};
use crate::store::{Entry, Status};
use crate::views::{self, date, ms, opt, opt_s, pct, round, secs, JsonTable, NONE};
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

fn table_links(state: &AppState, id: &str) -> Vec<TableLink> {
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
        ("bad checksums".into(), r.bad_checksums.to_string()),
        ("start".into(), r.start_epoch_s.map_or(NONE.into(), date)),
        ("duration (s)".into(), secs(r.duration_s)),
        ("associations".into(), r.associations.len().to_string()),
        ("TCP flows".into(), views::cell(&s["tcp_flows"])),
        ("retransmissions".into(), rtx.to_string()),
        ("failovers".into(), views::cell(&s["failovers"])),
        (
            "spurious failovers".into(),
            views::cell(&s["spurious_failovers"]),
        ),
    ]
}

fn pending(e: &Entry) -> Response {
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

pub struct PathRow {
    pub sender: u8,
    pub src: String,
    pub dst: String,
    pub packets: u64,
    pub data_chunks: u64,
    pub new_data: u64,
    pub data_bytes: u64,
    pub rtt: String,
    pub hb_rtt: String,
    pub sack_delay: String,
    pub rto: String,
    pub timeouts: usize,
    pub rtx: u64,
    pub active: String,
}

pub struct TimeoutRow {
    pub t_s: String,
    pub path: String,
    pub to: String,
    pub observed_rto: String,
    pub backoff: u32,
    pub timer_start: String,
    pub est_rto: String,
    pub chunks: u32,
    pub tsn: u32,
    pub frame: u64,
    pub filter: String,
}

pub struct FailoverRow {
    pub sender: u8,
    pub t_s: String,
    pub from: String,
    pub to: String,
    pub outage_start: String,
    /// Exactly as in the JSON.
    pub failover_ms: String,
    pub timeouts: u32,
    pub spurious: bool,
    pub cause: String,
    pub recommendation: String,
    pub evidence: Vec<String>,
    pub pmr: String,
    pub frame: u64,
    pub outage_frame: String,
    pub filter: String,
}

pub struct DirView {
    pub sender: u8,
    pub title: String,
    pub items: Vec<(String, String)>,
    pub timeouts: Vec<TimeoutRow>,
    pub failbacks: Vec<(String, String, u64)>,
}

#[derive(Template, WebTemplate)]
#[template(path = "association.html")]
pub struct AssocPage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub n: usize,
    pub head: Vec<(String, String)>,
    pub endpoints: Vec<(usize, u16, String, String)>,
    pub paths: Vec<PathRow>,
    pub dirs: Vec<DirView>,
    pub failovers: Vec<FailoverRow>,
    pub senders: Vec<u8>,
    pub sender: u8,
    pub tables: Vec<TableLink>,
}

fn dir_label(a: &AssocReport, s: u8) -> String {
    let port = |i: usize| a.endpoints.get(i).map_or(0, |e| e.port);
    format!(
        "DATA sender {s} (port {} → port {})",
        port(s as usize),
        port(1 - s as usize)
    )
}

fn dir_view(a: &AssocReport, d: &DirectionReport) -> DirView {
    let dist = |x: Option<analyzer::infer::stats::Dist>| {
        x.map_or(NONE.to_string(), |d| {
            format!(
                "median {} (min {}, p95 {}, max {}, n {})",
                round(d.median, 3),
                round(d.min, 3),
                round(d.p95, 3),
                round(d.max, 3),
                d.n
            )
        })
    };
    let ev = |v: Option<f64>, n: u32| match v {
        Some(v) => format!("{} ({n} evidence)", round(v, 3)),
        None => NONE.to_string(),
    };
    let rx = &d.retransmissions;
    DirView {
        sender: d.sender,
        title: dir_label(a, d.sender),
        items: vec![
            (
                "vantage".into(),
                format!("{} — {}", d.vantage, d.vantage_evidence),
            ),
            (
                "DATA chunks / packets".into(),
                format!("{} / {}", d.data_chunks, d.data_packets),
            ),
            (
                "retransmissions".into(),
                format!(
                    "{} (fast {}, timeout {}, spurious {})",
                    rx.total, rx.fast, rx.timeout, rx.spurious
                ),
            ),
            ("base RTT (ms)".into(), ms(d.base_rtt_ms)),
            ("SACK delay (ms)".into(), dist(d.sack_delay_ms)),
            (
                "SACK every (packets)".into(),
                d.sack_every.map_or(NONE.into(), |v| round(v, 2)),
            ),
            ("delayed SACK share".into(), pct(d.delayed_sack_share)),
            (
                "SACKs per DATA packet".into(),
                d.sacks_per_data_packet.map_or(NONE.into(), |v| round(v, 3)),
            ),
            ("I-bit share".into(), pct(Some(d.ibit_share))),
            ("RTO.min (ms)".into(), ev(d.rto_min_ms, d.rto_min_evidence)),
            ("RTO.max (ms)".into(), ev(d.rto_max_ms, d.rto_max_evidence)),
            (
                "RTO.initial (ms)".into(),
                ev(d.rto_initial_ms, d.rto_initial_evidence),
            ),
            (
                "Path.Max.Retrans".into(),
                match d.path_max_retrans {
                    Some(p) => format!("{p} ({} evidence)", d.pmr_evidence),
                    None => NONE.into(),
                },
            ),
            (
                "max / p95 transfer (ms)".into(),
                format!("{} / {}", ms(d.max_transfer_ms), ms(d.p95_transfer_ms)),
            ),
            ("message interval (ms)".into(), ms(d.message_interval_ms)),
            ("burstiness".into(), opt(d.burstiness.clone())),
            ("max delivery gap (ms)".into(), ms(d.max_gap_ms)),
            ("missed deadlines".into(), opt(d.deadline_missed)),
        ],
        timeouts: d
            .timeouts
            .iter()
            .map(|t| TimeoutRow {
                t_s: secs(t.t_s),
                path: t.path.clone(),
                to: t.to.clone(),
                observed_rto: ms(t.observed_rto_ms),
                backoff: t.backoff,
                timer_start: t.timer_start.clone(),
                est_rto: ms(t.est_rto_ms),
                chunks: t.chunks,
                tsn: t.tsn,
                frame: t.frame,
                filter: t.filter.clone(),
            })
            .collect(),
        failbacks: d
            .failbacks
            .iter()
            .map(|b| (secs(b.t_s), b.to.clone(), b.frame))
            .collect(),
    }
}

fn path_rows(a: &AssocReport) -> Vec<PathRow> {
    a.paths
        .iter()
        .map(|p| {
            let dir = a.directions.iter().find(|d| d.sender == p.sender);
            let tos: Vec<f64> = dir
                .iter()
                .flat_map(|d| &d.timeouts)
                .filter(|t| t.path == p.dst)
                .filter_map(|t| t.observed_rto_ms)
                .collect();
            let rto = match (
                tos.iter().copied().reduce(f64::min),
                tos.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) if tos.len() > 1 => {
                    format!("{} – {} ({})", round(lo, 1), round(hi, 1), tos.len())
                }
                (Some(v), _) => round(v, 1),
                _ => NONE.to_string(),
            };
            PathRow {
                sender: p.sender,
                src: p.src.clone(),
                dst: p.dst.clone(),
                packets: p.packets,
                data_chunks: p.data_chunks,
                new_data: p.infer.new_data_chunks,
                data_bytes: p.data_bytes,
                rtt: p.infer.rtt_ms.map_or(NONE.into(), |d| {
                    format!(
                        "{} / {} / {} ({})",
                        round(d.min, 3),
                        round(d.median, 3),
                        round(d.p95, 3),
                        d.n
                    )
                }),
                hb_rtt: p
                    .infer
                    .hb_rtt_ms
                    .map_or(NONE.into(), |d| round(d.median, 3)),
                sack_delay: dir
                    .and_then(|d| d.sack_delay_ms)
                    .filter(|_| p.data_chunks > 0)
                    .map_or(NONE.into(), |d| round(d.median, 3)),
                rto,
                timeouts: dir
                    .iter()
                    .flat_map(|d| &d.timeouts)
                    .filter(|t| t.path == p.dst)
                    .count(),
                rtx: p.infer.retransmissions,
                active: format!("{} – {}", secs(p.first_s), secs(p.last_s)),
            }
        })
        .collect()
}

pub async fn association(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, r) = done_report(&state, &id)?;
    let a = find_assoc(&r, &n)?;
    let chunks = a
        .chunks
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let head = vec![
        (
            "handshake seen".into(),
            if a.handshake_seen { "yes" } else { "no" }.to_string(),
        ),
        ("handshake (ms)".into(), ms(a.handshake_ms)),
        ("shutdown (ms)".into(), ms(a.shutdown_ms)),
        (
            "aborted".into(),
            if a.aborted { "yes" } else { "no" }.to_string(),
        ),
        (
            "first / last (s)".into(),
            format!("{} / {}", secs(a.first_s), secs(a.last_s)),
        ),
        ("first frame".into(), a.first_frame.to_string()),
        ("packets".into(), a.packets.to_string()),
        ("DATA bytes".into(), a.data_bytes.to_string()),
        ("bad checksums".into(), a.bad_checksums.to_string()),
        ("chunks".into(), chunks),
    ];
    let failovers = a
        .directions
        .iter()
        .flat_map(|d| d.failovers.iter().map(move |f| (d.sender, f)))
        .map(|(s, f)| FailoverRow {
            sender: s,
            t_s: secs(f.t_s),
            from: f.from.clone(),
            to: f.to.clone(),
            outage_start: opt_s(f.outage_start_s),
            failover_ms: f.failover_ms.map_or(NONE.into(), views::exact),
            timeouts: f.timeouts,
            spurious: f.spurious,
            cause: opt(f.cause.clone()),
            recommendation: f.recommendation.clone().unwrap_or_default(),
            evidence: f.evidence.clone(),
            pmr: opt(f.path_max_retrans),
            frame: f.frame,
            outage_frame: opt(f.outage_frame),
            filter: f.filter.clone(),
        })
        .collect();
    let senders: Vec<u8> = a.directions.iter().map(|d| d.sender).collect();
    Ok(AssocPage {
        title: format!("{} — association {}", e.meta.name, a.id),
        id: id.clone(),
        name: e.meta.name.clone(),
        n: a.id,
        head,
        endpoints: a
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, ep)| {
                (
                    i,
                    ep.port,
                    ep.vtag.map_or(NONE.into(), |v| format!("0x{v:08x}")),
                    ep.addresses.join(", "),
                )
            })
            .collect(),
        paths: path_rows(a),
        dirs: a.directions.iter().map(|d| dir_view(a, d)).collect(),
        failovers,
        sender: crate::charts::pick_sender(a, None),
        senders,
        tables: table_links(&state, &id),
    }
    .into_response())
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
