//! Server-rendered pages (askama templates in the workspace's `templates/`): captures list,
//! upload, capture and compare (the association page is `assoc_page`). Every figure comes from
//! the stored `CaptureReport`.

use analyzer::compare::ComparisonRow;
use analyzer::report::{AssocReport, CaptureReport};
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry, summary};
use crate::assoc_list::{self, Filter, ListQuery};
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

/// A sortable column header of the association list: a link that sorts on the server.
pub struct SortHeader {
    pub label: &'static str,
    pub num: bool,
    pub href: String,
    /// "ascending" / "descending" on the sorted column, "" elsewhere (aria-sort).
    pub aria: &'static str,
    /// " ▲" / " ▼" on the sorted column.
    pub arrow: &'static str,
}

/// The association list's filter form, counts and pager.
pub struct ListView {
    pub f: Filter,
    /// Associations of the capture.
    pub total: usize,
    pub port: String,
    pub counts: String,
    pub headers: Vec<SortHeader>,
    /// (label, href or "" when disabled) of first / previous / next / last.
    pub pager: Vec<(&'static str, String)>,
    pub page: usize,
    pub pages: usize,
    pub uppers: Vec<String>,
    /// (kind, words, associations)
    pub ends: Vec<(String, String, u64)>,
    pub sort: &'static str,
    pub order: &'static str,
    pub limit: usize,
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
    /// Filter, sort, counts and pages of the association list (issue 16 part 1).
    pub list: ListView,
    pub tcp: Vec<JsonTable>,
    pub tcp_note: String,
    pub warnings: Vec<String>,
    pub tables: Vec<TableLink>,
    /// How the associations ended, duplicates, unassociated packets.
    pub acc: Accounting,
    pub ends: Ended,
}

/// The association `id` of `r` (ids are the positions, but do not rely on it).
pub(crate) fn assoc_by_id(r: &CaptureReport, id: usize) -> Option<&AssocReport> {
    match r.associations.get(id) {
        Some(a) if a.id == id => Some(a),
        _ => r.associations.iter().find(|a| a.id == id),
    }
}

const COLUMNS: [(&str, &str, bool); 14] = [
    ("#", "id", true),
    ("endpoints", "endpoints", false),
    ("upper layer", "upper", false),
    ("handshake (ms)", "handshake", true),
    ("packets", "packets", true),
    ("DATA bytes", "data_bytes", true),
    ("paths", "paths", true),
    ("retransmissions", "retransmissions", true),
    ("timeouts", "timeouts", true),
    ("failovers", "failovers", true),
    ("spurious", "spurious", true),
    ("first (s)", "first", true),
    ("last (s)", "last", true),
    ("ended", "ended", false),
];

fn list_view(id: &str, r: &CaptureReport, f: &Filter, p: &assoc_list::Page) -> ListView {
    let base = format!("/captures/{id}");
    let link = |q: String, offset: usize| {
        let mut parts: Vec<String> = Vec::new();
        if !q.is_empty() {
            parts.push(q);
        }
        if offset > 0 {
            parts.push(format!("offset={offset}"));
        }
        if parts.is_empty() {
            format!("{base}#associations")
        } else {
            format!("{base}?{}#associations", parts.join("&"))
        }
    };
    let headers = COLUMNS
        .iter()
        .map(|&(label, key, num)| {
            let current = f.sort == key;
            let desc = if current { !f.desc } else { num && key != "id" };
            SortHeader {
                label,
                num,
                href: link(f.query(Some((key, desc))), 0),
                aria: match (current, f.desc) {
                    (false, _) => "",
                    (true, false) => "ascending",
                    (true, true) => "descending",
                },
                arrow: match (current, f.desc) {
                    (false, _) => "",
                    (true, false) => " ▲",
                    (true, true) => " ▼",
                },
            }
        })
        .collect();
    let limit = f.limit.unwrap_or(assoc_list::MAX_PAGE_ROWS).max(1);
    let matching = p.counts.matching;
    let pages = matching.div_ceil(limit).max(1);
    let page = p.offset / limit + 1;
    let q = f.query(None);
    let last_off = (pages - 1) * limit;
    let on = |cond: bool, off: usize| {
        if cond {
            link(q.clone(), off)
        } else {
            String::new()
        }
    };
    let pager = vec![
        ("first", on(p.offset > 0, 0)),
        ("previous", on(p.offset > 0, p.offset.saturating_sub(limit))),
        ("next", on(p.offset + limit < matching, p.offset + limit)),
        ("last", on(p.offset + limit < matching, last_off)),
    ];
    ListView {
        total: p.counts.total,
        port: f.port.map(|p| p.to_string()).unwrap_or_default(),
        counts: assoc_list::counts_text(p, f.filtered()),
        headers,
        pager,
        page,
        pages,
        uppers: assoc_list::upper_layers(r),
        ends: lifecycle::end_counts(r)
            .into_iter()
            .map(|(k, n)| {
                let w = lifecycle::end_words(&k);
                (k, w, n)
            })
            .collect(),
        sort: f.sort,
        order: if f.desc { "desc" } else { "asc" },
        limit,
        f: f.clone(),
    }
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

/// `GET /captures/{id}?offset=&limit=&sort=&order=&q=&addr=&port=&upper=&end=&failover=&...`:
/// the association list is filtered, sorted and paginated here (`assoc_list`).
pub async fn capture(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    let Some(r) = e.report.clone().filter(|_| e.meta.status == Status::Done) else {
        return Ok(pending(&e));
    };
    let q = q
        .map(|Query(q)| q)
        .map_err(|e| AppError::BadRequest(format!("bad list parameters: {}", e.body_text())))?;
    let f = Filter::parse(&q, assoc_list::PAGE_ROWS, Some(assoc_list::MAX_PAGE_ROWS))?;
    let p = assoc_list::page(&r, &f);
    let assocs = p
        .rows
        .iter()
        .map(|s| AssocRow {
            id: s.id,
            endpoints: s.endpoints.clone(),
            handshake: ms(s.handshake_ms),
            packets: s.packets,
            data_bytes: s.data_bytes,
            paths: s.paths,
            rtx: s.retransmissions,
            timeouts: s.timeouts,
            failovers: s.failovers,
            spurious: s.spurious_failovers,
            first_s: secs(s.first_s),
            last_s: secs(s.last_s),
            ended: assoc_by_id(&r, s.id).map_or(
                Ended {
                    text: s.ended.clone(),
                    class: lifecycle::end_class(&s.end_kind),
                    title: String::new(),
                },
                lifecycle::ended,
            ),
            upper_layer: assoc_list::upper_cell(s),
        })
        .collect();
    let list = list_view(&id, &r, &f, &p);
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
        list,
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
    /// Metric, number and order of the directions shown.
    pub select: CompareSelect,
    /// Directions of the capture (of the chosen transport).
    pub directions: usize,
}

/// SCTP side of the comparison: one column per association direction (the first `top`),
/// metric by metric.
fn sctp_metrics(r: &CaptureReport, top: usize) -> JsonTable {
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
    let dirs = r
        .associations
        .iter()
        .flat_map(|a| a.directions.iter().map(move |d| (a, d)))
        .take(top);
    for (a, d) in dirs {
        {
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

/// `?metric=&top=&order=&transport=` of the compare page.
#[derive(Debug, Default, serde::Deserialize)]
pub struct CompareQuery {
    pub metric: Option<String>,
    pub top: Option<String>,
    pub order: Option<String>,
    pub transport: Option<String>,
}

type Metric = fn(&ComparisonRow) -> Option<f64>;

/// The metrics the compare page ranks directions by: (key, words, value).
pub const COMPARE_METRICS: [(&str, &str, Metric); 17] = [
    ("throughput_bps", "throughput (bit/s)", |r| {
        Some(r.throughput_bps)
    }),
    ("goodput_bps", "goodput (bit/s)", |r| Some(r.goodput_bps)),
    ("retransmissions", "retransmissions", |r| {
        Some(r.retransmissions as f64)
    }),
    ("retransmission_rate", "retransmission rate", |r| {
        r.retransmission_rate
    }),
    ("timeouts", "timeouts", |r| Some(r.timeouts as f64)),
    ("max_gap_ms", "max delivery gap (ms)", |r| r.max_gap_ms),
    ("outage_ms", "outage (ms)", |r| r.outage_ms),
    ("max_transfer_ms", "max transfer (ms)", |r| {
        r.max_transfer_ms
    }),
    ("rtt_median_ms", "RTT median (ms)", |r| r.rtt_median_ms),
    ("rtt_p95_ms", "RTT p95 (ms)", |r| r.rtt_p95_ms),
    ("observed_rto_median_ms", "observed RTO median (ms)", |r| {
        r.observed_rto_median_ms
    }),
    ("rto_min_ms", "RTO.min (ms)", |r| r.rto_min_ms),
    ("ack_delay_ms", "SACK / ACK delay (ms)", |r| r.ack_delay_ms),
    ("handshake_ms", "handshake (ms)", |r| r.handshake_ms),
    ("duration_s", "duration (s)", |r| Some(r.duration_s)),
    (
        "hol_blocked_messages",
        "head-of-line blocked messages",
        |r| r.hol_blocked_messages.map(|v| v as f64),
    ),
    ("hol_delay_sum_ms", "head-of-line wait, sum (ms)", |r| {
        r.hol_delay_sum_ms
    }),
];

/// Directions shown on the compare page unless `top` says otherwise, and the most it may say.
pub const COMPARE_TOP: usize = 10;
pub const COMPARE_TOP_MAX: usize = 100;

/// The compare page's selector: which metric ranks the directions, how many are shown.
pub struct CompareSelect {
    pub metric: &'static str,
    pub metrics: Vec<(&'static str, &'static str)>,
    pub top: usize,
    pub tops: Vec<usize>,
    pub desc: bool,
    pub transport: String,
    /// "the 10 of 10,000 directions with the highest throughput (bit/s)".
    pub text: String,
}

fn compare_select(q: &CompareQuery) -> Result<(CompareSelect, Metric), AppError> {
    let some = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (metric, _, f) = match some(&q.metric) {
        Some(m) => *COMPARE_METRICS
            .iter()
            .find(|x| x.0 == m)
            .ok_or_else(|| AppError::BadRequest(format!("bad metric: {m:?}")))?,
        None => COMPARE_METRICS[0],
    };
    let top = match some(&q.top) {
        Some(t) => t
            .parse::<usize>()
            .map_err(|_| AppError::BadRequest(format!("bad top: {t:?}")))?
            .clamp(1, COMPARE_TOP_MAX),
        None => COMPARE_TOP,
    };
    let desc = match some(&q.order).as_deref() {
        Some("asc") => false,
        Some("desc") | None => true,
        Some(o) => return Err(AppError::BadRequest(format!("bad order: {o:?}"))),
    };
    let transport = match some(&q.transport).as_deref() {
        Some(t @ ("sctp" | "tcp")) => t.to_string(),
        None | Some("any") => String::new(),
        Some(t) => return Err(AppError::BadRequest(format!("bad transport: {t:?}"))),
    };
    Ok((
        CompareSelect {
            metric,
            metrics: COMPARE_METRICS.iter().map(|m| (m.0, m.1)).collect(),
            top,
            tops: vec![5, 10, 25, 50, 100],
            desc,
            transport,
            text: String::new(),
        },
        f,
    ))
}

/// The `top` comparison rows by the chosen metric (rows without a value last), and how many
/// there were.
fn top_rows<'a>(
    r: &'a CaptureReport,
    sel: &CompareSelect,
    f: Metric,
) -> (Vec<&'a ComparisonRow>, usize) {
    let mut rows: Vec<(&ComparisonRow, Option<f64>)> = r
        .comparison
        .iter()
        .filter(|c| sel.transport.is_empty() || c.transport == sel.transport)
        .map(|c| (c, f(c).filter(|v| v.is_finite())))
        .collect();
    let n = rows.len();
    rows.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => {
            let o = x.total_cmp(&y);
            if sel.desc {
                o.reverse()
            } else {
                o
            }
        }
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    rows.truncate(sel.top);
    (rows.into_iter().map(|x| x.0).collect(), n)
}

/// `GET /captures/{id}/compare?metric=&top=&order=&transport=`: the `top` (default 10)
/// directions by `metric` (default throughput), not a column per direction of the capture.
pub async fn compare(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<CompareQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, r) = done_report(&state, &id)?;
    let q = q
        .map(|Query(q)| q)
        .map_err(|e| AppError::BadRequest(format!("bad compare parameters: {}", e.body_text())))?;
    let (mut sel, metric) = compare_select(&q)?;
    let (rows, n) = top_rows(&r, &sel, metric);
    let words = COMPARE_METRICS
        .iter()
        .find(|m| m.0 == sel.metric)
        .map_or("", |m| m.1);
    let kind = match sel.transport.as_str() {
        "sctp" => "SCTP ",
        "tcp" => "TCP ",
        _ => "",
    };
    sel.text = format!(
        "the {} of {} {kind}directions with the {} {words}",
        rows.len(),
        assoc_list::thousands(n as u64),
        if sel.desc { "highest" } else { "lowest" },
    );
    let rows_value = serde_json::to_value(&rows).unwrap_or(serde_json::Value::Null);
    let comparison: Vec<JsonTable> = views::comparison_table(&rows_value)
        .map(|t| vec![t])
        .unwrap_or_default();
    let tcp: Vec<JsonTable> = if r.comparison.is_empty() {
        let flows: Vec<_> = r.tcp_flows.iter().take(sel.top).collect();
        let v = serde_json::to_value(&flows).unwrap_or(serde_json::Value::Null);
        views::array_table("TCP flows", &v, 40)
            .map(|t| views::transpose(&t, Some("id")))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    let note = if r.comparison.is_empty() {
        "Neither an SCTP association nor a TCP connection carried data.".into()
    } else if rows.is_empty() {
        format!("No {kind}direction to compare.")
    } else {
        String::new()
    };
    Ok(ComparePage {
        title: format!("{} — SCTP vs TCP", e.meta.name),
        id: id.clone(),
        name: e.meta.name.clone(),
        sctp: if r.comparison.is_empty() {
            sctp_metrics(&r, sel.top)
        } else {
            JsonTable::default()
        },
        tcp,
        comparison,
        note,
        select: sel,
        directions: n,
    }
    .into_response())
}
